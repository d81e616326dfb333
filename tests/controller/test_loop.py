"""The controller driven through a simulated panel, with a real session log."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from table.controller.eyes import Eyes
from table.controller.loop import Controller
from table.devices.events import Key, Led, LedPattern
from table.devices.simulated import SimulatedPanel
from table.rules import Cards, Phase
from table.session.entries import NoCameraError
from table.session.store import SessionLog
from table.session.table import TableSession
from table.vision.recognize import Detection, load_model
from tests.controller.test_eyes import BLANK, CALIBRATION, laid


@pytest.fixture
def table(tmp_path: Path) -> Iterator[tuple[Controller, SimulatedPanel]]:
    log = SessionLog.open(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    panel = SimulatedPanel(seats=3)
    controller = Controller(session, panel=panel)
    controller.start()
    yield controller, panel
    controller.stop()
    log.close()


def until(
    controller: Controller, check: Callable[[TableSession], bool], timeout: float = 10
) -> None:
    """Waits for the session to reach a condition; fails the test if it never does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if controller.call(lambda: check(controller.session)):
            return
        time.sleep(0.01)
    pytest.fail("the table never reached the expected state")


def in_phase(phase: Phase) -> Callable[[TableSession], bool]:
    """Makes a check that the current round is in ``phase``."""
    return lambda s: s.state.round is not None and s.state.round.state.phase is phase


def kinds(session: TableSession) -> list[str]:
    return [entry.kind for entry in session.log.entries(session.session_id)]


def test_keys_run_the_auction_and_the_leds_follow(table: tuple[Controller, SimulatedPanel]) -> None:
    controller, panel = table
    panel.press(1, Key.BID1)
    until(controller, lambda s: s.state.round is not None and s.state.round.state.turn == 2)
    assert panel.leds[(2, Led.TURN)] == LedPattern.ON
    assert panel.leds[(1, Led.TURN)] == LedPattern.OFF
    panel.press(2, Key.PASS)
    panel.press(0, Key.PASS)
    until(controller, in_phase(Phase.PLAY))
    state = controller.call(lambda: controller.session.state.round.state)  # type: ignore[union-attr]
    assert (state.landlord, state.highest_bid, state.cards_left) == (1, 1, (17, 20, 17))


def test_a_refused_key_blinks_the_error_led_and_changes_nothing(
    table: tuple[Controller, SimulatedPanel],
) -> None:
    controller, panel = table
    panel.press(0, Key.BID2)
    until(controller, lambda s: s.state.seq >= 3)
    before = controller.call(lambda: controller.session.state.round.state)  # type: ignore[union-attr]
    panel.press(2, Key.BID3)
    until(controller, lambda s: "rejected" in kinds(s))
    assert panel.leds[(2, Led.ERROR)] == LedPattern.FAST_BLINK
    after = controller.call(lambda: controller.session.state.round.state)  # type: ignore[union-attr]
    assert after == before
    panel.press(1, Key.PASS)
    until(controller, lambda s: s.state.round.state.turn == 2)  # type: ignore[union-attr]
    assert panel.leds[(2, Led.ERROR)] == LedPattern.OFF


def test_play_without_a_camera_is_refused_and_the_console_enters_it(
    table: tuple[Controller, SimulatedPanel],
) -> None:
    controller, panel = table
    panel.press(0, Key.BID3)
    until(controller, in_phase(Phase.PLAY))
    panel.press(0, Key.PLAY)
    until(controller, lambda s: "alert" in kinds(s))
    assert panel.leds[(0, Led.ERROR)] == LedPattern.FAST_BLINK
    assert controller.call(lambda: controller.enter_play(0, "33", "Ann", "no camera")) is None
    played = controller.call(lambda: controller.session.state.round)
    assert played is not None and played.state.trick is not None
    assert played.state.trick.cards == Cards.from_str("33")
    refused = controller.call(lambda: controller.enter_play(1, "22x", "Ann", "typo"))
    assert refused is not None and "'x'" in refused


def test_undo_key_and_panel_health(table: tuple[Controller, SimulatedPanel]) -> None:
    controller, panel = table
    panel.press(0, Key.BID1)
    until(controller, lambda s: s.state.round is not None and s.state.round.state.turn == 1)
    panel.press(None, Key.UNDO)
    until(controller, lambda s: "undo" in kinds(s))
    assert controller.call(lambda: controller.session.state.round.state.turn) == 0  # type: ignore[union-attr]
    panel.unplug()
    until(
        controller, lambda s: s.state.snapshot()["devices"].get("panel", {}).get("status") == "lost"
    )
    panel.replug()
    until(
        controller, lambda s: s.state.snapshot()["devices"].get("panel", {}).get("status") == "back"
    )


class StillCamera:
    """A camera over a table where nothing moves (the readings come from the test)."""

    def read(self) -> np.ndarray:
        time.sleep(0.01)
        return BLANK

    def close(self) -> None:
        pass


def test_a_play_the_operator_enters_replaces_the_unsure_reading(tmp_path: Path) -> None:
    """After the operator typed the seat's play, OK no longer confirms the stale reading,
    even when the rules refused what was typed."""
    log = SessionLog.open(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    panel = SimulatedPanel(seats=3)
    on_table: list[Detection] = []
    eyes = Eyes(StillCamera, CALIBRATION, 3, reader=lambda _frame: on_table, max_frames=4)
    controller = Controller(session, panel=panel, eyes=eyes)
    controller.start()
    try:
        panel.press(0, Key.BID3)
        until(controller, in_phase(Phase.PLAY))
        # The new round marks what lies on the table as old at the camera's next frame;
        # cards laid before that frame would be old too (a slow frame made this flaky).
        assert eyes.wait_frames(1, timeout=10)
        on_table.extend(laid("33", confidence=0.5))
        panel.press(0, Key.PLAY)
        until(controller, lambda s: controller.pending is not None)
        refused = controller.call(lambda: controller.enter_play(0, "34", "Ann", "typed"))
        assert refused is not None and "34" in refused
        assert controller.call(lambda: controller.confirm(None, "Ann", "OK key")) == (
            "there is no camera reading waiting for confirmation"
        )
    finally:
        controller.stop()
        log.close()


def test_a_new_deck_is_told_to_the_camera_and_to_the_room(tmp_path: Path) -> None:
    log = SessionLog.open(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    blind = Controller(session)
    with pytest.raises(NoCameraError, match="table t1 has no camera"):
        blind.new_deck("Dee")
    eyes = Eyes(StillCamera, CALIBRATION, 3, reader=lambda _frame: [])
    controller = Controller(session, eyes=eyes)
    entry = controller.new_deck("Dee")
    assert (entry.kind, entry.data["kind"]) == ("alert", "new_deck")
    assert entry.data["message"].startswith("Dee put a new deck on the table")
    assert "learnt" not in entry.data["message"]
    with_learnt = Controller(session, eyes=Eyes(StillCamera, CALIBRATION, 3, model=load_model()))
    assert (
        "the model learnt for the old deck stays in use"
        in (with_learnt.new_deck("Dee").data["message"])
    )
    log.close()
