"""Typeset decks: the project's own card faces with rank marks set in installed fonts.

A ``font<N>`` deck draws the same faces as the ``own`` decks (``faces.drawn_deck``)
but sets its rank marks in a real TrueType/OpenType font found by fontconfig, so the
network sees many more letterforms than OpenCV's Hershey fonts offer. The fonts come
from Debian packages, listed once as ``FONT_PACKAGES`` in ``scripts/lib.sh``
(``scripts/train`` installs them). All the strings a font needs are rendered once per
machine, in one ``rsvg-convert`` call, into a sheet cached in ``faces.cache_dir()``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import quoteattr

import cv2
import numpy as np

from table.errors import UserError
from table.vision import faces

LIB_SH = Path(__file__).resolve().parents[2] / "scripts" / "lib.sh"
"""Where the one list of font packages, ``FONT_PACKAGES``, is written."""
MAX_FONTS = 60
"""At most this many fonts (and ``font<N>`` decks) are used, spread over the families."""
SEED = 2000
"""Base seed of the per-variant layout; variant ``N`` uses ``SEED + N``."""

_RANKS_AND_JOKER = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "O", "E", "R")
GLYPHS = _RANKS_AND_JOKER + tuple(
    dict.fromkeys(
        letter
        for letters in faces.INDEX_LETTERS.values()
        for letter in letters.values()
        if letter not in _RANKS_AND_JOKER
    )
)
"""Every string a typeset deck draws: the ranks, the letters of ``JOKER`` and the court
letters of other languages' indices (``faces.INDEX_LETTERS``), in a fixed order."""
_NEEDED = "".join(sorted(set("".join(GLYPHS))))
_GLYPH_SET = hashlib.sha1("|".join(GLYPHS).encode()).hexdigest()[:8]
"""Part of a glyph sheet's cache name: a sheet drawn for other strings is not reused."""
FOREIGN_INDEX = 0.4
"""Share of the typeset decks whose index is Polish, German or French, one third each.

Decks sold in Poland, Germany or France print W, B or V for the jack, D for the queen,
R for the king. Taught none of them, the reader surely read a German queen's ``D`` as a
ten and a ``B`` as an eight, which a referee must never do."""
_SKIP_FAMILY = re.compile(
    r"symbol|emoji|math|dingbat|keyboard|mono|typewriter|cursor|courier|chorus|z003|"
    r"chancery|script|fraktur|ornament|d050000l|liberation",
    re.IGNORECASE,
)
"""Families left out: not letters, not Latin-like, monospaced or script designs; and
Liberation, which the test command installs and ``FONT_PACKAGES`` does not: with it,
six of the 60 decks changed font, so training after the tests gave another model."""
_FORMATS = (".otf", ".ttf")
"""Font files Pango (behind ``rsvg-convert``) renders; Type 1 copies are skipped."""

_CELL_W, _CELL_H, _COLUMNS, _FONT_PX = 300, 260, 6, 120
_INK = 40
"""Alpha (0-255) above which a rendered pixel counts as ink when cropping."""


@dataclass(frozen=True)
class FontFace:
    """One installed font face, with the fontconfig values that select it."""

    file: str
    family: str
    style: str
    weight: float
    slant: int
    width: int

    @property
    def key(self) -> str:
        """A short stable name of the face and its file, for cache file names."""
        try:
            stat = os.stat(self.file)
            stamp = f"{stat.st_size}|{int(stat.st_mtime)}"
        except OSError:
            stamp = ""
        text = "|".join(
            [
                self.file,
                stamp,
                self.family,
                self.style,
                f"{self.weight:g}|{self.slant}|{self.width}",
            ]
        )
        return hashlib.sha1(text.encode()).hexdigest()[:16]


# fontconfig weight <-> OpenType/CSS weight, the table Pango converts with.
_WEIGHTS = (
    (0, 0),
    (100, 0),
    (200, 40),
    (300, 50),
    (350, 55),
    (380, 75),
    (400, 80),
    (500, 100),
    (600, 180),
    (700, 200),
    (800, 205),
    (900, 210),
    (1000, 215),
)
_STRETCHES = (
    (50, "ultra-condensed"),
    (63, "extra-condensed"),
    (75, "condensed"),
    (87, "semi-condensed"),
    (100, "normal"),
    (113, "semi-expanded"),
    (125, "expanded"),
    (150, "extra-expanded"),
    (200, "ultra-expanded"),
)


def css_weight(fc_weight: float) -> int:
    """Converts a fontconfig weight to the CSS weight that Pango maps back onto it."""
    fc = [f for _, f in _WEIGHTS[1:]]
    css = [c for c, _ in _WEIGHTS[1:]]
    return round(float(np.interp(fc_weight, fc, css)))


def _fc_weight(css: int) -> float:
    """Converts a CSS weight to fontconfig's scale, as Pango does."""
    return float(np.interp(css, [c for c, _ in _WEIGHTS], [f for _, f in _WEIGHTS]))


def _stretch(width: int) -> tuple[int, str]:
    """Returns the CSS ``font-stretch`` nearest a fontconfig width, with its width."""
    return min(_STRETCHES, key=lambda item: abs(item[0] - width))


def _style(slant: int) -> str:
    """Converts a fontconfig slant to CSS ``font-style``."""
    return "normal" if slant < 50 else "italic" if slant < 105 else "oblique"


def _css_slant(slant: int) -> int:
    """Converts a fontconfig slant to the one Pango asks for with the CSS ``font-style``."""
    return 0 if slant < 50 else 100 if slant < 105 else 110


def _run(args: list[str]) -> str:
    """Runs a fontconfig tool and returns its output ('' when the tool is missing)."""
    if shutil.which(args[0]) is None:
        return ""
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    return result.stdout if result.returncode == 0 else ""


def _list_faces() -> list[FontFace]:
    """Lists installed static faces with English coverage and every needed character."""
    charset = " ".join(f"{ord(c):x}" for c in sorted(set(_NEEDED)))
    out = _run(
        [
            "fc-list",
            f":lang=en:charset={charset}",
            "-f",
            "%{file}|%{index}|%{family[0]}|%{style[0]}|%{weight}|%{slant}|%{width}|"
            "%{spacing}|%{variable}\\n",
        ]
    )
    found = []
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) != 9:
            continue
        file, index, family, style, weight, slant, width, spacing, variable = parts
        if (
            not file.lower().endswith(_FORMATS)
            or index not in ("", "0")
            or variable == "True"
            or spacing not in ("", "0")
            or _SKIP_FAMILY.search(family)
        ):
            continue
        try:
            face = FontFace(file, family, style, float(weight), int(slant), int(width))
        except ValueError:  # a range, e.g. a variable font's "[100 900]"
            continue
        found.append(face)
    return sorted(set(found), key=lambda f: (f.family, f.style, f.file))


def _preference(face: FontFace) -> tuple[int, int, float, str]:
    """Orders a family's faces: regular, bold, italic, condensed, then the rest."""
    upright, normal = face.slant == 0, 90 <= face.width <= 110
    regular, bold = 75 <= face.weight <= 100, 180 <= face.weight <= 210
    if upright and normal and regular:
        rank = 0
    elif upright and normal and bold:
        rank = 1
    elif normal and regular:
        rank = 2
    elif not normal and (regular or bold):
        rank = 3
    elif normal and bold:
        rank = 4
    else:
        rank = 5
    weight = abs(face.weight - 80) if face.weight < 140 else 1000 + abs(face.weight - 200)
    return rank, face.slant, weight, face.style


def resolves(face: FontFace) -> bool:
    """Tells whether asking for the face's family and style gets that very face.

    Asks ``fc-match`` with the values the renderer will ask for (CSS weight, style and
    stretch turned back into fontconfig's scale, as Pango does); fontconfig answers an
    unknown family with another font, which is then caught here.
    """
    stretch, _ = _stretch(face.width)
    pattern = (
        f"{_escape(face.family)}:weight={_fc_weight(css_weight(face.weight)):g}"
        f":slant={_css_slant(face.slant)}:width={stretch}"
    )
    out = _run(["fc-match", "-f", "%{file}|%{family[0]}|%{style[0]}", pattern])
    parts = out.split("|")
    if len(parts) != 3:
        return False
    file, family, style = parts
    return file == face.file or (family == face.family and style == face.style)


def _escape(family: str) -> str:
    """Escapes the characters fontconfig's pattern syntax treats specially."""
    return re.sub(r"([\\\-:,])", r"\\\1", family)


def font_packages() -> list[str]:
    """Reads the Debian font packages from ``FONT_PACKAGES`` in ``scripts/lib.sh``."""
    try:
        text = LIB_SH.read_text()
    except OSError:
        return []
    found = re.search(r"^FONT_PACKAGES=\(([^)]*)\)", text, re.MULTILINE)
    return found.group(1).split() if found else []


@lru_cache(maxsize=1)
def _usable_faces() -> tuple[FontFace, ...]:
    """Picks up to ``MAX_FONTS`` usable faces, a family at a time in turn."""
    by_family: dict[str, list[FontFace]] = {}
    for face in _list_faces():
        by_family.setdefault(face.family, []).append(face)
    queues = [sorted(group, key=_preference) for _, group in sorted(by_family.items())]
    chosen: list[FontFace] = []
    depth = 0
    while len(chosen) < MAX_FONTS and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(chosen) < MAX_FONTS and resolves(queue[depth]):
                chosen.append(queue[depth])
        depth += 1
    return tuple(chosen)


def typeset_fonts() -> list[str]:
    """Lists the usable font files, in the fixed order that numbers the ``font<N>`` decks.

    Faces are grouped by family (families sorted by name), each family's faces
    ordered regular, bold, italic, condensed, then the rest; the list takes one face
    of every family in turn, so the first decks cover the most designs. The same
    installed packages always give the same list.
    """
    return [face.file for face in _usable_faces()]


def typeset_decks() -> list[str]:
    """Names the available typeset decks, ``font0`` .. ``font<n-1>`` (none without fonts)."""
    return [f"font{i}" for i in range(len(_usable_faces()))]


def _sheet(face: FontFace) -> np.ndarray:
    """Renders (once) and loads the alpha sheet of every string in ``GLYPHS``."""
    target = faces.cache_dir() / f"typeset-{face.key}-{_GLYPH_SET}.png"
    if not target.exists():
        if shutil.which("rsvg-convert") is None:
            raise UserError("rsvg-convert is missing; install the librsvg2-bin package")
        _, stretch = _stretch(face.width)
        rows = -(-len(GLYPHS) // _COLUMNS)
        texts = "".join(
            f'<text x="{(i % _COLUMNS) * _CELL_W + 50}" y="{(i // _COLUMNS) * _CELL_H + 175}">'
            f"{text}</text>"
            for i, text in enumerate(GLYPHS)
        )
        svg = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_COLUMNS * _CELL_W}" '
            f'height="{rows * _CELL_H}"><g font-family={quoteattr(face.family)} '
            f'font-size="{_FONT_PX}px" font-weight="{css_weight(face.weight)}" '
            f'font-style="{_style(face.slant)}" font-stretch="{stretch}" '
            f'fill="#000">{texts}</g></svg>'
        )
        tmp = target.with_suffix(f".{os.getpid()}.tmp.png")
        subprocess.run(
            ["rsvg-convert", "-o", str(tmp)], input=svg.encode(), check=True, capture_output=True
        )
        tmp.replace(target)
    image = cv2.imread(str(target), cv2.IMREAD_UNCHANGED)
    if image is None or image.ndim != 3 or image.shape[2] != 4:
        raise UserError(f"cannot read the rendered glyph sheet {target}; delete it and retry")
    return image


def glyphs(face: FontFace) -> dict[str, np.ndarray]:
    """Slices the sheet into each string's ink, cropped tight, as 0-255 alpha."""
    alpha = _sheet(face)[..., 3]
    out = {}
    for i, text in enumerate(GLYPHS):
        row, col = divmod(i, _COLUMNS)
        cell = alpha[row * _CELL_H : (row + 1) * _CELL_H, col * _CELL_W : (col + 1) * _CELL_W]
        ys, xs = np.nonzero(cell > _INK)
        if len(xs) == 0:
            raise UserError(f"font {face.family} {face.style} drew nothing for {text!r}")
        out[text] = np.ascontiguousarray(cell[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])
    return out


def typeset_deck(variant: int) -> faces.Deck:
    """Draws deck ``font<variant>`` in the variant's font, size, stretch and layout.

    :raises UserError: when no usable font is installed, or fewer than ``variant + 1``.
    """
    usable = _usable_faces()
    if not usable:
        packages = " ".join(font_packages()) or "listed as FONT_PACKAGES in scripts/lib.sh"
        raise UserError(
            "no usable fonts for the typeset decks; install the Debian packages "
            f"{packages} (bash scripts/train does), plus fontconfig and librsvg2-bin"
        )
    if not 0 <= variant < len(usable):
        raise UserError(
            f"there is no deck font{variant}: the installed fonts give font0 .. "
            f"font{len(usable) - 1}"
        )
    face = usable[variant]
    marks = glyphs(face)
    cap = marks["K"].shape[0]
    rng = np.random.default_rng(SEED + variant)
    width, height = faces.FACE_WIDTH, int(faces.FACE_WIDTH * rng.uniform(1.38, 1.5))
    glyph = int(faces.FACE_WIDTH * rng.uniform(0.12, 0.17))
    stretch = float(rng.uniform(0.75, 1.25))
    beside = bool(rng.random() < 0.35)
    # From a mark against the card's edge (as some decks print them) to a wide border.
    margin = int(width * rng.uniform(0.01, 0.08))
    red = (30, 30, int(rng.integers(170, 230)))
    black = faces.black_ink(rng)
    foreign = [name for name in faces.INDEX_LETTERS if name != "english"]
    language = (
        foreign[int(rng.integers(len(foreign)))] if rng.random() < FOREIGN_INDEX else "english"
    )
    joker = faces.joker_word(rng)

    def ink(text: str, size: int, wide: float) -> np.ndarray:
        """Scales the string so a capital is ``size`` high and ``wide`` times as wide."""
        scale = size / cap
        coverage = marks[text]
        shape = (
            max(1, round(coverage.shape[1] * scale * wide)),
            max(1, round(coverage.shape[0] * scale)),
        )
        return cv2.resize(coverage, shape, interpolation=cv2.INTER_AREA)

    return faces.drawn_deck(
        f"font{variant}",
        (width, height),
        glyph,
        stretch,
        beside,
        margin,
        (red, black),
        ink,
        faces.INDEX_LETTERS[language],
        joker=joker,
    )
