"""PLAY press to new state, through the whole table: simulated panel, virtual camera,
the real vision pipeline, rules, log, MQTT and the dashboard in Chromium.

Run: ``.venv/bin/python benchmarks/bench_table.py [--plays 40] [--settle 4] [--fps 30]``
with Mosquitto at 127.0.0.1:1883 and Debian's chromium. For each play a seat
lays cards on the virtual table, lets them lie for ``--settle`` camera frames (a
person lays the cards, then reaches for the key) and presses PLAY (one card per
trick, the trick cleared away before the next); the clock runs from the press
to (a) the retained state on MQTT that shows the play and (b) the table screen
in headless Chromium showing it (DOM changed, and the frame that paints it).
Targets (issue 8): p95 under 100 ms to MQTT and under 300 ms to the DOM.

A real camera gives 30 frames a second and the reader keeps up with it;
rendering a frame costs twice as long as reading it, so before the clock runs
every scene of the benchmark is shown once and its renders are kept: the
virtual camera then delivers frames at ``--fps`` or as fast as they are read.
``--fps 8 --cold`` is the demo's camera, which renders while the clock runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_web import CHROMIUM, CHROMIUM_ARGS, OBSERVER

from table.controller.cli import _bridge, _dashboard
from table.controller.eyes import Eyes
from table.controller.loop import Controller
from table.controller.virtual import VirtualTable
from table.devices.events import Key
from table.devices.simulated import SimulatedPanel
from table.mqtt import Broker, MqttLink, Received
from table.rules import Bid, Cards, Pass, Play
from table.session.store import SessionLog
from table.session.table import TableSession
from table.vision.calibration import calibrate

BROKER = "mqtt://127.0.0.1:1883"
PLAYS = ("3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "A", "2", "B", "R", "3", "4", "5")
"""Seventeen singles a deal, leaving seat 0 three kings to go out with."""


def percentile(values: list[float], share: float) -> float:
    """Gets the value below which ``share`` of the values lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def rehearse(virtual: VirtualTable, eyes: Eyes) -> None:
    """Shows every scene of the benchmark for as many frames as the camera keeps renders."""
    for cards in dict.fromkeys(("", *PLAYS)):
        virtual.clear()
        if cards:
            virtual.lay(0, Cards.from_str(cards))
        eyes.wait_frames(VirtualTable.VARIANTS + 1, 30)
    virtual.clear()


def main() -> None:
    """Prints p50/p95 latencies from PLAY press to MQTT state and to the dashboard's DOM."""
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plays", type=int, default=40)
    parser.add_argument(
        "--settle", type=int, default=4, help="camera frames the cards lie before PLAY"
    )
    parser.add_argument("--fps", type=float, default=30.0, help="virtual camera frame rate")
    parser.add_argument(
        "--cold", action="store_true", help="render while the clock runs (no rehearsal)"
    )
    args = parser.parse_args()
    if args.fps <= 0:
        parser.error(f"--fps {args.fps:g} is not a frame rate; give frames a second, such as 30")
    table_id = f"bench-{os.getpid()}"
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        log = SessionLog.open(f"sqlite:///{Path(folder) / 'log.sqlite3'}")
        session = TableSession.start(log, table_id, "3p", ["Ann", "Bo", "Cy"])
        virtual = VirtualTable(seed=5, fps=args.fps, scenes_kept=len(set(PLAYS)) + 1)
        calibration = calibrate(virtual.read())
        panel = SimulatedPanel(seats=3)
        eyes = Eyes(lambda: virtual, calibration, 3)
        controller = Controller(session, panel=panel, eyes=eyes)
        controller.start()
        bridge = _bridge(BROKER, log, session, controller, False)
        access, server = _dashboard(log, session, controller, {}, "127.0.0.1", 0, mqtt=True)
        mqtt_at: dict[int, float] = {}

        def on_state(message: Received) -> None:
            mqtt_at.setdefault(int(json.loads(message.payload)["seq"]), time.time() * 1000)

        watcher = MqttLink(Broker.from_url(BROKER), f"bench-watch-{os.getpid()}")
        watcher.subscribe(f"ddz/{table_id}/state", on_state)
        watcher.start()
        watcher.wait_connected(10)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 900})
        page.goto(f"{server.url}/table/{table_id}")
        page.wait_for_selector(".table-screen")
        page.evaluate(OBSERVER)
        if not args.cold:
            rehearse(virtual, eyes)
        to_mqtt: list[float] = []
        to_dom: list[float] = []
        to_paint: list[float] = []
        refused = 0
        started, first_frame = time.monotonic(), eyes.frames
        try:
            for number in range(args.plays):
                if number % 17 == 0:  # a new deal; seat 0, the landlord, leads 17 singles
                    controller.call(lambda: session.start_round(0))
                    controller.call(lambda: controller.submit(Bid(0, 3), "bench"))
                virtual.clear()  # the last trick is pushed aside
                eyes.wait_frames(2, 10)
                eyes.new_trick()
                eyes.wait_frames(1, 10)
                cards = PLAYS[number % 17]
                seq = controller.call(lambda: session.state.seq)
                virtual.lay(0, Cards.from_str(cards))
                eyes.wait_frames(args.settle, 10)
                pressed = time.time() * 1000
                panel.press(0, Key.PLAY)
                deadline = time.monotonic() + 20
                while controller.call(lambda: session.state.seq) == seq:
                    if time.monotonic() > deadline:
                        raise SystemExit("the table did not answer a PLAY press")
                    time.sleep(0.001)
                entry = log.entries(session.session_id, after=seq)[0]
                if entry.kind != "action":  # unsure or misread: the operator types it
                    refused += 1
                    controller.call(lambda c=cards: controller.enter_play(0, c, "bench", "misread"))
                else:
                    page.wait_for_function(
                        "seq => window.__seen[seq] && window.__seen[seq].painted",
                        arg=str(entry.seq),
                    )
                    seen: dict[str, Any] = page.evaluate("s => window.__seen[s]", str(entry.seq))
                    to_dom.append(seen["changed"] - pressed)
                    to_paint.append(seen["painted"] - pressed)
                    deadline = time.monotonic() + 10
                    while entry.seq not in mqtt_at and time.monotonic() < deadline:
                        time.sleep(0.001)
                    if entry.seq in mqtt_at:
                        to_mqtt.append(mqtt_at[entry.seq] - pressed)
                # the other seats pass so that seat 0 leads again
                for seat in (1, 2):
                    controller.call(lambda s=seat: controller.submit(Pass(s), "bench"))
                if number % 17 == 16:  # seat 0 goes out with its last three cards
                    controller.call(
                        lambda: controller.submit(Play(0, Cards.from_str("KKK")), "bench")
                    )
            camera_fps = (eyes.frames - first_frame) / (time.monotonic() - started)
        finally:
            browser.close()
            watcher.close()
            access.close()
            server.stop()
            bridge.close()
            controller.stop()
            log.close()
    for name, values in (
        ("MQTT state", to_mqtt),
        ("dashboard DOM changed", to_dom),
        ("dashboard frame painted", to_paint),
    ):
        if values:
            print(f"PLAY press to {name}: p50 {statistics.median(values):.0f} ms,"
                  f" p95 {percentile(values, 0.95):.0f} ms, max {max(values):.0f} ms"
                  f" ({len(values)} plays)")  # fmt: skip
    print(f"plays not read as laid (refused or unsure): {refused} of {args.plays}")
    print(f"camera frames read while the clock ran: {camera_fps:.1f} a second")


if __name__ == "__main__":
    main()
