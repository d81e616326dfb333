"""The round state machine: auction, tricks, errors, undo and replay."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table.rules import (
    Bid,
    Cards,
    HouseRules,
    IllegalActionError,
    IllegalBidError,
    IllegalPlayError,
    ImpossibleCardsError,
    InvalidPlayError,
    Pass,
    Phase,
    Play,
    Round,
    RoundEnded,
    RulesError,
    ShowKitty,
    TrickWon,
    apply,
    new_round,
)
from table.rules.simulate import deal, random_action


def table(variant: str = "3p", first_bidder: int = 0, **kwargs: object) -> Round:
    """Makes a round at a real table: the referee does not see the hands."""
    return Round(new_round(variant, dealer=0, first_bidder=first_bidder, **kwargs))  # type: ignore[arg-type]


def push_all(played: Round, *actions: Bid | Pass | Play | ShowKitty) -> list[str]:
    names = []
    for action in actions:
        names += [type(event).__name__ for event in played.push(action)]
    return names


def cards(text: str) -> Cards:
    return Cards.from_str(text)


class TestAuction:
    def test_two_passes_after_a_bid_end_it(self) -> None:
        r = table(first_bidder=1)
        events = push_all(r, Pass(1), Bid(2, 1), Pass(0), Pass(1))
        assert events[-1] == "LandlordChosen"
        assert (r.state.phase, r.state.landlord, r.state.highest_bid) == (Phase.PLAY, 2, 1)
        assert r.state.cards_left == (17, 17, 20)
        assert r.state.turn == 2

    def test_a_bid_of_three_ends_it_at_once(self) -> None:
        r = table()
        push_all(r, Bid(0, 1), Bid(1, 3))
        assert (r.state.landlord, r.state.highest_bid, r.state.turn) == (1, 3, 1)

    def test_a_seat_that_passed_may_bid_again(self) -> None:
        r = table()
        push_all(r, Pass(0), Bid(1, 1), Pass(2), Bid(0, 2), Pass(1), Pass(2))
        assert (r.state.landlord, r.state.highest_bid) == (0, 2)

    @pytest.mark.parametrize("variant", ["3p", "4p"])
    def test_all_pass_means_redeal(self, variant: str) -> None:
        r = table(variant)
        players = r.state.players
        events = push_all(r, *(Pass(seat) for seat in range(players)))
        assert events[-1] == "Redeal"
        assert r.state.phase is Phase.REDEAL
        with pytest.raises(IllegalActionError, match="dealt again"):
            r.push(Bid(0, 1))

    def test_four_players_need_three_passes_after_a_bid(self) -> None:
        r = table("4p")
        push_all(r, Bid(0, 1), Pass(1), Pass(2))
        assert r.state.phase is Phase.AUCTION
        push_all(r, Pass(3))
        assert (r.state.landlord, r.state.cards_left) == (0, (33, 25, 25, 25))

    @pytest.mark.parametrize(
        ("actions", "bad", "error", "message"),
        [
            ([], Bid(1, 1), IllegalActionError, "seat 1 is not on turn; seat 0 is"),
            ([], Bid(0, 4), IllegalBidError, "a bid is 1, 2 or 3, not 4"),
            ([], Bid(0, 0), IllegalBidError, "a bid is 1, 2 or 3, not 0"),
            ([Bid(0, 2)], Bid(1, 2), IllegalBidError, "higher than 2, the highest bid so far"),
            ([], Play(0, Cards.from_str("3")), IllegalPlayError, "auction is still on"),
            ([], Bid(5, 1), IllegalActionError, "no seat 5"),
            ([Bid(0, 3)], Bid(0, 1), IllegalBidError, "auction is over"),
        ],
    )
    def test_bad_bids_say_why_and_change_nothing(
        self, actions: list[Bid], bad: Bid, error: type[RulesError], message: str
    ) -> None:
        r = table()
        push_all(r, *actions)
        before, record = r.state, list(r.actions)
        with pytest.raises(error, match=message):
            r.push(bad)
        assert r.state is before and r.actions == record


class TestPlay:
    def landlord_round(self, **kwargs: object) -> Round:
        r = table(**kwargs)
        push_all(r, Bid(0, 3))
        return r

    def test_landlord_leads_and_must_play(self) -> None:
        r = self.landlord_round()
        with pytest.raises(IllegalPlayError, match="seat 0 leads this trick and must play cards"):
            r.push(Pass(0))

    def test_trick_ends_after_two_passes_and_winner_leads(self) -> None:
        r = self.landlord_round()
        events = push_all(r, Play(0, cards("33")), Play(1, cards("55")), Pass(2), Pass(0))
        assert events[-1] == "TrickWon"
        assert r.state.trick is None and r.state.turn == 1
        assert r.state.cards_left == (18, 15, 17)

    def test_a_seat_that_passed_may_play_again(self) -> None:
        r = self.landlord_round()
        push_all(
            r,
            Play(0, cards("3")),
            Pass(1),
            Play(2, cards("4")),
            Play(0, cards("5")),
            Play(1, cards("6")),
        )
        assert r.state.trick_seat == 1

    @pytest.mark.parametrize(
        ("bad", "error", "message"),
        [
            (
                Play(1, Cards.from_str("99")),
                IllegalPlayError,
                "a pair of 9s does not beat a pair of jacks",
            ),
            (Play(1, Cards.from_str("Q")), IllegalPlayError, "same kind of combination"),
            (Play(1, Cards.from_str("JQKA2")), InvalidPlayError, "a straight cannot contain a 2"),
            (Play(2, Cards.from_str("KK")), IllegalActionError, "seat 2 is not on turn; seat 1 is"),
            (Play(1, Cards.from_str("JJJJ")), ImpossibleCardsError, "2 jacks already played"),
        ],
    )
    def test_bad_plays_say_why_and_change_nothing(
        self, bad: Play, error: type[RulesError], message: str
    ) -> None:
        r = self.landlord_round()
        push_all(r, Play(0, cards("JJ")))
        before = r.state
        with pytest.raises(error, match=message):
            r.push(bad)
        assert r.state is before and len(r.actions) == 2

    def test_more_cards_than_the_seat_holds(self) -> None:
        r = self.landlord_round()
        push_all(
            r,
            Play(0, cards("3456789TJQKA")),
            Pass(1),
            Pass(2),
            Play(0, cards("44")),
            Pass(1),
            Pass(2),
        )
        with pytest.raises(IllegalPlayError, match="seat 0 has 6 cards left and cannot play 7"):
            r.push(Play(0, cards("56789TJ")))

    def test_known_hand_must_hold_the_cards(self) -> None:
        hands, kitty = deal(random.Random(3), new_round("3p", dealer=0, first_bidder=0).variant)
        r = table(hands=hands, kitty=kitty)
        push_all(r, Bid(0, 3))
        missing = next(rank for rank in range(13) if r.state.hands[0][rank] == 0)  # type: ignore[index]
        with pytest.raises(IllegalPlayError, match="seat 0 does not hold"):
            r.push(Play(0, Cards.from_ranks([missing])))

    def test_a_full_round_to_payment(self) -> None:
        r = self.landlord_round()
        push_all(
            r,
            Play(0, cards("3456789TJQKA")),
            Pass(1),
            Pass(2),
            Play(0, cards("2222")),
            Pass(1),
            Pass(2),
        )
        events = r.push(Play(0, cards("KKKQ")))
        assert isinstance(events[-1], RoundEnded)
        outcome = events[-1].outcome
        assert (outcome.landlord_won, outcome.bid, outcome.bombs, outcome.multiplier) == (
            True,
            3,
            1,
            2,
        )
        assert outcome.payments == (12, -6, -6)
        assert r.state.phase is Phase.FINISHED
        with pytest.raises(IllegalActionError, match="round is over"):
            r.push(Pass(1))

    def test_spring_house_rule(self) -> None:
        r = self.landlord_round(house_rules=HouseRules(spring=True))
        push_all(
            r,
            Play(0, cards("3456789TJQKA")),
            Pass(1),
            Pass(2),
            Play(0, cards("2222")),
            Pass(1),
            Pass(2),
        )
        outcome = r.push(Play(0, cards("KKKQ")))[-1].outcome  # type: ignore[union-attr]
        assert outcome.spring and outcome.payments == (24, -12, -12)

    def test_kitty_shown_before_the_first_play(self) -> None:
        r = self.landlord_round()
        assert push_all(r, ShowKitty(cards("3BR"))) == ["KittyShown"]
        assert r.state.kitty == cards("3BR")
        with pytest.raises(IllegalPlayError, match="3 cards; 2 were shown"):
            Round(r.state).push(ShowKitty(cards("33")))
        push_all(r, Play(0, cards("4")))
        with pytest.raises(IllegalPlayError, match="before the first play"):
            r.push(ShowKitty(cards("3BR")))


def test_trick_won_event_names_the_winner() -> None:
    r = table()
    push_all(r, Bid(0, 3), Play(0, cards("8")))
    events = [*r.push(Pass(1)), *r.push(Pass(2))]
    assert isinstance(events[-1], TrickWon) and events[-1].seat == 0


def test_undo_on_an_empty_round() -> None:
    with pytest.raises(IndexError, match="nothing to undo"):
        table().pop()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(["3p", "4p"]))
def test_push_pop_sweep_and_replay(seed: int, variant: str) -> None:
    """Every push is undone exactly by pop, and replaying the record rebuilds the state."""
    rng = random.Random(seed)
    rules = new_round(variant, dealer=0, first_bidder=0).variant
    hands, kitty = deal(rng, rules)
    start = new_round(
        rules, dealer=1, first_bidder=rng.randrange(rules.players), hands=hands, kitty=kitty
    )
    r = Round(start)
    states = [r.state]
    while not r.state.is_over:
        r.push(random_action(r, rng))
        states.append(r.state)
    assert Round.replay(start, r.actions).state == r.state
    while r.actions:
        r.pop()
        states.pop()
        assert r.state == states[-1]
    assert r.state == start


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(["3p", "4p"]))
def test_rejected_actions_change_nothing(seed: int, variant: str) -> None:
    """Random actions, legal or not, never change the state when the rules reject them."""
    rng = random.Random(seed)
    rules = new_round(variant, dealer=0, first_bidder=0).variant
    hands, kitty = deal(rng, rules)
    r = Round(new_round(rules, dealer=0, first_bidder=0, hands=hands, kitty=kitty))
    for _ in range(200):
        if r.state.is_over:
            break
        seat = rng.randrange(rules.players)
        candidates = [
            Pass(seat),
            Bid(seat, rng.randrange(0, 5)),
            Play(seat, Cards.from_ranks(rng.sample(rules.deck.ranks(), rng.randrange(1, 6)))),
        ]
        for action in candidates:
            before = r.state
            try:
                state, _ = apply(before, action)
            except RulesError:
                assert r.state is before
            else:
                assert state != before
        r.push(random_action(r, rng))


def test_legal_plays_view_agrees_with_in() -> None:
    rng = random.Random(11)
    rules = new_round("3p", dealer=0, first_bidder=0).variant
    hands, kitty = deal(rng, rules)
    r = Round(new_round(rules, dealer=0, first_bidder=0, hands=hands, kitty=kitty))
    push_all(r, Bid(0, 3), Play(0, Cards.from_ranks([min(r.state.hands[0].ranks())])))  # type: ignore[union-attr]
    view = r.legal_plays
    listed = list(view)
    assert bool(view) == bool(listed) and view.count() == len(listed)
    for play in listed:
        assert play in view
    hand = r.state.hands[1]
    assert hand is not None
    assert all(play.cards.is_subset(hand) for play in listed)
    assert Cards.from_str("3333") not in view or hand[0] == 4


def test_unknown_hands_cannot_be_enumerated_but_can_be_checked() -> None:
    r = table()
    push_all(r, Bid(0, 3))
    assert cards("33") in r.legal_plays
    assert cards("JQKA2") not in r.legal_plays
    with pytest.raises(ValueError, match="not known"):
        list(r.legal_plays)


def test_new_round_rejects_a_bad_deal() -> None:
    with pytest.raises(ValueError, match="dealer must be a seat from 0 to 2"):
        new_round("3p", dealer=3, first_bidder=0)
    with pytest.raises(ValueError, match="3 hands of 17 cards"):
        new_round("3p", dealer=0, first_bidder=0, hands=[Cards()] * 3)
    with pytest.raises(ValueError, match="kitty has 8 cards"):
        new_round("4p", dealer=0, first_bidder=0, kitty=cards("333"))
