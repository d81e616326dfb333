"""Legal plays: exact against brute force, and against perft-style fixtures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from brute import brute_force_plays
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hands, previous_plays, variants

from table.rules import Cards, Combination, Kind, Variant, beats, classify, get_variant, legal_plays
from table.rules.simulate import deal

PERFT = Path(__file__).parents[1] / "data" / "legal_plays.perft"


def perft_cases() -> list[tuple[str, str, str, int, dict[str, int]]]:
    """Reads the fixture: variant, hand, previous play, total and counts per kind."""
    cases = []
    for line in PERFT.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        variant, hand, previous, total, *kinds = line.split()
        counts = {kind: int(n) for kind, n in (item.split("=") for item in kinds)}
        cases.append((variant, hand, previous, int(total), counts))
    return cases


@pytest.mark.parametrize(("variant", "hand", "previous", "total", "kinds"), perft_cases())
def test_perft_counts(
    variant: str, hand: str, previous: str, total: int, kinds: dict[str, int]
) -> None:
    before = None if previous == "-" else Combination.from_str(previous, variant)
    plays = legal_plays(hand, before, variant)
    assert len(plays) == total
    assert dict(Counter(play.kind.value for play in plays)) == kinds


def test_fixture_covers_both_variants_and_answers() -> None:
    cases = perft_cases()
    assert {case[0] for case in cases} == {"3p", "4p"}
    assert sum(case[2] != "-" for case in cases) >= 10


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_play_classifies_and_beats(data: st.DataObject) -> None:
    variant: Variant = data.draw(variants)
    hand = data.draw(hands(variant, max_size=20))
    previous = data.draw(previous_plays(variant))
    plays = legal_plays(hand, previous, variant)
    assert len({play.cards for play in plays}) == len(plays), "a play was listed twice"
    for play in plays:
        assert play.cards.is_subset(hand)
        assert classify(play.cards, variant) == play
        if previous is not None:
            assert beats(play, previous)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_small_hands_equal_brute_force(data: st.DataObject) -> None:
    variant: Variant = data.draw(variants)
    hand = data.draw(hands(variant, max_size=9))
    previous = data.draw(previous_plays(variant))
    expected = brute_force_plays(hand, previous, variant)
    assert {str(play.cards) for play in legal_plays(hand, previous, variant)} == expected


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_full_hands_equal_brute_force(variant: str) -> None:
    import random

    rng = random.Random(7)
    rules = get_variant(variant)
    for _ in range(4):
        hands_dealt, kitty = deal(rng, rules)
        hand = hands_dealt[0] + kitty if variant == "3p" else hands_dealt[0]
        leads = legal_plays(hand, None, rules)
        assert {str(p.cards) for p in leads} == brute_force_plays(hand, None, rules)
        previous = rng.choice(legal_plays(hands_dealt[1], None, rules))
        answers = legal_plays(hand, previous, rules)
        assert {str(p.cards) for p in answers} == brute_force_plays(hand, previous, rules)


def test_four_player_answers_to_bombs_go_by_size_then_rank() -> None:
    hand = Cards.from_str("3333344447777788")
    answers = {str(p.cards) for p in legal_plays(hand, Combination.from_str("66666", "4p"), "4p")}
    assert answers == {"77777"}
    bigger = legal_plays("333333", Combination.from_str("22222", "4p"), "4p")
    assert [str(p) for p in bigger] == ["333333"]


def test_nothing_answers_the_rocket() -> None:
    assert legal_plays("2222BR", Combination.from_str("BR"), "3p") == []


def test_kickers_never_hold_both_jokers() -> None:
    for play in legal_plays("333444555BR7", None, "3p"):
        if play.kind in (Kind.AIRPLANE_SINGLES, Kind.FOUR_TWO_SINGLES, Kind.TRIPLE_SINGLE):
            assert not (play.cards[13] and play.cards[14])
