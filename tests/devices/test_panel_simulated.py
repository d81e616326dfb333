"""The simulated panel: same notices as the driver, scripted or typed."""

from __future__ import annotations

import io
import queue

import pytest

from table.devices.events import Key, KeyEvent, Led, LedPattern, PanelBack, PanelLost
from table.devices.simulated import (
    ScriptStep,
    SimulatedPanel,
    keyboard_help,
    keyboard_key,
    keyboard_loop,
    parse_script,
)
from table.errors import UserError


def drain(panel: SimulatedPanel) -> list[object]:
    notices = []
    while True:
        try:
            notices.append(panel.get(timeout=0))
        except queue.Empty:
            return notices


def test_press_gives_press_and_release_with_rising_sequence() -> None:
    clock = iter([0.0, 0.25, 0.5])
    panel = SimulatedPanel(seats=3, clock=lambda: next(clock))
    assert panel.start().seats == 3
    panel.press(2, Key.BID3)
    assert drain(panel) == [
        PanelBack(panel.info, "sim://"),
        KeyEvent(2, Key.BID3, True, 0, 250),
        KeyEvent(2, Key.BID3, False, 1, 500),
    ]


@pytest.mark.parametrize(
    ("seat", "key", "message"),
    [(None, Key.PASS, "a seat key"), (0, Key.OK, "operator key"), (3, Key.PASS, "seat 3")],
)
def test_wrong_seat_or_key_is_refused(seat: int | None, key: Key, message: str) -> None:
    panel = SimulatedPanel(seats=3)
    panel.start()
    with pytest.raises(ValueError, match=message):
        panel.press(seat, key)


def test_unplug_silences_keys_until_replug() -> None:
    panel = SimulatedPanel()
    panel.start()
    panel.unplug()
    panel.press(0, Key.PLAY)
    panel.replug()
    panel.press(None, Key.UNDO)
    kinds = [type(n) for n in drain(panel)]
    assert kinds == [PanelBack, PanelLost, PanelBack, KeyEvent, KeyEvent]


def test_script_runs_in_order_with_waits() -> None:
    waits: list[float] = []
    seen: list[object] = []
    panel = SimulatedPanel(on_notice=seen.append)
    panel.start()
    steps = parse_script("press 0 bid1  # opening bid\nwait 0.5; down op ok; up op ok; unplug")
    panel.play(steps, sleep=waits.append)
    assert waits == [0.5]
    events = [(n.seat, n.key, n.pressed) for n in seen if isinstance(n, KeyEvent)]
    assert events == [
        (0, Key.BID1, True),
        (0, Key.BID1, False),
        (None, Key.OK, True),
        (None, Key.OK, False),
    ]
    assert isinstance(seen[-1], PanelLost)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("press 0 bid4", "line 1 'press 0 bid4': unknown key"),
        ("wait 1\npress op pass", "line 2 .*PASS is a seat key"),
        ("wait -1", "wait needs"),
        ("jump 3", "expected press/down/up"),
    ],
)
def test_bad_script_lines_are_named(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_script(text)


def test_parse_script_reads_every_step_kind() -> None:
    assert parse_script("replug\nup 1 pass") == [
        ScriptStep("replug"),
        ScriptStep("up", seat=1, key=Key.PASS),
    ]


def test_keyboard_mode_maps_rows_to_seats() -> None:
    seen: list[object] = []
    panel = SimulatedPanel(seats=2, on_notice=seen.append)
    panel.start()
    typed = io.StringIO("qSz-\n\x04t")
    keyboard_loop(panel, lambda: typed.read(1))
    taps = [(n.seat, n.key) for n in seen if isinstance(n, KeyEvent) and n.pressed]
    # z is seat 2's key: this panel has two seats, so it means nothing; Ctrl-D ends the loop.
    assert taps == [(0, Key.PASS), (1, Key.BID1), (None, Key.UNDO), (None, Key.OK)]
    assert keyboard_key("p", 4) == (3, Key.PLAY)
    assert "seat 1: a s d f g" in keyboard_help(2)


def test_set_led_is_recorded_and_checked() -> None:
    panel = SimulatedPanel(seats=3)
    panel.set_led(2, Led.TURN, LedPattern.BLINK)
    assert panel.leds == {(2, Led.TURN): LedPattern.BLINK}
    with pytest.raises(ValueError, match="not a byte"):
        panel.set_led(0, Led.ERROR, 256)
    with pytest.raises(ValueError, match="seat 3"):
        panel.set_led(3, Led.ERROR, 0)
