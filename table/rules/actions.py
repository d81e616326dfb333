"""What players do (actions) and what the referee announces (events).

Actions are the record of a round: replaying them on a fresh round rebuilds its
state. Events are what an accepted action produced, for the log, MQTT and the
screens. Both turn into plain dicts for JSON and back.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from table.rules.cards import Cards
from table.rules.combos import Combination
from table.rules.errors import InvalidCardsError


@dataclass(frozen=True)
class Bid:
    """A seat bids 1, 2 or 3 in the auction."""

    seat: int
    amount: int
    type: ClassVar[str] = "bid"

    def __str__(self) -> str:
        return f"seat {self.seat} bids {self.amount}"


@dataclass(frozen=True)
class Pass:
    """A seat passes, in the auction or in a trick."""

    seat: int
    type: ClassVar[str] = "pass"

    def __str__(self) -> str:
        return f"seat {self.seat} passes"


@dataclass(frozen=True)
class Play:
    """A seat lays down cards."""

    seat: int
    cards: Cards
    type: ClassVar[str] = "play"

    def __str__(self) -> str:
        return f"seat {self.seat} plays {self.cards}"


@dataclass(frozen=True)
class ShowKitty:
    """The kitty is turned face up (the landlord shows it, or the camera reads it)."""

    cards: Cards
    type: ClassVar[str] = "show_kitty"

    def __str__(self) -> str:
        return f"kitty shown: {self.cards}"


Action = Bid | Pass | Play | ShowKitty
_ACTIONS: dict[str, type[Action]] = {cls.type: cls for cls in (Bid, Pass, Play, ShowKitty)}


def _plain(value: object) -> object:
    """Turns a field value into JSON-ready data."""
    if isinstance(value, Combination):
        return {"cards": str(value.cards), "kind": value.kind.value}
    if isinstance(value, Cards):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


def to_dict(item: Action | Event | Outcome) -> dict[str, Any]:
    """Turns an action or event into a JSON-ready dict with a ``type`` key.

    >>> to_dict(Play(1, Cards.from_str("33")))
    {'type': 'play', 'seat': 1, 'cards': '33'}
    """
    data: dict[str, Any] = {"type": item.type}
    for f in fields(item):
        data[f.name] = _plain(getattr(item, f.name))
    return data


def action_from_dict(data: dict[str, Any]) -> Action:
    """Rebuilds an action from :func:`to_dict` output.

    :raises: :exc:`ValueError` naming what is missing or wrong.

    >>> action_from_dict({"type": "bid", "seat": 0, "amount": 2})
    Bid(seat=0, amount=2)
    """
    kind = data.get("type")
    cls = _ACTIONS.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown action type {kind!r}; expected one of {', '.join(_ACTIONS)}")
    try:
        if cls is Bid:
            return Bid(int(data["seat"]), int(data["amount"]))
        if cls is Pass:
            return Pass(int(data["seat"]))
        if cls is Play:
            return Play(int(data["seat"]), Cards.from_str(str(data["cards"])))
        return ShowKitty(Cards.from_str(str(data["cards"])))
    except KeyError as missing:
        raise ValueError(f"a {kind} action needs the field {missing}") from None
    except (TypeError, InvalidCardsError) as error:
        raise ValueError(f"bad {kind} action {data}: {error}") from None


@dataclass(frozen=True)
class BidMade:
    """A bid was accepted."""

    seat: int
    amount: int
    type: ClassVar[str] = "bid"


@dataclass(frozen=True)
class AuctionPassed:
    """A seat passed in the auction."""

    seat: int
    type: ClassVar[str] = "auction_pass"


@dataclass(frozen=True)
class LandlordChosen:
    """The auction ended: the landlord takes the kitty and leads."""

    seat: int
    bid: int
    kitty: Cards | None
    type: ClassVar[str] = "landlord"


@dataclass(frozen=True)
class Redeal:
    """Every seat passed without a bid: the cards are dealt again."""

    type: ClassVar[str] = "redeal"


@dataclass(frozen=True)
class KittyShown:
    """The kitty was turned face up."""

    cards: Cards
    type: ClassVar[str] = "kitty"


@dataclass(frozen=True)
class Played:
    """A play was accepted; ``cards_left`` is what the seat still holds."""

    seat: int
    combination: Combination
    cards_left: int
    type: ClassVar[str] = "play"


@dataclass(frozen=True)
class PlayPassed:
    """A seat passed in a trick."""

    seat: int
    type: ClassVar[str] = "play_pass"


@dataclass(frozen=True)
class TrickWon:
    """Every other seat passed: ``seat`` won the trick and leads the next one."""

    seat: int
    type: ClassVar[str] = "trick"


@dataclass(frozen=True)
class Outcome:
    """How a round ended and what each seat is paid (negative: pays).

    ``multiplier`` is what the bid was multiplied by (doublings, spring, cap);
    each opponent's stake is ``bid * multiplier``.
    """

    landlord: int
    winner: int
    landlord_won: bool
    bid: int
    bombs: int
    rockets: int
    spring: bool
    multiplier: int
    payments: tuple[int, ...]
    type: ClassVar[str] = "outcome"

    @property
    def stake(self) -> int:
        """Gets what each opponent pays or is paid."""
        return self.bid * self.multiplier

    def to_dict(self) -> dict[str, Any]:
        """Turns the outcome into a JSON-ready dict."""
        return to_dict(self)


@dataclass(frozen=True)
class RoundEnded:
    """A seat ran out of cards; the round is settled."""

    outcome: Outcome
    type: ClassVar[str] = "round_end"


Event = (
    BidMade
    | AuctionPassed
    | LandlordChosen
    | Redeal
    | KittyShown
    | Played
    | PlayPassed
    | TrickWon
    | RoundEnded
)
