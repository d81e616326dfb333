"""Combinations: what a set of cards is, whether it beats another, and why not.

A set of cards has at most one reading as a combination under these rules (the
kicker rules make every count profile unambiguous), so :func:`classify` looks at
the profile of counts and returns that reading or ``None``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from table.rules.cards import RANK_SYMBOLS, Cards, Rank, rank_name
from table.rules.errors import InvalidPlayError
from table.rules.variant import Variant, get_variant

ACE = Rank.ACE.value
TWO = Rank.TWO.value
BLACK = Rank.BLACK_JOKER.value
RED = Rank.RED_JOKER.value


class Kind(StrEnum):
    """The combination kinds, named as in DESIGN.md."""

    SINGLE = "single"
    PAIR = "pair"
    TRIPLE = "triple"
    TRIPLE_SINGLE = "triple_single"
    TRIPLE_PAIR = "triple_pair"
    STRAIGHT = "straight"
    PAIR_STRAIGHT = "pair_straight"
    AIRPLANE = "airplane"
    AIRPLANE_SINGLES = "airplane_singles"
    AIRPLANE_PAIRS = "airplane_pairs"
    BOMB = "bomb"
    ROCKET = "rocket"
    FOUR_TWO_SINGLES = "four_two_singles"
    FOUR_TWO_PAIRS = "four_two_pairs"


CHAIN_KINDS = frozenset(
    {Kind.STRAIGHT, Kind.PAIR_STRAIGHT, Kind.AIRPLANE, Kind.AIRPLANE_SINGLES, Kind.AIRPLANE_PAIRS}
)
#: Fewest chain units (cards, pairs or triples) of each chain kind.
MIN_CHAIN = {
    Kind.STRAIGHT: 5,
    Kind.PAIR_STRAIGHT: 3,
    Kind.AIRPLANE: 2,
    Kind.AIRPLANE_SINGLES: 2,
    Kind.AIRPLANE_PAIRS: 2,
}


class Combination(NamedTuple):
    """One reading of a set of cards as a combination.

    ``rank`` is the deciding rank (the top of a chain, the triple or the four of
    a set with attachments); ``length`` counts the chain units of a chain kind
    and the cards of a bomb or rocket, and is 1 for every other kind. A
    ``NamedTuple`` because move generation makes many of them.

    >>> classify("33344456")
    Combination.from_str('33344456')
    >>> c = classify("33344456"); (c.kind, c.rank_symbol, c.length)
    (<Kind.AIRPLANE_SINGLES: 'airplane_singles'>, '4', 2)
    """

    kind: Kind
    rank: int
    length: int
    cards: Cards

    @classmethod
    def from_str(cls, text: str, variant: str | Variant = "3p") -> Combination:
        """Parses card text that must form a combination.

        :raises: :exc:`InvalidCardsError` for bad text,
            :exc:`InvalidPlayError` (with the reason) if it is no combination.
        """
        variant = get_variant(variant)
        cards = Cards.from_str(text)
        combination = classify(cards, variant)
        if combination is None:
            raise InvalidPlayError(explain_invalid(cards, variant))
        return combination

    @property
    def rank_symbol(self) -> str:
        """Gets the symbol of the deciding rank."""
        return RANK_SYMBOLS[self.rank]

    @property
    def is_bomb_or_rocket(self) -> bool:
        """Tells whether this combination may be played on any trick."""
        return self.kind is Kind.BOMB or self.kind is Kind.ROCKET

    def __str__(self) -> str:
        return str(self.cards)

    def __repr__(self) -> str:
        return f"Combination.from_str({str(self.cards)!r})"

    def describe(self) -> str:
        """Names the combination as a player would say it, like ``a pair of 5s``."""
        return describe(self)


def describe(combination: Combination) -> str:
    """Names a combination as a player would say it.

    >>> describe(classify("55"))
    'a pair of 5s'
    >>> describe(classify("789TJ"))
    'a straight from 7 to jack'
    >>> describe(classify("333444"))
    'an airplane of 3s to 4s'
    """
    kind, rank, length = combination.kind, combination.rank, combination.length
    if kind is Kind.SINGLE:
        return f"a single {rank_name(rank)}" if rank < BLACK else f"the {rank_name(rank)}"
    if kind is Kind.PAIR:
        return f"a pair of {rank_name(rank, plural=True)}"
    if kind is Kind.TRIPLE:
        return f"three {rank_name(rank, plural=True)}"
    if kind is Kind.TRIPLE_SINGLE:
        return f"three {rank_name(rank, plural=True)} with a single"
    if kind is Kind.TRIPLE_PAIR:
        return f"three {rank_name(rank, plural=True)} with a pair"
    if kind is Kind.BOMB:
        return f"a bomb of {_NUMBER_WORDS[length]} {rank_name(rank, plural=True)}"
    if kind is Kind.ROCKET:
        return "the rocket"
    if kind is Kind.FOUR_TWO_SINGLES:
        return f"four {rank_name(rank, plural=True)} with two singles"
    if kind is Kind.FOUR_TWO_PAIRS:
        return f"four {rank_name(rank, plural=True)} with two pairs"
    low, high = rank_name(rank - length + 1), rank_name(rank)
    if kind is Kind.STRAIGHT:
        return f"a straight from {low} to {high}"
    low, high = rank_name(rank - length + 1, plural=True), rank_name(rank, plural=True)
    if kind is Kind.PAIR_STRAIGHT:
        return f"a pair straight from {low} to {high}"
    attached = {Kind.AIRPLANE_SINGLES: " with singles", Kind.AIRPLANE_PAIRS: " with pairs"}
    return f"an airplane of {low} to {high}{attached.get(kind, '')}"


_NUMBER_WORDS = ("", "one", "two", "three", "four", "five", "six", "seven", "eight")


def _is_pair_rank(rank: int, variant: Variant) -> bool:
    """Tells whether two cards of this rank make a pair: jokers only in 4p (same colour)."""
    return rank <= TWO or not variant.has_kickers


def _run(ranks: list[int]) -> bool:
    """Tells whether sorted ranks are consecutive and stay below the 2."""
    return ranks[-1] <= ACE and ranks[-1] - ranks[0] == len(ranks) - 1


def classify(cards: Cards | str, variant: str | Variant = "3p") -> Combination | None:
    """Reads cards as a combination of the variant, or ``None`` if they form none.

    Cards the variant's deck cannot hold (two red jokers in 3p) form none.

    >>> classify("3334").kind, classify("3334", "4p")
    (<Kind.TRIPLE_SINGLE: 'triple_single'>, None)
    >>> classify("22222", "4p").kind, classify("BR", "4p")
    (<Kind.BOMB: 'bomb'>, None)
    """
    if isinstance(cards, str):
        cards = Cards.from_str(cards)
    variant = get_variant(variant)
    deck = variant.deck
    by_count: dict[int, list[int]] = {}
    for rank, count in enumerate(cards):
        if count:
            if count > deck[rank]:
                return None
            by_count.setdefault(count, []).append(rank)
    if not by_count:
        return None
    size = sum(cards)
    kickers = variant.has_kickers

    if len(by_count) == 1:
        ((count, ranks),) = by_count.items()
        top = ranks[-1]
        if len(ranks) == 1:
            if count == 1:
                return Combination(Kind.SINGLE, top, 1, cards)
            if count == 2:
                return (
                    Combination(Kind.PAIR, top, 1, cards) if _is_pair_rank(top, variant) else None
                )
            if count == 3:
                return Combination(Kind.TRIPLE, top, 1, cards)
            return Combination(Kind.BOMB, top, count, cards)
        if ranks == [BLACK, RED] and count == deck[BLACK]:
            return Combination(Kind.ROCKET, RED, size, cards)
        if count <= 3 and _run(ranks):
            kind = (Kind.STRAIGHT, Kind.PAIR_STRAIGHT, Kind.AIRPLANE)[count - 1]
            if len(ranks) >= MIN_CHAIN[kind]:
                return Combination(kind, top, len(ranks), cards)
        return None

    if len(by_count) != 2:
        return None
    triples = by_count.get(3)
    quads = by_count.get(4)
    singles = by_count.get(1)
    pairs = by_count.get(2)
    if triples is not None and len(triples) == 1:
        if singles is not None and len(singles) == 1 and kickers:
            return Combination(Kind.TRIPLE_SINGLE, triples[0], 1, cards)
        if pairs is not None and len(pairs) == 1 and _is_pair_rank(pairs[0], variant):
            return Combination(Kind.TRIPLE_PAIR, triples[0], 1, cards)
        return None
    if triples is not None and _run(triples):
        length = len(triples)
        if singles is not None and len(singles) == length and kickers:
            if singles[-2:] == [BLACK, RED]:
                return None
            return Combination(Kind.AIRPLANE_SINGLES, triples[-1], length, cards)
        if pairs is not None and len(pairs) == length:
            if not all(_is_pair_rank(rank, variant) for rank in pairs):
                return None
            return Combination(Kind.AIRPLANE_PAIRS, triples[-1], length, cards)
        return None
    if quads is not None and len(quads) == 1 and kickers:
        if singles is not None and len(singles) == 2 and singles != [BLACK, RED]:
            return Combination(Kind.FOUR_TWO_SINGLES, quads[0], 1, cards)
        if pairs is not None and len(pairs) == 2:
            return Combination(Kind.FOUR_TWO_PAIRS, quads[0], 1, cards)
    return None


def explain_invalid(cards: Cards, variant: Variant) -> str:
    """Says why cards that :func:`classify` rejected form no combination.

    >>> explain_invalid(Cards.from_str("3456789TJQKA2"), get_variant("3p"))
    '3456789TJQKA2 is not a combination: a straight cannot contain a 2 or a joker'
    """
    prefix = f"{cards} is not a combination: "
    if cards.size == 0:
        return "no cards were played"
    deck = variant.deck
    for rank, count in enumerate(cards):
        if count > deck[rank]:
            held = deck[rank]
            return (
                f"{cards} cannot be right: the {variant.players}-player deck holds "
                f"{_NUMBER_WORDS[held]} {rank_name(rank, plural=held != 1)}, not {count}"
            )
    counts = {count for count in cards if count}
    ranks = [rank for rank, count in enumerate(cards) if count]
    if ranks == [BLACK, RED]:
        return prefix + (
            "two jokers of different colours are no pair; the rocket is all four jokers"
            if not variant.has_kickers
            else "the rocket is one black and one red joker"
        )
    if len(counts) == 1:
        count = counts.pop()
        names = {1: "a straight", 2: "a pair straight", 3: "an airplane"}
        if count not in names:
            return prefix + "these cards form no combination"
        kind = (Kind.STRAIGHT, Kind.PAIR_STRAIGHT, Kind.AIRPLANE)[count - 1]
        if ranks[-1] > ACE and len(ranks) >= min(MIN_CHAIN[kind], 3):
            return prefix + f"{names[count]} cannot contain a 2 or a joker"
        if ranks[-1] - ranks[0] != len(ranks) - 1:
            return prefix + "the ranks are not in a row"
        unit = {1: "cards", 2: "pairs", 3: "triples"}[count]
        return prefix + f"{names[count]} needs at least {MIN_CHAIN[kind]} {unit} in a row"
    if not variant.has_kickers and (1 in counts and (3 in counts or 4 in counts)):
        return (
            prefix
            + "single cards attached to a triple or a four are not allowed in the 4-player game"
        )
    if not variant.has_kickers and 4 in counts:
        return prefix + "four of a kind with attachments is not allowed in the 4-player game"
    if 3 in counts or 4 in counts:
        triples = [rank for rank, count in enumerate(cards) if count >= 3]
        if any(rank > ACE for rank in triples) and len(triples) > 1:
            return prefix + "an airplane cannot contain triple 2s"
        if cards[BLACK] and cards[RED] and variant.has_kickers:
            return prefix + "both jokers cannot be attached to one combination"
        return prefix + (
            "the attached cards must all be singles or all pairs, one per triple (two for a four),"
            " each of a different rank from the others and from the triples"
        )
    return prefix + "these cards form no combination"


def beats(play: Combination, previous: Combination) -> bool:
    """Tells whether ``play`` may follow ``previous`` in the same trick.

    >>> beats(classify("99"), classify("55")), beats(classify("5555"), classify("BR"))
    (True, False)
    """
    if play.kind is Kind.ROCKET:
        return previous.kind is not Kind.ROCKET
    if play.kind is Kind.BOMB:
        if previous.kind is Kind.BOMB:
            return (play.length, play.rank) > (previous.length, previous.rank)
        return previous.kind is not Kind.ROCKET
    return (
        play.kind is previous.kind and play.length == previous.length and play.rank > previous.rank
    )


def explain_not_beating(play: Combination, previous: Combination) -> str:
    """Says why ``play`` does not beat ``previous``, as a referee would.

    >>> explain_not_beating(classify("55"), classify("99"))
    'a pair of 5s does not beat a pair of 9s'
    """
    mine, theirs = describe(play), describe(previous)
    if previous.kind is Kind.ROCKET:
        return f"nothing beats the rocket; {mine} cannot be played"
    if play.kind is previous.kind and play.length != previous.length:
        unit = "cards" if play.kind in (Kind.STRAIGHT, Kind.BOMB) else "units"
        if play.kind in CHAIN_KINDS and play.kind is not Kind.STRAIGHT:
            unit = "pairs" if play.kind is Kind.PAIR_STRAIGHT else "triples"
        if play.kind is Kind.BOMB:
            return f"{mine} does not beat {theirs}: a bomb with fewer cards is lower"
        return (
            f"{mine} does not match {theirs}: it must have {previous.length} {unit},"
            f" not {play.length}"
        )
    if play.kind is previous.kind or play.kind is Kind.BOMB:
        return f"{mine} does not beat {theirs}"
    return (
        f"{mine} does not beat {theirs}: answer with the same kind of combination,"
        " a bomb or the rocket"
    )
