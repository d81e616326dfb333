"""The round state machine: auction, tricks and settlement.

:func:`apply` is pure: it takes a :class:`RoundState` and an action and returns
the next state with the events the action produced, or raises a typed
:class:`~table.rules.errors.RulesError` and leaves everything as it was.
:class:`Round` keeps a stack of states on top of it, so that ``push`` and
``pop`` give the referee undo, and keeps the actions apart as the record.

The referee at a real table does not see the hands: a state may hold ``None``
for a hand and then checks plays against the seat's card count and against the
cards the decks hold, instead of against the hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from table.rules.actions import (
    Action,
    AuctionPassed,
    Bid,
    BidMade,
    Event,
    KittyShown,
    LandlordChosen,
    Pass,
    Play,
    Played,
    PlayPassed,
    Redeal,
    RoundEnded,
    ShowKitty,
    TrickWon,
)
from table.rules.cards import Cards, rank_name
from table.rules.combos import (
    Combination,
    Kind,
    beats,
    classify,
    explain_invalid,
    explain_not_beating,
)
from table.rules.errors import (
    IllegalActionError,
    IllegalBidError,
    IllegalPlayError,
    ImpossibleCardsError,
    InvalidPlayError,
    RulesError,
)
from table.rules.moves import legal_plays
from table.rules.scoring import HouseRules, doubles_stake, settle
from table.rules.variant import Variant, get_variant

MAX_BID = 3
NO_CARDS = Cards()


class Phase(StrEnum):
    """Where a round is."""

    AUCTION = "auction"
    PLAY = "play"
    FINISHED = "finished"
    REDEAL = "redeal"


@dataclass(frozen=True)
class RoundState:
    """Everything the referee knows about a round at one moment.

    ``passes`` counts passes in a row (in the auction or in the current trick);
    ``trick`` is the play to beat and ``trick_seat`` who played it (both ``None``
    when the seat on turn leads). ``seen`` holds every card played or shown, to
    catch a misread that makes more copies of a card than the decks hold.
    """

    variant: Variant
    dealer: int
    first_bidder: int
    house_rules: HouseRules
    phase: Phase
    turn: int
    hands: tuple[Cards | None, ...]
    cards_left: tuple[int, ...]
    kitty: Cards | None = None
    highest_bid: int = 0
    bidder: int | None = None
    passes: int = 0
    landlord: int | None = None
    trick: Combination | None = None
    trick_seat: int | None = None
    seen: Cards = NO_CARDS
    bombs: int = 0
    rockets: int = 0
    doublings: int = 0
    plays_made: tuple[int, ...] = ()
    winner: int | None = None

    @property
    def players(self) -> int:
        """Counts the seats."""
        return self.variant.players

    @property
    def is_over(self) -> bool:
        """Tells whether the round has ended, settled or to be redealt."""
        return self.phase is Phase.FINISHED or self.phase is Phase.REDEAL

    @property
    def multiplier(self) -> int:
        """Gets the current multiplier from bombs and rockets, before spring and cap."""
        return int(2**self.doublings)


def new_round(
    variant: str | int | Variant,
    *,
    dealer: int,
    first_bidder: int,
    hands: Sequence[Cards] | None = None,
    kitty: Cards | None = None,
    house_rules: HouseRules | None = None,
) -> RoundState:
    """Starts a round at the auction, with the hands if the referee knows them.

    :raises: :exc:`ValueError` if seats, hands or kitty do not fit the variant.
    """
    variant = get_variant(variant)
    n = variant.players
    for name, seat in (("dealer", dealer), ("first bidder", first_bidder)):
        if not 0 <= seat < n:
            raise ValueError(f"the {name} must be a seat from 0 to {n - 1}, not {seat}")
    known: tuple[Cards | None, ...] = (None,) * n
    if hands is not None:
        if len(hands) != n or any(hand.size != variant.hand_size for hand in hands):
            raise ValueError(f"a {variant} deal is {n} hands of {variant.hand_size} cards")
        known = tuple(hands)
        total = sum(hands, Cards()) + (kitty or Cards())
        if not total.is_subset(variant.deck):
            raise ValueError(f"the deal holds cards the {variant} deck does not have: {total}")
    if kitty is not None and kitty.size != variant.kitty_size:
        raise ValueError(f"the {variant} kitty has {variant.kitty_size} cards, not {kitty.size}")
    return RoundState(
        variant=variant,
        dealer=dealer,
        first_bidder=first_bidder,
        house_rules=house_rules or HouseRules(),
        phase=Phase.AUCTION,
        turn=first_bidder,
        hands=known,
        cards_left=(variant.hand_size,) * n,
        kitty=kitty,
        plays_made=(0,) * n,
    )


def _next(state: RoundState, seat: int) -> int:
    return (seat + 1) % state.players


def _check_turn(state: RoundState, seat: int) -> None:
    if not 0 <= seat < state.players:
        raise IllegalActionError(f"there is no seat {seat} at a {state.players}-player table")
    if seat != state.turn:
        raise IllegalActionError(f"seat {seat} is not on turn; seat {state.turn} is")


def _bid(state: RoundState, action: Bid) -> tuple[RoundState, list[Event]]:
    if state.phase is not Phase.AUCTION:
        raise IllegalBidError("the auction is over; play cards or pass")
    _check_turn(state, action.seat)
    if not 1 <= action.amount <= MAX_BID:
        raise IllegalBidError(f"a bid is 1, 2 or 3, not {action.amount}")
    if action.amount <= state.highest_bid:
        raise IllegalBidError(
            f"a bid must be higher than {state.highest_bid}, the highest bid so far"
        )
    state = replace(
        state,
        highest_bid=action.amount,
        bidder=action.seat,
        passes=0,
        turn=_next(state, action.seat),
    )
    events: list[Event] = [BidMade(action.seat, action.amount)]
    if action.amount == MAX_BID:
        return _choose_landlord(state, events)
    return state, events


def _choose_landlord(state: RoundState, events: list[Event]) -> tuple[RoundState, list[Event]]:
    landlord = state.bidder
    assert landlord is not None
    hands = list(state.hands)
    held = hands[landlord]
    if held is not None and state.kitty is not None:
        hands[landlord] = held + state.kitty
    left = list(state.cards_left)
    left[landlord] += state.variant.kitty_size
    state = replace(
        state,
        phase=Phase.PLAY,
        landlord=landlord,
        turn=landlord,
        passes=0,
        hands=tuple(hands),
        cards_left=tuple(left),
    )
    events.append(LandlordChosen(landlord, state.highest_bid, state.kitty))
    return state, events


def _pass(state: RoundState, action: Pass) -> tuple[RoundState, list[Event]]:
    _check_turn(state, action.seat)
    passes = state.passes + 1
    if state.phase is Phase.AUCTION:
        events: list[Event] = [AuctionPassed(action.seat)]
        state = replace(state, passes=passes, turn=_next(state, action.seat))
        if state.bidder is None and passes == state.players:
            events.append(Redeal())
            return replace(state, phase=Phase.REDEAL), events
        if state.bidder is not None and passes == state.variant.passes_to_close:
            return _choose_landlord(state, events)
        return state, events
    if state.trick is None:
        raise IllegalPlayError(f"seat {action.seat} leads this trick and must play cards")
    events = [PlayPassed(action.seat)]
    if passes == state.variant.passes_to_close:
        assert state.trick_seat is not None
        events.append(TrickWon(state.trick_seat))
        return replace(state, passes=0, trick=None, turn=state.trick_seat, trick_seat=None), events
    return replace(state, passes=passes, turn=_next(state, action.seat)), events


def _check_cards(state: RoundState, seat: int, cards: Cards) -> None:
    """Checks that a seat can hold these cards; raises with the reason if not."""
    left = state.cards_left[seat]
    if cards.size > left:
        plural = "s" if left != 1 else ""
        raise IllegalPlayError(
            f"seat {seat} has {left} card{plural} left and cannot play {cards.size}"
        )
    hand = state.hands[seat]
    if hand is not None and not cards.is_subset(hand):
        raise IllegalPlayError(f"seat {seat} does not hold {cards}")
    deck = state.variant.deck
    seen = state.seen
    for rank, count in enumerate(cards):
        if count and seen[rank] + count > deck[rank]:
            raise ImpossibleCardsError(
                f"{cards} cannot be right: {seen[rank]} {rank_name(rank, plural=seen[rank] != 1)}"
                f" already played or shown and the decks hold {deck[rank]}; check the cards"
            )


def _play(state: RoundState, action: Play) -> tuple[RoundState, list[Event]]:
    if state.phase is Phase.AUCTION:
        raise IllegalPlayError("the auction is still on; bid or pass")
    _check_turn(state, action.seat)
    seat, cards = action.seat, action.cards
    combination = classify(cards, state.variant)
    if combination is None:
        raise InvalidPlayError(explain_invalid(cards, state.variant))
    if state.trick is not None and not beats(combination, state.trick):
        raise IllegalPlayError(explain_not_beating(combination, state.trick))
    _check_cards(state, seat, cards)

    hands = list(state.hands)
    held = hands[seat]
    if held is not None:
        hands[seat] = held - cards
    left = list(state.cards_left)
    left[seat] -= cards.size
    made = list(state.plays_made)
    made[seat] += 1
    state = replace(
        state,
        hands=tuple(hands),
        cards_left=tuple(left),
        plays_made=tuple(made),
        seen=state.seen + cards,
        trick=combination,
        trick_seat=seat,
        passes=0,
        turn=_next(state, seat),
        bombs=state.bombs + (combination.kind is Kind.BOMB),
        rockets=state.rockets + (combination.kind is Kind.ROCKET),
        doublings=state.doublings + doubles_stake(combination, state.variant),
    )
    events: list[Event] = [Played(seat, combination, left[seat])]
    if left[seat] == 0:
        assert state.landlord is not None
        outcome = settle(
            variant=state.variant,
            landlord=state.landlord,
            winner=seat,
            bid=state.highest_bid,
            bombs=state.bombs,
            rockets=state.rockets,
            doublings=state.doublings,
            plays_made=state.plays_made,
            house_rules=state.house_rules,
        )
        state = replace(state, phase=Phase.FINISHED, winner=seat, trick=None, trick_seat=None)
        events.append(RoundEnded(outcome))
    return state, events


def _show_kitty(state: RoundState, action: ShowKitty) -> tuple[RoundState, list[Event]]:
    variant = state.variant
    if state.phase is not Phase.PLAY or any(state.plays_made):
        raise IllegalPlayError("the kitty is shown after the auction, before the first play")
    if action.cards.size != variant.kitty_size:
        raise IllegalPlayError(
            f"the kitty has {variant.kitty_size} cards; {action.cards.size} were shown"
        )
    if state.kitty is not None and action.cards != state.kitty:
        raise IllegalPlayError(f"the kitty was {state.kitty}, not {action.cards}")
    if not action.cards.is_subset(variant.deck):
        raise ImpossibleCardsError(f"the {variant} deck cannot make the kitty {action.cards}")
    landlord = state.landlord
    assert landlord is not None
    hands = list(state.hands)
    held = hands[landlord]
    if state.kitty is None and held is not None:
        hands[landlord] = held + action.cards
    state = replace(state, kitty=action.cards, hands=tuple(hands))
    return state, [KittyShown(action.cards)]


def apply(state: RoundState, action: Action) -> tuple[RoundState, list[Event]]:
    """Applies one action, returning the new state and the events it produced.

    :raises: :exc:`~table.rules.errors.RulesError` with the reason; the given
        state is never changed (it is immutable).
    """
    if state.phase is Phase.FINISHED:
        raise IllegalActionError("the round is over; start the next round")
    if state.phase is Phase.REDEAL:
        raise IllegalActionError("every seat passed; the cards must be dealt again")
    if isinstance(action, Bid):
        return _bid(state, action)
    if isinstance(action, Pass):
        return _pass(state, action)
    if isinstance(action, Play):
        return _play(state, action)
    return _show_kitty(state, action)


class LegalPlays:
    """A lazy view of the plays the seat on turn may make.

    Iterating generates them (the hand must be known); ``in`` checks one play
    against the rules without generating the rest.
    """

    def __init__(self, state: RoundState) -> None:
        self._state = state

    def __iter__(self) -> Iterator[Combination]:
        state = self._state
        if state.phase is not Phase.PLAY:
            return iter(())
        hand = state.hands[state.turn]
        if hand is None:
            raise ValueError(f"the hand of seat {state.turn} is not known; only ``in`` works")
        return iter(legal_plays(hand, state.trick, state.variant))

    def __contains__(self, cards: object) -> bool:
        if isinstance(cards, Combination):
            cards = cards.cards
        if not isinstance(cards, Cards):
            return False
        try:
            _play(self._state, Play(self._state.turn, cards))
        except RulesError:
            return False
        return True

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def count(self) -> int:
        """Counts the legal plays."""
        return sum(1 for _ in self)


class Round:
    """A round with undo: a stack of states, and the actions as its record.

    >>> from table.rules.cards import Cards
    >>> r = Round(new_round("3p", dealer=0, first_bidder=1))
    >>> [type(e).__name__ for e in r.push(Bid(1, 3))]
    ['BidMade', 'LandlordChosen']
    >>> r.state.landlord, r.state.cards_left
    (1, (17, 20, 17))
    >>> r.pop()
    Bid(seat=1, amount=3)
    >>> r.state.phase.value
    'auction'
    """

    def __init__(self, state: RoundState) -> None:
        self.state = state
        self.actions: list[Action] = []
        self._stack: list[RoundState] = []

    def push(self, action: Action) -> list[Event]:
        """Applies an action and records it.

        :raises: :exc:`~table.rules.errors.RulesError` if the rules reject it;
            nothing changes then.
        """
        state, events = apply(self.state, action)
        self._stack.append(self.state)
        self.actions.append(action)
        self.state = state
        return events

    def pop(self) -> Action:
        """Undoes the last action and returns it.

        :raises: :exc:`IndexError` if nothing was played yet.
        """
        if not self.actions:
            raise IndexError("nothing to undo in this round")
        self.state = self._stack.pop()
        return self.actions.pop()

    @property
    def legal_plays(self) -> LegalPlays:
        """Gets a lazy view of the plays the seat on turn may make now."""
        return LegalPlays(self.state)

    def legal_bids(self) -> list[int]:
        """Lists the bids the seat on turn may make now (a pass is always possible)."""
        if self.state.phase is not Phase.AUCTION:
            return []
        return list(range(self.state.highest_bid + 1, MAX_BID + 1))

    @classmethod
    def replay(cls, start: RoundState, actions: Sequence[Action]) -> Round:
        """Rebuilds a round by applying recorded actions to its starting state.

        :raises: :exc:`~table.rules.errors.RulesError` at the first action the
            rules reject.
        """
        played = cls(start)
        for action in actions:
            played.push(action)
        return played
