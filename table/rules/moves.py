"""Legal plays: every distinct combination a hand can play, leading or answering.

Generation works on the 15 rank counts directly and builds each play once, so
there is nothing to de-duplicate; the brute-force tests in
``tests/rules/test_moves.py`` check that against every sub-multiset of a hand.
Plays that do not depend on the rest of the hand (singles, pairs, triples,
chains, bombs) are built once at import; each generator appends to one list,
because nested generators cost more than the plays themselves.
"""

from __future__ import annotations

from itertools import combinations

from table.rules.cards import RANK_COUNT, Cards
from table.rules.combos import ACE, BLACK, MIN_CHAIN, RED, TWO, Combination, Kind
from table.rules.variant import Variant, get_variant

_new = tuple.__new__
_NO_RANK = -1
_UNIT_SIZE = {
    Kind.SINGLE: 1,
    Kind.PAIR: 2,
    Kind.TRIPLE: 3,
    Kind.STRAIGHT: 1,
    Kind.PAIR_STRAIGHT: 2,
    Kind.AIRPLANE: 3,
    Kind.TRIPLE_SINGLE: 1,
    Kind.TRIPLE_PAIR: 2,
    Kind.AIRPLANE_SINGLES: 1,
    Kind.AIRPLANE_PAIRS: 2,
    Kind.FOUR_TWO_SINGLES: 1,
    Kind.FOUR_TWO_PAIRS: 2,
}


def _counts(ranks: range | tuple[int, ...], size: int) -> list[int]:
    counts = [0] * RANK_COUNT
    for rank in ranks:
        counts[rank] = size
    return counts


def _same_rank_table(kind: Kind, size: int) -> tuple[Combination, ...]:
    """Builds the play of ``size`` cards of each rank, indexed by rank."""
    length = size if kind is Kind.BOMB else 1
    return tuple(
        Combination(kind, rank, length, _new(Cards, _counts((rank,), size)))
        for rank in range(RANK_COUNT)
    )


def _chain_table(kind: Kind) -> dict[tuple[int, int], Combination]:
    """Builds every chain of ``kind`` below the 2, keyed by (lowest rank, top rank)."""
    size = _UNIT_SIZE[kind]
    table = {}
    for low in range(ACE + 1):
        for top in range(low + MIN_CHAIN[kind] - 1, ACE + 1):
            cards = _new(Cards, _counts(range(low, top + 1), size))
            table[low, top] = Combination(kind, top, top - low + 1, cards)
    return table


_SAME_RANK = {
    Kind.SINGLE: _same_rank_table(Kind.SINGLE, 1),
    Kind.PAIR: _same_rank_table(Kind.PAIR, 2),
    Kind.TRIPLE: _same_rank_table(Kind.TRIPLE, 3),
}
_BOMBS = {size: _same_rank_table(Kind.BOMB, size) for size in range(4, 9)}
_CHAINS = {kind: _chain_table(kind) for kind in (Kind.STRAIGHT, Kind.PAIR_STRAIGHT, Kind.AIRPLANE)}


def _runs(hand: Cards, size: int, shortest: int, above: int, length: int | None) -> list[range]:
    """Lists the runs of ``size``-card units below the 2, as rank ranges.

    With ``length`` given, only runs of that length whose top is above ``above``.
    """
    runs = []
    for low in range(ACE + 1):
        top = low
        while top <= ACE and hand[top] >= size:
            run = top - low + 1
            if run >= shortest and top > above and (length is None or run == length):
                runs.append(range(low, top + 1))
            if length is not None and run >= length:
                break
            top += 1
    return runs


def _attach(
    hand: Cards,
    kind: Kind,
    rank: int,
    length: int,
    core: range,
    core_size: int,
    how_many: int,
    out: list[Combination],
) -> None:
    """Appends ``core`` with ``how_many`` attachments of distinct ranks outside it.

    Single attachments never hold both jokers.
    """
    size = _UNIT_SIZE[kind]
    candidates = [r for r in range(RANK_COUNT) if hand[r] >= size and r not in core]
    base = _counts(core, core_size)
    new, play = _new, Combination
    if how_many == 1:
        for extra in candidates:
            counts = base.copy()
            counts[extra] = size
            out.append(new(play, (kind, rank, length, new(Cards, counts))))
        return
    both_jokers = size == 1 and hand[BLACK] and hand[RED]
    for chosen in combinations(candidates, how_many):
        if both_jokers and chosen[-1] == RED and chosen[-2] == BLACK:
            continue
        counts = base.copy()
        for extra in chosen:
            counts[extra] = size
        out.append(new(play, (kind, rank, length, new(Cards, counts))))


def _collect(
    hand: Cards,
    variant: Variant,
    kind: Kind,
    above: int,
    length: int | None,
    out: list[Combination],
) -> None:
    """Appends the plays of one kind ranked above ``above`` (of ``length`` for chains)."""
    kickers = variant.has_kickers
    if kind in _SAME_RANK:
        size = _UNIT_SIZE[kind]
        last = TWO if kind is Kind.TRIPLE or (kind is Kind.PAIR and kickers) else RED
        plays = _SAME_RANK[kind]
        out.extend(plays[r] for r in range(above + 1, last + 1) if hand[r] >= size)
    elif kind in _CHAINS:
        chains = _CHAINS[kind]
        for run in _runs(hand, _UNIT_SIZE[kind], MIN_CHAIN[kind], above, length):
            out.append(chains[run.start, run.stop - 1])
    elif kind is Kind.TRIPLE_PAIR or (kind is Kind.TRIPLE_SINGLE and kickers):
        for rank in range(above + 1, TWO + 1):
            if hand[rank] >= 3:
                _attach(hand, kind, rank, 1, range(rank, rank + 1), 3, 1, out)
    elif kind is Kind.AIRPLANE_PAIRS or (kind is Kind.AIRPLANE_SINGLES and kickers):
        for run in _runs(hand, 3, MIN_CHAIN[kind], above, length):
            _attach(hand, kind, run.stop - 1, len(run), run, 3, len(run), out)
    elif kind in (Kind.FOUR_TWO_SINGLES, Kind.FOUR_TWO_PAIRS) and kickers:
        for rank in range(above + 1, TWO + 1):
            if hand[rank] >= 4:
                _attach(hand, kind, rank, 1, range(rank, rank + 1), 4, 2, out)


def _collect_bombs(hand: Cards, above: tuple[int, int], out: list[Combination]) -> None:
    """Appends every bomb whose (size, rank) is above ``above``."""
    for rank in range(TWO + 1):
        for size in range(4, hand[rank] + 1):
            if (size, rank) > above:
                out.append(_BOMBS[size][rank])


def _collect_rocket(hand: Cards, variant: Variant, out: list[Combination]) -> None:
    """Appends the rocket if the hand holds every joker of the deck."""
    jokers = variant.decks
    if hand[BLACK] >= jokers and hand[RED] >= jokers:
        out.append(
            Combination(Kind.ROCKET, RED, 2 * jokers, _new(Cards, _counts((BLACK, RED), jokers)))
        )


_LEAD_ORDER = (
    Kind.SINGLE,
    Kind.PAIR,
    Kind.TRIPLE,
    Kind.TRIPLE_SINGLE,
    Kind.TRIPLE_PAIR,
    Kind.STRAIGHT,
    Kind.PAIR_STRAIGHT,
    Kind.AIRPLANE,
    Kind.AIRPLANE_SINGLES,
    Kind.AIRPLANE_PAIRS,
    Kind.FOUR_TWO_SINGLES,
    Kind.FOUR_TWO_PAIRS,
)


def legal_plays(
    hand: Cards | str,
    previous: Combination | None = None,
    variant: str | Variant = "3p",
) -> list[Combination]:
    """Lists every distinct play of ``hand`` that may lead, or that beats ``previous``.

    >>> [str(play) for play in legal_plays("3345", previous=Combination.from_str("4"))]
    ['5']
    >>> [play.kind.value for play in legal_plays("BR")]
    ['single', 'single', 'rocket']
    """
    if isinstance(hand, str):
        hand = Cards.from_str(hand)
    variant = get_variant(variant)
    out: list[Combination] = []
    if previous is None:
        for kind in _LEAD_ORDER:
            _collect(hand, variant, kind, _NO_RANK, None, out)
        _collect_bombs(hand, (0, _NO_RANK), out)
    elif previous.kind is Kind.ROCKET:
        return out
    elif previous.kind is Kind.BOMB:
        _collect_bombs(hand, (previous.length, previous.rank), out)
    else:
        _collect(hand, variant, previous.kind, previous.rank, previous.length, out)
        _collect_bombs(hand, (0, _NO_RANK), out)
    _collect_rocket(hand, variant, out)
    return out
