"""Card text, ranks and multisets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from table.rules import RANK_SYMBOLS, Cards, InvalidCardsError, Rank, parse_cards, rank_name
from table.rules.cards import parse_rank


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("33344456", "33344456"),
        ("65443334", "33344456"),
        ("10 J Q K A", "TJQKA"),
        ("Th, 10s, Td", "TTT"),
        ("3s 3h 3d 3c", "3333"),
        ("R B 2", "2BR"),
        ("t j q k a", "TJQKA"),
        ("", ""),
        ("  ,, ", ""),
    ],
)
def test_parse_gives_canonical_text(text: str, canonical: str) -> None:
    assert str(parse_cards(text)) == canonical


@pytest.mark.parametrize(
    ("text", "token"), [("34x5", "'x'"), ("1 2", "'1'"), ("3z", "'z'"), ("0", "'0'")]
)
def test_bad_token_is_named(text: str, token: str) -> None:
    with pytest.raises(InvalidCardsError, match=token):
        parse_cards(text)


def test_suit_letter_after_joker_is_not_a_suit() -> None:
    with pytest.raises(InvalidCardsError, match="'s'"):
        parse_cards("Bs")


def test_rank_order_low_to_high() -> None:
    assert [parse_rank(symbol) for symbol in RANK_SYMBOLS] == sorted(Rank)
    assert parse_rank("10") is Rank.TEN
    assert rank_name(Rank.JACK) == "jack"
    assert rank_name(Rank.FIVE, plural=True) == "5s"
    with pytest.raises(InvalidCardsError):
        parse_rank("11")


def test_arithmetic_and_subset() -> None:
    hand = parse_cards("3334569")
    play = parse_cards("333")
    assert str(hand - play) == "4569"
    assert str((hand - play) + play) == str(hand)
    assert play.is_subset(hand)
    assert not parse_cards("3333").is_subset(hand)
    with pytest.raises(ValueError, match="not part of"):
        play - hand
    assert hand.size == 7
    assert hand[Rank.THREE] == 3


def test_cards_need_fifteen_counts() -> None:
    with pytest.raises(ValueError, match="15 entries"):
        Cards((1, 2))


@given(st.lists(st.integers(0, 14), max_size=40))
def test_text_round_trips(ranks: list[int]) -> None:
    cards = Cards.from_ranks(ranks)
    assert Cards.from_str(str(cards)) == cards
    assert eval(repr(cards), {"Cards": Cards}) == cards
    assert cards.ranks() == sorted(ranks)
