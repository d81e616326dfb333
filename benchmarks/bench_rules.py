"""Rules engine speed: legal_plays on seeded 20-card hands, and simulated rounds per second.

Run: ``.venv/bin/python benchmarks/bench_rules.py`` (one process, one core).
Targets (issue 2): leads of a 20-card hand in at most ~60-100 microseconds,
exact; ``simulate`` at least 300 three-player rounds per second.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from table.rules import THREE_PLAYER, Cards, Combination, legal_plays
from table.rules.simulate import simulate


def best_of(repeats: int, work: Callable[[], int]) -> tuple[float, int]:
    """Runs ``work`` several times and keeps the fastest wall time."""
    times, result = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    """Prints the measured figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    rng = random.Random(2026)
    deck = THREE_PLAYER.deck.ranks()
    hands = [Cards.from_ranks(rng.sample(deck, 20)) for _ in range(args.hands)]
    previous: list[Combination] = []
    for _ in hands:
        other = Cards.from_ranks(rng.sample(deck, 17))
        previous.append(rng.choice(legal_plays(other)))

    lead_time, leads = best_of(args.repeats, lambda: sum(len(legal_plays(h)) for h in hands))
    answer_time, answers = best_of(
        args.repeats,
        lambda: sum(len(legal_plays(h, p)) for h, p in zip(hands, previous, strict=True)),
    )
    print(f"legal_plays, leading:   {lead_time / len(hands) * 1e6:6.1f} us per 20-card hand,"
          f" {leads / len(hands):.1f} plays on average")  # fmt: skip
    print(f"legal_plays, answering: {answer_time / len(hands) * 1e6:6.1f} us per 20-card hand,"
          f" {answers / len(hands):.1f} plays on average")  # fmt: skip

    for variant in ("3p", "4p"):
        started = time.perf_counter()
        summary = simulate(args.rounds, variant, seed=1)
        seconds = time.perf_counter() - started
        print(f"simulate {variant}: {summary.rounds / seconds:6.0f} rounds per second"
              f" ({summary.rounds} rounds, {summary.redeals} redeals)")  # fmt: skip


if __name__ == "__main__":
    main()
