"""The demo's seats lent to people in a browser: taking, tokens, moves, refusals, giving back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from table.controller.eyes import Eyes
from table.controller.loop import Controller
from table.controller.virtual import BrowserSeats, SimPlayers, VirtualTable
from table.devices.simulated import SimulatedPanel
from table.rules import Bid, Cards, Pass, Play
from table.session.store import SessionLog
from table.session.table import TableSession
from table.vision.calibration import Calibration, TableLayout
from web.access import CommandError, UnknownTableError


@pytest.fixture
def players(tmp_path: Path) -> Iterator[SimPlayers]:
    """Builds the demo's players around a running controller; nobody plays them here."""
    log = SessionLog.open(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    panel = SimulatedPanel(seats=3)
    table = VirtualTable(1)
    calibration = Calibration(np.eye(3), (820, 460), TableLayout())
    eyes = Eyes(lambda: table, calibration, 3, reader=lambda _frame: [])
    controller = Controller(session, panel=panel)
    sim = SimPlayers(controller, panel, table, eyes, seed=3, rounds=None)
    controller.deal = sim.deal
    controller.start()
    yield sim
    controller.stop()
    log.close()


@pytest.fixture
def seats(players: SimPlayers) -> BrowserSeats:
    return BrowserSeats(players)


def test_a_taken_seat_is_the_holders_alone(seats: BrowserSeats, players: SimPlayers) -> None:
    assert seats.free_seats("t1") == [0, 1, 2]
    token = seats.take("t1", 1)
    assert seats.free_seats("t1") == [0, 2]
    assert players.people == {1}
    with pytest.raises(CommandError, match="not free"):
        seats.take("t1", 1)
    with pytest.raises(CommandError, match="there is no seat 5; the seats are 0 to 2"):
        seats.take("t1", 5)
    with pytest.raises(CommandError, match="do not hold seat 1"):
        seats.view("t1", 1, "a guessed token")
    with pytest.raises(CommandError, match="do not hold seat 0"):
        seats.act("t1", 0, token, "pass")
    with pytest.raises(UnknownTableError):
        seats.view("t2", 1, token)
    view = seats.view("t1", 1, token)
    assert (view.seat, view.hand, view.phase, view.on_turn) == (1, "", "waiting", False)
    assert view.messages == ("You play seat 1. waiting for the next deal",)


def test_one_seat_stays_simulated(seats: BrowserSeats) -> None:
    seats.take("t1", 0)
    seats.take("t1", 2)
    with pytest.raises(CommandError, match="one seat stays"):
        seats.take("t1", 1)


def test_moves_are_queued_on_turn_and_refused_with_a_reason_otherwise(
    seats: BrowserSeats, players: SimPlayers
) -> None:
    token = seats.take("t1", 1)
    with pytest.raises(CommandError, match="not your turn yet: no round is on"):
        seats.act("t1", 1, token, "pass")
    controller = players.controller
    controller.call(lambda: controller.start_round(1))
    view = seats.view("t1", 1, token)
    assert view.on_turn and view.phase == "auction" and len(view.hand) == 17
    assert view.task == "your turn to bid"
    assert view.messages[-1] == f"your turn to bid; your hand: {view.hand}"
    with pytest.raises(CommandError, match="is not a move"):
        seats.act("t1", 1, token, "bid 9")
    with pytest.raises(CommandError, match="not a card"):
        seats.act("t1", 1, token, "play 3X")
    assert seats.act("t1", 1, token, "bid 2") == "bid made"
    assert players.person_actions.get_nowait() == Bid(1, 2)
    controller.call(lambda: controller.submit(Pass(2), "panel"))  # another seat's refusal
    controller.call(lambda: controller.submit(Bid(1, 2), "panel"))
    view = seats.view("t1", 1, token)
    assert not view.on_turn and view.task == "seat 2 is on turn"
    assert view.messages[-1] == "seat 1 bids 2"
    assert not any(message.startswith("refused") for message in view.messages)


def test_a_refusal_of_the_persons_own_move_is_told(
    seats: BrowserSeats, players: SimPlayers
) -> None:
    token = seats.take("t1", 0)
    controller = players.controller
    controller.call(lambda: controller.start_round(1))
    controller.call(lambda: controller.submit(Bid(0, 1), "panel"))  # seat 1 is on turn
    assert seats.view("t1", 0, token).messages[-1] == "refused: seat 0 is not on turn; seat 1 is"


def test_a_seat_given_back_is_simulated_again(seats: BrowserSeats, players: SimPlayers) -> None:
    token = seats.take("t1", 2)
    seats.give_back("t1", 2, token)
    assert players.people == set()
    assert seats.free_seats("t1") == [0, 1, 2]
    with pytest.raises(CommandError, match="do not hold seat 2"):
        seats.act("t1", 2, token, "pass")


def test_a_corrected_misread_is_told(seats: BrowserSeats, players: SimPlayers) -> None:
    token = seats.take("t1", 1)
    controller = players.controller
    controller.call(lambda: controller.start_round(1))
    controller.call(lambda: controller.submit(Bid(1, 3), "panel"))
    hand = seats.view("t1", 1, token).hand
    controller.call(lambda: controller.submit(Play(1, Cards.from_str(hand[0])), "camera"))
    controller.call(
        lambda: controller.session.correct(1, Cards.from_str(hand[-1]), "op", "misread")
    )
    assert seats.view("t1", 1, token).messages[-1] == (
        f"seat 1 plays {hand[-1]} (the misread play corrected)"
    )
