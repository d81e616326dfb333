"""Benchmarks the button panel in simulation: key-to-host latency and sustained event rate.

Runs the real firmware in simavr (firmware/build/panel_sim, paced to the wall clock) and the
real host driver, as the tests do. Latency is measured from the wall time the harness is told
to close a contact (which then bounces) to the wall time the driver hands out the press, so it
includes bounce, debounce, the scan, the UART, the pty and the driver. The event rate is the
highest offered rate at which every event arrives once, in order, and the panel drops none.

    .venv/bin/python benchmarks/bench_panel.py [--samples 300] [--seconds 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "firmware"))

from panel_harness import OPERATOR_ROW, Harness, build_firmware

from table.devices.driver import PanelDriver
from table.devices.events import KeyEvent, PanelNotice

# An EVENT frame is 15 bytes on the wire; 10 bits a byte at 117647 baud.
FRAME_MS = 15 * 10 / 117_647 * 1000
BOUNCES = 3  # three open/close pairs, 200 us apart: 1.2 ms of chatter before the contact holds
KEYS = [(row, col) for row in range(OPERATOR_ROW) for col in range(5)] + [
    (OPERATOR_ROW, 0),
    (OPERATOR_ROW, 1),
]


class Collector:
    """Records each delivered event with its arrival time."""

    def __init__(self) -> None:
        self.events: list[tuple[float, KeyEvent]] = []
        self.cond = threading.Condition()

    def __call__(self, notice: PanelNotice) -> None:
        now = time.perf_counter()
        if isinstance(notice, KeyEvent):
            with self.cond:
                self.events.append((now, notice))
                self.cond.notify_all()

    def wait_count(self, count: int, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.events) >= count, timeout)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure_latency(
    harness: Harness, collector: Collector, samples: int
) -> tuple[list[float], list[float]]:
    """Taps keys one at a time; returns wall-clock latencies (command to delivery) and the
    panel-side ones (first contact to debounced event, on the simulated clock), in ms."""
    wall, panel = [], []
    for i in range(samples):
        row, col = KEYS[i % len(KEYS)]
        have = len(collector.events)
        contacts = len(harness.contacts)
        start = time.perf_counter()
        harness.tap(row, col, delay_us=0, hold_us=15_000, bounces=BOUNCES)
        if not collector.wait_count(have + 2, timeout=5):
            raise SystemExit(f"latency sample {i}: events did not arrive")
        arrived, event = collector.events[have]
        assert event.pressed
        wall.append((arrived - start) * 1000)
        first_us = next(c[0] for c in harness.contacts[contacts:] if c[1:] == (row, col, True))
        panel.append(event.panel_ms - first_us / 1000)
    return wall, panel


def summary(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.50):.1f} ms, p90 {percentile(values, 0.90):.1f} ms, "
        f"p99 {percentile(values, 0.99):.1f} ms, max {max(values):.1f} ms"
    )


def offer_rate(
    harness: Harness, driver: PanelDriver, collector: Collector, rate: int, seconds: float
) -> tuple[bool, float, int]:
    """Offers rate events/s for seconds; returns (no loss, delivered events/s, dropped)."""
    taps = int(rate * seconds / 2)
    have = len(collector.events)
    dropped_before = driver.stats.panel_dropped
    for i in range(taps):
        row, col = KEYS[i % len(KEYS)]
        harness.tap(row, col, delay_us=20_000 + int(i * 2e6 / rate), hold_us=8_000, bounces=1)
    complete = collector.wait_count(have + 2 * taps, timeout=seconds * 2 + 3)
    got = collector.events[have:]
    # The panel reports dropped events in its heartbeat: wait for one that covers the run.
    time.sleep(1.2)
    dropped = driver.stats.panel_dropped - dropped_before
    in_order = [e.seq for _, e in got] == [(got[0][1].seq + k) & 0xFFFF for k in range(len(got))]
    span = got[-1][0] - got[0][0] if len(got) > 1 else 0.0
    delivered = (len(got) - 1) / span if span else 0.0
    return complete and in_order and dropped == 0, delivered, dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=300, help="latency samples")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per offered rate")
    parser.add_argument(
        "--rates",
        default="100,200,400,600,700,800,1000",
        help="offered event rates per second, comma-separated",
    )
    args = parser.parse_args()
    build_firmware()
    collector = Collector()
    with tempfile.TemporaryDirectory() as tmp:
        harness = Harness(Path(tmp) / "panel", trace=True)
        harness.start()
        driver = PanelDriver(str(harness.link), on_notice=collector)
        try:
            driver.start()
            wall, panel = measure_latency(harness, collector, args.samples)
            met = "met" if percentile(wall, 0.99) < 15 else "MISSED"
            print(
                f"latency, key closed (with {BOUNCES} bounces) to host event, "
                f"{len(wall)} presses: {summary(wall)} (target p99 < 15 ms: {met})"
            )
            print(
                "panel side, first contact to debounced event (simulated clock, 1 ms steps; "
                f"add {FRAME_MS:.1f} ms to send the frame): {summary(panel)}"
            )
            best = 0.0
            for rate in (int(r) for r in args.rates.split(",")):
                ok, delivered, dropped = offer_rate(harness, driver, collector, rate, args.seconds)
                print(
                    f"offered {rate:5d} events/s for {args.seconds:g} s: delivered "
                    f"{delivered:6.0f} events/s, dropped {dropped}, "
                    f"{'no loss' if ok else 'LOSS'}"
                )
                if ok:
                    best = max(best, delivered)
            print(f"sustained without loss: {best:.0f} events/s; {driver.stats}")
        finally:
            driver.stop()
            harness.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
