"""Payments for a round and the running ledger of a session.

The bid is the base stake. In 3p every bomb and rocket doubles it; in 4p only
bombs of six or more cards and rockets do. Spring doubling and a multiplier cap
are house rules, off unless a session turns them on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from table.rules.actions import Outcome
from table.rules.combos import Combination, Kind
from table.rules.variant import Variant


@dataclass(frozen=True)
class HouseRules:
    """Optional rules a table may agree on; all off by default.

    ``spring``: the stake doubles when the landlord wins before any opponent
    played a card, or the opponents win after the landlord played only the
    opening lead. ``multiplier_cap``: the multiplier never exceeds this value.
    """

    spring: bool = False
    multiplier_cap: int | None = None

    def __post_init__(self) -> None:
        if self.multiplier_cap is not None and self.multiplier_cap < 1:
            raise ValueError(f"a multiplier cap must be 1 or more, not {self.multiplier_cap}")


def doubles_stake(play: Combination, variant: Variant) -> bool:
    """Tells whether a play doubles the stake.

    Any bomb or rocket does in 3p; in 4p a rocket or a bomb of 6+ cards.

    >>> from table.rules.variant import FOUR_PLAYER
    >>> doubles_stake(Combination.from_str("55555", "4p"), FOUR_PLAYER)
    False
    """
    if play.kind is Kind.ROCKET:
        return True
    if play.kind is not Kind.BOMB:
        return False
    return variant.has_kickers or play.length >= 6


def settle(
    *,
    variant: Variant,
    landlord: int,
    winner: int,
    bid: int,
    bombs: int,
    rockets: int,
    doublings: int,
    plays_made: Sequence[int],
    house_rules: HouseRules,
) -> Outcome:
    """Settles a finished round into an :class:`Outcome` whose payments sum to zero.

    ``plays_made`` counts the plays of each seat in the round, for spring.

    >>> from table.rules.variant import THREE_PLAYER
    >>> settle(variant=THREE_PLAYER, landlord=0, winner=1, bid=2, bombs=1, rockets=0,
    ...        doublings=1, plays_made=(5, 3, 2), house_rules=HouseRules()).payments
    (-8, 4, 4)
    """
    landlord_won = winner == landlord
    opponents_played = sum(count for seat, count in enumerate(plays_made) if seat != landlord)
    spring = house_rules.spring and (
        (landlord_won and opponents_played == 0) or (not landlord_won and plays_made[landlord] == 1)
    )
    multiplier = 2 ** (doublings + spring)
    if house_rules.multiplier_cap is not None:
        multiplier = min(multiplier, house_rules.multiplier_cap)
    stake = bid * multiplier
    sign = 1 if landlord_won else -1
    payments = tuple(
        sign * stake * (variant.players - 1) if seat == landlord else -sign * stake
        for seat in range(variant.players)
    )
    return Outcome(
        landlord=landlord,
        winner=winner,
        landlord_won=landlord_won,
        bid=bid,
        bombs=bombs,
        rockets=rockets,
        spring=spring,
        multiplier=multiplier,
        payments=payments,
    )


@dataclass
class Ledger:
    """Running totals of a session, per seat, and whose deal it is.

    The deal passes counterclockwise (to the next seat) after every settled
    round; a redeal keeps the same dealer.

    >>> ledger = Ledger(("Ann", "Bo", "Cy"))
    >>> ledger.totals, ledger.dealer
    ([0, 0, 0], 0)
    """

    players: tuple[str, ...]
    dealer: int = 0
    totals: list[int] = field(default_factory=list)
    rounds: int = 0

    def __post_init__(self) -> None:
        if not self.totals:
            self.totals = [0] * len(self.players)

    def record(self, outcome: Outcome) -> None:
        """Adds a round's payments and passes the deal to the next seat.

        :raises: :exc:`ValueError` if the payments do not sum to zero.
        """
        if sum(outcome.payments) != 0 or len(outcome.payments) != len(self.players):
            raise ValueError(f"payments {outcome.payments} do not balance between the seats")
        for seat, amount in enumerate(outcome.payments):
            self.totals[seat] += amount
        self.rounds += 1
        self.dealer = (self.dealer + 1) % len(self.players)

    @property
    def is_balanced(self) -> bool:
        """Tells whether the totals sum to zero, as every payment is between players."""
        return sum(self.totals) == 0

    def leaders(self) -> list[str]:
        """Names the players with the highest total (several on a tie)."""
        best = max(self.totals)
        return [
            name for name, total in zip(self.players, self.totals, strict=True) if total == best
        ]
