"""From per-frame readings of one zone to committed plays.

When a seat presses PLAY, the new cards are those in its zone that were not there
at its previous commit (the start of the trick, or its last play). Hands pass over
the zone and readings flicker, so a play is committed only when the same new cards,
all read with enough confidence, are seen in several frames in a row (the frames
just before the press count: cards are laid first, then PLAY is pressed);
otherwise the extractor reports what it saw, marked as not confident, and the
referee asks.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from table.vision.calibration import Calibration
from table.vision.recognize import SURE, Detection

RANK_ORDER = "3456789TJQKA2BR"
CARD_REACH = 13.0
"""How far, in rank-mark sizes, an old card's other corner can be from where it was read."""


def canonical(cards: Iterable[str]) -> str:
    """Sorts rank codes from low to high, the project's canonical card string.

    >>> canonical("4B3R3")
    '334BR'
    """
    return "".join(sorted(cards, key=RANK_ORDER.index))


@dataclass(frozen=True)
class PlayReading:
    """What the camera says a seat played.

    ``is_confident`` is true only for a reading stable over the required frames
    with every card above the confidence bar; otherwise ``cards`` is the most
    frequent reading seen and should be confirmed by a person.
    """

    cards: str
    confidence: float
    is_confident: bool
    frames: int
    seen: tuple[Detection, ...] = ()

    def __str__(self) -> str:
        state = "confident" if self.is_confident else "unsure"
        cards = self.cards or "(nothing new)"
        return f"{cards} ({state}, {self.confidence:.2f} over {self.frames} frames)"


def in_zone(
    detections: Iterable[Detection], calibration: Calibration, zone: str
) -> list[Detection]:
    """Keeps the readings whose centre lies in a zone of the calibrated table."""
    return [d for d in detections if calibration.zone_of(d.center) == zone]


def new_cards(
    baseline: Sequence[Detection], current: Sequence[Detection], radius: float
) -> list[Detection]:
    """Returns the readings of ``current`` that are not cards of ``baseline``.

    A reading is an old card when a baseline card with the same code lies within
    ``radius`` pixels; failing that, when an unmatched baseline card with the same
    code lies within a card's length: a card partly covered by a later play is
    then read at its other corner. Each baseline card accounts for one reading.
    """
    used: set[int] = set()
    pending: list[Detection] = []
    for det in current:
        match = _nearest(baseline, det, used, radius)
        if match is None:
            pending.append(det)
        else:
            used.add(match)
    fresh: list[Detection] = []
    for det in pending:
        reach = CARD_REACH * max(det.size, 1.0)
        match = _nearest(baseline, det, used, reach)
        if match is None:
            fresh.append(det)
        else:
            used.add(match)
    return fresh


def _nearest(
    baseline: Sequence[Detection], det: Detection, used: set[int], reach: float
) -> int | None:
    """Returns the closest unused baseline card with the same code within ``reach``."""
    best, best_d2 = None, reach * reach
    for i, old in enumerate(baseline):
        if i in used or old.card != det.card:
            continue
        d2 = (det.center[0] - old.center[0]) ** 2 + (det.center[1] - old.center[1]) ** 2
        if d2 <= best_d2:
            best, best_d2 = i, d2
    return best


FrameReading = tuple[str, float, tuple[Detection, ...]]
"""One frame of a zone: its new cards as text, the least confidence among them, the readings."""


def _frame_reading(
    baseline: Sequence[Detection], detections: Sequence[Detection], radius: float
) -> FrameReading:
    """Reads one frame's new cards; nothing new reads as ``""`` at full confidence."""
    fresh = tuple(new_cards(baseline, detections, radius))
    text = canonical(d.card for d in fresh)
    return text, min((d.confidence for d in fresh), default=1.0), fresh


def extract_play(
    baseline: Sequence[Detection],
    frames: Sequence[Sequence[Detection]],
    *,
    stable_frames: int = 3,
    min_confidence: float = SURE,
    radius: float = 10.0,
) -> PlayReading:
    """Reads the new cards of a zone from the frames taken after a PLAY press.

    Commits the first reading that is the same in ``stable_frames`` consecutive
    frames with every new card at ``min_confidence`` or more; without one, returns
    the most frequent reading as not confident.
    """
    readings: list[FrameReading] = []
    run = 0
    for dets in frames:
        reading = _frame_reading(baseline, dets, radius)
        text, conf, fresh = reading
        if readings and readings[-1][0] == text and conf >= min_confidence and text:
            run += 1
        else:
            run = 1 if conf >= min_confidence and text else 0
        readings.append(reading)
        if run >= stable_frames:
            window = readings[-stable_frames:]
            return PlayReading(text, min(r[1] for r in window), True, len(readings), fresh)
    if not readings:
        return PlayReading("", 0.0, False, 0)
    counts = Counter(r[0] for r in readings if r[0])
    if not counts:
        return PlayReading("", 0.0, False, len(readings))
    text, _ = counts.most_common(1)[0]
    last = next(r for r in reversed(readings) if r[0] == text)
    share = counts[text] / len(readings)
    return PlayReading(text, min(last[1], share), False, len(readings), last[2])


def settled_play(
    baseline: Sequence[Detection],
    frames: Sequence[Sequence[Detection]],
    *,
    stable_frames: int = 3,
    min_confidence: float = SURE,
    radius: float = 10.0,
) -> PlayReading | None:
    """Returns the play the latest frames agree on, or ``None``.

    Going back from the last frame, every frame must read the same new cards, and
    at least ``stable_frames`` of them with every card at ``min_confidence`` or
    more. A frame that reads those cards less surely (a flicker of light or blur)
    does not break the agreement; a frame that reads other cards, or none (a hand
    over the zone), ends it, so cards since added or moved are never committed.
    """
    readings: list[FrameReading] = []
    for dets in reversed(frames):
        reading = _frame_reading(baseline, dets, radius)
        if not reading[0] or (readings and reading[0] != readings[0][0]):
            break
        readings.append(reading)
    sure = [r for r in readings if r[1] >= min_confidence][:stable_frames]
    if len(sure) < stable_frames:
        return None
    return PlayReading(sure[0][0], min(r[1] for r in sure), True, len(frames), sure[0][2])


FLICKER_FRAMES = 2
"""Frames a press looks back beyond ``stable_frames``, for readings that flickered unsure."""


@dataclass
class PlayExtractor:
    """Follows one zone over a trick: :meth:`feed` it every frame, :meth:`press` on PLAY.

    Players lay their cards before they press PLAY, so the extractor keeps the
    zone's last frames: a press whose cards already read the same in the latest
    of them (:func:`settled_play`) commits at once. Otherwise :meth:`feed` returns ``None`` while it
    is still waiting, then one :class:`PlayReading`; a confident reading is added to
    the zone's known cards so the next play of the trick is told apart from it.
    """

    stable_frames: int = 3
    max_frames: int = 30
    min_confidence: float = SURE
    radius: float = 10.0
    known: list[Detection] = field(default_factory=list)
    _recent: deque[list[Detection]] = field(init=False)
    _pending: list[list[Detection]] | None = None

    def __post_init__(self) -> None:
        self._recent = deque(maxlen=self.stable_frames + FLICKER_FRAMES)

    def clear(self, detections: Sequence[Detection] = ()) -> None:
        """Starts a new trick: the cards now in the zone (usually none) are old."""
        self.known = list(detections)
        self._recent = deque([list(detections)], maxlen=self.stable_frames + FLICKER_FRAMES)
        self._pending = None

    def forget_recent(self) -> None:
        """Drops the recent frames, which no longer tell what lies in the zone (camera lost)."""
        self._recent.clear()

    def press(self) -> PlayReading | None:
        """Starts a play: returns it at once if the recent frames agree, else ``None`` and waits.

        Only the last ``stable_frames - 1`` frames are carried into the wait, so
        an older stable reading (cards since added to or moved) is never committed.
        """
        recent = list(self._recent)
        reading = settled_play(self.known, recent, **self._judging())
        if reading is not None:
            return self._done(reading)
        self._pending = recent[max(len(recent) - self.stable_frames + 1, 0) :]
        return None

    def cancel(self) -> None:
        """Stops waiting for a play (nobody asks any more)."""
        self._pending = None

    @property
    def is_waiting(self) -> bool:
        """Tells whether a PLAY press is waiting for a stable reading."""
        return self._pending is not None

    def feed(self, detections: Sequence[Detection]) -> PlayReading | None:
        """Adds one frame of the zone's readings; returns the play once decided."""
        self._recent.append(list(detections))
        if self._pending is None:
            return None
        self._pending.append(list(detections))
        reading = self._extract(self._pending)
        if not reading.is_confident and len(self._pending) < self.max_frames:
            return None
        return self._done(reading)

    def _extract(self, frames: Sequence[Sequence[Detection]]) -> PlayReading:
        return extract_play(self.known, frames, **self._judging())

    def _judging(self) -> dict[str, Any]:
        """The extractor's settings, as both ways of judging frames take them."""
        return {
            "stable_frames": self.stable_frames,
            "min_confidence": self.min_confidence,
            "radius": self.radius,
        }

    def _done(self, reading: PlayReading) -> PlayReading:
        self._pending = None
        if reading.is_confident:
            self.known.extend(reading.seen)
        return reading
