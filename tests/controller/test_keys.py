"""What each key means in each phase."""

from __future__ import annotations

import pytest

from table.controller.keys import Confirm, ReadPlay, Refuse, StartRound, Undo, intent_for
from table.devices.events import Key, KeyEvent
from table.rules import Bid, Pass, Round, RoundState, new_round


def press(seat: int | None, key: Key, pressed: bool = True) -> KeyEvent:
    return KeyEvent(seat, key, pressed, 1, 0)


def auction() -> RoundState:
    return new_round("3p", dealer=0, first_bidder=0)


def play_phase() -> RoundState:
    played = Round(auction())
    played.push(Bid(0, 3))
    return played.state


def test_releases_mean_nothing() -> None:
    assert intent_for(press(0, Key.PASS, pressed=False), auction()) is None


def test_operator_keys() -> None:
    assert intent_for(press(None, Key.UNDO), play_phase()) == Undo()
    assert intent_for(press(None, Key.OK), None) == Confirm()
    assert isinstance(intent_for(press(None, Key.PLAY), play_phase()), Refuse)


@pytest.mark.parametrize(
    ("key", "action"),
    [(Key.PASS, Pass(1)), (Key.BID1, Bid(1, 1)), (Key.BID2, Bid(1, 2)), (Key.BID3, Bid(1, 3))],
)
def test_auction_keys_are_actions(key: Key, action: object) -> None:
    assert intent_for(press(1, key), auction()) == action


def test_first_auction_key_of_a_round_starts_it() -> None:
    assert intent_for(press(2, Key.BID1), None) == StartRound(2, Bid(2, 1))
    finished = Round(auction())
    for seat in range(3):
        finished.push(Pass(seat))
    assert intent_for(press(1, Key.PASS), finished.state) == StartRound(1, Pass(1))


def test_play_key() -> None:
    assert intent_for(press(0, Key.PLAY), play_phase()) == ReadPlay(0)
    refused = intent_for(press(0, Key.PLAY), auction())
    assert refused == Refuse(0, "the auction is still on; bid or pass")
    assert isinstance(intent_for(press(0, Key.PLAY), None), Refuse)
