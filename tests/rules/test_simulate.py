"""Simulated rounds: every round ends and the ledger balances."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from table.rules import HouseRules
from table.rules.simulate import simulate


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    variant=st.sampled_from(["3p", "4p"]),
    spring=st.booleans(),
    cap=st.none() | st.integers(1, 16),
)
def test_every_simulated_round_ends_and_balances(
    seed: int, variant: str, spring: bool, cap: int | None
) -> None:
    summary = simulate(
        4, variant, seed=seed, house_rules=HouseRules(spring=spring, multiplier_cap=cap)
    )
    assert summary.rounds == 4
    assert summary.ledger.is_balanced
    assert all(1 <= m <= (cap or 2**20) for m in summary.multipliers)


def test_same_seed_same_game() -> None:
    first, second = simulate(20, "3p", seed=5), simulate(20, "3p", seed=5)
    assert first.ledger.totals == second.ledger.totals
    assert (first.bombs, first.rockets, first.redeals) == (
        second.bombs,
        second.rockets,
        second.redeals,
    )


def test_progress_callback_counts_rounds() -> None:
    seen: list[int] = []
    simulate(3, "4p", seed=2, on_round=seen.append)
    assert seen == [1, 2, 3]
