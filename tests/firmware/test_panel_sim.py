"""The real firmware in simavr, spoken to by the real host driver over a pseudo-terminal."""

from __future__ import annotations

import argparse
import queue
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from panel_harness import OPERATOR_ROW, TEST_ELF, Harness

from table.devices.cli import register
from table.devices.driver import PanelDriver, PanelStats
from table.devices.events import (
    Key,
    KeyEvent,
    Led,
    LedPattern,
    PanelBack,
    PanelLost,
    PanelNotice,
)
from table.devices.protocol import encode_frame

pytestmark = pytest.mark.firmware

Tap = tuple[int | None, Key]


def key_at(row: int, col: int) -> Tap:
    """Names the key wired at a matrix position (docs/wiring.md)."""
    if row == OPERATOR_ROW:
        return None, Key(Key.UNDO + col)
    return row, Key(col)


def next_events(driver: PanelDriver, count: int, timeout: float = 10.0) -> list[KeyEvent]:
    """Collects count key events; any other notice fails the test."""
    events: list[KeyEvent] = []
    deadline = time.monotonic() + timeout
    while len(events) < count:
        try:
            notice = driver.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            pytest.fail(f"{len(events)} of {count} events in {timeout} s; {driver.stats}")
        assert isinstance(notice, KeyEvent), f"unexpected {notice}"
        events.append(notice)
    return events


def next_notice(driver: PanelDriver, timeout: float = 10.0) -> PanelNotice:
    return driver.get(timeout=timeout)


def wait_for_stats(
    driver: PanelDriver, predicate: Callable[[PanelStats], bool], timeout: float = 5.0
) -> PanelStats:
    """Waits (bounded) until the driver's counters satisfy predicate; heartbeats update them."""
    deadline = time.monotonic() + timeout
    while not predicate(stats := driver.stats):
        assert time.monotonic() < deadline, f"counters never matched: {stats}"
        time.sleep(0.05)
    return stats


def as_taps(events: list[KeyEvent]) -> list[tuple[int | None, Key, bool]]:
    return [(e.seat, e.key, e.pressed) for e in events]


def test_bouncy_press_gives_one_event(harness: Harness, driver: PanelDriver) -> None:
    harness.tap(1, 2, delay_us=1000, hold_us=40_000, bounces=6)
    harness.tap(3, 4, delay_us=80_000, hold_us=20_000, bounces=0)
    events = next_events(driver, 4)
    assert as_taps(events) == [
        (1, Key.BID2, True),
        (1, Key.BID2, False),
        (3, Key.PLAY, True),
        (3, Key.PLAY, False),
    ]
    assert [e.seq for e in events] == [0, 1, 2, 3]
    # The press settles 5 ms after the last of 6 bounce pairs (2.4 ms), so not before 8 ms.
    assert events[0].panel_ms >= 8
    assert driver.stats.events == 4


def test_operator_keys_and_hold(harness: Harness, driver: PanelDriver) -> None:
    harness.send(f"key {OPERATOR_ROW} 0 1")
    (press,) = next_events(driver, 1)
    harness.send(f"key {OPERATOR_ROW} 0 0")
    harness.tap(OPERATOR_ROW, 1, delay_us=0, hold_us=15_000, bounces=2)
    events = [press, *next_events(driver, 3)]
    assert as_taps(events) == [
        (None, Key.UNDO, True),
        (None, Key.UNDO, False),
        (None, Key.OK, True),
        (None, Key.OK, False),
    ]


def random_schedule(rng: random.Random, presses: int) -> dict[int, list[tuple[int, int, int]]]:
    """Plans non-overlapping taps per matrix row: (start_us, column, hold_us)."""
    columns = {row: (5 if row < OPERATOR_ROW else 2) for row in range(OPERATOR_ROW + 1)}
    plan: dict[int, list[tuple[int, int, int]]] = {row: [] for row in columns}
    clock = dict.fromkeys(columns, 20_000)
    for _ in range(presses):
        row = rng.randrange(len(columns))
        start = clock[row] + rng.randrange(8_000, 20_000)
        hold = rng.randrange(8_000, 25_000)
        plan[row].append((start, rng.randrange(columns[row]), hold))
        clock[row] = start + hold
    return plan


def test_thousand_random_presses_arrive_once_in_order(
    harness: Harness, driver: PanelDriver
) -> None:
    rng = random.Random(20261130)
    plan = random_schedule(rng, 1000)
    for row, taps in plan.items():
        for start, col, hold in taps:
            harness.tap(row, col, delay_us=start, hold_us=hold, bounces=rng.randrange(3))
    events = next_events(driver, 2000, timeout=60)
    assert [e.seq for e in events] == list(range(2000))
    for row, taps in plan.items():
        seat = None if row == OPERATOR_ROW else row
        expected = []
        for _, col, _ in taps:
            _, key = key_at(row, col)
            expected += [(seat, key, True), (seat, key, False)]
        assert [t for t in as_taps(events) if t[0] == seat] == expected
    stats = wait_for_stats(driver, lambda s: s.events == 2000)
    assert stats.panel_dropped == 0


def test_garbage_is_survived_and_framing_resynchronises(
    harness: Harness, driver: PanelDriver
) -> None:
    rng = random.Random(7)
    expected = []
    for round_ in range(10):
        noise = bytes(rng.randrange(256) for _ in range(rng.randrange(5, 60)))
        harness.send(f"rxnoise {noise.hex()}")
        harness.send(f"txnoise {noise[::-1].hex()}")
        harness.tap(round_ % 4, round_ % 5, delay_us=1000, hold_us=12_000, bounces=1)
        expected += [(round_ % 4, Key(round_ % 5), True), (round_ % 4, Key(round_ % 5), False)]
        assert as_taps(next_events(driver, 2)) == expected[-2:]
    harness.send("txnoise " + "55" * 300)
    harness.tap(0, 0, delay_us=1000, hold_us=12_000)
    assert as_taps(next_events(driver, 2)) == [(0, Key.PASS, True), (0, Key.PASS, False)]
    stats = wait_for_stats(driver, lambda s: s.panel_rx_bad > 0 and s.corrupt_frames > 0)
    assert stats.events == 22
    assert driver.is_connected


def test_killed_harness_is_reconnected(harness: Harness, driver: PanelDriver) -> None:
    harness.tap(2, 0, delay_us=1000, hold_us=10_000)
    assert [e.seq for e in next_events(driver, 2)] == [0, 1]
    harness.kill()
    lost = next_notice(driver)
    assert isinstance(lost, PanelLost)
    assert not driver.is_connected
    harness.start()
    back = next_notice(driver)
    assert isinstance(back, PanelBack)
    harness.tap(2, 1, delay_us=1000, hold_us=10_000)
    events = next_events(driver, 2)
    assert as_taps(events) == [(2, Key.BID1, True), (2, Key.BID1, False)]
    assert [e.seq for e in events] == [0, 1]
    assert driver.stats.connects == 2


def test_new_driver_on_running_panel_gets_no_repeats(harness: Harness, driver: PanelDriver) -> None:
    harness.tap(0, 3, delay_us=1000, hold_us=10_000)
    next_events(driver, 2)
    driver.stop()
    again = PanelDriver(str(harness.link))
    try:
        again.start()
        assert isinstance(again.get(timeout=5), PanelBack)
        harness.tap(1, 3, delay_us=1000, hold_us=10_000)
        events = next_events(again, 2)
        assert as_taps(events) == [(1, Key.BID3, True), (1, Key.BID3, False)]
        assert [e.seq for e in events] == [2, 3]
    finally:
        again.stop()


def test_led_commands_show_on_the_shift_register(harness: Harness, driver: PanelDriver) -> None:
    driver.set_led(1, Led.ERROR, LedPattern.ON)
    at, _ = harness.wait_led(lambda bits: bits == 0b0000_1000)
    driver.set_led(2, Led.TURN, LedPattern.BLINK)
    at, _ = harness.wait_led(lambda bits: bits == 0b0001_1000, start=at)
    at, dark = harness.wait_led(lambda bits: bits == 0b0000_1000, start=at)
    at, lit = harness.wait_led(lambda bits: bits == 0b0001_1000, start=at)
    at, dark_again = harness.wait_led(lambda bits: bits == 0b0000_1000, start=at)
    # BLINK is 0xF0: lit for the first 500 ms of every second of panel time.
    assert lit.sim_us % 1_000_000 < 2_000, "slots are aligned to the panel's clock"
    assert 498_000 <= dark_again.sim_us - lit.sim_us <= 502_000
    assert 998_000 <= dark_again.sim_us - dark.sim_us <= 1_002_000
    driver.set_led(1, Led.ERROR, LedPattern.OFF)
    driver.set_led(2, Led.TURN, LedPattern.OFF)
    harness.wait_led(lambda bits: bits == 0, start=at)


def test_leds_are_restored_after_a_panel_restart(harness: Harness, driver: PanelDriver) -> None:
    driver.set_led(3, Led.TURN, LedPattern.ON)
    harness.wait_led(lambda bits: bits == 0b0100_0000)
    harness.kill()
    assert isinstance(next_notice(driver), PanelLost)
    before_restart = len(harness.leds)
    harness.start()
    assert isinstance(next_notice(driver), PanelBack)
    harness.wait_led(lambda bits: bits == 0b0100_0000, start=before_restart)


def test_watchdog_restarts_a_stuck_panel(firmware_built: None, tmp_path: Path) -> None:
    harness = Harness(tmp_path / "panel", elf=TEST_ELF)
    harness.start()
    driver = PanelDriver(str(harness.link))
    try:
        driver.start()
        assert isinstance(driver.get(timeout=5), PanelBack)
        driver.set_led(0, Led.TURN, LedPattern.ON)
        harness.tap(0, 1, delay_us=1000, hold_us=10_000)
        assert [e.seq for e in next_events(driver, 2)] == [0, 1]
        # The test build hangs its main loop on message 0xEE; only the watchdog ends that.
        harness.send("rxnoise 00" + encode_frame(bytes([1, 0xEE])).hex())
        lost = next_notice(driver)
        assert isinstance(lost, PanelLost) and "watchdog" in lost.reason
        back = next_notice(driver)
        assert isinstance(back, PanelBack) and back.info.reset_reason == "watchdog"
        at = len(harness.leds)
        harness.wait_led(lambda bits: bits == 0b0000_0001, start=at)
        harness.tap(0, 2, delay_us=1000, hold_us=10_000)
        events = next_events(driver, 2)
        assert as_taps(events) == [(0, Key.BID2, True), (0, Key.BID2, False)]
        assert [e.seq for e in events] == [0, 1]
    finally:
        driver.stop()
        harness.stop()


def test_cli_listen_prints_the_panels_events(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="ddz-table")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["panel", "listen", str(harness.link), "--count", "2"])
    harness.tap(4, 1, delay_us=50_000, hold_us=10_000)
    assert args.func(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("panel back: id 1, firmware 1.0, 4 seats, power-on reset")
    assert lines[1].startswith("event operator OK press seq 0 at ")
    assert lines[2].startswith("event operator OK release seq 1 at ")
