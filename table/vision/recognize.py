"""Reads the face-up cards in a frame from their corner rank marks.

The reader never needs a whole card: fanned plays often show only the corner of
each card. It works in four steps, all pure functions of the image:

1. *Marks*: every printed blob (dark or coloured) enclosed by white card face, or
   by the table or a picture next to the face, is a candidate rank mark.
2. *Orientation*: the card edges around a blob give the card's axes up to a
   quarter turn (an edge-orientation average weighted by gradient strength).
3. *Reading*: a crop around the blob, scaled by the blob's size, is read in each of
   the four quarter turns by three small neural networks, averaged (``model.npz``,
   trained by ``table/vision/train.py`` on rendered scenes); the turn that looks
   most like an upright rank mark wins; an unsure candidate is read again in crops
   cut a little larger, smaller, wider and narrower, the looks averaged, and a small
   convolutional network (``convnet.onnx``, run by ``cv2.dnn``) has its say. Red
   against black comes from the blob's own pixels. Given the camera's deck memory
   (``table.vision.memory``), an unsure mark like the deck's remembered ones of
   the rank it leans to is read, unsure.
4. *One card, one reading*: the pieces of one mark (the two digits of ``10``, the
   letters of ``JOKER``) and the two opposite corner marks of one card are merged.
"""

from __future__ import annotations

import math
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, cached_property, lru_cache
from pathlib import Path

import cv2
import numpy as np

from table.errors import UserError
from table.vision.memory import LEANING, DeckMemory, Readings, remembered

MODEL_PATH = Path(__file__).with_name("model.npz")
CONVNET_PATH = Path(__file__).with_name("convnet.onnx")
"""The convolutional network that gives unsure candidates a second opinion
(``Convnet``, trained by ``table/vision/train_convnet.py``)."""
CLASSES = "3456789TJQKA2X"
"""Rank classes of the network; ``X`` is a joker, coloured by its ink."""
SUITS = "shdc"
CROP = 48
"""Side in pixels of the normalised crop around a candidate mark."""
SPAN = 1.6
"""Half-width of the crop in units of the mark's size."""
REMAP_CROPS = 512
"""Crops cut by one ``cv2.remap`` call: a column of them must stay under 32767 rows."""
MIN_CONFIDENCE = 0.7
SURE = 0.9
"""Confidence from which a reading is sure; below it a reading is reported as unsure."""
SECOND_LOOKS = ((0.9, 0.9), (1.1, 1.1), (0.85, 1.0), (1.18, 1.0), (1.0, 0.87), (1.0, 1.15))
"""Stretches (along the card's width, down it) of the crops an unsure candidate is read
again in: smaller and larger, narrower and wider, shorter and taller.

Chosen with plastic and anglo left out of training (30 scenes of each, 1308 cards):
one look read 1212 cards right and 20 wrong; these six looks 1219 and 10; the first
four alone 1215 and 13. On 15 training decks (25 scenes each, seed 11, 7927 cards)
one look read 7748 right and 44 wrong, six 7757 and 24. A frame takes about half a
millisecond more."""
SECOND_LOOK_BAND = (0.3, SURE)
"""Best reading of a candidate, over every rank and turn, for which it is read again.

Sure readings are not: looking again at every candidate from 0.3 up read 1210 cards of
the 1308 above right, against 1215 (the first four looks alone), dragging good
readings under ``SURE``."""
SCREEN = 0.01
"""A candidate the first network reads as no mark, every rank and turn under this, is not
asked of the others (``Model.screened_turns``): three candidates in four of a frame. With
three networks their average could then reach 0.67 at most, under the reading cut; on 40
frames of training designs and 36 of held-out ones, 2 of 6349 and 2 of 6968 such
candidates would have reached the second look's band (docs/vision.md). It lies under the
deck memory's ``LEANING``, so the memory never compares one."""
CONVNET_SHARE = 0.5
"""Share of the convolutional network's probabilities in an unsure candidate's reading, after
the second looks; the rest is the two-layer networks'.

At this share a candidate the looks read under 0.4 cannot reach ``MIN_CONFIDENCE``, which is
why ``SECOND_LOOK_BAND`` starting lower changes nothing. With plastic and anglo left out of
training (1308 cards), 0.7 and asking from 0.1 read 1228 right and 18 wrong against 1225 and
11 (docs/vision.md, "Also tried")."""
PIECE_SIZE = 0.6
"""Size, as a share of the frame's usual sure rank mark, under which a rank reading is a piece.

A piece of a mark (the bowl of a ``9`` at the far corner, cut off at a darker cut)
can look like another rank. Marks of one deck at one scale differ far less in
size. On 10 training decks (250 scenes, 5193 cards) 0.6 took wrong readings from
49 to 32 and per-card accuracy from 96.7 to 97.0 %; 0.7 dropped real marks."""
EDGE_CELLS = 6
"""Cells a side of the edge-direction histogram grid over the middle of the crop."""
EDGE_DIRECTIONS = 12
"""Direction bins of each cell's edge histogram: a multiple of 4, so a quarter turn shifts bins.

The grid and the bins were chosen with the training designs plastic and anglo
left out of training (share of their whole marks read surely right, two seeds):
4x4 cells of 8 directions 84.2 and 81.2 %, 6x6 of 8 86.8 and 84.1 %, 6x6 of 12
86.9 and 86.6 %, and with the square root of each bin 88.4 and 86.5 % (and 0.7 %
of the marks read surely wrong, against 1.7 %). Finer cells keep where in the
mark each stroke turns, finer directions the slant of a stroke, which tell marks
of unseen fonts apart."""
SHIFT = -EDGE_DIRECTIONS // 4
"""Bins an edge histogram moves by when its crop turns a quarter counterclockwise."""
RED_EXCESS = 12.0
"""Red-minus-green excess (0..255 scale) above which a mark is red; black ink stays under 7."""
COLOURS_APART = 45.0
"""Redness (``Candidates.redness``) by which a red rank mark's ink surely exceeds a black
one's. On 15 training decks the corners of one card differed by 34 at most (1788 pairs),
a red and a black card of one rank by 58 at least."""
LETTER_REACH = 2.4
"""Distance, in mark sizes, down a joker's word within which its letters' inks are pooled.

One letter's colour can mislead: JPEG smears the chroma of an orange table over a
thin letter near the card's edge (a black ``J`` of font0 measured 14, over
``RED_EXCESS``). On 15 training decks (919 joker readings) single letters of black
jokers measured up to 14.2 and of red ones down to 17.6; the median over the blobs of
like size and ink down the word (2.4 sizes reach two letters each way) measured up
to 9.4 and down to 24.9."""
JOKER_REACH = 9.0
"""Distance, in mark sizes, over which readings of one joker colour, at any turn, are joined."""
FAN_REACH = 4.5
"""Distance, in mark sizes, within which an upright joker mark along the top edge is the
next card of a fanned pair. The letters of ``JOKER`` are small, so a fan step is many of
them. On 15 training decks (random plays and fanned joker pairs, seed 11) 205 of 248 such
marks of another joker of one colour lay 1.1 to 4.5 sizes along; the top-right mark of a
joker marked in all four corners (plastic) lay 4.2 to 5 sizes along (35 pairs; under 4.5,
its bottom corners join it, ``_second_uprights``, and none was invented). 3.5 read 31 of
359 jokers in pairs fewer; 5 or more invented plastic's top-right mark where its bottom
corners were out of sight. Where a top card's far corner is in view, the mark away from
it is looked for as far as ``CARD_REACH`` (``_under_in_fan``): small letters fanned wide
lie further along (own1, own3, own5 and own10: 4.6 to 5.9 sizes)."""
CARD_REACH = 14.0
"""Largest distance, in mark sizes, between two corner marks of one card."""
INDEX_WIDTH_MATCH = 0.5
"""Mark sizes within which two upright marks of one rank lie as far apart as the top
indices of the frame's four-index cards whose bottom corners show, to be one card's top
indices (``_second_uprights``). Fan steps in the training scenes are 17 to 26 mm, a
four-index card's top indices about 49 mm apart (bonded); 0.3, 0.5, 0.8 and 1.2 read
bonded alike (25 scenes, seed 13)."""
CORNERS_ASPECT = (1.3, 2.0)
"""Range of the height over the width of the rectangle a card's corner marks make: 1.41 to
1.63 on seven training designs (bonded, which prints all four, 1.62)."""
SAME_SPOT = 0.7
"""Distance, in mark sizes, within which two readings are of one mark: the surer one stays.
Two whole marks that near would overlap; the ``0`` of a ten read as a queen lay 0.57 sizes
from the ten's reading. On 15 training decks 0.7 read 5 cards of 7703 more than 0.5, 0.85
one less, 1.0 thirty-four less."""
WHOLE_MARK = (1.3, 0.97)
"""How many times larger, and how surely read, a reading must be for a reading on its spot
(``SAME_SPOT`` of its size) to be a piece of it. On 15 training decks (12 scenes, seeds 11
and 13) misreadings went from 25 to 17 and 29 to 23, most of them tens read as a queen
or a ``2`` from their ``1``. 1.2 times read 2 cards more on seed 11 and as many on seed 13,
0.99 one more; 1.5, 0.7 and 0.9 fewer: 1.3 at 0.97 drops fewer readings for about as many."""
PIECE_REACH = 1.0
"""Distance, in mark sizes, within which two upright readings of one rank are pieces of one mark.

Not more: the next card of a fanned pair shows its mark 1 to 1.5 sizes away when
the marks are large. On 10 training decks (250 scenes, 5193 cards) 1.5 lost 17
cards of such pairs, and 1.0 joined no fewer pieces of one mark; 0.8 left 47 more
readings of a piece standing."""
TABLE_SCALE = 4
"""The table mask is this many times smaller than the frame each way."""
TABLE_AREA = 1500
"""Pixels of the table mask a ground region must cover to be the table: a card is at most
about 1300, so a picture printed on one is less."""
TABLE_GAP = 2
"""Points, of 17 along the line between two readings, that must be table to part them."""
ROI_MARGIN = 12
"""Pixels added around each card-face region before labelling blobs in it."""
PAPER_REACH = 4
"""Pixels over which the paper's level is taken as the lightest darkness-channel value."""
GROUND_LEVEL = 110
"""Darkness-channel level (0..255) under which a pixel with no paper near is ground: felt or
wood (at most about 80 in the rendered tables) or a picture."""
GROUND_BREADTH = 8
"""Erosion radius in pixels that a ground region outlasts and the thickest stroke of a bold
mark does not."""
WORK_SIDE = 1280
"""Pixels along the long side of the largest frame read as it is; a larger one is shrunk
to it first. Every pixel measure here (mark sizes, reaches, the paper's and ground's
breadths) and the training scenes assume a 1280x720 view of the table: the same view at
3840x2160, read as it was, gave under half its cards (docs/vision.md, "Camera resolution")."""
Window = tuple[int, int, int, int]
"""The part of a frame to read: ``(left, top, right, bottom)`` in its pixels, right and
bottom excluded."""
FACE_RING = 0.45
"""Share of the ring just around a blob's box that must be card surround for it to be a mark.

Not more: a mark printed close to its suit pip or the card border has little face
on that side (0.55 found a candidate for 0.3 % fewer readable cards of the training
designs)."""


@dataclass(frozen=True)
class Detection:
    """One card read from the frame.

    ``card`` is a rank code (``3``..``2``, ``B`` black joker, ``R`` red joker);
    ``center`` is the centre of the rank mark that was read, in image pixels, and
    ``box`` its outline (four points, the first edge along the mark's x axis);
    ``angle`` is the direction of the card's x axis in degrees.
    """

    card: str
    suit: str | None
    confidence: float
    center: tuple[float, float]
    box: tuple[tuple[float, float], ...]
    angle: float = 0.0

    @property
    def size(self) -> float:
        """Returns the side of the mark's box in pixels: the unit of distances between marks."""
        (x0, y0), (x1, y1) = self.box[0], self.box[1]
        return math.hypot(x1 - x0, y1 - y0)

    def to_dict(self) -> dict[str, object]:
        """Returns plain data for JSON output."""
        return {
            "card": self.card,
            "suit": self.suit,
            "x": round(self.center[0], 1),
            "y": round(self.center[1], 1),
            "confidence": round(self.confidence, 3),
        }


@dataclass(frozen=True)
class Candidates:
    """Candidate marks of one frame, ready for the network.

    ``crops`` is ``(n, CROP, CROP)`` float32 in the card's frame for the base
    orientation ``angles`` (radians, modulo a quarter turn); ``sizes`` is each
    blob's largest extent in pixels and ``boxes`` its ``(x, y, w, h)``. ``face``
    is the frame's face mask, ``table`` its smaller table mask (``_table``),
    ``image`` the frame itself and ``low`` its darkness channel (float32), which
    the crops are cut from.
    """

    centres: np.ndarray
    angles: np.ndarray
    sizes: np.ndarray
    boxes: np.ndarray
    crops: np.ndarray
    face: np.ndarray
    table: np.ndarray
    image: np.ndarray
    low: np.ndarray

    def redness(self, i: int) -> float:
        """Returns how much redder than green blob ``i`` is than the card face around it.

        Measured against the face, a warm or cold light does not shift it. The face
        is taken from a window a few blob sizes wide, because JPEG smears the
        colour of a thin red stroke over the paper next to it. Only readings need
        it, so it is computed for them alone, in their windows.
        """
        x, y, w, h = (int(v) for v in self.boxes[i])
        ink = ~self.face[y : y + h, x : x + w].astype(bool)
        if not ink.any():
            return 0.0
        reach = 2 * max(w, h) + 8
        y0, x0 = max(y - reach, 0), max(x - reach, 0)
        bgr = self.image[y0 : y + h + reach, x0 : x + w + reach]
        red = bgr[..., 2].astype(np.int16) - bgr[..., 1]
        paper = self.face[y0 : y + h + reach, x0 : x + w + reach].astype(bool)
        base = _median_of_levels(red[paper]) if paper.any() else 0.0
        return float(red[y - y0 : y - y0 + h, x - x0 : x - x0 + w][ink].mean()) - base


def _median_of_levels(levels: np.ndarray) -> float:
    """Returns the median of red-minus-green levels (-255..255) as ``np.median`` gives it,
    from their histogram, which costs less than sorting a window's thousands of pixels."""
    counts = np.cumsum(np.bincount(levels.ravel() + 255, minlength=511))
    n = int(counts[-1])
    low, high = np.searchsorted(counts, [(n - 1) // 2 + 1, n // 2 + 1])
    return (int(low) + int(high)) / 2 - 255


def _masks(
    image: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Returns the darkness channel, face, ground and surround masks, and ink.

    Ink comes at two cuts: *medium* (clearly below the paper in its darkest
    channel, which red ink is even when light and blur keep it from being dark)
    and *dark* (strong ink). The *surround* is the face plus the ground next to
    it (``_ground``): a mark printed against the card's edge is then ink enclosed
    by surround, where it used to be one blob with the table.
    """
    b, g, r = cv2.split(image)
    bg_max = cv2.max(b, g)
    low = cv2.min(cv2.min(b, g), r)
    high = cv2.max(bg_max, r)
    lightest = cv2.dilate(low, np.ones((2 * PAPER_REACH + 1,) * 2, np.uint8))
    paper = cv2.blur(lightest, (15, 15))
    spread = cv2.subtract(high, low)
    below = cv2.subtract(paper, low)
    # Masks are 0/1 images made by OpenCV's thresholds, several times faster than numpy's.
    face = cv2.min(
        cv2.min(_above(low, 70), cv2.subtract(1, _above(spread, 47))),
        cv2.subtract(1, _above(below, 59)),
    )
    ground = _ground(lightest)
    medium = cv2.subtract(_above(below, 80), ground)
    dark = cv2.subtract(cv2.max(_above(below, 130), _above(spread, 110)), ground)
    return low, face, ground, cv2.max(face, ground), medium, dark


def _above(channel: np.ndarray, level: int) -> np.ndarray:
    """Returns the 0/1 mask of the pixels above ``level``."""
    return cv2.threshold(channel, level, 1, cv2.THRESH_BINARY)[1]


def _ground(lightest: np.ndarray) -> np.ndarray:
    """Returns the 0/1 ground mask: the table or a broad picture, up to just short of the paper.

    ``lightest`` is the frame's darkness channel at its lightest within
    ``PAPER_REACH`` pixels. The ground's core has no paper that near and is broad
    (it outlasts an erosion no stroke of a mark does); grown back by a little more
    than it lost, it ends just short of the paper, so the thin dark line where a
    card's edge meets the table is ground, and a mark printed next to it is not.
    """
    core = cv2.subtract(1, _above(lightest, GROUND_LEVEL - 1))
    core = cv2.erode(core, np.ones((2 * GROUND_BREADTH + 1,) * 2, np.uint8))
    grow = 2 * (GROUND_BREADTH + PAPER_REACH + 1) + 1
    return cv2.dilate(core, np.ones((grow, grow), np.uint8))


def _table(ground: np.ndarray) -> np.ndarray:
    """Returns the 0/1 table mask, ``TABLE_SCALE`` times smaller: ground larger than any card.

    The ground also holds the broad pictures printed on court cards and jokers; those
    lie on one card, so they never part two of its corners.
    """
    small = np.ascontiguousarray(ground[::TABLE_SCALE, ::TABLE_SCALE])
    _, labels, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(
        small, 8, cv2.CV_32S, cv2.CCL_BBDT
    )
    large = (stats[:, cv2.CC_STAT_AREA] >= TABLE_AREA).astype(np.uint8)
    large[0] = 0
    return large[labels]


def _face_regions(face: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Returns disjoint boxes ``(x0, y0, x1, y1)`` around the card faces, with a margin.

    Labelling blobs only there, not over the whole table, halves the time per frame.
    """
    height, width = face.shape
    small = cv2.resize(face, (width // 4, height // 4), interpolation=cv2.INTER_AREA)
    count, _, stats, _ = cv2.connectedComponentsWithStats(
        (small > 0).astype(np.uint8), connectivity=8
    )
    boxes = [
        [
            max(4 * int(x) - ROI_MARGIN, 0),
            max(4 * int(y) - ROI_MARGIN, 0),
            min(4 * int(x + w) + ROI_MARGIN, width),
            min(4 * int(y + h) + ROI_MARGIN, height),
        ]
        for x, y, w, h, area in stats[1:count]
        if area >= 30
    ]
    merged = True
    while merged:
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    boxes[i] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    return [(a, b, c, d) for a, b, c, d in boxes]


def _region_sums(mask: np.ndarray, rois: list[tuple[int, int, int, int]]) -> np.ndarray:
    """Returns the integral images of ``mask`` in each region, flattened one after the other.

    Integrals of the regions alone, not of the whole frame, keep the caches warmer:
    with cold caches, as in the benchmark, one of the whole frame took 4 % more time.
    """
    return np.concatenate(
        [np.zeros(0, np.int32)]
        + [cv2.integral(mask[y0:y1, x0:x1]).ravel() for x0, y0, x1, y1 in rois]
    )


def _blobs(
    ink: np.ndarray, surround_sums: np.ndarray, rois: list[tuple[int, int, int, int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Returns centre, size and box of the mark-sized ink blobs enclosed by card surround.

    Blobs are labelled in each of ``rois`` and only those wholly inside it count;
    ``surround_sums`` holds the integral image of the surround mask in each region,
    flattened one after the other (``_region_sums``), shared by every ink cut. The
    tests run once over the blobs of every region.
    """
    full_h, full_w = ink.shape
    labelled = [
        # BBDT labels these masks three times as fast as OpenCV's default, with the same labels.
        cv2.connectedComponentsWithStatsWithAlgorithm(
            ink[y0:y1, x0:x1], 8, cv2.CV_32S, cv2.CCL_BBDT
        )[2:]
        for x0, y0, x1, y1 in rois
    ]
    if not labelled:
        return np.zeros((0, 2)), np.zeros(0), np.zeros((0, 4), np.int32)
    # Label 0 of each region is its background.
    counts = [len(stats) - 1 for stats, _ in labelled]
    bounds = np.repeat(np.array(rois), counts, axis=0)
    rx0, ry0, rx1, ry1 = bounds.T
    stats = np.concatenate([stats[1:] for stats, _ in labelled])
    centres = np.concatenate([c[1:] for _, c in labelled]) + bounds[:, :2]
    x, y = stats[:, 0] + rx0, stats[:, 1] + ry0
    w, h, area = stats[:, 2], stats[:, 3], stats[:, 4]
    size = np.maximum(w, h)
    keep = (size >= 6) & (size <= 40) & (area >= 10) & (area <= 0.8 * w * h + 1)
    # A blob cut by the region's edge (not the frame's) is not whole: leave it out.
    keep &= ((x > rx0) | (rx0 == 0)) & ((y > ry0) | (ry0 == 0))
    keep &= ((x + w < rx1) | (rx1 == full_w)) & ((y + h < ry1) | (ry1 == full_h))
    # Enclosed: the ring just around the blob's box, within its region, must be mostly surround.
    starts = np.cumsum([0] + [(x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in rois[:-1]])
    start, stride = np.repeat(starts, counts), rx1 - rx0 + 1

    def ig(yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
        return surround_sums[start + (yy - ry0) * stride + (xx - rx0)]

    ix1, iy1 = x + w, y + h
    x0, y0 = np.maximum(x - 3, rx0), np.maximum(y - 3, ry0)
    x1, y1 = np.minimum(ix1 + 3, rx1), np.minimum(iy1 + 3, ry1)
    outer = ig(y1, x1) - ig(y0, x1) - ig(y1, x0) + ig(y0, x0)
    inner = ig(iy1, ix1) - ig(y, ix1) - ig(iy1, x) + ig(y, x)
    ring = (x1 - x0) * (y1 - y0) - w * h
    keep &= (outer - inner) >= FACE_RING * np.maximum(ring, 1)
    boxes = np.stack([x, y, w, h], axis=1)[keep]
    return centres[keep], size[keep], boxes


def find_candidates(image: np.ndarray) -> Candidates:
    """Finds printed blobs enclosed by card surround and cuts a normalised crop of each."""
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    low, face, ground, surround, medium, dark = _masks(image)
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rois = _face_regions(face)
    surround_sums = _region_sums(surround, rois)
    thin = cv2.erode(dark, np.ones((2, 2), np.uint8))
    for ink in (cv2.subtract(1, surround), dark, thin, medium):
        centres_l, sizes_l, box_l = _blobs(ink, surround_sums, rois)
        if found and len(centres_l):
            # Darker and thinner cuts only add blobs that earlier cuts joined to something.
            seen_c = np.concatenate([f[0] for f in found])
            seen_s = np.concatenate([f[1] for f in found])
            dx = centres_l[:, 0, None] - seen_c[None, :, 0]
            dy = centres_l[:, 1, None] - seen_c[None, :, 1]
            reach = 0.3 * sizes_l[:, None]
            similar = (dx * dx + dy * dy < reach * reach) & (
                np.abs(seen_s[None, :] - sizes_l[:, None]) < reach
            )
            fresh = ~similar.any(axis=1)
            centres_l, sizes_l, box_l = centres_l[fresh], sizes_l[fresh], box_l[fresh]
        found.append((centres_l, sizes_l, box_l))
    centres = np.concatenate([f[0] for f in found]).astype(np.float32)
    sizes = np.concatenate([f[1] for f in found]).astype(np.float32)
    boxes = np.concatenate([f[2] for f in found]).astype(np.int32)
    lowf = low.astype(np.float32)
    if len(centres) == 0:
        empty = np.zeros((0, CROP, CROP), np.float32)
        return Candidates(
            centres, np.zeros(0), sizes, boxes, empty, face, _table(ground), image, lowf
        )

    # Quarter-turn orientation at half size: the mean of |g| * exp(4i * theta) over a window.
    # The fourfold angle and its cosine and sine reuse the arrays before them.
    small = cv2.GaussianBlur(cv2.pyrDown(low), (0, 0), 0.8)
    gx = cv2.Sobel(small, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(small, cv2.CV_32F, 0, 1, ksize=3)
    mag, theta = cv2.cartToPolar(gx, gy)
    c4, s4 = cv2.polarToCart(mag, cv2.multiply(theta, 4, dst=theta), x=gx, y=gy)
    ic4 = cv2.integral(c4, sdepth=cv2.CV_64F)
    is4 = cv2.integral(s4, sdepth=cv2.CV_64F)

    radius = (sizes * 0.8).astype(int) + 1
    cx, cy = (centres[:, 0] / 2).astype(int), (centres[:, 1] / 2).astype(int)
    wx0 = np.clip(cx - radius, 0, small.shape[1])
    wx1 = np.clip(cx + radius, 0, small.shape[1])
    wy0 = np.clip(cy - radius, 0, small.shape[0])
    wy1 = np.clip(cy + radius, 0, small.shape[0])
    sc = ic4[wy1, wx1] - ic4[wy0, wx1] - ic4[wy1, wx0] + ic4[wy0, wx0]
    ss = is4[wy1, wx1] - is4[wy0, wx1] - is4[wy1, wx0] + is4[wy0, wx0]
    angles = (np.arctan2(ss, sc) / 4).astype(np.float32)

    crops = cut_crops(lowf, centres, angles, sizes)
    return Candidates(centres, angles, sizes, boxes, crops, face, _table(ground), image, lowf)


def cut_crops(
    lowf: np.ndarray,
    centres: np.ndarray,
    angles: np.ndarray,
    sizes: np.ndarray,
    stretch: tuple[float | np.ndarray, float | np.ndarray] = (1.0, 1.0),
) -> np.ndarray:
    """Cuts a ``CROP`` x ``CROP`` crop around each blob, turned to its card's axes.

    The crop spans ``SPAN`` blob sizes each way from the centre, times ``stretch``
    along the card's width and down it (one figure for all, or one per blob): a
    second look (``SECOND_LOOKS``) cuts it wider or narrower.
    """
    # Crop pixel (u, v) samples the image at centre + R(angle) * scale * (u - CROP/2, v - CROP/2).
    scale = 2 * SPAN * sizes / CROP
    c, s = (np.cos(angles) * scale)[:, None, None], (np.sin(angles) * scale)[:, None, None]
    step = np.arange(CROP, dtype=np.float32) - CROP / 2
    along, down = (np.asarray(k, np.float32).reshape(-1, 1, 1) for k in stretch)
    u, v = along * step[None, None, :], down * step[None, :, None]
    map_x = (centres[:, 0, None, None] + c * u) - s * v
    map_y = (centres[:, 1, None, None] + s * u) + c * v
    # One remap cuts a whole column of crops; OpenCV limits a picture to 32767 rows.
    crops = np.empty((len(centres), CROP, CROP), np.float32)
    for i in range(0, len(centres), REMAP_CROPS):
        cv2.remap(
            lowf,
            map_x[i : i + REMAP_CROPS].reshape(-1, CROP),
            map_y[i : i + REMAP_CROPS].reshape(-1, CROP),
            cv2.INTER_LINEAR,
            dst=crops[i : i + REMAP_CROPS].reshape(-1, CROP),
            borderMode=cv2.BORDER_REPLICATE,
        )
    return crops


def quarter_features(crops: np.ndarray) -> np.ndarray:
    """Returns the features of every crop in each of its four quarter turns, ``(n, 4, f)``.

    A quarter turn only reorders the upright features (``_turn_orders``).
    """
    return upright_features(crops)[:, _turn_orders()]


def upright_features(crops: np.ndarray) -> np.ndarray:
    """Returns the features of every crop as it is cut, ``(n, f)``: contrast-normalised
    pixels of the mark and of its surroundings, and edge-direction histograms."""
    n = len(crops)
    norm = _normalised(crops)
    q = CROP // 4
    centre = np.ascontiguousarray(norm[:, q : CROP - q, q : CROP - q])
    tight = 1 - _cell_means(centre, 2)
    context = 1 - _cell_means(norm, 4)
    gy, gx = np.gradient(centre, axis=(1, 2))
    side = CROP // 2
    mag, phase = cv2.cartToPolar(gx.reshape(-1, side), gy.reshape(-1, side))
    # The first direction bin starts at minus half a turn, OpenCV's phase at 0.
    bins = (phase * (EDGE_DIRECTIONS / (2 * np.pi))).astype(np.int32) + EDGE_DIRECTIONS // 2
    bins %= EDGE_DIRECTIONS
    per_crop = EDGE_CELLS**2 * EDGE_DIRECTIONS
    index = bins.reshape(n, side, side) + _hog_cells() + (np.arange(n) * per_crop)[:, None, None]
    hog = np.bincount(index.ravel(), weights=mag.ravel(), minlength=n * per_crop)
    # The square root keeps a few strong strokes from outweighing the rest, so a
    # bold and a light font give closer histograms.
    hog = np.sqrt(hog.reshape(n, per_crop)).astype(np.float32)
    hog /= np.linalg.norm(hog, axis=1, keepdims=True) + 1e-3
    return np.concatenate([tight.reshape(n, -1), context.reshape(n, -1), hog], axis=1)


def ink(crops: np.ndarray) -> np.ndarray:
    """Returns every crop as ink, ``(n, CROP, CROP)``: 0 where it is as light as the
    paper, 1 at its darkest pixel, so a light and a dark frame of one mark look alike."""
    return 1 - _normalised(crops)


def _normalised(crops: np.ndarray) -> np.ndarray:
    """Returns every crop's pixels stretched from its darkest (0) to its paper's level (1)."""
    n = len(crops)
    flat = crops.reshape(n, -1)
    # The paper's level: a high percentile of 4x4-pixel means, a fraction of the cost
    # of one over all pixels.
    hi = _percentile_95(_cell_means(crops, 4).reshape(n, -1))
    lo = flat.min(axis=1, keepdims=True)
    return np.clip((flat - lo) / np.maximum(hi - lo, 8.0), 0, 1).reshape(n, CROP, CROP)


def _percentile_95(rows: np.ndarray) -> np.ndarray:
    """Returns the 95th percentile of each row, ``(n, 1)``, as ``np.percentile`` interpolates
    it, from a partition of the two values around it (``np.percentile`` takes twice as long)."""
    at = 0.95 * (rows.shape[1] - 1)
    below = int(at)
    two = np.partition(rows, (below, below + 1), axis=1)[:, below : below + 2]
    return two[:, :1] + (two[:, 1:] - two[:, :1]) * np.float32(at - below)


@cache
def _hog_cells() -> np.ndarray:
    """Returns, for each pixel of the crop's middle, the first bin of its cell's histogram."""
    side = CROP // 2
    row = np.arange(side, dtype=np.int32) * EDGE_CELLS // side
    return (row[:, None] * EDGE_CELLS + row[None, :]) * EDGE_DIRECTIONS


@cache
def _turn_orders() -> np.ndarray:
    """Returns, for each quarter turn, the order that turns the upright features, ``(4, f)``.

    Pixel grids turn with the crop (``np.rot90``); an edge histogram turns its grid of
    cells and shifts its direction bins by ``SHIFT``.
    """
    grid = CROP // 4  # cells a side of both grids: 2-pixel ones of the middle, 4-pixel ones of all
    tight = np.arange(grid * grid).reshape(grid, grid)
    context = grid * grid + tight
    hog = 2 * grid * grid + np.arange(EDGE_CELLS**2 * EDGE_DIRECTIONS).reshape(
        EDGE_CELLS, EDGE_CELLS, EDGE_DIRECTIONS
    )
    return np.stack(
        [
            np.concatenate(
                [
                    np.rot90(tight, k).ravel(),
                    np.rot90(context, k).ravel(),
                    np.roll(np.rot90(hog, k, axes=(0, 1)), SHIFT * k, axis=2).ravel(),
                ]
            )
            for k in range(4)
        ]
    )


def _cell_means(stack: np.ndarray, cell: int) -> np.ndarray:
    """Returns the means of ``cell`` x ``cell`` pixel blocks of each image in ``(n, h, w)``.

    The images are resized as one column, which averages whole blocks exactly.
    """
    n, height, width = stack.shape
    column = np.ascontiguousarray(stack, np.float32).reshape(n * height, width)
    small = cv2.resize(column, (width // cell, n * height // cell), interpolation=cv2.INTER_AREA)
    return small.reshape(n, height // cell, width // cell)


@dataclass(frozen=True)
class Model:
    """Two-layer networks with a rank head (classes plus background) and a suit head.

    Every array has a leading axis over the *members*: networks trained on separate
    rendered data sets, whose probabilities are averaged. Two members disagree on
    many of the marks either one alone would read surely wrong, so the average
    reads those unsurely instead (on two training designs left out of training,
    36 wrong readings became 17).
    """

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w_rank: np.ndarray
    b_rank: np.ndarray
    w_suit: np.ndarray
    b_suit: np.ndarray

    @classmethod
    def join(cls, members: list[Model]) -> Model:
        """Returns one model whose members are those of every model given."""
        return cls(
            **{
                k: np.concatenate([getattr(m, k) for m in members])
                for k in cls.__dataclass_fields__
            }
        )

    def members(self) -> list[Model]:
        """Returns each member as a model of its own."""
        return [
            Model(**{k: getattr(self, k)[j : j + 1] for k in self.__dataclass_fields__})
            for j in range(len(self.w1))
        ]

    @cached_property
    def _first_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """Returns every member's first layer with its input scaling folded in, side by side."""
        weights = self.scale[:, :, None] * self.w1
        biases = self.b1 - np.einsum("mf,mfh->mh", self.mean * self.scale, self.w1)
        return np.concatenate(list(weights), axis=1), biases.reshape(-1)

    @cached_property
    def _turned_first_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """Returns the first layer once for each quarter turn, side by side: the rows of
        turn ``k`` are reordered as ``_turn_orders`` reorders the features."""
        weights, biases = self._first_layer
        back = np.argsort(_turn_orders(), axis=1)
        return np.concatenate([weights[order] for order in back], axis=1), np.tile(biases, 4)

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns rank probabilities (last column: not a mark) and suit probabilities."""
        weights, biases = self._first_layer
        return self._heads(_relu(x @ weights, biases))

    def predict_turns(self, upright: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns rank and suit probabilities in each quarter turn, ``(n, 4, classes)``,
        from the upright features (``upright_features``)."""
        return self.heads_turns(self.hidden_turns(upright))

    def hidden_turns(self, upright: np.ndarray) -> np.ndarray:
        """Returns every member's hidden layer in each quarter turn, ``(n, 4, members *
        width)``, from the upright features.

        One product with the first layer turned four ways costs less than turning the
        features (``quarter_features``) and multiplying four times as many rows.
        """
        weights, biases = self._turned_first_layer
        return _relu(upright @ weights, biases).reshape(len(upright), 4, -1)

    def screened_turns(
        self, upright: np.ndarray, least: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Returns ``hidden_turns`` and ``heads_turns`` of the upright features, asking the
        other members only of the candidates the first member reads as a mark at ``least``
        or more in some turn, and which those are.

        Most candidates of a frame are no mark (three in four), and the first member
        alone says so: theirs are its probabilities, and the other members' units of
        their hidden layers are left 0 (``complete_turns`` fills them in). A first
        layer costs a third of what it did for them.
        """
        n, members, width = len(upright), len(self.w1), self.w1.shape[2]
        (first, first_biases), _ = self._screening_layers
        mine = _relu(upright @ first, first_biases).reshape(n * 4, width)
        rank = softmax(mine @ self.w_rank[0] + self.b_rank[0]).reshape(n, 4, -1)
        whole = rank[..., :-1].max(axis=(1, 2)) >= least
        hidden = np.zeros((n, 4, members, width), np.float32)
        hidden[:, :, 0] = mine.reshape(n, 4, width)
        hidden = hidden.reshape(n, 4, members * width)
        suit = softmax(mine @ self.w_suit[0] + self.b_suit[0]).reshape(n, 4, -1)
        if members > 1 and whole.any():  # one member: its probabilities are the model's
            self.complete_turns(hidden, upright, whole)
            rank[whole], suit[whole] = self.heads_turns(hidden[whole])
        return hidden, rank, suit, whole

    def complete_turns(self, hidden: np.ndarray, upright: np.ndarray, rows: np.ndarray) -> None:
        """Fills in, in place, the other members' units of the ``rows`` of a hidden layer
        that ``screened_turns`` left to the first member alone."""
        n, members, width = int(np.count_nonzero(rows)), len(self.w1), self.w1.shape[2]
        if n == 0 or members == 1:
            return
        _, (rest, rest_biases) = self._screening_layers
        shaped = hidden.reshape(len(hidden), 4, members, width)
        shaped[rows, :, 1:] = _relu(upright[rows] @ rest, rest_biases).reshape(
            n, 4, members - 1, width
        )

    @cached_property
    def _screening_layers(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """Returns the turned first layer's columns of the first member, and of the others."""
        weights, biases = self._turned_first_layer
        columns = np.arange(weights.shape[1]).reshape(4, len(self.w1), -1)
        first, rest = columns[:, 0].ravel(), columns[:, 1:].ravel()
        return (
            (np.ascontiguousarray(weights[:, first]), biases[first]),
            (np.ascontiguousarray(weights[:, rest]), biases[rest]),
        )

    def heads_turns(self, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns rank and suit probabilities in each quarter turn from ``hidden_turns``."""
        n = len(hidden)
        rank, suit = self._heads(hidden.reshape(n * 4, -1))
        return rank.reshape(n, 4, -1), suit.reshape(n, 4, -1)

    def _heads(self, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns the members' averaged rank and suit probabilities from their hidden layers."""
        width = self.w1.shape[2]
        rank = np.zeros((len(hidden), self.w_rank.shape[2]), np.float32)
        suit = np.zeros((len(hidden), self.w_suit.shape[2]), np.float32)
        for j in range(len(self.w1)):
            h = hidden[:, j * width : (j + 1) * width]
            rank += softmax(h @ self.w_rank[j] + self.b_rank[j])
            suit += softmax(h @ self.w_suit[j] + self.b_suit[j])
        return rank / len(self.w1), suit / len(self.w1)

    def save(self, path: Path) -> None:
        """Writes the weights as float16 ``.npz`` (small enough to commit)."""
        np.savez_compressed(
            path, **{k: getattr(self, k).astype(np.float16) for k in self.__dataclass_fields__}
        )


def _relu(product: np.ndarray, biases: np.ndarray) -> np.ndarray:
    """Adds the biases to a layer's product and clips it at 0, in place."""
    product += biases
    return np.maximum(product, 0, out=product)


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax."""
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> Model:
    """Loads network weights: the committed ones, or a model learnt for one deck.

    :raises UserError: when the file is missing or holds no reader model.
    """
    try:
        with np.load(path) as data:
            return Model(**{k: data[k].astype(np.float32) for k in Model.__dataclass_fields__})
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        raise UserError(
            f"{path} is not a card reader model ({error}); give the file written by "
            "ddz-table vision learn, or leave the model out to use the built-in one"
        ) from error


class Convnet:
    """A small convolutional network over a crop's ink (``ink``): rank probabilities, the
    last class "not a mark", run by ``cv2.dnn``.

    It sees the strokes' shapes where the two-layer networks see cell means and edge
    histograms, so the two err on different marks of a font neither was trained on.
    """

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()  # one net, one forward pass at a time
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as error:
            raise UserError(
                f"{path} is not the card reader's convolutional network ({error}); "
                "train it again with bash scripts/train, or check out the committed file"
            ) from error

    def predict_turned(self, crops: np.ndarray, quarters: np.ndarray) -> np.ndarray:
        """Returns the rank probabilities of each crop turned its ``quarters`` quarter
        turns counterclockwise, ``(n, classes)``.

        A crop's result does not depend on the others asked with it (``cv2.dnn`` gives
        the same figures in any batch), so a reader may ask of some turns and later of more.
        """
        if len(crops) == 0:
            return np.zeros((0, len(CLASSES) + 1), np.float32)
        turned = np.stack([np.rot90(m, int(q)) for m, q in zip(ink(crops), quarters, strict=True)])
        with self._lock:
            self._net.setInput(turned[:, None])
            logits = self._net.forward()
        return softmax(logits)


@cache
def load_convnet(path: Path = CONVNET_PATH) -> Convnet:
    """Loads the convolutional network once.

    :raises UserError: when the file is missing or holds no such network.
    """
    if not path.is_file():
        raise UserError(
            f"{path} is missing: the card reader needs it; train it with bash scripts/train, "
            "or check out the committed file"
        )
    return Convnet(path)


def read_cards(
    image: np.ndarray,
    model: Model | None = None,
    memory: DeckMemory | None = None,
    convnet: Convnet | None = None,
    window: Window | None = None,
) -> list[Detection]:
    """Reads every face-up card whose rank mark is visible.

    Returns one :class:`Detection` per card, including low-confidence ones
    (confidence below ``SURE`` means "seen but unsure"); blobs that look like no rank
    mark are dropped. ``model`` and ``convnet`` default to the committed networks; a
    learnt deck's model is read with the committed convolutional network. With a
    ``memory`` of the frames before (the camera's), an
    unsure mark that looks like the deck's remembered marks of the rank it leans
    to is read, unsure; the frame's sure readings are remembered. Only the ``window``
    of the frame is read when one is given (the camera's: the table around its zones,
    ``Calibration.reading_window``), so a frame showing more than the table is not
    shrunk for what lies beyond it. A frame, or window, larger than ``WORK_SIDE`` is
    read shrunk; the readings are in the frame's own pixels.
    """
    if image is None or image.size == 0:
        return []
    left, top = 0, 0
    if window is not None:
        left, top, right, bottom = window
        image = image[top:bottom, left:right]
        if image.size == 0:
            return []
    height, width = image.shape[:2]
    shrink = min(1.0, WORK_SIDE / max(height, width))
    if shrink == 1.0 and (left, top) == (0, 0):
        return _read_frame(image, model, memory, convnet)
    size = (max(round(width * shrink), 1), max(round(height * shrink), 1))
    if shrink < 1.0:
        image = cv2.resize(image, size, interpolation=cv2.INTER_LINEAR)
    found = _read_frame(image, model, memory, convnet)
    return [_in_frame(d, width / size[0], height / size[1], left, top) for d in found]


def _in_frame(reading: Detection, along: float, down: float, left: int, top: int) -> Detection:
    """Returns a reading of a shrunk window in the pixels of the frame it was cut from:
    ``along`` and ``down`` times as large (pixel centres map as ``cv2.resize`` maps them),
    then moved by the window's ``left`` and ``top``."""

    def point(p: tuple[float, float]) -> tuple[float, float]:
        return ((p[0] + 0.5) * along - 0.5 + left, (p[1] + 0.5) * down - 0.5 + top)

    return replace(reading, center=point(reading.center), box=tuple(map(point, reading.box)))


def _read_frame(
    image: np.ndarray,
    model: Model | None,
    memory: DeckMemory | None,
    convnet: Convnet | None,
) -> list[Detection]:
    """Reads a frame of at most ``WORK_SIDE`` pixels a side (``read_cards``)."""
    model = model or load_model()
    cand = find_candidates(image)
    if len(cand.centres) == 0:
        return []
    features = upright_features(cand.crops)
    hidden, first_rank_p, first_suit_p, whole = model.screened_turns(features, SCREEN)
    rank_p, suit_p = _second_look(
        cand, model, convnet or load_convnet(), first_rank_p, first_suit_p
    )
    mark_p = rank_p[..., :-1]
    best = mark_p.reshape(len(mark_p), -1).argmax(axis=1)
    quarter, cls = np.divmod(best, mark_p.shape[2])
    conf = mark_p[np.arange(len(best)), quarter, cls]
    upright = cand.angles + quarter * (np.pi / 2)
    if memory is not None:
        # The memory compares unsure candidates and keeps the pieces beside sure ones:
        # their hidden layers must be whole.
        compared = (conf >= LEANING) | remembered(conf, cand.centres, cand.sizes, SURE)
        model.complete_turns(hidden, features, compared & ~whole)
        conf = _recall(memory, cand, hidden, quarter, cls, conf, upright)

    # Colour costs a window's median, so it is measured only where a reading needs it:
    # a joker, a sure suit to confirm, two corners about to be joined.
    redness = cache(cand.redness)

    read = np.nonzero(conf >= MIN_CONFIDENCE)[0]
    blob_of: dict[Detection, int] = {}  # each reading's blob, to measure its colour later
    for i in read:
        q, k = int(quarter[i]), int(cls[i])
        code = CLASSES[k]
        if code == "X":
            word = _word_blobs(int(i), cand.centres, upright, cand.sizes)
            code = "R" if _word_redness(int(i), word, redness) > RED_EXCESS else "B"
            suit = None
        else:
            sp = suit_p[i, q]
            s = int(sp.argmax())
            suit = None
            if sp[s] > 0.85 and (SUITS[s] in "hd") == (redness(int(i)) > RED_EXCESS):
                suit = SUITS[s]
        # Upright after q counterclockwise quarter turns: the card is turned q clockwise.
        reading = _detection(
            code, suit, float(conf[i]), cand.centres[i], float(cand.sizes[i]), float(upright[i])
        )
        blob_of[reading] = int(i)
    return merge(_without_pieces(list(blob_of)), cand.table, lambda d: redness(blob_of[d]))


def _recall(
    memory: DeckMemory,
    cand: Candidates,
    hidden: np.ndarray,
    quarter: np.ndarray,
    cls: np.ndarray,
    conf: np.ndarray,
    upright: np.ndarray,
) -> np.ndarray:
    """Returns the confidences with the unsure marks the deck memory reads raised to the
    cut, and remembers the frame's sure readings.

    The letters of a read joker's word are left alone: the ``K`` of ``JOKER`` looks
    like the deck's kings.
    """
    words = np.zeros(len(conf), bool)
    for i in np.nonzero((conf >= MIN_CONFIDENCE) & (cls == CLASSES.index("X")))[0]:
        words[_word_blobs(int(i), cand.centres, upright, cand.sizes)] = True
    frame = Readings(hidden, quarter, cls, conf, cand.centres, cand.sizes)
    rescued = memory.recall(frame, MIN_CONFIDENCE, words)
    memory.remember(frame, SURE)
    return np.where(rescued, np.float32(MIN_CONFIDENCE), conf)


def _quarter_predict(crops: np.ndarray, model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Returns the rank and suit probabilities of every crop in each quarter turn,
    ``(n, 4, classes)``; the last rank class is "not a mark"."""
    return model.predict_turns(upright_features(crops))


def _second_look(
    cand: Candidates, model: Model, convnet: Convnet, rank_p: np.ndarray, suit_p: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Reads the unsure candidates again in crops cut a little larger and smaller,
    wider and narrower, taller and shorter (``SECOND_LOOKS``), averages every look's
    probabilities, and mixes in the convolutional network's (``CONVNET_SHARE``).

    A mark of a font the networks never saw may sit a little off the sizes and
    proportions they learnt; a look at several keeps one chance resemblance from
    deciding, and a network of another kind errs on other marks. Only candidates whose
    best reading lies in ``SECOND_LOOK_BAND`` are looked at again, a few in a hundred.
    """
    best = rank_p[..., :-1].reshape(len(rank_p), -1).max(axis=1)
    again = np.nonzero((best >= SECOND_LOOK_BAND[0]) & (best < SECOND_LOOK_BAND[1]))[0]
    if len(again) == 0:
        return rank_p, suit_p
    looks = np.array(SECOND_LOOKS, np.float32)
    every = len(looks)
    crops = cut_crops(
        cand.low,
        np.tile(cand.centres[again], (every, 1)),
        np.tile(cand.angles[again], every),
        np.tile(cand.sizes[again], every),
        (np.repeat(looks[:, 0], len(again)), np.repeat(looks[:, 1], len(again))),
    )
    r, s = _quarter_predict(crops, model)
    rank_p, suit_p = rank_p.copy(), suit_p.copy()
    rank_p[again] += r.reshape(every, len(again), *r.shape[1:]).sum(axis=0)
    suit_p[again] += s.reshape(every, len(again), *s.shape[1:]).sum(axis=0)
    rank_p[again] /= 1 + every
    suit_p[again] /= 1 + every
    rank_p[again] = _mixed_in(rank_p[again], cand.crops[again], convnet)
    return rank_p, suit_p


def _mixed_in(looks: np.ndarray, crops: np.ndarray, convnet: Convnet) -> np.ndarray:
    """Returns the looks' rank probabilities, ``(n, 4, classes)``, with the convolutional
    network's share (``CONVNET_SHARE``) mixed in wherever it can change the reading.

    The network is asked first of each crop's likeliest turn, then only of the turns its
    whole share could lift to that turn's mixed reading: the others keep the looks'
    share alone, under the reading, so the reading and its confidence are those of
    mixing every turn, for about half the network's time (520 turns asked of 916 on
    held-out frames).
    """
    mixed = (1 - CONVNET_SHARE) * looks
    lean = mixed[..., :-1].max(axis=2)
    rows, first = np.arange(len(mixed)), lean.argmax(axis=1)
    mixed[rows, first] += CONVNET_SHARE * convnet.predict_turned(crops, first)
    reading = mixed[rows, first, :-1].max(axis=1)
    could_win = lean + CONVNET_SHARE >= reading[:, None]
    could_win[rows, first] = False
    crop, turn = np.nonzero(could_win)
    mixed[crop, turn] += CONVNET_SHARE * convnet.predict_turned(crops[crop], turn)
    return mixed


def _word_blobs(i: int, centres: np.ndarray, upright: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Returns the candidates in the word of joker reading ``i``: one under
    another in its card's frame, within ``LETTER_REACH`` sizes (``i`` itself included).

    Whatever they were read as (the ``K`` of ``JOKER`` reads as a king), and only down
    the word: the next card of a fanned pair shows its letters along the top.
    """
    d = centres - centres[i]
    c, s = math.cos(float(upright[i])), math.sin(float(upright[i]))
    u, v = d[:, 0] * c + d[:, 1] * s, -d[:, 0] * s + d[:, 1] * c
    size = max(float(sizes[i]), 1.0)
    alike = (sizes > 0.5 * size) & (sizes < 2 * size)
    return np.nonzero((np.abs(u) < 0.5 * size) & (np.abs(v) < LETTER_REACH * size) & alike)[0]


def _word_redness(i: int, word: np.ndarray, redness: Callable[[int], float]) -> float:
    """Returns the median redness of a joker letter and those of its word of like ink.

    A letter of another colour (a red and a black joker laid one under the other) stays
    out: its ink differs by more than ``COLOURS_APART``.
    """
    own = redness(i)
    inks = [r for r in (redness(int(j)) for j in word) if abs(r - own) <= COLOURS_APART]
    return float(np.median(inks))


def _without_pieces(found: list[Detection]) -> list[Detection]:
    """Drops rank readings much smaller than the frame's usual sure rank mark, then every
    reading on the spot of a larger one read at ``WHOLE_MARK[1]`` or surer.

    Jokers are kept from the first: some designs print the letters of ``JOKER`` smaller
    than ranks. The second are pieces of the larger mark, however surely read: the
    ``1`` of a ``10`` whose digits stand apart, read as a queen (``WHOLE_MARK``).
    """
    sizes = [d.size for d in found if d.confidence >= SURE and d.card not in "BR"]
    if sizes:
        least = PIECE_SIZE * float(np.median(sizes))
        found = [d for d in found if d.card in "BR" or d.size >= least]
    if not found:
        return found
    centres = np.array([d.center for d in found])
    size = np.array([d.size for d in found])
    sure = np.array([d.confidence >= WHOLE_MARK[1] for d in found])
    apart = np.hypot(*(centres[:, None] - centres[None]).transpose(2, 0, 1))
    # on_larger[i, j]: reading i lies on the spot of the larger, sure reading j.
    on_larger = (apart < SAME_SPOT * size) & (size >= WHOLE_MARK[0] * size[:, None]) & sure
    return [d for d, piece in zip(found, on_larger.any(axis=1), strict=True) if not piece]


def _detection(
    code: str, suit: str | None, conf: float, centre: np.ndarray, size: float, angle: float
) -> Detection:
    """Builds a detection with the mark's outline turned like the card."""
    c, s = np.cos(angle), np.sin(angle)
    half = size / 2
    corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
    box = tuple(
        (float(centre[0] + c * x - s * y), float(centre[1] + s * x + c * y)) for x, y in corners
    )
    return Detection(
        code, suit, conf, (float(centre[0]), float(centre[1])), box, float(np.degrees(angle) % 360)
    )


def _opposite_on_one_card(u: float, v: float, turn: float, size: float) -> bool:
    """Tells whether a mark at ``(u, v)`` in another's card frame is the opposite corner's.

    Every index is repeated turned at the opposite corner: down-right of the upright
    one in its card's frame (or up-left of it, seen from the turned one).
    """
    down = v if u > 0 else -v
    return (
        turn > 140
        and 1.5 * size < abs(u) < CARD_REACH * size
        and 0.9 * abs(u) < down < 2.4 * abs(u)
    )


def _across_on_four_index_card(u: float, v: float, turn: float, size: float) -> bool:
    """Tells whether a mark at ``(u, v)`` in another's card frame may end the second
    diagonal of a card with an index in all four corners: turned, down-left of the
    upright top-right one (or up-right of it, seen from the turned one), and no further
    down than a card's corners lie (``CORNERS_ASPECT``): in a fan of two such cards the
    top card's top-left index and the under card's bottom-left one lie so, a fan step
    across and a card's height down."""
    down = v if u < 0 else -v
    return (
        turn > 140
        and 1.5 * size < abs(u) < CARD_REACH * size
        and 0.9 * abs(u) < down < CORNERS_ASPECT[1] * abs(u)
    )


def _under_in_fan(k: Detection, d: Detection, found: list[Detection]) -> bool:
    """Tells whether one of two upright marks along a top edge is a top card's whose far
    corner is in view (``found``) and the other lies on the side away from that corner:
    where the card under it, fanned, shows its mark. A mark on the corner's side lies on
    the top card itself (a four-index card's top-right index, a piece of its picture)."""
    for top, other in ((k, d), (d, k)):
        along = _in_card_frame(top, other)[0]
        for e in found:
            if e.card != top.card:
                continue
            u, v = _in_card_frame(top, e)
            if u * along < 0 and _opposite_on_one_card(u, v, _turn(top, e), max(top.size, e.size)):
                return True
    return False


def _next_in_fan(u: float, v: float, turn: float, size: float, reach: float) -> bool:
    """Tells whether an upright mark at ``(u, v)`` in another's card frame may be a fanned
    card's, up to ``reach`` sizes along.

    The next card of a fan shows its mark along the top edge, a mark size or more
    along; a design that marks its jokers in all four corners shows the top-right
    one a card's width along, about as far (``FAN_REACH``), and its bottom corners
    tell it apart (``_second_uprights``).
    """
    return turn < 40 and abs(v) < 0.5 * abs(u) and PIECE_REACH * size <= abs(u) < reach * size


def _below_on_one_card(u: float, v: float, turn: float, size: float) -> bool:
    """Tells whether a mark at ``(u, v)`` in another's card frame may be the turned one below it.

    Some decks print an index in all four corners, upright at the top two and turned
    at the bottom two: the turned one under a mark lies along the card's side. Two
    cards of one rank laid head to foot in two zones can lie so too; the table
    between them parts them (``merge``), and suits read surely that differ do. (The
    other upright corner, along the top edge, is where the next card of a fanned
    pair shows its mark, with no table between: it is not joined.)
    """
    return turn > 140 and abs(u) < size and 1.5 * size < abs(v) < CARD_REACH * size


_BETWEEN = np.linspace(0.1, 0.9, 17)
"""Where, along the line between two readings, ``_table_between`` looks for the table."""


def _table_between(table: np.ndarray, a: Detection, b: Detection) -> bool:
    """Tells whether the table shows between two readings, which are then on two cards."""
    (x0, y0), (x1, y1) = a.center, b.center
    # Both readings lie in the frame, so every point between them does.
    xs = (x0 + _BETWEEN * (x1 - x0)).astype(np.intp) // TABLE_SCALE
    ys = (y0 + _BETWEEN * (y1 - y0)).astype(np.intp) // TABLE_SCALE
    return int(table[ys, xs].sum()) >= TABLE_GAP


def merge(
    found: list[Detection],
    table: np.ndarray | None = None,
    redness: Callable[[Detection], float] | None = None,
) -> list[Detection]:
    """Keeps one detection per card: joins pieces of one mark and the corners of one card.

    Two readings on one spot (a mark and a piece of it, read at two darkness cuts,
    or one mark read at two turns) cannot both be right; the surer one stays.
    Two readings of one rank with two surely read suits that differ are two cards
    (a pair), wherever they lie; so are two with the table showing between them
    (``table``, the 0/1 mask of ``_table``), and two where one card would show its
    corners but whose inks differ in colour (``_inks_differ``): a red and a black
    card of a pair. A joker's readings of one colour are joined further and at any
    turn, but not where the next card of a fanned pair of jokers shows its mark
    (``_next_in_fan``, further along when the top card's far corner is in view:
    ``_under_in_fan``). Far corners, a joker's too, are joined last
    (``_join_far_corners``).
    """
    kept: list[tuple[Detection, float]] = []
    for d in sorted(found, key=lambda d: -d.confidence):
        d_size = d.size
        duplicate = False
        for k, k_size in kept:
            dist = math.hypot(d.center[0] - k.center[0], d.center[1] - k.center[1])
            size = max(k_size, d_size)
            if dist < SAME_SPOT * size:
                duplicate = True
                break
            if not _may_be_one_card(k, d, table, dist >= PIECE_REACH * size):
                continue
            turn = _turn(k, d)
            u, v = _in_card_frame(k, d)
            if d.card in "BR":
                # A same-colour reading nearby is the joker's letters or another of its
                # corners (some designs mark all four), at any turn, unless it is where
                # the next card of a fanned pair of jokers (two decks) shows its mark.
                # Opposite corners are left to ``_join_far_corners``, which pairs them
                # nearest first: in a fanned pair, the top card's far corner lies where
                # the card under it would have its own.
                fanned = _next_in_fan(u, v, turn, size, FAN_REACH) or (
                    _next_in_fan(u, v, turn, size, CARD_REACH) and _under_in_fan(k, d, found)
                )
                if fanned or _opposite_on_one_card(u, v, turn, size):
                    continue
                if dist < JOKER_REACH * size or (turn > 140 and dist < CARD_REACH * size):
                    duplicate = True
                    break
            elif dist < PIECE_REACH * size and turn < 40:
                duplicate = True
                break
            # Either reading's direction may be some degrees off, which over a card's
            # height puts the mark under it a mark size aside in that one's frame.
            below = _below_on_one_card(u, v, turn, size) or _below_on_one_card(
                *_in_card_frame(d, k), turn, size
            )
            if below and not _inks_differ(k, d, redness):
                duplicate = True
                break
        if not duplicate:
            kept.append((d, d_size))
    # A second upright index is told by the bottom corners of its card, looked for among
    # every reading, or by lying as far along as those of the frame's cards whose bottom
    # corners show; it leaves last, and only when the card's other upright index is
    # still there.
    second = _second_uprights([d for d, _ in kept], found, table, redness)
    cards = _join_far_corners([d for d, _ in kept], found, table, redness)
    there = set(cards)
    return [d for d in cards if second.get(d) not in there]


def _second_uprights(
    kept: list[Detection],
    found: list[Detection],
    table: np.ndarray | None,
    redness: Callable[[Detection], float] | None,
) -> dict[Detection, Detection]:
    """Maps the less sure of each four-index card's two upright indices to the other.

    Some decks (bonded) print an index in all four corners. The two upright ones lie
    along the card's top edge, where the next card of a fanned pair of one rank
    shows its mark too, and two decks give pairs of one suit. A turned reading of
    the rank at a bottom corner tells them apart: directly below one of the two
    and where the other's opposite corner lies, so that the three are corners of
    one card (``_bottom_corner``). The two are among the readings ``kept`` on their
    spots, whose suits are the surest; the bottom corners among all ``found``, as a
    bottom corner is joined to the index above it before.

    Where a card's bottom corners are hidden, its top indices lie as far apart as
    those of the frame's cards whose bottom corners show (``INDEX_WIDTH_MATCH``),
    which a fan step seldom does: those are joined too.
    """
    gone: dict[int, int] = {}
    widths: list[float] = []  # how far apart a card's top indices lie, in pixels
    unconfirmed: list[tuple[int, int, Detection, float, float]] = []  # i, j, left, u, size

    def join(i: int, j: int, left: Detection, u: float, size: float) -> bool:
        """Joins two top indices unless a fanned mark or another ink lies between."""
        k, d = kept[i], kept[j]
        if any(_fanned_between(left, u, e, size) for e in found) or _inks_differ(k, d, redness):
            return False
        less, more = (j, i) if d.confidence <= k.confidence else (i, j)
        gone[less] = more
        return True

    for i, k in enumerate(kept):
        for j in range(i + 1, len(kept)):
            d = kept[j]
            if d.card != k.card or i in gone or j in gone or _turn(k, d) > 40:
                continue
            left, right = (k, d) if _in_card_frame(k, d)[0] > 0 else (d, k)
            size = max(k.size, d.size)
            u, v = _in_card_frame(left, right)
            if (
                not 1.5 * size < u < CARD_REACH * size
                or abs(v) >= size
                or not _may_be_one_card(k, d, table, apart=True)
            ):
                continue
            if not any(_bottom_corner(left, u, c, size, table) for c in found):
                unconfirmed.append((i, j, left, u, size))
            elif join(i, j, left, u, size):
                widths.append(u)
    if widths:
        width = float(np.median(widths))
        for i, j, left, u, size in unconfirmed:
            if i not in gone and j not in gone and abs(u - width) < INDEX_WIDTH_MATCH * size:
                join(i, j, left, u, size)
    return {kept[n]: kept[m] for n, m in gone.items()}


def _bottom_corner(
    left: Detection, width: float, c: Detection, size: float, table: np.ndarray | None
) -> bool:
    """Tells whether ``c`` is a bottom corner of the card whose top corners are ``left`` and
    the upright mark ``width`` along from it: turned, below one of them, as far down as a
    card's corners lie (``CORNERS_ASPECT``)."""
    if c.card != left.card or _turn(left, c) < 140:
        return False
    u, v = _in_card_frame(left, c)
    return (
        (abs(u) < size or abs(u - width) < size)
        and CORNERS_ASPECT[0] * width < v < CORNERS_ASPECT[1] * width
        and _may_be_one_card(left, c, table, apart=True)
    )


def _fanned_between(corner: Detection, along: float, e: Detection, size: float) -> bool:
    """Tells whether ``e`` is an upright mark along the top edge, between ``corner`` and
    the point ``along`` from it (to the right when positive, to the left when negative):
    the index of a card fanned between two, where one card's top edge shows no index."""
    if _turn(corner, e) > 40:
        return False
    u, v = _in_card_frame(corner, e)
    u = u if along > 0 else -u
    return SAME_SPOT * size < u < abs(along) - SAME_SPOT * size and abs(v) < size


def _join_far_corners(
    cards: list[Detection],
    found: list[Detection],
    table: np.ndarray | None,
    redness: Callable[[Detection], float] | None,
) -> list[Detection]:
    """Joins the two opposite corner readings of each card, one to one, nearest first.

    In a fan of one rank, the top card's far corner also lies down and right of the
    marks of the cards under it, each a fan step further along; its own mark is the
    nearest. Taking the pairs one to one, nearest along first, keeps the others as
    cards. The surer reading of a pair stays.

    A card with an index in all four corners has a second diagonal: its top-right
    index and its turned bottom-left one, which are what is left of it when each of
    its top indices has taken the turned one below it. Two readings so placed are
    joined too, unless an upright mark lies along the edge between them (``found``):
    the top card of a fan of two such cards shows its own other top index there.
    """
    pairs: list[tuple[float, int, int]] = []  # (how far along, surer, less sure)
    for i, k in enumerate(cards):
        for j in range(i + 1, len(cards)):
            d = cards[j]
            if d.card != k.card:
                continue
            size, turn = max(k.size, d.size), _turn(k, d)
            u, v = _in_card_frame(k, d)
            across = _across_on_four_index_card(u, v, turn, size)
            if across:
                back = _in_card_frame(d, k)[0]
                across = not any(
                    _fanned_between(k, u, e, size) or _fanned_between(d, back, e, size)
                    for e in found
                )
            if (
                (across or _opposite_on_one_card(u, v, turn, size))
                and _may_be_one_card(k, d, table, apart=True)
                and not _inks_differ(k, d, redness)
            ):
                pairs.append((abs(u) / size, i, j))
    joined: set[int] = set()
    gone: set[int] = set()
    for _, i, j in sorted(pairs):
        if i not in joined and j not in joined:
            joined.update((i, j))
            gone.add(j)
    return [d for n, d in enumerate(cards) if n not in gone]


def _may_be_one_card(k: Detection, d: Detection, table: np.ndarray | None, apart: bool) -> bool:
    """Tells whether two readings may be one card's: one rank, no two surely read suits
    that differ, and, when they lie ``apart`` (a mark size or more), no table between them."""
    if k.card != d.card or (d.suit and k.suit and d.suit != k.suit):
        return False
    return table is None or not apart or not _table_between(table, d, k)


def _inks_differ(k: Detection, d: Detection, redness: Callable[[Detection], float] | None) -> bool:
    """Tells whether two corner readings' inks are of two colours: a red and a black card.

    Colour is asked only here, for a pair about to be joined as one card's corners.
    """
    return redness is not None and abs(redness(d) - redness(k)) > COLOURS_APART


def _turn(k: Detection, d: Detection) -> float:
    """Returns the angle between two readings' cards, 0 to 180 degrees."""
    return abs((d.angle - k.angle + 180) % 360 - 180)


def _in_card_frame(k: Detection, d: Detection) -> tuple[float, float]:
    """Returns where ``d`` lies in ``k``'s card frame: ``u`` along its width, ``v`` down it."""
    dx, dy = d.center[0] - k.center[0], d.center[1] - k.center[1]
    a = math.radians(k.angle)
    return dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a)
