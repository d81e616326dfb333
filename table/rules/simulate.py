"""Random rounds through the full state machine, from a seed.

Used by ``ddz-table simulate``, by the property tests (every simulated round
ends, the ledger balances) and by the demo's simulated players. Randomness comes
only from the ``random.Random`` the caller passes in.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from table.rules.actions import Action, Bid, Outcome, Pass, Play, RoundEnded
from table.rules.cards import Cards
from table.rules.round import Phase, Round, new_round
from table.rules.scoring import HouseRules, Ledger
from table.rules.variant import Variant, get_variant


def deal(rng: random.Random, variant: Variant) -> tuple[list[Cards], Cards]:
    """Shuffles the variant's deck and deals the hands and the kitty."""
    cards = variant.deck.ranks()
    rng.shuffle(cards)
    size = variant.hand_size
    hands = [Cards.from_ranks(cards[i * size : (i + 1) * size]) for i in range(variant.players)]
    kitty = Cards.from_ranks(cards[variant.players * size :])
    return hands, kitty


def random_action(played: Round, rng: random.Random) -> Action:
    """Picks a uniformly random legal action for the seat on turn (hands must be known)."""
    state = played.state
    seat = state.turn
    if state.phase is Phase.AUCTION:
        bids = played.legal_bids()
        choice = rng.randrange(len(bids) + 1)
        return Bid(seat, bids[choice - 1]) if choice else Pass(seat)
    plays = list(played.legal_plays)
    if state.trick is None:
        return Play(seat, rng.choice(plays).cards)
    choice = rng.randrange(len(plays) + 1)
    return Play(seat, plays[choice - 1].cards) if choice else Pass(seat)


def play_round(
    rng: random.Random,
    variant: Variant,
    dealer: int,
    house_rules: HouseRules | None = None,
) -> tuple[Round, Outcome | None]:
    """Deals and plays one round with random legal actions.

    Returns the round and its outcome, or ``None`` when every seat passed and
    the hand must be redealt.
    """
    hands, kitty = deal(rng, variant)
    start = new_round(
        variant,
        dealer=dealer,
        first_bidder=rng.randrange(variant.players),
        hands=hands,
        kitty=kitty,
        house_rules=house_rules,
    )
    played = Round(start)
    while not played.state.is_over:
        for event in played.push(random_action(played, rng)):
            if isinstance(event, RoundEnded):
                return played, event.outcome
    return played, None


@dataclass
class Summary:
    """What a run of simulated rounds came to."""

    variant: Variant
    ledger: Ledger
    redeals: int = 0
    landlord_wins: int = 0
    bombs: int = 0
    rockets: int = 0
    springs: int = 0
    multipliers: list[int] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        """Counts the settled rounds."""
        return self.ledger.rounds

    @property
    def landlord_win_rate(self) -> float:
        """Gets the share of settled rounds the landlord won."""
        return self.landlord_wins / self.rounds if self.rounds else 0.0

    @property
    def mean_multiplier(self) -> float:
        """Gets the mean multiplier of the settled rounds."""
        return sum(self.multipliers) / len(self.multipliers) if self.multipliers else 0.0

    def add(self, outcome: Outcome) -> None:
        """Adds one settled round."""
        self.ledger.record(outcome)
        self.landlord_wins += outcome.landlord_won
        self.bombs += outcome.bombs
        self.rockets += outcome.rockets
        self.springs += outcome.spring
        self.multipliers.append(outcome.multiplier)


def simulate(
    rounds: int,
    variant: str | int | Variant = "3p",
    seed: int = 0,
    house_rules: HouseRules | None = None,
    on_round: Callable[[int], None] | None = None,
) -> Summary:
    """Plays ``rounds`` settled rounds (redeals not counted) and sums them up.

    ``on_round`` is called with the number of settled rounds after each one,
    for a progress bar.

    >>> summary = simulate(5, "3p", seed=1)
    >>> summary.rounds, summary.ledger.is_balanced
    (5, True)
    """
    variant = get_variant(variant)
    rng = random.Random(seed)
    names = tuple(f"seat {seat}" for seat in range(variant.players))
    summary = Summary(variant, Ledger(names, dealer=rng.randrange(variant.players)))
    while summary.rounds < rounds:
        _, outcome = play_round(rng, variant, summary.ledger.dealer, house_rules)
        if outcome is None:
            summary.redeals += 1
            continue
        summary.add(outcome)
        if on_round is not None:
            on_round(summary.rounds)
    return summary
