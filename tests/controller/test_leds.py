"""LED plans follow the game."""

from __future__ import annotations

from table.controller.leds import changes, led_plan
from table.devices.events import Led, LedPattern
from table.rules import Bid, Cards, Pass, Play, Round, new_round


def test_turn_led_follows_the_seat_on_turn() -> None:
    played = Round(new_round("3p", dealer=0, first_bidder=1))
    plan = led_plan(played.state, 3, None)
    assert [plan[(seat, Led.TURN)] for seat in range(3)] == [0, LedPattern.ON, 0]
    played.push(Pass(1))
    plan = led_plan(played.state, 3, error_seat=2)
    assert plan[(2, Led.TURN)] == LedPattern.ON and plan[(2, Led.ERROR)] == LedPattern.FAST_BLINK


def test_winning_side_blinks_when_the_round_ends() -> None:
    played = Round(new_round("3p", dealer=0, first_bidder=0))
    played.push(Bid(0, 3))
    for cards in ("3456789TJQKA", "2222", "KKKQ"):
        played.push(Play(0, Cards.from_str(cards)))
        if not played.state.is_over:
            played.push(Pass(1))
            played.push(Pass(2))
    plan = led_plan(played.state, 3, None)
    assert [plan[(seat, Led.TURN)] for seat in range(3)] == [LedPattern.BLINK, 0, 0]


def test_changes_keep_only_what_differs() -> None:
    before = led_plan(None, 3, None)
    after = led_plan(None, 3, error_seat=0)
    assert changes(before, after) == {(0, Led.ERROR): LedPattern.FAST_BLINK}
    assert changes(after, after) == {}
