"""Every combination kind in both variants, the kicker rules and beating."""

from __future__ import annotations

import pytest

from table.rules import Cards, Combination, InvalidPlayError, Kind, beats, classify, explain_invalid
from table.rules.combos import explain_not_beating
from table.rules.variant import get_variant

VALID = [
    # (variant, cards, kind, deciding rank, length)
    ("3p", "3", Kind.SINGLE, "3", 1),
    ("3p", "R", Kind.SINGLE, "R", 1),
    ("3p", "22", Kind.PAIR, "2", 1),
    ("3p", "KKK", Kind.TRIPLE, "K", 1),
    ("3p", "3334", Kind.TRIPLE_SINGLE, "3", 1),
    ("3p", "222R", Kind.TRIPLE_SINGLE, "2", 1),
    ("3p", "555KK", Kind.TRIPLE_PAIR, "5", 1),
    ("3p", "AAA22", Kind.TRIPLE_PAIR, "A", 1),
    ("3p", "34567", Kind.STRAIGHT, "7", 5),
    ("3p", "3456789TJQKA", Kind.STRAIGHT, "A", 12),
    ("3p", "334455", Kind.PAIR_STRAIGHT, "5", 3),
    ("3p", "QQKKAA", Kind.PAIR_STRAIGHT, "A", 3),
    ("3p", "333444", Kind.AIRPLANE, "4", 2),
    ("3p", "KKKAAA", Kind.AIRPLANE, "A", 2),
    ("3p", "33344456", Kind.AIRPLANE_SINGLES, "4", 2),
    ("3p", "3334442B", Kind.AIRPLANE_SINGLES, "4", 2),
    ("3p", "333444555789", Kind.AIRPLANE_SINGLES, "5", 3),
    ("3p", "3334445566", Kind.AIRPLANE_PAIRS, "4", 2),
    ("3p", "888999TT22", Kind.AIRPLANE_PAIRS, "9", 2),
    ("3p", "7777", Kind.BOMB, "7", 4),
    ("3p", "BR", Kind.ROCKET, "R", 2),
    ("3p", "555534", Kind.FOUR_TWO_SINGLES, "5", 1),
    ("3p", "55552R", Kind.FOUR_TWO_SINGLES, "5", 1),
    ("3p", "55553344", Kind.FOUR_TWO_PAIRS, "5", 1),
    ("3p", "55552233", Kind.FOUR_TWO_PAIRS, "5", 1),
    ("4p", "BB", Kind.PAIR, "B", 1),
    ("4p", "RR", Kind.PAIR, "R", 1),
    ("4p", "333RR", Kind.TRIPLE_PAIR, "3", 1),
    ("4p", "333444BBRR", Kind.AIRPLANE_PAIRS, "4", 2),
    ("4p", "33333", Kind.BOMB, "3", 5),
    ("4p", "22222222", Kind.BOMB, "2", 8),
    ("4p", "BBRR", Kind.ROCKET, "R", 4),
    ("4p", "3456789TJQKA", Kind.STRAIGHT, "A", 12),
    ("4p", "33445566778899TTJJQQKKAA", Kind.PAIR_STRAIGHT, "A", 12),
]


@pytest.mark.parametrize(("variant", "text", "kind", "rank", "length"), VALID)
def test_valid_combinations(variant: str, text: str, kind: Kind, rank: str, length: int) -> None:
    combination = classify(text, variant)
    assert combination is not None, explain_invalid(Cards.from_str(text), get_variant(variant))
    assert (combination.kind, combination.rank_symbol, combination.length) == (kind, rank, length)
    assert str(combination) == str(Cards.from_str(text))


INVALID = [
    # (variant, cards, words the reason must contain)
    ("3p", "34", "at least 5 cards"),
    ("3p", "3456", "at least 5 cards"),
    ("3p", "JQKA2", "cannot contain a 2"),
    ("3p", "TJQKAB", "cannot contain a 2 or a joker"),
    ("3p", "3356", "form no combination"),
    ("3p", "3344", "at least 3 pairs"),
    ("3p", "KKAA22", "cannot contain a 2"),
    ("3p", "34567 9", "not in a row"),
    ("3p", "AAA222", "airplane cannot contain a 2"),
    ("3p", "AAA22234", "airplane cannot contain triple 2s"),
    ("3p", "BB", "holds one black joker, not 2"),
    ("3p", "33333", "holds four 3s, not 5"),
    ("3p", "33344455", "each of a different rank"),
    ("3p", "33344434", "form no combination"),
    ("3p", "333444BR", "both jokers"),
    ("3p", "3333BR", "both jokers"),
    ("3p", "333344", "each of a different rank"),
    ("3p", "33334444", "form no combination"),
    ("3p", "33355566", "each of a different rank"),
    ("3p", "3334445", "each of a different rank"),
    ("4p", "3334", "not allowed in the 4-player game"),
    ("4p", "33344456", "not allowed in the 4-player game"),
    ("4p", "333345", "not allowed in the 4-player game"),
    ("4p", "33334455", "not allowed in the 4-player game"),
    ("4p", "BR", "rocket is all four jokers"),
    ("4p", "BBR", "rocket is all four jokers"),
    ("4p", "BBB", "holds two black jokers, not 3"),
    ("4p", "333333333", "holds eight 3s, not 9"),
]


@pytest.mark.parametrize(("variant", "text", "reason"), INVALID)
def test_invalid_combinations_say_why(variant: str, text: str, reason: str) -> None:
    assert classify(text, variant) is None
    with pytest.raises(InvalidPlayError, match=reason):
        Combination.from_str(text, variant)


def test_four_player_game_has_no_single_kickers() -> None:
    for text in ("3334", "33344456", "555534"):
        assert classify(text, "3p") is not None
        assert classify(text, "4p") is None


def play(text: str, variant: str = "3p") -> Combination:
    return Combination.from_str(text, variant)


BEATS = [
    ("3p", "4", "3", True),
    ("3p", "3", "4", False),
    ("3p", "3", "3", False),
    ("3p", "R", "B", True),
    ("3p", "B", "2", True),
    ("3p", "99", "55", True),
    ("3p", "45678", "34567", True),
    ("3p", "456789", "34567", False),
    ("3p", "4445", "333K", True),
    ("3p", "44455", "3334", False),
    ("3p", "444555", "333444", True),
    ("3p", "3333", "2", True),
    ("3p", "3333", "KKKAAA79", True),
    ("3p", "4444", "3333", True),
    ("3p", "3333", "4444", False),
    ("3p", "BR", "2222", True),
    ("3p", "2222", "BR", False),
    ("3p", "555534", "666678", False),
    ("3p", "666634", "555578", True),
    ("4p", "33333", "7777", True),
    ("4p", "7777", "33333", False),
    ("4p", "88888", "77777", True),
    ("4p", "333333", "22222", True),
    ("4p", "BBRR", "22222222", True),
    ("4p", "22222222", "BBRR", False),
    ("4p", "BB", "22", True),
    ("4p", "RR", "BB", True),
    ("4p", "BB", "RR", False),
    ("4p", "3333", "RR", True),
]


@pytest.mark.parametrize(("variant", "mine", "theirs", "expected"), BEATS)
def test_beats(variant: str, mine: str, theirs: str, expected: bool) -> None:
    assert beats(play(mine, variant), play(theirs, variant)) is expected


def test_not_beating_messages_name_the_rule() -> None:
    assert explain_not_beating(play("55"), play("99")) == "a pair of 5s does not beat a pair of 9s"
    assert "must have 5 cards, not 6" in explain_not_beating(play("456789"), play("34567"))
    assert "same kind" in explain_not_beating(play("33"), play("4"))
    assert "nothing beats the rocket" in explain_not_beating(play("2222"), play("BR"))
    assert "fewer cards" in explain_not_beating(play("7777", "4p"), play("33333", "4p"))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("3", "a single 3"),
        ("R", "the red joker"),
        ("TT", "a pair of 10s"),
        ("JJJ", "three jacks"),
        ("34567", "a straight from 3 to 7"),
        ("QQKKAA", "a pair straight from queens to aces"),
        ("3333", "a bomb of four 3s"),
        ("BR", "the rocket"),
        ("333444555789", "an airplane of 3s to 5s with singles"),
    ],
)
def test_descriptions(text: str, words: str) -> None:
    assert play(text).describe() == words
