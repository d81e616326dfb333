"""Writes tests/data/legal_plays.perft from the brute force in brute.py.

Run ``python tests/rules/make_perft.py > tests/data/legal_plays.perft``; the
fixture is committed so that the fast test only runs the generator.
"""

from __future__ import annotations

import random

from brute import count_by_kind

from table.rules import get_variant, legal_plays
from table.rules.simulate import deal

CASES = 12


def main() -> None:
    """Prints one line per case: variant, hand, previous play, total, counts per kind."""
    print("# variant hand previous total kind=count... (brute force over all sub-multisets)")
    rng = random.Random(20261130)
    for name in ("3p", "4p"):
        variant = get_variant(name)
        for case in range(CASES):
            hands, kitty = deal(rng, variant)
            hand = hands[0] + kitty if name == "3p" else hands[0]
            previous = None
            if case % 2:
                previous = rng.choice(legal_plays(hands[1], None, variant))
            kinds = count_by_kind(hand, previous, variant)
            counts = " ".join(f"{kind}={n}" for kind, n in sorted(kinds.items()))
            before = str(previous.cards) if previous else "-"
            print(f"{name} {hand} {before} {sum(kinds.values())} {counts}")


if __name__ == "__main__":
    main()
