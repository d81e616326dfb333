"""Renders overhead pictures of a card table with ground truth.

Tests, model training, the benchmark and the demo's virtual camera all use
:func:`render_table`. Cards are laid in the zones of a :class:`TableLayout` as
fanned, overlapping plays (a later play of a zone lies on top of the earlier
ones); the camera adds mild perspective, uneven light, a glare spot, blur, noise
and JPEG compression, and optionally a hand reaching over the table.
:func:`render_spread` lays cards apart instead, as a person shows a deck to
``ddz-table vision learn``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from table.vision.calibration import CARD_MM, TableLayout, marker_image
from table.vision.faces import SHEET_SUITS, ink_mask, load_deck

VISIBLE = 0.9
"""Fraction of a rank mark that must be uncovered for the card to count as readable."""
RANK_CODES = "3456789TJQKA2BR"
"""Rank codes from low to high, the canonical order of a play."""
Placement = tuple[str, str, int, np.ndarray]
"""A card laid on the table: card id, zone, play number in the zone, face-to-table map."""


@dataclass(frozen=True)
class CardTruth:
    """One rendered card: what it is, where it lies and whether its index can be read.

    ``quad`` is the card outline in image pixels (top-left, top-right,
    bottom-right, bottom-left of the face). ``marks`` holds each rank mark as its
    quad in image pixels, oriented like the mark (first edge along its x axis),
    with the fraction of it that is in view.
    """

    card: str
    suit: str | None
    zone: str
    play: int
    quad: tuple[tuple[float, float], ...]
    marks: tuple[tuple[tuple[tuple[float, float], ...], float], ...]

    @property
    def index_centres(self) -> list[tuple[float, float]]:
        """Returns the centres of the rank marks that are in view."""
        out = []
        for quad, seen in self.marks:
            if seen >= VISIBLE:
                xs, ys = zip(*quad, strict=True)
                out.append((sum(xs) / 4, sum(ys) / 4))
        return out

    @property
    def is_readable(self) -> bool:
        """Tells whether at least one rank mark of the card is in view."""
        return bool(self.index_centres)

    def to_dict(self) -> dict[str, Any]:
        """Returns plain data for a JSON truth file."""
        return {
            "card": self.card,
            "suit": self.suit,
            "zone": self.zone,
            "play": self.play,
            "quad": [list(p) for p in self.quad],
            "marks": [{"quad": [list(p) for p in q], "seen": seen} for q, seen in self.marks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CardTruth:
        """Reads one card back from :meth:`to_dict` data."""
        return cls(
            card=str(data["card"]),
            suit=data.get("suit"),
            zone=str(data["zone"]),
            play=int(data["play"]),
            quad=tuple((float(x), float(y)) for x, y in data["quad"]),
            marks=tuple(
                (tuple((float(x), float(y)) for x, y in m["quad"]), float(m["seen"]))
                for m in data["marks"]
            ),
        )


@dataclass(frozen=True)
class Scene:
    """Ground truth of one rendered picture, with the table-to-image homography."""

    cards: tuple[CardTruth, ...]
    deck: str
    table_to_image: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """Returns plain data for a JSON truth file."""
        return {
            "deck": self.deck,
            "table_to_image": self.table_to_image.tolist(),
            "cards": [card.to_dict() for card in self.cards],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scene:
        """Reads a truth file written from :meth:`to_dict`."""
        return cls(
            cards=tuple(CardTruth.from_dict(c) for c in data["cards"]),
            deck=str(data.get("deck", "")),
            table_to_image=np.array(data["table_to_image"], np.float64),
        )


def _card_ids(play: str | Sequence[str], rng: np.random.Generator) -> list[str]:
    """Turns ``"3s 4 Th B"`` or ``["3s", "4"]`` into sheet card ids, picking missing suits."""
    tokens = play.replace(",", " ").split() if isinstance(play, str) else list(play)
    ids: list[str] = []
    for token in tokens:
        for item in _split(token):
            rank = "T" if item.startswith("10") else item[0].upper()
            if rank in "BR":
                ids.append(rank)
                continue
            suit = item[-1].lower() if len(item) > 1 and item[-1].lower() in "shdc" else None
            ids.append(rank + (suit or SHEET_SUITS[int(rng.integers(4))]))
    return ids


def _split(token: str) -> list[str]:
    """Splits a run such as ``"33344456"`` or ``"10JQ"`` into single cards."""
    out: list[str] = []
    i = 0
    while i < len(token):
        if token.startswith("10", i):
            out.append("T")
            i += 2
            continue
        item = token[i]
        if i + 1 < len(token) and token[i + 1].lower() in "shdc":
            item += token[i + 1]
            i += 1
        out.append(item)
        i += 1
    return out


def _background(size: tuple[int, int], rng: np.random.Generator, kind: str) -> np.ndarray:
    """Draws a felt or wood texture of ``size`` (width, height)."""
    width, height = size
    if kind == "wood":
        base = np.array(rng.uniform([20, 60, 110], [70, 120, 180]), np.float32)
        grain = rng.normal(0, 1, (height // 4 + 1, 1)).astype(np.float32)
        grain = cv2.GaussianBlur(grain, (1, 0), sigmaX=1, sigmaY=3)
        stripes = cv2.resize(grain, (width, height), interpolation=cv2.INTER_LINEAR)
        tex = base[None, None, :] * (1 + 0.12 * stripes[..., None])
        if rng.random() < 0.5:
            tex = cv2.rotate(cv2.resize(tex, (height, width)), cv2.ROTATE_90_CLOCKWISE)
    else:
        base = np.array(rng.uniform([30, 90, 10], [90, 150, 60]), np.float32)
        if rng.random() < 0.25:
            base = base[[1, 0, 2]] if rng.random() < 0.5 else base[[2, 0, 1]] * 0.7
        tex = np.broadcast_to(base, (height, width, 3)).astype(np.float32)
    noise = rng.normal(0, 1, (height // 8 + 1, width // 8 + 1)).astype(np.float32)
    noise = cv2.resize(noise, (width, height), interpolation=cv2.INTER_LINEAR)
    return tex * (1 + 0.05 * noise[..., None])


def _camera(
    layout: TableLayout, size: tuple[int, int], rng: np.random.Generator, scale: float
) -> np.ndarray:
    """Picks a table-to-image homography: ``scale`` px per mm with mild tilt and turn."""
    width, height = size
    w, h = layout.width_mm, layout.height_mm
    angle = rng.uniform(-0.05, 0.05)
    c, s = np.cos(angle), np.sin(angle)
    table = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    centred = (table - [w / 2, h / 2]) * scale
    turned = centred @ np.array([[c, s], [-s, c]], np.float32)
    centre = np.array([width / 2, height / 2]) + rng.uniform(-0.012, 0.012, 2) * [width, height]
    keystone = rng.uniform(-0.025, 0.025, (4, 2)) * [w * scale, h * scale]
    image = (turned + centre + keystone).astype(np.float32)
    return cv2.getPerspectiveTransform(table, image)


def _face_to_table(face_size: tuple[int, int], centre: np.ndarray, angle: float) -> np.ndarray:
    """Maps from face pixels to table mm for a card at ``centre`` turned ``angle``."""
    fw, fh = face_size
    sx, sy = CARD_MM[0] / fw, CARD_MM[1] / fh
    c, s = np.cos(angle), np.sin(angle)
    to_centre = np.array([[sx, 0, -CARD_MM[0] / 2], [0, sy, -CARD_MM[1] / 2], [0, 0, 1]])
    turn = np.array([[c, -s, centre[0]], [s, c, centre[1]], [0, 0, 1]])
    return turn @ to_centre


def _lay_play(
    ids: list[str],
    zone: tuple[float, float, float, float],
    zone_name: str,
    play: int,
    rng: np.random.Generator,
) -> list[tuple[str, np.ndarray, float]]:
    """Places one play as a fan inside a zone: card id, centre (mm) and angle per card."""
    x0, y0, x1, y1 = zone
    facing = {"seat1": -np.pi / 2, "seat2": np.pi, "seat3": np.pi / 2}.get(zone_name, 0.0)
    if zone_name == "kitty":
        facing = 0.0
    base = facing + rng.normal(0, 0.18)
    spacing = rng.uniform(17, 26)
    arc = rng.uniform(-0.05, 0.05) if rng.random() < 0.5 else 0.0
    per_row = 10
    rows = [ids[i : i + per_row] for i in range(0, len(ids), per_row)]
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2]) + rng.uniform(-12, 12, 2)
    if play:
        centre = centre + rng.uniform(-25, 25, 2)
    placed: list[tuple[str, np.ndarray, float]] = []
    along = np.array([np.cos(base), np.sin(base)])
    down = np.array([-np.sin(base), np.cos(base)])
    for r, row in enumerate(rows):
        offset = (r - (len(rows) - 1) / 2) * 34.0
        for i, card in enumerate(row):
            k = i - (len(row) - 1) / 2
            angle = base + arc * k + rng.normal(0, 0.03)
            if rng.random() < 0.12:
                angle += np.pi
            pos = (
                centre
                + along * (k * spacing)
                + down * (offset + abs(k) * arc * 6)
                + rng.normal(0, 0.8, 2)
            )
            placed.append((card, pos, float(angle)))
    return placed


REPEAT_SHIFT = 4
"""Pixels a repeated rank mark may sit off the place where the first one would repeat."""
REPEAT_IOU = 0.65
"""Overlap of ink, and of paper, above which a repeated rank mark is taken to be there."""


def _find_repeat(mark: np.ndarray, ink: np.ndarray, at: tuple[int, int]) -> tuple[int, int] | None:
    """Returns where ``ink`` repeats the ink ``mark``, within ``REPEAT_SHIFT`` pixels of ``at``.

    The paper between the strokes must match as well as the ink, so that the
    solid inside of a large pip, which covers any mark, is not taken for one.
    """
    height, width = mark.shape
    best: tuple[float, tuple[int, int]] | None = None
    for y in range(at[1] - REPEAT_SHIFT, at[1] + REPEAT_SHIFT + 1):
        for x in range(at[0] - REPEAT_SHIFT, at[0] + REPEAT_SHIFT + 1):
            if x < 0 or y < 0 or x + width > ink.shape[1] or y + height > ink.shape[0]:
                continue
            seen = ink[y : y + height, x : x + width]
            ink_iou = (mark & seen).sum() / max((mark | seen).sum(), 1)
            paper_iou = (~mark & ~seen).sum() / max((~mark | ~seen).sum(), 1)
            score = float(min(ink_iou, paper_iou))
            if best is None or score > best[0]:
                best = (score, (x, y))
    return best[1] if best is not None and best[0] > REPEAT_IOU else None


def mark_quads(face: np.ndarray, box: tuple[int, int, int, int]) -> list[np.ndarray]:
    """Returns the face-pixel quads of a card's rank marks, each oriented like its mark.

    ``box`` is the top-left mark (see :func:`table.vision.faces.find_index_box`).
    The truth also needs every mark the design repeats, or training would call
    them background: the mark turned 180 degrees at the opposite corner, and an
    upright copy at the top right with its own turned twin at the bottom left.
    """
    x0, y0, x1, y1 = box
    ink = ink_mask(face).astype(bool)
    fh, fw = ink.shape
    mark = ink[y0:y1, x0:x1]
    upright = [(x0, y0)]
    top_right = _find_repeat(mark, ink, (fw - x1, y0))
    if top_right is not None and top_right[0] > x1:
        upright.append(top_right)
    w, h = x1 - x0, y1 - y0
    quads = []
    for x, y in upright:
        quads.append(np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64))
        twin = _find_repeat(mark, ink[::-1, ::-1], (x, y))
        if twin is not None:
            tx, ty = twin
            at_twin = quads[-1] + [tx - x, ty - y]
            quads.append(np.array([fw, fh], np.float64) - at_twin)
    return quads


@lru_cache(maxsize=4096)
def _index_boxes(deck_name: str, card: str) -> tuple[np.ndarray, ...]:
    """Returns the rank-mark quads of one card of a deck, found once per card and design."""
    deck = load_deck(deck_name)
    return tuple(mark_quads(deck.faces[card], deck.index[card]))


def _apply(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Maps ``(n, 2)`` points through a 3x3 homography."""
    return cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), m).reshape(-1, 2)


def _draw_hand(canvas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Paints an arm and hand reaching in from a frame edge; returns the covered pixels."""
    height, width = canvas.shape[:2]
    mask = np.zeros((height, width), np.uint8)
    edge = int(rng.integers(4))
    tip = np.array([rng.uniform(0.2, 0.8) * width, rng.uniform(0.2, 0.8) * height])
    start = [
        np.array([tip[0] + rng.uniform(-200, 200), height + 50]),
        np.array([width + 50, tip[1] + rng.uniform(-150, 150)]),
        np.array([tip[0] + rng.uniform(-200, 200), -50]),
        np.array([-50, tip[1] + rng.uniform(-150, 150)]),
    ][edge]
    cv2.line(
        mask, start.astype(int).tolist(), tip.astype(int).tolist(), 1, int(rng.uniform(70, 110))
    )
    cv2.circle(mask, tip.astype(int).tolist(), int(rng.uniform(45, 70)), 1, -1)
    covered = mask.astype(bool)
    skin = np.array(rng.uniform([60, 90, 140], [140, 170, 230]), np.float32)
    shading = cv2.GaussianBlur(mask.astype(np.float32), (0, 0), 15)[covered]
    canvas[covered] = skin * (0.75 + 0.25 * shading[:, None])
    return covered


def _light(canvas: np.ndarray, rng: np.random.Generator) -> None:
    """Applies an uneven light gradient and, sometimes, a glare spot, in place."""
    height, width = canvas.shape[:2]
    ys, xs = np.mgrid[0:height:8, 0:width:8].astype(np.float32)
    gx, gy = rng.uniform(-1, 1, 2)
    gain = rng.uniform(0.7, 1.15) + 0.25 * (gx * xs / width + gy * ys / height - (gx + gy) / 2)
    gain = cv2.resize(gain.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)
    canvas *= gain[..., None]
    if rng.random() < 0.5:
        cx, cy = rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height
        radius = rng.uniform(20, 60)
        x0, x1 = int(max(cx - 3 * radius, 0)), int(min(cx + 3 * radius, width))
        y0, y1 = int(max(cy - 3 * radius, 0)), int(min(cy + 3 * radius, height))
        yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        spot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * radius**2))
        canvas[y0:y1, x0:x1] += 160 * spot[..., None]


def render_table(
    cards_by_zone: Mapping[str, str | Sequence[str | Sequence[str]]],
    seed: int,
    *,
    deck: str = "own0",
    size: tuple[int, int] = (1280, 720),
    layout: TableLayout | None = None,
    background: str | None = None,
    frame: int = 0,
    hand: bool = False,
    px_per_mm: float | None = None,
) -> tuple[np.ndarray, Scene]:
    """Renders one BGR frame of the table and its ground truth.

    ``cards_by_zone`` maps a zone name to one play as text (``"33344456"``,
    ``"3s 4h Th"``) or to a list of plays laid one after another, each as text or
    as a list of card tokens (``["3s", "4h"]``). The
    ``seed`` fixes the table, camera and card placement, so a sequence of frames
    of one game uses one seed and changes ``frame`` (noise, light) and the plays.

    >>> image, scene = render_table({"seat0": "345"}, seed=1)
    >>> image.shape, sorted(c.card for c in scene.cards)
    ((720, 1280, 3), ['3', '4', '5'])
    """
    layout = layout or TableLayout()
    theme = load_deck(deck)
    placements: list[Placement] = []
    for zone_name, plays in cards_by_zone.items():
        if zone_name not in layout.zones:
            raise ValueError(f"unknown zone {zone_name!r}; the layout has {sorted(layout.zones)}")
        play_list = [plays] if isinstance(plays, str) else list(plays)
        for p, play in enumerate(play_list):
            play_rng = np.random.default_rng([seed, p, *zone_name.encode()])
            ids = _card_ids(play, play_rng)
            for card, centre, angle in _lay_play(
                ids, layout.zones[zone_name], zone_name, p, play_rng
            ):
                placements.append(
                    (
                        card,
                        zone_name,
                        p,
                        _face_to_table(
                            (theme.faces[card].shape[1], theme.faces[card].shape[0]), centre, angle
                        ),
                    )
                )
    return _photograph(
        placements,
        seed,
        deck=deck,
        size=size,
        layout=layout,
        background=background,
        frame=frame,
        hand=hand,
        px_per_mm=px_per_mm,
    )


SPREAD_GAP_MM = (20.0, 20.0)
"""Gaps between the cards of a spread, across and down the table."""
SPREAD_ROW = 7
"""Cards in one row of a spread: 13 fit in two rows on the default table."""


def render_spread(
    cards: Sequence[str],
    seed: int,
    *,
    deck: str = "own0",
    layout: TableLayout | None = None,
    frame: int = 0,
    px_per_mm: float | None = None,
) -> tuple[np.ndarray, Scene]:
    """Renders cards laid apart, face up, in rows across the table, in reading order.

    This is how a person shows a deck to ``ddz-table vision learn``: each card
    whole and on its own. Cards lie roughly upright, each turned a little.
    """
    layout = layout or TableLayout()
    theme = load_deck(deck)
    rng = np.random.default_rng([seed, 11])
    rows = [list(cards[i : i + SPREAD_ROW]) for i in range(0, len(cards), SPREAD_ROW)]
    step = np.add(CARD_MM, SPREAD_GAP_MM)
    middle = np.array([layout.width_mm / 2, layout.height_mm / 2])
    placements: list[Placement] = []
    for r, row in enumerate(rows):
        for i, card in enumerate(row):
            offset = np.array([i - (len(row) - 1) / 2, r - (len(rows) - 1) / 2]) * step
            centre = middle + offset + rng.uniform(-3, 3, 2)
            size = (theme.faces[card].shape[1], theme.faces[card].shape[0])
            angle = float(rng.normal(0, 0.04)) + (np.pi if rng.random() < 0.5 else 0.0)
            placements.append((card, "spread", 0, _face_to_table(size, centre, angle)))
    return _photograph(placements, seed, deck=deck, layout=layout, frame=frame, px_per_mm=px_per_mm)


def _photograph(
    placements: list[Placement],
    seed: int,
    *,
    deck: str,
    layout: TableLayout,
    size: tuple[int, int] = (1280, 720),
    background: str | None = None,
    frame: int = 0,
    hand: bool = False,
    px_per_mm: float | None = None,
) -> tuple[np.ndarray, Scene]:
    """Lays the placed cards on a table, in order, and photographs it with its truth."""
    rng = np.random.default_rng(seed)
    frame_rng = np.random.default_rng([seed, frame, 7])
    theme = load_deck(deck)
    kind = background or ("wood" if rng.random() < 0.4 else "felt")
    width, height = size
    scale = px_per_mm or float(rng.uniform(1.28, 1.38))
    table_to_image = _camera(layout, size, rng, scale * min(width / 1280, height / 720))
    canvas = _background(size, rng, kind)
    ids_map = np.zeros((height, width), np.uint8)

    src = np.array([[0, 0], [160, 0], [160, 160], [0, 160]], np.float32)
    for marker, corners in layout.marker_corners().items():
        # The marker on a white paper square with a quiet zone a quarter marker wide.
        tile = np.full((160, 160), 255, np.uint8)
        tile[20:140, 20:140] = marker_image(marker, 120)
        paper = corners.mean(axis=0) + (corners - corners.mean(axis=0)) * (160 / 120)
        m = cv2.getPerspectiveTransform(src, _apply(table_to_image, paper).astype(np.float32))
        warped = cv2.warpPerspective(tile, m, size, flags=cv2.INTER_LINEAR)
        mask = cv2.warpPerspective(np.full_like(tile, 255), m, size) > 127
        canvas[mask] = (warped[mask, None] * 0.92).astype(np.float32)

    index_quads: list[list[np.ndarray]] = []
    for number, (card, _zone, _play, face_to_table) in enumerate(placements, start=1):
        face = theme.faces[card]
        fh, fw = face.shape[:2]
        m = table_to_image @ face_to_table
        quad = _apply(m, [[0, 0], [fw, 0], [fw, fh], [0, fh]])
        x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 3
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 3
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
        if x1 <= x0 or y1 <= y0:
            index_quads.append([])
            continue
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
        local = shift @ m
        roi = (slice(y0, y1), slice(x0, x1))
        warped = cv2.warpPerspective(
            face,
            local,
            (x1 - x0, y1 - y0),
            flags=cv2.INTER_AREA if fw > 2 * (x1 - x0) else cv2.INTER_LINEAR,
            borderValue=(0, 0, 0, 0),
        )
        alpha = warped[..., 3:4].astype(np.float32) / 255.0
        shadow = cv2.GaussianBlur(alpha[..., 0], (0, 0), 2.0)
        part = canvas[roi]
        part *= 1 - 0.35 * np.roll(np.roll(shadow, 2, axis=0), 1, axis=1)[..., None] * (1 - alpha)
        canvas[roi] = part * (1 - alpha) + warped[..., :3].astype(np.float32) * alpha
        ids_map[roi][alpha[..., 0] > 0.5] = number
        index_quads.append([_apply(m, box) for box in _index_boxes(deck, card)])

    if hand:
        ids_map[_draw_hand(canvas, frame_rng)] = 0

    _light(canvas, frame_rng)
    image = np.clip(canvas, 0, 255).astype(np.uint8)
    sigma = frame_rng.uniform(0.0, 1.0)
    if sigma > 0.35:
        image = cv2.GaussianBlur(image, (0, 0), sigma)
    noise = frame_rng.normal(0, frame_rng.uniform(1, 5), image.shape).astype(np.float32)
    image = np.clip(image.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    quality = int(frame_rng.integers(55, 95))
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if ok:
        image = cv2.imdecode(encoded, cv2.IMREAD_COLOR)

    truths: list[CardTruth] = []
    for number, (card, zone_name, play, face_to_table) in enumerate(placements, start=1):
        face = theme.faces[card]
        fh, fw = face.shape[:2]
        m = table_to_image @ face_to_table
        quad = _apply(m, [[0, 0], [fw, 0], [fw, fh], [0, fh]])
        marks = []
        for box in index_quads[number - 1]:
            bx0, by0 = np.maximum(np.floor(box.min(axis=0)).astype(int), 0)
            bx1, by1 = np.ceil(box.max(axis=0)).astype(int) + 1
            quad_out = tuple((round(float(x), 1), round(float(y), 1)) for x, y in box)
            if bx1 > width or by1 > height or bx1 <= bx0 or by1 <= by0 or box.min() < 0:
                marks.append((quad_out, 0.0))
                continue
            mask = np.zeros((by1 - by0, bx1 - bx0), np.uint8)
            cv2.fillConvexPoly(mask, (box - [bx0, by0]).round().astype(np.int32), 1)
            inside = mask.astype(bool)
            seen = (
                float((ids_map[by0:by1, bx0:bx1][inside] == number).mean()) if inside.any() else 0.0
            )
            marks.append((quad_out, round(seen, 3)))
        truths.append(
            CardTruth(
                card=card[0],
                suit=card[1] if len(card) > 1 else None,
                zone=zone_name,
                play=play,
                quad=tuple((round(float(x), 1), round(float(y), 1)) for x, y in quad),
                marks=tuple(marks),
            )
        )
    return image, Scene(tuple(truths), deck, table_to_image)
