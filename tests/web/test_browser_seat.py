"""A person plays a seat of the demo from Chromium: cards on the virtual table, real vision.

The demo runs as ``ddz-table demo`` wires it (simulated players and panel, the
virtual camera, the real card reader, rules and log); the person takes seat 1 on
the dashboard, bids 3 to lead, lays an illegal pair of singles (refused, with the
reason), then a single (accepted), and gives the seat back to the simulation.
Every wait is on the DOM or the log; nothing sleeps.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect
from web_helpers import screenshot

from table.controller.cli import _dashboard
from table.controller.eyes import Eyes
from table.controller.loop import Controller
from table.controller.virtual import BrowserSeats, SimPlayers, VirtualTable
from table.devices.simulated import SimulatedPanel
from table.session import SessionLog, TableSession
from table.vision.calibration import calibrate
from web.cli import DashboardServer

pytestmark = [pytest.mark.browser, pytest.mark.vision, pytest.mark.slow]

#: Generous: a play is laid, read over several frames of the virtual camera, then refereed.
WAIT_MS = 120_000
ON_TURN = re.compile(r"\bon-turn\b")


@pytest.fixture
def demo(log: SessionLog) -> Iterator[tuple[DashboardServer, SimPlayers]]:
    """Runs the demo's table with its dashboard on a free port; the players play on their own."""
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    table = VirtualTable(11)
    panel = SimulatedPanel(seats=3)
    eyes = Eyes(lambda: table, calibrate(table.read()), 3)
    controller = Controller(session, panel=panel, eyes=eyes)
    players = SimPlayers(controller, panel, table, eyes, seed=11, rounds=None, speed=20)
    controller.deal = players.deal
    controller.start()
    access, server = _dashboard(
        log, session, controller, {}, "127.0.0.1", 0, BrowserSeats(players), mqtt=False
    )
    stop = threading.Event()
    worker = threading.Thread(target=players.run, args=(stop,), daemon=True)
    worker.start()
    yield server, players
    stop.set()
    worker.join(30)
    access.close()
    server.stop()
    controller.stop()


def _my_turn(page: Any) -> str:
    """Waits for the seat's turn; returns what it has to do."""
    task = page.locator("#seat-task")
    expect(task).to_have_class(ON_TURN, timeout=WAIT_MS)
    return str(task.inner_text())


def _act(page: Any, button: str, ticks: tuple[int, ...] = ()) -> None:
    """Ticks cards, presses a move button, and waits for a seat panel drawn after the move."""
    seq = int(page.locator("#seat-panel").get_attribute("data-seq"))
    cards = page.locator("#hand label.pick")
    for index in ticks:
        cards.nth(index).click()
    page.click(button)
    expect(page.locator(".flash.ok")).to_be_visible()
    page.wait_for_function(
        "seq => Number(document.getElementById('seat-panel').dataset.seq) > seq",
        arg=seq,
        timeout=WAIT_MS,
    )


def test_a_person_plays_a_demo_seat_from_the_browser(
    page: Any, demo: tuple[DashboardServer, SimPlayers]
) -> None:
    server, players = demo
    page.goto(f"{server.url}/table/t1")
    page.click("#play-link")
    expect(page.locator("#seat-choose")).to_contain_text("Take a seat")
    page.click("#take-1")
    expect(page.locator("#seat-panel h2")).to_have_text("You play Bo (seat 1)")
    expect(page.locator(".health [data-device=broker]")).to_contain_text("broker off")

    task = _my_turn(page)
    while "to lead" not in task:  # bid 3 to lead; pass in a round someone else won
        _act(page, "#move-bid3" if "to bid" in task else "#move-pass")
        task = _my_turn(page)

    hand = str(page.locator("#hand").get_attribute("data-cards"))
    other = next(i for i, card in enumerate(hand) if card != hand[0])
    _act(page, "#move-play", (0, other))
    expect(page.locator("#seat-messages li").first).to_contain_text("refused:", timeout=WAIT_MS)
    expect(page.locator("#rejection")).to_contain_text("Not accepted")
    expect(page.locator("#hand")).to_have_attribute("data-cards", hand)

    _my_turn(page)
    _act(page, "#move-play", (0,))
    expect(page.locator("#hand")).to_have_attribute("data-cards", hand[1:], timeout=WAIT_MS)
    expect(page.locator("#seat-messages")).to_contain_text(f"Bo plays {hand[0]}")
    screenshot(page, "demo-seat")

    page.click("#leave")
    expect(page.locator(".flash.ok")).to_contain_text("played by the simulation again")
    expect(page.locator("#take-1")).to_be_visible()
    assert players.controller.call(lambda: set(players.people)) == set()
    seq = players.controller.call(lambda: players.controller.session.state.seq)
    page.wait_for_function(
        "seq => Number(document.querySelector('.table-screen').dataset.seq) > seq",
        arg=seq,
        timeout=WAIT_MS,
    )
