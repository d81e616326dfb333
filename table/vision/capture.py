"""Cuts the faces of cards laid apart on the table out of a frame, to learn their deck.

A deck the reader was not trained on is read less well (its jokers above all). A
person shows the deck once, a suit at a time, each card whole and apart from the
others; the faces cut here become a deck that :mod:`table.vision.synth` lays in
scenes and :mod:`table.vision.train` fine-tunes the reader on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from table.errors import UserError
from table.vision.faces import FACE_WIDTH
from table.vision.recognize import SUITS, SURE, Detection
from table.vision.synth import RANK_CODES

LEARN_ORDER: tuple[tuple[str, ...], ...] = (
    *(tuple(rank + suit for rank in RANK_CODES[:-2]) for suit in SUITS),
    ("B", "R"),
)
"""The cards of each frame shown to ``vision learn``, in reading order: a suit from 3 to 2
(spades, hearts, diamonds, clubs), then the black and the red joker."""
CARD_ASPECT = (1.15, 1.75)
"""Height over width a card's outline must have: 88/63 = 1.40 for a standard card."""
LEAST_CARD_AREA = 1500
"""Pixels a card must cover: a card 80 px wide covers about 9000."""
TABLE_OPEN = (3, 3)
"""Opening, in pixels, that drops specks of table colour (noise, a green print on a card)."""
TABLE_COLOUR = 30.0
"""Lab distance from the table's colour within which a pixel may be table (felt or wood)."""
LIGHTNESS_WEIGHT = 0.4
"""Weight of lightness in that distance: the shadow a card casts changes little else."""
TABLE_SHARE = 0.05
"""Share of the frame a dark region must cover to be the table."""
SHEET_NAME = "shown.png"
"""The picture of every learnt face with its name, written with the faces."""
ROW_SHARE = 0.5
"""Cards whose centres differ by less than this share of a card's height lie in one row."""


def _whiteness(image: np.ndarray) -> np.ndarray:
    """Returns the darkest channel less the colour spread: high on paper, low on felt or wood."""
    low = image.min(axis=2).astype(np.int16)
    spread = image.max(axis=2).astype(np.int16) - low
    return np.clip(low - spread, 0, 255).astype(np.uint8)


def _outlines(image: np.ndarray) -> list[np.ndarray]:
    """Returns the outline (a convex polygon) of every card-shaped white region of a frame.

    A region cut by the frame's edge is not a whole card; one much smaller or larger
    than the others (a corner marker's paper) is not a card of the deck.
    """
    height, width = image.shape[:2]
    white = cv2.GaussianBlur(_whiteness(image), (5, 5), 0)
    _, dark = cv2.threshold(white, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    if not dark.any() or dark.all():
        return []  # one even colour: no card on a table
    # The table is the broad region of the table's own colour (the commonest dark
    # colour): the pictures on court cards are dark too, but of other colours.
    lab = cv2.cvtColor(cv2.GaussianBlur(image, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    lab[..., 0] *= LIGHTNESS_WEIGHT
    colour = np.median(lab[dark.astype(bool)], axis=0)
    near = (np.linalg.norm(lab - colour, axis=2) < TABLE_COLOUR).astype(np.uint8)
    broad = cv2.morphologyEx(
        near, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, TABLE_OPEN)
    )
    _, labels, stats, _ = cv2.connectedComponentsWithStats(broad, connectivity=4)
    large = 1 + np.nonzero(stats[1:, cv2.CC_STAT_AREA] > TABLE_SHARE * dark.size)[0]
    mask = (~np.isin(labels, large)).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cards: list[tuple[float, np.ndarray]] = []
    for contour in contours:
        hull = cv2.convexHull(contour)
        x, y, w, h = cv2.boundingRect(hull)
        if x == 0 or y == 0 or x + w == width or y + h == height:
            continue
        (_, _), (side, other), _ = cv2.minAreaRect(hull)
        area = cv2.contourArea(hull)
        if min(side, other) < 1 or area < LEAST_CARD_AREA:
            continue
        aspect = max(side, other) / min(side, other)
        # A card's outline fills its box but for the rounded corners.
        if CARD_ASPECT[0] <= aspect <= CARD_ASPECT[1] and area > 0.85 * side * other:
            cards.append((area, hull))
    if not cards:
        return []
    usual = float(np.median([area for area, _ in cards]))
    return [hull for area, hull in cards if 0.5 * usual <= area <= 2 * usual]


def _reading_order(outlines: list[np.ndarray]) -> list[np.ndarray]:
    """Sorts outlines into rows from the top of the frame, each row from the left."""
    centres = [o.reshape(-1, 2).mean(axis=0) for o in outlines]
    heights = [max(cv2.minAreaRect(o)[1]) for o in outlines]
    order = sorted(range(len(outlines)), key=lambda i: centres[i][1])
    rows: list[list[int]] = []
    for i in order:
        if rows and centres[i][1] - centres[rows[-1][0]][1] < ROW_SHARE * heights[i]:
            rows[-1].append(i)
        else:
            rows.append([i])
    return [outlines[i] for row in rows for i in sorted(row, key=lambda k: centres[k][0])]


def _upright_corners(outline: np.ndarray) -> np.ndarray:
    """Returns the outline's box corners, clockwise on screen, from a corner of a short side.

    A card prints its index in two opposite corners, so either short side may come first.
    """
    corners = cv2.boxPoints(cv2.minAreaRect(outline)).astype(np.float32)
    edge, side = corners[1] - corners[0], corners[2] - corners[1]
    if edge[0] * side[1] - edge[1] * side[0] < 0:
        corners = corners[::-1].copy()
    if np.linalg.norm(corners[1] - corners[0]) > np.linalg.norm(corners[2] - corners[1]):
        corners = np.roll(corners, -1, axis=0)
    return corners


@dataclass(frozen=True)
class ShownCard:
    """One card of a learning frame: its outline in the frame and its upright BGRA face."""

    outline: np.ndarray
    face: np.ndarray


def cut_cards(image: np.ndarray, expected: int) -> list[ShownCard]:
    """Returns each card laid apart in the frame, in reading order, with its face cut out.

    Each face is turned upright (its long side vertical) and scaled to
    ``FACE_WIDTH`` pixels wide; its alpha is the card's outline, so the table
    showing at the rounded corners is left out.

    :raises UserError: when the frame does not show exactly ``expected`` cards apart.
    """
    if image is None or image.size == 0:
        raise UserError("the frame is empty: check the camera or the image file")
    outlines = _reading_order(_outlines(image))
    if len(outlines) != expected:
        raise UserError(
            f"found {len(outlines)} cards where {expected} were expected: lay each card "
            "face up, whole, in view and apart from the others (a finger's width between "
            "cards), in rows from the top left, with no glare on or between them, and keep "
            "hands out of the picture"
        )
    shown = []
    mask = np.zeros(image.shape[:2], np.uint8)
    for outline in outlines:
        corners = _upright_corners(outline)
        width = np.linalg.norm(corners[1] - corners[0])
        height = np.linalg.norm(corners[2] - corners[1])
        size = (FACE_WIDTH, round(FACE_WIDTH * height / width))
        target = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float32)
        warp = cv2.getPerspectiveTransform(corners, target)
        face = cv2.warpPerspective(image, warp, size, flags=cv2.INTER_CUBIC)
        mask[:] = 0
        cv2.fillConvexPoly(mask, outline.reshape(-1, 2), 255)
        alpha = cv2.warpPerspective(mask, warp, size, flags=cv2.INTER_LINEAR)
        shown.append(ShownCard(outline, np.dstack([face, alpha])))
    return shown


def spoken(card: str) -> str:
    """Names a card id or rank code as a player says it: ``10``, ``Q``, ``red joker``."""
    names = {"T": "10", "B": "black joker", "R": "red joker"}
    return names.get(card[0], card[0])


def out_of_order(
    shown: Sequence[ShownCard], cards: Sequence[str], readings: Sequence[Detection]
) -> list[tuple[int, str]]:
    """Lists the shown cards the reader surely reads as another card, by place (from 1).

    Most likely the cards were not laid in the asked order; a face learnt under the
    wrong name would teach the reader that name.
    """
    wrong = []
    for place, (card, one) in enumerate(zip(cards, shown, strict=True), start=1):
        outline = one.outline.astype(np.float32)
        seen = {
            d.card
            for d in readings
            if d.confidence >= SURE
            and cv2.pointPolygonTest(outline, (float(d.center[0]), float(d.center[1])), False) >= 0
        }
        if seen and card[0] not in seen:
            wrong.append((place, " or ".join(sorted(spoken(code) for code in seen))))
    return wrong


def contact_sheet(faces: dict[str, np.ndarray]) -> np.ndarray:
    """Returns every face at half size with its name below, a row per group, for a person
    to check that each face is the card it is named."""
    width = FACE_WIDTH // 2
    height = round(width * np.median([f.shape[0] / f.shape[1] for f in faces.values()]))
    rows = []
    for cards in LEARN_ORDER:
        row = np.full((height + 24, width * len(LEARN_ORDER[0]), 3), 255, np.uint8)
        for col, card in enumerate(c for c in cards if c in faces):
            face = cv2.resize(faces[card], (width, height), interpolation=cv2.INTER_AREA)
            alpha = face[..., 3:4].astype(np.float32) / 255
            tile = face[..., :3] * alpha + 255 * (1 - alpha)
            row[:height, col * width : (col + 1) * width] = tile.astype(np.uint8)
            name = spoken(card) + ("" if card in "BR" else card[1])
            cv2.putText(
                row, name, (col * width + 4, height + 18), cv2.FONT_HERSHEY_SIMPLEX, 0.5, 0, 1
            )
        rows.append(row)
    return np.vstack(rows)


def save_deck(faces: dict[str, np.ndarray], directory: Path) -> None:
    """Writes each face as ``CARD.png`` (``As``, ``Th``, ``B``...), all at one size.

    :func:`table.vision.faces.load_deck` loads the folder back as a deck; ``shown.png``
    (:func:`contact_sheet`) is for a person to check them.
    """
    height = int(np.median([f.shape[0] for f in faces.values()]))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot make the deck folder {directory} ({error})") from error
    for card, face in faces.items():
        resized = cv2.resize(face, (FACE_WIDTH, height), interpolation=cv2.INTER_AREA)
        if not cv2.imwrite(str(directory / f"{card}.png"), resized):
            raise UserError(f"cannot write {directory / card}.png; check the folder is writable")
    cv2.imwrite(str(directory / SHEET_NAME), contact_sheet(faces))
