"""The camera side of the referee: a thread reads every frame, PLAY presses ask it.

Frames come from any source with ``read()`` and ``close()`` (a
:class:`~table.vision.camera.Camera` or the demo's virtual table). Each frame's
readings are sorted into the seat zones of the calibration and fed to every
seat's :class:`~table.vision.plays.PlayExtractor`, which keeps the zone's recent
frames: players lay their cards and then press PLAY, so a press usually finds
the cards already read the same in enough frames and commits at once. A source
that fails is reported lost (the recent frames are dropped with it) and reopened
with backoff; one whose frames are not of the calibration's size is reported lost
too, as its cards would fall in the wrong zones.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np

from table.errors import UserError
from table.vision.calibration import Calibration
from table.vision.memory import DeckMemory
from table.vision.plays import PlayExtractor, PlayReading
from table.vision.recognize import Detection, Model, load_model, read_cards

logger = logging.getLogger(__name__)

HealthCallback = Callable[[str, str], None]
"""Called with ``("lost", reason)`` or ``("back", detail)`` from the camera thread."""


class FrameSource(Protocol):
    """Anything that yields frames: a camera, a video file, the virtual table."""

    def read(self) -> np.ndarray: ...

    def close(self) -> None: ...


def seat_zone(seat: int) -> str:
    """Names a seat's play zone in the calibration layout."""
    return f"seat{seat}"


class Eyes:
    """Reads the table continuously and answers "what did seat N just lay down?"."""

    def __init__(
        self,
        open_source: Callable[[], FrameSource],
        calibration: Calibration,
        seats: int,
        *,
        model: Model | None = None,
        reader: Callable[[np.ndarray], list[Detection]] | None = None,
        max_backoff: float = 5.0,
        max_frames: int = 10,
    ) -> None:
        self._open_source = open_source
        self.calibration = calibration
        self.seats = seats
        self.memory = DeckMemory() if reader is None else None
        """The marks of the deck on the table, as the camera has read them surely so far."""
        self.is_learnt = model is not None
        """Reads with a model given instead of the built-in one: one learnt for a deck."""
        self._read = reader or functools.partial(
            read_cards,
            model=model or load_model(),
            memory=self.memory,
            window=calibration.reading_window(),
        )
        """Turns a frame into card readings: the card reader, on the table around its zones,
        with a memory of the deck the camera has seen (``table.vision.memory``), or a
        test's script."""
        self._deck_changed = False
        self.on_health: HealthCallback | None = None
        """Told when the source is lost or back; the controller logs it as the camera's health."""
        self._max_backoff = max_backoff
        self._extractors = [PlayExtractor(max_frames=max_frames) for _ in range(seats)]
        self._readings: dict[int, PlayReading] = {}
        self._known_before: dict[int, list[Detection]] = {}
        self._latest: dict[str, list[Detection]] = {}
        self._frames = 0
        self._rebase: set[int] = set()
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.is_seeing: bool | None = None

    def start(self) -> None:
        """Starts the reading thread."""
        self._thread = threading.Thread(target=self._run, name="ddz-eyes", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops the reading thread and closes the source."""
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def frames(self) -> int:
        """Counts the frames read so far."""
        return self._frames

    def zone(self, name: str) -> list[Detection]:
        """Gets the latest readings in one zone."""
        with self._changed:
            return list(self._latest.get(name, []))

    def new_trick(self) -> None:
        """Marks the cards in every zone at the next frame as old: a new trick starts."""
        self.rebase(range(self.seats))

    def rebase(self, seats: Iterable[int]) -> None:
        """Marks the cards in these seats' zones at the next frame as already played."""
        with self._changed:
            self._rebase.update(seats)

    def new_deck(self) -> None:
        """Forgets the old deck's marks before the next frame: another deck is on the table.

        The camera thread does it, as it is the one reading with the memory.
        """
        with self._changed:
            self._deck_changed = True

    def wait_frames(self, count: int, timeout: float) -> bool:
        """Waits until ``count`` more frames were read; false on timeout."""
        with self._changed:
            target = self._frames + count
            return self._wait(lambda: self._frames >= target, time.monotonic() + timeout)

    def read_play(self, seat: int, timeout: float = 5.0) -> PlayReading:
        """Reads the new cards of a seat's zone after its PLAY press.

        Returns a confident reading once it is stable over several frames (at
        once when the frames before the press already were), or the most
        frequent reading marked unsure (empty when nothing was seen before
        ``timeout``, as when the camera is lost). A rebase still waiting for its
        frame is applied first, so the press is read against the right cards.
        """
        extractor = self._extractors[seat]
        deadline = time.monotonic() + timeout
        nothing = PlayReading("", 0.0, False, 0)
        with self._changed:
            self._readings.pop(seat, None)
            if not self._wait(lambda: seat not in self._rebase, deadline):
                return nothing
            self._known_before[seat] = list(extractor.known)
            reading = extractor.press()
            if reading is not None:
                return reading
            if not self._wait(lambda: seat in self._readings, deadline):
                extractor.cancel()
                return nothing
            return self._readings.pop(seat)

    def _wait(self, done: Callable[[], bool], deadline: float) -> bool:
        """Waits, holding the lock, until ``done()``; false on the deadline or a stop."""
        while not done():
            left = deadline - time.monotonic()
            if left <= 0 or self._stop.is_set():
                return False
            self._changed.wait(left)
        return True

    def discard(self, seat: int) -> None:
        """Forgets the seat's last reading: the play was refused and the cards go back."""
        with self._changed:
            self._extractors[seat].known = self._known_before.pop(seat, [])

    def _run(self) -> None:
        backoff = 0.5
        source: FrameSource | None = None
        while not self._stop.is_set():
            if source is None:
                try:
                    source = self._open_source()
                except UserError as error:
                    self._health("lost", str(error))
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, self._max_backoff)
                    continue
            try:
                frame = source.read()
            except UserError as error:
                self._lose(str(error))
                source.close()
                source = None
                continue
            problem = self.calibration.frame_size_problem(frame)
            if problem is not None:
                # Read on, as the camera may come back to its size, but place no card.
                self._lose(problem)
                self._stop.wait(backoff)
                continue
            backoff = 0.5
            self._health("back", "frames arriving")
            with self._changed:
                deck_changed, self._deck_changed = self._deck_changed, False
            if deck_changed and self.memory is not None:
                self.memory.forget()
            self._take(self._read(frame))
        if source is not None:
            source.close()

    def _take(self, detections: list[Detection]) -> None:
        by_zone: dict[str, list[Detection]] = {}
        for detection in detections:
            name = self.calibration.zone_of(detection.center)
            if name is not None:
                by_zone.setdefault(name, []).append(detection)
        with self._changed:
            self._latest = by_zone
            for seat, extractor in enumerate(self._extractors):
                zone = by_zone.get(seat_zone(seat), [])
                if seat in self._rebase:
                    extractor.clear(zone)
                    continue
                reading = extractor.feed(zone)
                if reading is not None:
                    self._readings[seat] = reading
            self._rebase.clear()
            self._frames += 1
            self._changed.notify_all()

    def _lose(self, reason: str) -> None:
        """Drops every zone's recent frames, as a press after a loss must see the table
        again, and only then tells of the loss: whoever hears of it finds them gone."""
        with self._changed:
            for extractor in self._extractors:
                extractor.forget_recent()
        self._health("lost", reason)

    def _health(self, status: str, detail: str) -> None:
        seeing = status == "back"
        if seeing == self.is_seeing:
            return
        self.is_seeing = seeing
        if status == "lost":
            logger.warning("camera lost: %s", detail)
        if self.on_health is not None:
            self.on_health(status, detail)
