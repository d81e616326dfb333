"""What a key press means at this moment of the game (pure).

The panel only says which key went down; whether BID 2 is a bid, whether PLAY
means "read my zone", and whether a press starts a new round depends on the
round's phase. Releases mean nothing to the referee.
"""

from __future__ import annotations

from dataclasses import dataclass

from table.devices.events import Key, KeyEvent
from table.rules import Action, Bid, Pass, Phase, RoundState

_BIDS = {Key.BID1: 1, Key.BID2: 2, Key.BID3: 3}


@dataclass(frozen=True)
class ReadPlay:
    """The seat pressed PLAY: read its zone and submit the new cards."""

    seat: int


@dataclass(frozen=True)
class StartRound:
    """No round is on: the first auction key of a seat deals it, that seat bids first."""

    first_bidder: int
    then: Action


@dataclass(frozen=True)
class Undo:
    """The operator pressed UNDO."""


@dataclass(frozen=True)
class Confirm:
    """The operator pressed OK: accept the camera's unsure reading as seen."""


@dataclass(frozen=True)
class Refuse:
    """A key that means nothing now; the seat's error LED blinks with this reason."""

    seat: int | None
    reason: str


Intent = Action | ReadPlay | StartRound | Undo | Confirm | Refuse | None


def intent_for(event: KeyEvent, round_state: RoundState | None) -> Intent:
    """Turns a key press into what the referee should do, or ``None`` for a release.

    >>> from table.devices.events import Key, KeyEvent
    >>> intent_for(KeyEvent(2, Key.BID2, True, 1, 0), None)
    StartRound(first_bidder=2, then=Bid(seat=2, amount=2))
    """
    if not event.pressed:
        return None
    if event.key is Key.UNDO:
        return Undo()
    if event.key is Key.OK:
        return Confirm()
    seat = event.seat
    if seat is None:
        return Refuse(None, f"{event.key.name} is a seat key, not an operator key")
    if event.key is Key.PLAY:
        if round_state is None or round_state.is_over:
            return Refuse(seat, "no round is on; bid or pass to start the auction")
        if round_state.phase is Phase.AUCTION:
            return Refuse(seat, "the auction is still on; bid or pass")
        return ReadPlay(seat)
    action: Action = Pass(seat) if event.key is Key.PASS else Bid(seat, _BIDS[event.key])
    if round_state is None or round_state.is_over:
        return StartRound(seat, action)
    return action
