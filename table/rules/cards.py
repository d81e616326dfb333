"""Ranks, card text and multisets of cards.

Suits never matter to the rules and the 4-player game has two of every card, so
a set of cards is a multiset: 15 counts, one per rank, from 3 up to the red joker.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final

from table.rules.errors import InvalidCardsError


class Rank(IntEnum):
    """Card ranks from low to high; the value indexes a count tuple."""

    THREE = 0
    FOUR = 1
    FIVE = 2
    SIX = 3
    SEVEN = 4
    EIGHT = 5
    NINE = 6
    TEN = 7
    JACK = 8
    QUEEN = 9
    KING = 10
    ACE = 11
    TWO = 12
    BLACK_JOKER = 13
    RED_JOKER = 14


RANK_COUNT: Final = 15
RANK_SYMBOLS: Final = "3456789TJQKA2BR"
JOKERS: Final = (Rank.BLACK_JOKER, Rank.RED_JOKER)
SUITS: Final = "shdc"

_SINGULAR: Final = (
    "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king", "ace", "2",
    "black joker", "red joker",
)  # fmt: skip
_PLURAL: Final = (
    "3s", "4s", "5s", "6s", "7s", "8s", "9s", "10s", "jacks", "queens", "kings", "aces", "2s",
    "black jokers", "red jokers",
)  # fmt: skip


def parse_rank(symbol: str) -> Rank:
    """Parses one rank symbol, like ``T`` or ``10``.

    :raises: :exc:`InvalidCardsError` if it is not a rank.

    >>> parse_rank("T")
    <Rank.TEN: 7>
    """
    token = symbol.strip().upper()
    if token == "10":
        token = "T"
    if len(token) != 1 or token not in RANK_SYMBOLS:
        raise InvalidCardsError(
            f"{symbol!r} is not a card rank; use 3-9, T (or 10), J, Q, K, A, 2, B, R"
        )
    return Rank(RANK_SYMBOLS.index(token))


def rank_symbol(rank: int) -> str:
    """Gets the one-letter symbol of a rank, like ``T``."""
    return RANK_SYMBOLS[rank]


def rank_name(rank: int, plural: bool = False) -> str:
    """Gets the name of a rank as players say it, like ``jack`` or ``5s``."""
    return _PLURAL[rank] if plural else _SINGULAR[rank]


class Cards(tuple[int, ...]):
    """A multiset of cards: ``cards[rank]`` is how many cards of that rank it holds.

    A tuple subclass so that move generation can build thousands of them cheaply;
    ``str()`` and :meth:`from_str` round-trip through the canonical notation.

    >>> cards = Cards.from_str("5 3 3 Th 10s B")
    >>> str(cards), cards.size, cards[Rank.TEN]
    ('335TTB', 6, 2)
    """

    __slots__ = ()

    def __new__(cls, counts: tuple[int, ...] | list[int] = (0,) * RANK_COUNT) -> Cards:
        if len(counts) != RANK_COUNT:
            raise ValueError(f"a card count tuple has {RANK_COUNT} entries, not {len(counts)}")
        return tuple.__new__(cls, counts)

    @classmethod
    def from_str(cls, text: str) -> Cards:
        """Parses card text: ranks with an optional suit letter; spaces and commas are ignored.

        :raises: :exc:`InvalidCardsError` naming the first token that is not a card.
        """
        counts = [0] * RANK_COUNT
        i = 0
        n = len(text)
        while i < n:
            ch = text[i]
            if ch in " ,\t\n":
                i += 1
                continue
            if text.startswith("10", i):
                rank, i = 7, i + 2
            else:
                upper = ch.upper()
                index = RANK_SYMBOLS.find(upper)
                if index < 0:
                    raise InvalidCardsError(
                        f"{ch!r} in {text.strip()!r} is not a card: ranks are 3-9, T (or 10), J, Q,"
                        " K, A, 2, B (black joker) and R (red joker), each with an optional suit"
                        " s, h, d or c"
                    )
                rank, i = index, i + 1
            if rank < Rank.BLACK_JOKER and i < n and text[i] in SUITS:
                i += 1
            counts[rank] += 1
        return tuple.__new__(cls, counts)

    @classmethod
    def from_ranks(cls, ranks: Iterable[int]) -> Cards:
        """Builds a multiset from a list of ranks, one entry per card."""
        counts = [0] * RANK_COUNT
        for rank in ranks:
            counts[rank] += 1
        return tuple.__new__(cls, counts)

    @property
    def size(self) -> int:
        """Counts the cards."""
        return sum(self)

    def ranks(self) -> list[Rank]:
        """Lists one rank per card, low to high."""
        return [Rank(rank) for rank, count in enumerate(self) for _ in range(count)]

    def is_subset(self, other: Cards) -> bool:
        """Tells whether every card of this multiset is also in ``other``."""
        return all(mine <= theirs for mine, theirs in zip(self, other, strict=True))

    def __add__(self, other: object) -> Cards:
        if not isinstance(other, Cards):
            return NotImplemented
        return tuple.__new__(Cards, [a + b for a, b in zip(self, other, strict=True)])

    def __sub__(self, other: Cards) -> Cards:
        """Removes ``other`` from these cards.

        :raises: :exc:`ValueError` if ``other`` is not a subset.
        """
        counts = [a - b for a, b in zip(self, other, strict=True)]
        if min(counts) < 0:
            raise ValueError(f"{other} is not part of {self}")
        return tuple.__new__(Cards, counts)

    def __str__(self) -> str:
        return "".join(RANK_SYMBOLS[rank] * count for rank, count in enumerate(self))

    def __repr__(self) -> str:
        return f"Cards.from_str({str(self)!r})"


def parse_cards(text: str) -> Cards:
    """Parses card text into a multiset; see :meth:`Cards.from_str`.

    >>> str(parse_cards("2, 2, 3s 3h"))
    '3322'
    """
    return Cards.from_str(text)


def cards_name(cards: Cards) -> str:
    """Gets the canonical text of cards, sorted low to high without suits."""
    return str(cards)
