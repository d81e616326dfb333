"""Payments, doubling per variant, house rules and the session ledger."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table.rules import FOUR_PLAYER, THREE_PLAYER, Combination, HouseRules, Ledger, settle
from table.rules.scoring import doubles_stake


def test_three_player_payments() -> None:
    base = dict(variant=THREE_PLAYER, landlord=1, bid=2, bombs=0, rockets=0, doublings=0)
    won = settle(winner=1, plays_made=(3, 5, 2), house_rules=HouseRules(), **base)  # type: ignore[arg-type]
    assert won.payments == (-2, 4, -2) and won.landlord_won
    lost = settle(winner=2, plays_made=(3, 5, 2), house_rules=HouseRules(), **base)  # type: ignore[arg-type]
    assert lost.payments == (2, -4, 2) and not lost.landlord_won


def test_four_player_payments_with_doublings() -> None:
    outcome = settle(
        variant=FOUR_PLAYER, landlord=0, winner=0, bid=3, bombs=2, rockets=1, doublings=2,
        plays_made=(4, 1, 1, 1), house_rules=HouseRules(),
    )  # fmt: skip
    assert outcome.multiplier == 4 and outcome.stake == 12
    assert outcome.payments == (36, -12, -12, -12)


@pytest.mark.parametrize(
    ("text", "variant", "doubles"),
    [
        ("3333", THREE_PLAYER, True),
        ("BR", THREE_PLAYER, True),
        ("33", THREE_PLAYER, False),
        ("3333", FOUR_PLAYER, False),
        ("33333", FOUR_PLAYER, False),
        ("333333", FOUR_PLAYER, True),
        ("33333333", FOUR_PLAYER, True),
        ("BBRR", FOUR_PLAYER, True),
    ],
)
def test_what_doubles_the_stake(text: str, variant: object, doubles: bool) -> None:
    assert doubles_stake(Combination.from_str(text, variant.name), variant) is doubles  # type: ignore[attr-defined]


def test_spring_and_anti_spring_only_with_the_house_rule() -> None:
    common = dict(variant=THREE_PLAYER, landlord=0, bid=1, bombs=0, rockets=0, doublings=0)
    spring = dict(winner=0, plays_made=(6, 0, 0))
    anti = dict(winner=2, plays_made=(1, 4, 5))
    assert not settle(house_rules=HouseRules(), **common, **spring).spring  # type: ignore[arg-type]
    on = HouseRules(spring=True)
    assert settle(house_rules=on, **common, **spring).payments == (4, -2, -2)  # type: ignore[arg-type]
    assert settle(house_rules=on, **common, **anti).payments == (-4, 2, 2)  # type: ignore[arg-type]
    ordinary = dict(winner=2, plays_made=(2, 4, 5))
    assert not settle(house_rules=on, **common, **ordinary).spring  # type: ignore[arg-type]


def test_multiplier_cap() -> None:
    outcome = settle(
        variant=THREE_PLAYER, landlord=0, winner=1, bid=3, bombs=4, rockets=1, doublings=5,
        plays_made=(5, 5, 5), house_rules=HouseRules(multiplier_cap=8),
    )  # fmt: skip
    assert outcome.multiplier == 8 and outcome.payments == (-48, 24, 24)
    with pytest.raises(ValueError, match="cap must be 1 or more"):
        HouseRules(multiplier_cap=0)


@given(
    players=st.sampled_from([THREE_PLAYER, FOUR_PLAYER]),
    rounds=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 3), st.integers(0, 6)),
        max_size=30,
    ),
)
def test_ledger_stays_zero_sum_and_rotates_the_deal(
    players: object, rounds: list[tuple[int, int, int, int]]
) -> None:
    variant = players
    n = variant.players  # type: ignore[attr-defined]
    ledger = Ledger(tuple(f"p{seat}" for seat in range(n)), dealer=1)
    for landlord, winner, bid, doublings in rounds:
        outcome = settle(
            variant=variant, landlord=landlord % n, winner=winner % n, bid=bid, bombs=0,  # type: ignore[arg-type]
            rockets=0, doublings=doublings, plays_made=(1,) * n, house_rules=HouseRules(),
        )  # fmt: skip
        assert sum(outcome.payments) == 0
        ledger.record(outcome)
        assert ledger.is_balanced
    assert ledger.dealer == (1 + len(rounds)) % n
    assert ledger.rounds == len(rounds)


def test_ledger_leaders_and_unbalanced_payments() -> None:
    ledger = Ledger(("Ann", "Bo", "Cy"))
    assert ledger.leaders() == ["Ann", "Bo", "Cy"]
    outcome = settle(
        variant=THREE_PLAYER, landlord=2, winner=2, bid=1, bombs=0, rockets=0, doublings=0,
        plays_made=(1, 1, 1), house_rules=HouseRules(),
    )  # fmt: skip
    ledger.record(outcome)
    assert ledger.leaders() == ["Cy"]
    broken = outcome.__class__(**{**outcome.__dict__, "payments": (1, 1, 1)})
    with pytest.raises(ValueError, match="do not balance"):
        ledger.record(broken)
