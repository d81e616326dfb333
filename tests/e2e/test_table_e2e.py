"""The whole table at once: the firmware in simavr, the virtual camera, the rules, the
log, Mosquitto and the dashboard in Chromium, driven as players and an operator would.

The test taps the panel's keys in the simulated microcontroller and lays cards by
rewriting the virtual table the camera films; ``ddz-table run`` referees. Midway it
kills the controller with SIGKILL and starts it again; the round must finish with
the right payments, on the screen and on MQTT.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright
from werkzeug.security import generate_password_hash

from table.controller.virtual import ScriptedTable
from table.devices.events import Key
from table.errors import UserError
from table.mqtt import Broker, MqttLink, Received
from table.rules import Cards, Play
from table.session.entries import LogEntry
from table.session.state import TableState
from table.session.store import SessionLog
from table.vision.calibration import calibrate
from tests.firmware.panel_harness import Harness, build_firmware
from tests.web.web_helpers import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.e2e, pytest.mark.firmware, pytest.mark.mqtt, pytest.mark.browser]

BROKER = "mqtt://127.0.0.1:1883"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Waits for a condition of the table; fails with ``what`` if it never comes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


@dataclass
class LiveTable:
    """One table under test: its files, the panel simulator and the controller process."""

    root: Path
    table: str
    players: tuple[str, ...]
    harness: Harness
    zones: dict[str, list[str]] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    port: int = field(default_factory=free_port)

    @property
    def db(self) -> str:
        return f"sqlite:///{self.root / 'log.sqlite3'}"

    @property
    def scene(self) -> Path:
        return self.root / "table.json"

    def write_config(self) -> Path:
        self._write_scene()
        calibrate(ScriptedTable(self.scene).read()).save(self.root / "calibration.json")
        config = self.root / "table.toml"
        names = ", ".join(f'"{name}"' for name in self.players)
        config.write_text(
            f'[table]\nid = "{self.table}"\nplayers = [{names}]\n'
            f'[log]\nurl = "{self.db}"\n[mqtt]\nurl = "{BROKER}"\n'
            f'[dashboard]\nport = {self.port}\npassword_hash = "{generate_password_hash("pw")}"\n'
            f'[camera]\nsource = "virtual:{self.scene}"\n'
            f'calibration = "{self.root / "calibration.json"}"\n'
            f'[panel]\nport = "{self.harness.link}"\n'
        )
        return config

    def start(self) -> None:
        with (self.root / "run.log").open("ab") as errors:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "table.cli",
                    "run",
                    "--config",
                    str(self.root / "table.toml"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )
        before = len(self.entries())
        for device, what in (("panel", "reach the panel"), ("camera", "see the table")):
            until(lambda d=device: self.came_back(d, before), f"the controller to {what}", 90)

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    # -- reading the log ------------------------------------------------------

    def entries(self) -> list[LogEntry]:
        try:
            log = SessionLog.open(self.db, create=False)
        except UserError:  # the controller has not made its log yet
            return []
        try:
            infos = log.sessions(self.table)
            return log.entries(infos[-1].id) if infos else []
        finally:
            log.close()

    def state(self) -> TableState:
        return TableState.from_entries(self.entries())

    def came_back(self, device: str, after: int) -> bool:
        """Tells whether the controller logged ``device`` back after entry ``after``."""
        return any(
            e.kind == "device" and e.data["device"] == device and e.data["status"] == "back"
            for e in self.entries()[after:]
        )

    # -- what players do ------------------------------------------------------

    def _write_scene(self) -> None:
        tmp = self.scene.with_suffix(".tmp")
        tmp.write_text(json.dumps({"seed": 11, "zones": self.zones}))
        tmp.replace(self.scene)

    def lay(self, seat: int, cards: str) -> None:
        self.zones.setdefault(f"seat{seat}", []).append(cards)
        self._write_scene()

    def take_back(self, seat: int) -> None:
        self.zones[f"seat{seat}"].pop()
        self._write_scene()

    def clear(self) -> None:
        self.zones.clear()
        self._write_scene()

    def tap(self, seat: int | None, key: Key) -> list[LogEntry]:
        """Taps a key (with contact bounce) and returns the entries it caused."""
        before = len(self.entries())
        row, col = (4, key - Key.UNDO) if seat is None else (seat, int(key))
        self.harness.tap(row, col, delay_us=0, hold_us=30_000, bounces=3)
        until(lambda: len(self.entries()) > before, f"the table to answer {key.name}")
        time.sleep(0.3)  # let an answer made of several entries (an alert, then a play) land
        return self.entries()[before:]

    def bid(self, seat: int, key: Key) -> None:
        new = self.tap(seat, key)
        assert any(e.kind == "action" and e.data["action"]["type"] == "bid" for e in new), new

    def pass_(self, seat: int) -> None:
        new = self.tap(seat, Key.PASS)
        assert any(e.kind == "action" and e.data["action"]["type"] == "pass" for e in new), new

    def play(self, seat: int, cards: str) -> None:
        """Lays a legal play and presses PLAY; the operator fixes what the camera misreads."""
        self.lay(seat, cards)
        for _ in range(3):
            new = self.tap(seat, Key.PLAY)
            if any(e.kind == "alert" and e.data["kind"] == "low_confidence" for e in new):
                new += self.tap(None, Key.OK)
            accepted = [e for e in new if e.kind == "action"]
            if accepted:
                read = accepted[-1].data["action"]["cards"]
                if read != str(Cards.from_str(cards)):
                    self.command("correct", seat=seat, cards=cards, why=f"camera read {read}")
                return
        self.command("play", seat=seat, cards=cards, why="the camera cannot read it")
        played = self.state().round
        assert played is not None and played.actions[-1] == Play(seat, Cards.from_str(cards))

    def illegal(self, seat: int, cards: str) -> str:
        """Lays a play the rules must refuse; returns the reason, after taking it back.

        When the camera is unsure of the cards (it then refuses to guess), the
        operator enters what lies there, as at a real table, and the rules judge that.
        """
        self.lay(seat, cards)
        new = self.tap(seat, Key.PLAY)
        unsure = any(e.kind == "alert" and e.data["kind"] == "low_confidence" for e in new)
        if unsure and not any(e.kind == "rejected" for e in new):
            before = len(self.entries())
            self.command("play", refused=True, seat=seat, cards=cards, why="the camera was unsure")
            until(
                lambda: any(e.kind == "rejected" for e in self.entries()[before:]),
                "the entered play to be judged",
            )
            new = self.entries()[before:]
        rejected = [e for e in new if e.kind == "rejected"]
        assert rejected, f"{cards} was not refused: {[e.data for e in new]}"
        self.take_back(seat)
        return str(rejected[-1].data["reason"])

    def command(self, name: str, *, refused: bool = False, **fields: object) -> None:
        """Sends an operator command over MQTT, as the venue desk would; ``refused``: the
        table must say no (an entered play the rules refuse)."""
        payload = json.dumps({"by": "e2e operator", **fields})
        result = subprocess.run(
            [sys.executable, "-m", "table.cli", "mqtt", "cmd", self.table, name, payload,
             "--mqtt", BROKER],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert (result.returncode != 0) == refused, result.stdout + result.stderr

    def trick_over(self, leader: int) -> None:
        """The other seats pass; everyone pushes the trick aside."""
        players = len(self.players)
        for step in range(1, players):
            self.pass_((leader + step) % players)
        self.clear()


@pytest.fixture(scope="module")
def firmware() -> None:
    build_firmware()


@pytest.fixture
def live(firmware: None, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveTable]:
    players = ("Ann", "Bo", "Cy", "Di")[: request.param]
    harness = Harness(tmp_path / "panel")
    harness.start()
    table = LiveTable(tmp_path, f"e2e-{os.getpid()}-{request.param}p", players, harness)
    table.write_config()
    try:
        yield table
    finally:
        table.stop()
        harness.stop()


class StateWatch:
    """Keeps the last retained state the broker holds for a table."""

    def __init__(self, table: str) -> None:
        self.latest: dict[str, object] = {}
        self.changed = threading.Event()
        self.link = MqttLink(Broker.from_url(BROKER), f"e2e-watch-{os.getpid()}-{table}")
        self.link.subscribe(f"ddz/{table}/state", self._on_state)
        self.link.start()
        self.link.wait_connected(10)

    def _on_state(self, message: Received) -> None:
        self.latest = json.loads(message.payload)
        self.changed.set()

    def close(self) -> None:
        self.link.close()


@contextmanager
def open_screen(live: LiveTable) -> Iterator[Page]:
    """Opens the table screen in headless Chromium; saves a screenshot at the end."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"http://127.0.0.1:{live.port}/table/{live.table}")
        yield page
        page.screenshot(path=str(live.root / "screen.png"))
        browser.close()


def three_player_round(live: LiveTable, watch: StateWatch, page: Page) -> None:
    """Seat 0 bids 3, plays out 20 cards with a bomb; seat 1 tries an illegal pair."""
    live.bid(0, Key.BID3)
    live.play(0, "3456789TJQ")
    live.trick_over(0)
    live.play(0, "KKKK")
    expect(page.locator("body")).to_contain_text("×2")
    live.trick_over(0)
    live.play(0, "22")
    reason = live.illegal(1, "33")
    assert "does not beat" in reason
    live.pass_(1)

    live.kill()  # mid-round: seat 2 still to answer the pair of 2s
    killed = live.state()
    live.start()
    resumed = live.state()
    assert resumed.round is not None and killed.round is not None
    assert resumed.round.state.turn == killed.round.state.turn == 2
    page.reload()

    live.pass_(2)
    live.clear()
    live.play(0, "AAA5")
    final = live.state()
    assert final.ledger is not None and final.ledger.totals == [12, -6, -6]
    sources = {e.data["source"] for e in live.entries() if e.kind == "action"}
    assert {"panel", "camera"} <= sources, "keys and camera readings both drove the round"
    expect(page.locator("#standings")).to_contain_text("+12")
    until(lambda: watch.latest.get("totals") == [12, -6, -6], "MQTT to show the payments", 30)


def four_player_round(live: LiveTable, watch: StateWatch, page: Page) -> None:
    """Seat 0 bids 3, plays out 33 cards with a six-card bomb; seat 1 tries a 3p-only play."""
    live.bid(0, Key.BID3)
    live.play(0, "3456789TJQKA")
    live.trick_over(0)
    live.play(0, "778899TT")
    live.trick_over(0)
    live.play(0, "222222")
    expect(page.locator("body")).to_contain_text("×2")
    reason = live.illegal(1, "3334")
    assert "4-player game" in reason
    live.pass_(1)
    live.kill()
    live.start()
    page.reload()
    live.pass_(2)
    live.pass_(3)
    live.clear()
    live.play(0, "JJJQQ")
    live.trick_over(0)
    live.play(0, "KK")
    final = live.state()
    assert final.ledger is not None and final.ledger.totals == [18, -6, -6, -6]
    expect(page.locator("#standings")).to_contain_text("+18")
    until(lambda: watch.latest.get("totals") == [18, -6, -6, -6], "MQTT to show the payments", 30)


@pytest.mark.parametrize(
    ("live", "script"), [(3, three_player_round), (4, four_player_round)], indirect=["live"]
)
def test_a_round_end_to_end(
    live: LiveTable, script: Callable[[LiveTable, StateWatch, Page], None]
) -> None:
    live.start()
    watch = StateWatch(live.table)
    try:
        with open_screen(live) as page:
            script(live, watch, page)
    finally:
        watch.close()
