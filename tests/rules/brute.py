"""Brute force: every sub-multiset of a hand, classified and compared one by one.

Slow and obviously right; the fast generator in ``table.rules.moves`` is checked
against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import product

from table.rules import Cards, Combination, Variant, beats, classify


def sub_multisets(hand: Cards) -> Iterator[Cards]:
    """Yields every non-empty sub-multiset of a hand."""
    for counts in product(*(range(count + 1) for count in hand)):
        if any(counts):
            yield Cards(list(counts))


def brute_force_plays(hand: Cards, previous: Combination | None, variant: Variant) -> set[str]:
    """Gets the canonical text of every legal play by trying every sub-multiset."""
    plays = set()
    for cards in sub_multisets(hand):
        combination = classify(cards, variant)
        if combination is not None and (previous is None or beats(combination, previous)):
            plays.add(str(cards))
    return plays


def count_by_kind(hand: Cards, previous: Combination | None, variant: Variant) -> Counter[str]:
    """Counts the brute-force legal plays of each kind."""
    kinds: Counter[str] = Counter()
    for text in brute_force_plays(hand, previous, variant):
        combination = classify(text, variant)
        assert combination is not None
        kinds[combination.kind.value] += 1
    return kinds
