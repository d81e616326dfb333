"""Card faces for the renderer: aisleriot theme sheets and the project's own drawn decks.

Theme sheets are rendered with ``rsvg-convert`` into a cache directory the first time
they are needed and sliced there; rendered art is never part of the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from table.errors import UserError

THEME_DIR = Path("/usr/share/aisleriot/cards")
TRAIN_THEMES = ("anglo", "bonded", "paris", "plastic", "simplistic", "tango_nuevo")
"""Designs the issue allows for training and tuning; every other theme is held out."""
HELD_OUT_THEMES = (
    "anglo_modern",
    "anglo_poker",
    "tango",
    "neoclassical",
    "gnomangelo",
    "ornamental",
    "bellot",
    "tigullio",
    "orell",
)
"""Held-out designs with English indices, used only for evaluation."""
OWN_DECKS = tuple(f"own{i}" for i in range(12))
"""Variants of the deck the project draws itself (``own0`` .. ``own11``), in Hershey fonts.
``own3``, ``own7`` and ``own11`` print their marks against the card's edge.
The same faces with marks set in installed fonts are the ``font<N>`` decks, listed by
``typeset.typeset_decks()``."""

RANKS = "A23456789TJQK"
SHEET_SUITS = "cdhs"
FACE_WIDTH = 160
"""Width in pixels of every sliced face; large enough to downscale to table scale."""
CARD_IDS = (*(rank + suit for suit in SHEET_SUITS for rank in RANKS), "B", "R")
"""Every card of a deck: rank and sheet suit, then the black and the red joker."""
BLACK_RED_CAST = 6
"""Most that a drawn deck's black is redder than green (0..255): printed black ink reads
under 7 (``recognize.RED_EXCESS``)."""


@dataclass(frozen=True)
class Deck:
    """Faces of one design, keyed by card id (``"Th"``, ``"As"``, ``"B"``, ``"R"``).

    ``index`` holds, per card, the box ``(x0, y0, x1, y1)`` of the top-left rank
    mark in face pixels; the synthetic truth and the training labels use it.
    """

    name: str
    faces: dict[str, np.ndarray]
    index: dict[str, tuple[int, int, int, int]]


def cache_dir() -> Path:
    """Returns the cache directory (``$DDZ_TABLE_CACHE`` or ``~/.cache/ddz-table``)."""
    base = os.environ.get("DDZ_TABLE_CACHE")
    path = Path(base) if base else Path.home() / ".cache" / "ddz-table"
    path.mkdir(parents=True, exist_ok=True)
    return path


def available_themes() -> list[str]:
    """Lists the installed aisleriot themes."""
    return sorted(p.name.removesuffix(".svgz") for p in THEME_DIR.glob("*.svgz"))


def _sheet(theme: str) -> np.ndarray:
    """Renders (once) and loads the whole 13 x 5 sheet of a theme as BGRA.

    :raises UserError: when the theme or ``rsvg-convert`` is missing.
    """
    target = cache_dir() / f"sheet-{theme}-{FACE_WIDTH}.png"
    if not target.exists():
        source = THEME_DIR / f"{theme}.svgz"
        if not source.exists():
            raise UserError(
                f"card theme {theme!r} is not installed; install gnome-cards-data "
                f"or pick one of: {', '.join(available_themes()) or 'none found'}, "
                f"or a drawn deck: {OWN_DECKS[0]} .. {OWN_DECKS[-1]}, font0 .. font<N>"
            )
        if shutil.which("rsvg-convert") is None:
            raise UserError("rsvg-convert is missing; install the librsvg2-bin package")
        tmp = target.with_suffix(f".{os.getpid()}.tmp.png")
        subprocess.run(
            ["rsvg-convert", "-w", str(13 * FACE_WIDTH), "-o", str(tmp), str(source)],
            check=True,
            capture_output=True,
        )
        tmp.replace(target)
    image = cv2.imread(str(target), cv2.IMREAD_UNCHANGED)
    if image is None or image.ndim != 3 or image.shape[2] != 4:
        raise UserError(f"cannot read the rendered sheet {target}; delete it and retry")
    return image


def ink_mask(face: np.ndarray) -> np.ndarray:
    """Marks printed pixels (dark or coloured) on an opaque face."""
    bgr = face[..., :3].astype(np.int16)
    low = bgr.min(axis=2)
    high = bgr.max(axis=2)
    opaque = face[..., 3] > 128
    paper = int(np.percentile(low[opaque], 90)) if opaque.any() else 255
    return (opaque & ((paper - low > 90) | (high - low > 90))).astype(np.uint8)


USUAL_HEIGHT = (0.75, 1.33)
"""Heights, as shares of the deck's usual mark, of a component that may be a card's mark."""
USUAL_WIDTH = 1.6
"""Widest a card's mark may be, as a share of the usual mark's width (a mark joined to a
picture is wider)."""
USUAL_REACH = 0.5
"""Distance, in usual mark heights, within which a mark lies from the deck's usual place."""
OUTLINE_BAND = 4
"""Pixels along the face's edge left out when looking for marks: card outlines are drawn
there, and an index printed against the outline would otherwise be one blob with it."""


def find_index_box(
    face: np.ndarray, is_ten: bool = False, usual: tuple[int, int, int, int] | None = None
) -> tuple[int, int, int, int]:
    """Finds the rank mark nearest the top-left corner of a face.

    Takes the mark-sized printed component closest to the corner, once the outline
    band is cut away; for a ten it joins the same-height digit just right of it.
    Given the ``usual`` box of the deck's marks, it takes the component of that
    height nearest that box instead, or that box when none is near.
    """
    height, width = face.shape[:2]
    opaque = (face[..., 3] > 128).astype(np.uint8)
    inner = cv2.erode(
        opaque,
        np.ones((2 * OUTLINE_BAND + 1, 2 * OUTLINE_BAND + 1), np.uint8),
        borderType=cv2.BORDER_CONSTANT,
        borderValue=0,
    )
    region = (ink_mask(face) & inner)[: height // 3, : width // 2]
    count, _, stats, _ = cv2.connectedComponentsWithStats(region, connectivity=8)
    marks = [
        label
        for label in range(1, count)
        if 0.04 * height <= stats[label, 3] <= 0.22 * height
        and stats[label, 2] <= 0.4 * width
        and stats[label, 4] >= 12
    ]
    if usual is not None:
        ux0, uy0, ux1, uy1 = usual
        reach, middle = USUAL_REACH * (uy1 - uy0), (uy0 + uy1) / 2

        def off(label: int) -> float:
            """Distance of a component's left edge and middle from the usual mark's."""
            return float(
                abs(stats[label, 0] - ux0) + abs(stats[label, 1] + stats[label, 3] / 2 - middle)
            )

        marks = [
            label
            for label in marks
            if USUAL_HEIGHT[0] <= stats[label, 3] / (uy1 - uy0) <= USUAL_HEIGHT[1]
            and stats[label, 2] <= USUAL_WIDTH * (ux1 - ux0)
            and off(label) < reach
        ]
        if not marks:
            return usual
        best = min(marks, key=off)
    elif marks:
        best = min(marks, key=lambda label: int(stats[label, 0] + stats[label, 1]))
    else:
        return (int(0.05 * width), int(0.04 * height), int(0.2 * width), int(0.16 * height))
    x, y, w, h, _ = (int(v) for v in stats[best])
    x0, y0, x1, y1 = x, y, x + w, y + h
    if is_ten:
        digits = [
            label
            for label in marks
            if label != best
            and 0.6 * h <= stats[label, 3] <= 1.5 * h
            and min(y1, stats[label, 1] + stats[label, 3]) - max(y0, stats[label, 1]) > 0.6 * h
            and 0 <= stats[label, 0] - x1 < 0.25 * h
        ]
        if digits:
            lx, ly, lw, lh, _ = (int(v) for v in stats[min(digits, key=lambda k: stats[k, 0])])
            x1, y0, y1 = max(x1, lx + lw), min(y0, ly), max(y1, ly + lh)
    return (x0, y0, x1, y1)


OWN_NAME = re.compile(r"own\d*")
"""Names of the project's own drawn decks: ``own``, ``own0`` .. ``own<N>``."""
TYPESET_NAME = re.compile(r"font\d+")
"""Names of the typeset decks: ``font0`` .. ``font<N>``."""


def is_drawn(name: str) -> bool:
    """Tells whether ``name`` is a deck the project draws itself (own or typeset), not a theme."""
    return bool(OWN_NAME.fullmatch(name) or TYPESET_NAME.fullmatch(name))


@lru_cache(maxsize=64)
def load_deck(name: str) -> Deck:
    """Loads a theme (rendering it first), draws an own or typeset deck, or reads a learnt one.

    ``name`` is a theme, ``own<N>``, ``font<N>`` or the path of a learnt deck's folder
    (a name with a ``/``, so that a folder named like a theme never hides it).

    :raises UserError: for a ``font<N>`` deck when no usable font is installed.
    """
    if OWN_NAME.fullmatch(name):
        return _own_deck(int(name[3:] or 0))
    if TYPESET_NAME.fullmatch(name):
        from table.vision import typeset  # here, not at the top: typeset builds on this module

        return typeset.typeset_deck(int(name[4:]))
    if "/" in name:
        return _folder_deck(Path(name))
    sheet = _sheet(name)
    height, width = sheet.shape[:2]
    cell_w, cell_h = width / 13, height / 5
    faces: dict[str, np.ndarray] = {}
    per_row = len(RANKS)
    for row, names in enumerate(CARD_IDS[i : i + per_row] for i in range(0, 54, per_row)):
        for col, card in enumerate(names):
            cell = sheet[
                round(row * cell_h) : round((row + 1) * cell_h),
                round(col * cell_w) : round((col + 1) * cell_w),
            ]
            ys, xs = np.nonzero(cell[..., 3] > 20)
            if len(xs) == 0:
                raise UserError(f"theme {name!r} has an empty cell for {card}")
            face = cell[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
            faces[card] = np.ascontiguousarray(face)
    size = faces["As"].shape[1], faces["As"].shape[0]
    faces = {
        card: cv2.resize(face, size, interpolation=cv2.INTER_AREA) for card, face in faces.items()
    }
    return Deck(
        name, faces, {card: find_index_box(face, card[0] == "T") for card, face in faces.items()}
    )


def _folder_deck(folder: Path) -> Deck:
    """Loads a deck learnt by ``ddz-table vision learn``: one ``CARD.png`` face per card.

    :raises UserError: when a card's face is missing or unreadable.
    """
    if not folder.is_dir():
        raise UserError(f"no learnt deck folder {folder}; learn one with ddz-table vision learn")
    faces: dict[str, np.ndarray] = {}
    for card in CARD_IDS:
        face = cv2.imread(str(folder / f"{card}.png"), cv2.IMREAD_UNCHANGED)
        if face is None or face.ndim != 3 or face.shape[2] != 4:
            raise UserError(
                f"{folder} has no readable face {card}.png; learn the deck again with "
                "ddz-table vision learn"
            )
        faces[card] = face
    # A blurred mark can break up or join its pip, so the nearest blob to the corner
    # is sometimes not the mark; every rank mark of a deck is printed at one place.
    first = {card: find_index_box(face) for card, face in faces.items() if card not in "BR"}
    usual = tuple(int(v) for v in np.median(np.array(list(first.values())), axis=0))
    return Deck(
        str(folder),
        faces,
        {
            card: find_index_box(face, card[0] == "T", None if card in "BR" else usual)
            for card, face in faces.items()
        },
    )


_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
)


def _pip(canvas: np.ndarray, suit: str, center: tuple[int, int], size: int, colour: tuple) -> None:
    """Draws a suit symbol of about ``size`` pixels centred on ``center``."""
    cx, cy = center
    r = max(2, size // 4)
    if suit == "d":
        pts = np.array(
            [[cx, cy - size // 2], [cx + size // 3, cy], [cx, cy + size // 2], [cx - size // 3, cy]]
        )
        cv2.fillConvexPoly(canvas, pts.astype(np.int32), colour, cv2.LINE_AA)
        return
    if suit == "c":
        cv2.circle(canvas, (cx, cy - r), r, colour, -1, cv2.LINE_AA)
        cv2.circle(canvas, (cx - r, cy + r // 2), r, colour, -1, cv2.LINE_AA)
        cv2.circle(canvas, (cx + r, cy + r // 2), r, colour, -1, cv2.LINE_AA)
    else:
        sign = 1 if suit == "h" else -1
        cv2.circle(canvas, (cx - r, cy - sign * r // 2), r, colour, -1, cv2.LINE_AA)
        cv2.circle(canvas, (cx + r, cy - sign * r // 2), r, colour, -1, cv2.LINE_AA)
        tri = np.array(
            [
                [cx - 2 * r, cy - sign * r // 3],
                [cx + 2 * r, cy - sign * r // 3],
                [cx, cy + sign * size // 2],
            ]
        )
        cv2.fillConvexPoly(canvas, tri.astype(np.int32), colour, cv2.LINE_AA)
    if suit != "h":
        stem = np.array([[cx, cy], [cx - r, cy + size // 2], [cx + r, cy + size // 2]])
        cv2.fillConvexPoly(canvas, stem.astype(np.int32), colour, cv2.LINE_AA)


def _hershey_ink(text: str, font: int, height: int, thickness: int, stretch: float) -> np.ndarray:
    """Returns ``text`` in a Hershey font as 0-255 coverage, ``stretch`` times as wide."""
    scale = cv2.getFontScaleFromHeight(font, height, thickness)
    (w, h), base = cv2.getTextSize(text, font, scale, thickness)
    pad = thickness + 2
    ink = np.zeros((h + base + 2 * pad, w + 2 * pad), np.uint8)
    cv2.putText(ink, text, (pad, pad + h), font, scale, 255, thickness, cv2.LINE_AA)
    return cv2.resize(ink, (max(1, round(ink.shape[1] * stretch)), ink.shape[0]))


def paste_ink(
    layer: np.ndarray, ink: np.ndarray, top_left: tuple[int, int], colour: tuple[int, ...]
) -> tuple[int, int, int, int]:
    """Blends ``ink`` (0-255 coverage) in ``colour`` with its ink's top-left at ``top_left``.

    Returns the ink box ``(x0, y0, x1, y1)``, cut to the layer.
    """
    ys, xs = np.nonzero(ink > 60)
    ink = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    x, y = top_left
    ih, iw = min(ink.shape[0], layer.shape[0] - y), min(ink.shape[1], layer.shape[1] - x)
    alpha = ink[:ih, :iw, None].astype(np.float32) / 255
    region = layer[y : y + ih, x : x + iw].astype(np.float32)
    layer[y : y + ih, x : x + iw] = (region * (1 - alpha) + np.array(colour) * alpha).astype(
        np.uint8
    )
    return (x, y, x + iw, y + ih)


MarkInk = Callable[[str, int, float], np.ndarray]
"""Sets a text mark: ``(text, height, stretch)`` gives its 0-255 coverage, a capital
``height`` pixels tall, ``stretch`` times as wide as the font draws it."""


INDEX_LETTERS: dict[str, dict[str, str]] = {
    "english": {"J": "J", "Q": "Q", "K": "K", "A": "A"},
    "polish": {"J": "W", "Q": "D", "K": "K", "A": "A"},
    "german": {"J": "B", "Q": "D", "K": "K", "A": "A"},
    "french": {"J": "V", "Q": "D", "K": "R", "A": "A"},
}
"""Letters the court cards and the ace carry in each language's index: Polish decks print
W(alet) and D(ama), German ones B(ube) and D(ame), French ones V(alet), D(ame), R(oi)."""


@dataclass(frozen=True)
class JokerWord:
    """How a drawn joker prints ``JOKER`` down its corner, in shares of the rank mark's height.

    ``first`` is the J's height, ``rest`` the other letters' against the J; the space
    between letters is the rank mark's height over ``spacing``. Real decks differ: a
    small word, or a J as large as a jack's over small letters, a jack's J but for what
    lies under it.
    """

    first: float = 0.7
    rest: float = 1.0
    spacing: int = 6


def black_ink(rng: np.random.Generator) -> tuple[int, int, int]:
    """Draws a drawn deck's black (BGR): dark, of any cast but red. The reader tells red
    from black by the red cast it measures (``RED_EXCESS``), so a black with a cast of 12 or
    more would print red jokers and red suits in black."""
    blue, green, red = (int(v) for v in rng.integers(0, 50, 3))
    return blue, green, min(red, green + BLACK_RED_CAST)


def joker_word(rng: np.random.Generator) -> JokerWord:
    """Draws how a drawn deck prints its jokers' word: one deck in three as the project
    always drew it, the others from a small word to a jack-sized J over small letters."""
    if rng.random() < 1 / 3:
        return JokerWord()
    return JokerWord(
        float(rng.uniform(0.6, 1.05)), float(rng.uniform(0.5, 1.0)), int(rng.integers(2, 9))
    )


def drawn_deck(
    name: str,
    size: tuple[int, int],
    glyph: int,
    stretch: float,
    beside: bool,
    margin: int,
    colours: tuple[tuple[int, ...], tuple[int, ...]],
    ink: MarkInk,
    letters: Mapping[str, str] = INDEX_LETTERS["english"],
    joker: JokerWord = JokerWord(),
) -> Deck:
    """Draws the 54 faces of a deck in the project's own layout, with ``ink`` for the text.

    ``size`` is the face's ``(width, height)``, ``glyph`` the rank mark's height,
    ``colours`` the ``(red, black)`` inks, ``letters`` the index of each court card and
    the ace (``INDEX_LETTERS``). Each face is white paper with a thin grey
    outline and rounded corners, the rank mark at the top-left with a suit pip under
    or ``beside`` it, a big central pip and the 180-degree turned copy at the
    bottom-right; a joker's mark is the first letter of a ``JOKER`` column.
    """
    width, height = size
    red, black = colours
    faces: dict[str, np.ndarray] = {}
    index: dict[str, tuple[int, int, int, int]] = {}
    cards = [rank + suit for suit in SHEET_SUITS for rank in RANKS] + ["B", "R"]
    for card in cards:
        canvas = np.zeros((height, width, 4), np.uint8)
        cv2.rectangle(canvas, (0, 0), (width - 1, height - 1), (250, 250, 250, 255), -1)
        colour = red if card[-1] in "dhR" else black
        layer = np.full((height, width, 3), 250, np.uint8)
        if card in "BR":
            # Like the aisleriot jokers, the mark is the first letter of a column.
            y = margin
            word = []
            for k, letter in enumerate("JOKER"):
                tall = int(glyph * joker.first * (joker.rest if k else 1.0))
                word.append(paste_ink(layer, ink(letter, tall, 1.0), (margin, y), colour))
                y = word[-1][3] + max(2, glyph // joker.spacing)
            box = word[0]
            cv2.circle(layer, (width // 2, height // 2), width // 4, colour, -1, cv2.LINE_AA)
            cv2.circle(
                layer, (width // 2, height // 2), width // 6, (250, 250, 250), -1, cv2.LINE_AA
            )
        else:
            text = "10" if card[0] == "T" else letters.get(card[0], card[0])
            box = paste_ink(layer, ink(text, glyph, stretch), (margin, margin), colour)
            if beside:
                centre = (box[2] + glyph // 2 + 2, box[1] + glyph // 2)
            else:
                centre = ((box[0] + box[2]) // 2, box[3] + glyph // 2 + 3)
            _pip(layer, card[1], centre, int(glyph * 0.8), colour)
            _pip(layer, card[1], (width // 2, height // 2), int(width * 0.35), colour)
        rotated = cv2.rotate(layer, cv2.ROTATE_180)
        half = np.zeros_like(layer)
        half[: height // 2] = layer[: height // 2]
        half[height // 2 :] = rotated[height // 2 :]
        if card in "BR" or card[0] in "JQK":
            half[height // 3 : 2 * height // 3] = layer[height // 3 : 2 * height // 3]
        canvas[..., :3] = half
        cv2.rectangle(canvas, (0, 0), (width - 1, height - 1), (90, 90, 90, 255), 1)
        corner = np.zeros((height, width), np.uint8)
        cv2.rectangle(corner, (0, 0), (width - 1, height - 1), 255, -1, cv2.LINE_AA)
        radius = width // 16
        for cx, cy in ((0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)):
            cv2.rectangle(corner, (cx - radius, cy - radius), (cx + radius, cy + radius), 0, -1)
            inner = (
                radius if cx == 0 else width - 1 - radius,
                radius if cy == 0 else height - 1 - radius,
            )
            cv2.circle(corner, inner, radius, 255, -1, cv2.LINE_AA)
        canvas[..., 3] = corner
        faces[card] = canvas
        index[card] = tuple(int(v) for v in box)  # type: ignore[assignment]
    return Deck(name, faces, index)


def _own_deck(variant: int) -> Deck:
    """Draws the project's own deck; each variant changes font, stroke and layout."""
    rng = np.random.default_rng(1000 + variant)
    font = _FONTS[variant % len(_FONTS)] | (cv2.FONT_ITALIC if variant % 5 == 4 else 0)
    thickness = int(rng.integers(2, 5))
    stretch = float(rng.uniform(0.65, 1.3))
    width, height = FACE_WIDTH, int(FACE_WIDTH * rng.uniform(1.38, 1.5))
    glyph = int(FACE_WIDTH * rng.uniform(0.12, 0.17))
    red = (30, 30, int(rng.integers(170, 230)))
    black = black_ink(rng)
    joker = joker_word(rng)

    def ink(text: str, height: int, stretch: float) -> np.ndarray:
        return _hershey_ink(text, font, height, thickness, stretch)

    return drawn_deck(
        f"own{variant}",
        (width, height),
        glyph,
        stretch,
        variant % 3 == 2,
        # Every fourth variant prints its marks against the card's edge, as some decks do.
        int(width * (0.015 if variant % 4 == 3 else 0.06)),
        (red, black),
        ink,
        joker=joker,
    )
