"""The camera thread with scripted frames: plays read from the frames before a PLAY press."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from table.controller.eyes import Eyes
from table.controller.virtual import VirtualTable
from table.errors import UserError
from table.rules import Cards
from table.vision.calibration import Calibration, TableLayout, calibrate
from table.vision.plays import PlayReading
from table.vision.recognize import Detection

#: The table seen straight from above, one pixel a millimetre: seat 0's zone is y 300-450.
CALIBRATION = Calibration(np.eye(3), (820, 460), TableLayout())
SEAT0_Y = 380.0
BLANK = np.zeros((460, 820, 3), np.uint8)
"""A frame of the calibration's size, whose readings a test scripts."""


def laid(cards: str, confidence: float = 0.99) -> list[Detection]:
    """Builds the readings of cards lying side by side in seat 0's zone."""
    return [
        Detection(
            card, None, confidence, (260.0 + 40 * i, SEAT0_Y), ((260.0 + 40 * i, SEAT0_Y),) * 4
        )
        for i, card in enumerate(cards)
    ]


class ScriptedCamera:
    """Gives the frames a test puts in, one per read; a ``None`` frame is a lost camera."""

    def __init__(self) -> None:
        self.frames: queue.Queue[list[Detection] | None] = queue.Queue()
        self.current: list[Detection] = []
        self.picture = BLANK
        """What each frame is, whatever its readings: a test may change the camera's mode."""

    def read(self) -> np.ndarray:
        frame = self.frames.get()
        if frame is None:
            raise UserError("the camera is unplugged")
        self.current = frame
        return self.picture

    def close(self) -> None:
        pass


@pytest.fixture
def camera() -> ScriptedCamera:
    return ScriptedCamera()


@pytest.fixture
def eyes(camera: ScriptedCamera) -> Iterator[Eyes]:
    started = Eyes(
        lambda: camera, CALIBRATION, 3, reader=lambda _frame: camera.current, max_frames=6
    )
    started.start()
    yield started
    camera.frames.put([])  # wakes the reading thread so that it sees the stop
    started.stop()


def press_while_showing(eyes: Eyes, camera: ScriptedCamera, frame: list[Detection]) -> PlayReading:
    """Presses PLAY for seat 0 and shows the same frame until the press is answered."""
    with ThreadPoolExecutor(1) as pool:
        pressed = pool.submit(eyes.read_play, 0, 30)
        while not pressed.done():
            show(eyes, camera, frame)
        return pressed.result()


def show(eyes: Eyes, camera: ScriptedCamera, *frames: list[Detection]) -> None:
    """Lets the camera read these frames, and waits until it has."""
    for frame in frames:
        camera.frames.put(frame)
    assert eyes.wait_frames(len(frames), timeout=10)


def test_cards_laid_before_the_press_commit_without_another_frame(
    eyes: Eyes, camera: ScriptedCamera
) -> None:
    show(eyes, camera, [], laid("33"), laid("33"), laid("33"))
    reading = eyes.read_play(0, timeout=10)  # no frame comes after the press
    assert reading.is_confident and reading.cards == "33"
    show(eyes, camera, laid("33"), laid("3344"), laid("3344"), laid("3344"))
    second = eyes.read_play(0, timeout=10)
    assert second.is_confident and second.cards == "44", "the first play is known"


def test_a_press_while_cards_move_waits_for_stable_frames(
    eyes: Eyes, camera: ScriptedCamera
) -> None:
    show(eyes, camera, laid("5"), laid("5"), laid("5"), laid("56"))
    waited = eyes.read_play(0, timeout=0.3)  # no more frames: the press must not take "5"
    assert (waited.cards, waited.is_confident) == ("", False)
    reading = press_while_showing(eyes, camera, laid("56"))
    assert reading.is_confident and reading.cards == "56"


def test_a_new_trick_makes_the_cards_there_old(eyes: Eyes, camera: ScriptedCamera) -> None:
    show(eyes, camera, laid("8"), laid("8"), laid("8"))
    eyes.new_trick()
    show(eyes, camera, laid("8"))
    assert press_while_showing(eyes, camera, laid("89")).cards == "9"


def test_a_refused_play_is_forgotten_and_read_again(eyes: Eyes, camera: ScriptedCamera) -> None:
    show(eyes, camera, laid("JQ"), laid("JQ"), laid("JQ"))
    assert eyes.read_play(0, timeout=10).cards == "JQ"
    eyes.discard(0)  # the rules refused it; the player presses again without moving them
    assert eyes.read_play(0, timeout=10).cards == "JQ"


def test_a_lost_camera_forgets_what_it_saw(eyes: Eyes, camera: ScriptedCamera) -> None:
    show(eyes, camera, laid("K"), laid("K"), laid("K"))
    camera.frames.put(None)
    show(eyes, camera, laid("K"))
    assert eyes.is_seeing
    waited = eyes.read_play(0, timeout=0.3)  # one frame since the loss is not enough
    assert (waited.cards, waited.is_confident) == ("", False)
    reading = press_while_showing(eyes, camera, laid("K"))
    assert reading.is_confident and reading.cards == "K"


def test_frames_of_another_size_than_the_calibrations_are_a_lost_camera(
    eyes: Eyes, camera: ScriptedCamera
) -> None:
    told: queue.Queue[tuple[str, str]] = queue.Queue()
    eyes.on_health = lambda status, detail: told.put((status, detail))
    show(eyes, camera, laid("7"), laid("7"), laid("7"))
    assert told.get(timeout=10)[0] == "back"
    camera.picture = np.zeros((480, 640, 3), np.uint8)  # the driver fell back to its default
    camera.frames.put(laid("7"))
    assert told.get(timeout=10) == (
        "lost",
        "the camera gives 640x480 frames but the table was calibrated on 820x460 ones, so the"
        " seat zones would be wrong: set the camera to 820x460, or run 'ddz-table vision"
        " calibrate' again",
    )
    assert not eyes.is_seeing
    waited = eyes.read_play(0, timeout=0.3)  # what was seen before is not taken
    assert (waited.cards, waited.is_confident) == ("", False)
    camera.picture = BLANK
    show(eyes, camera, laid("7"))
    assert told.get(timeout=10) == ("back", "frames arriving")
    assert press_while_showing(eyes, camera, laid("7")).cards == "7"


def test_an_unsure_reading_is_reported_with_what_was_seen(
    eyes: Eyes, camera: ScriptedCamera
) -> None:
    show(eyes, camera, *[laid("R", 0.6)] * 3)
    reading = press_while_showing(eyes, camera, laid("R", 0.6))
    assert not reading.is_confident and reading.cards == "R"
    assert [d.card for d in reading.seen] == ["R"]


@pytest.mark.vision
def test_a_new_deck_empties_the_deck_memory_and_the_next_frames_fill_it_again() -> None:
    """The real reader over the demo's table: the camera thread forgets what it remembered
    of the old deck when told another came out, and learns again from the next cards."""
    table = VirtualTable(3, fps=30)
    eyes = Eyes(lambda: table, calibrate(table.read()), 3)
    memory = eyes.memory
    assert memory is not None
    table.lay(0, Cards.from_str("345678"))
    eyes.start()
    try:
        assert eyes.wait_frames(2, timeout=30)
        assert len(memory) > 0
        table.clear()
        assert eyes.wait_frames(2, timeout=30)  # the first may have been read before the clear
        remembered = len(memory)
        assert eyes.wait_frames(2, timeout=30)
        assert len(memory) == remembered, "a bare table teaches nothing and forgets nothing"
        eyes.new_deck()
        assert eyes.wait_frames(2, timeout=30)  # the first may have been read before the call
        assert len(memory) == 0
        table.lay(1, Cards.from_str("9TJQ"))
        assert eyes.wait_frames(2, timeout=30)
        assert len(memory) > 0
    finally:
        eyes.stop()


class StillCamera:
    """Gives the same picture in every frame, as a camera over a table left alone."""

    def __init__(self, picture: np.ndarray) -> None:
        self.picture = picture

    def read(self) -> np.ndarray:
        return self.picture.copy()

    def close(self) -> None:
        pass


@pytest.mark.vision
def test_a_loosely_framed_camera_reads_the_table_at_its_own_size(
    loosely_framed_chain: np.ndarray,
) -> None:
    """A 1080p camera showing the table in its middle (cards 82 px wide) is read around
    the table only: its frames shrunk whole to 1280 px, with cards 55 px wide, read this
    play unsure and without its 7."""
    picture = loosely_framed_chain
    eyes = Eyes(lambda: StillCamera(picture), calibrate(picture), 3)
    eyes.start()
    try:
        assert eyes.wait_frames(3, timeout=60)
        reading = eyes.read_play(0, timeout=30)
    finally:
        eyes.stop()
    assert reading.is_confident and reading.cards == "3456789TJ", str(reading)
