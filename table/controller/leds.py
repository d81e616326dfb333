"""Which LED shows what (pure): the turn LED follows the game, the error LED a refusal."""

from __future__ import annotations

from table.devices.events import Led, LedPattern
from table.rules import Phase, RoundState

LedPlan = dict[tuple[int, Led], int]


def led_plan(round_state: RoundState | None, seats: int, error_seat: int | None) -> LedPlan:
    """Plans every seat's two LEDs.

    The seat on turn has its turn LED on (blinking while the camera is wanted:
    the play phase); a finished round lights every turn LED of the winning side
    briefly; the seat whose last key was refused blinks its error LED fast.

    >>> plan = led_plan(None, 3, error_seat=1)
    >>> plan[(1, Led.ERROR)] == LedPattern.FAST_BLINK, plan[(0, Led.TURN)] == LedPattern.OFF
    (True, True)
    """
    plan: LedPlan = {}
    for seat in range(seats):
        plan[(seat, Led.TURN)] = LedPattern.OFF
        plan[(seat, Led.ERROR)] = LedPattern.FAST_BLINK if seat == error_seat else LedPattern.OFF
    if round_state is None:
        return plan
    if round_state.phase is Phase.FINISHED and round_state.winner is not None:
        landlord = round_state.landlord
        landlord_won = round_state.winner == landlord
        for seat in range(seats):
            if (seat == landlord) == landlord_won:
                plan[(seat, Led.TURN)] = LedPattern.BLINK
    elif not round_state.is_over:
        plan[(round_state.turn, Led.TURN)] = LedPattern.ON
    return plan


def changes(before: LedPlan, after: LedPlan) -> LedPlan:
    """Keeps only the LEDs whose pattern changes, so the panel gets few commands."""
    return {key: pattern for key, pattern in after.items() if before.get(key) != pattern}
