"""Drives a logged session with random play, rejections, undos and corrections."""

from __future__ import annotations

import random

from table.rules import Cards, Play, Round, RulesError, get_variant
from table.rules.simulate import deal, random_action
from table.session.table import TableSession


def play_messy(session: TableSession, rounds: int, rng: random.Random) -> None:
    """Plays ``rounds`` settled rounds the way a real table goes, mistakes included.

    Now and then a seat plays out of turn (rejected), the operator undoes the
    last action, corrects a misread play to another legal one, or a device
    drops out and comes back.
    """
    state = session.state
    variant = get_variant(session.info.variant)
    assert state.ledger is not None
    while state.ledger.rounds < rounds:
        played = state.round
        if played is None or played.state.is_over:
            if played is not None and played.state.winner is not None and rng.random() < 0.1:
                session.undo("operator", "the last card was misread")
                continue
            hands, kitty = deal(rng, variant)
            session.start_round(rng.randrange(variant.players), hands, kitty)
            continue
        roll = rng.random()
        if roll < 0.05:
            wrong = (played.state.turn + 1) % variant.players
            hand = played.state.hands[wrong]
            assert hand is not None
            try:
                session.submit(Play(wrong, Cards.from_ranks(hand.ranks()[:1])), "camera")
            except RulesError:
                pass
            else:
                raise AssertionError("a play out of turn was accepted")
        elif roll < 0.08 and state.current is not None and state.current.steps:
            session.undo("operator", "wrong button")
        elif roll < 0.10:
            status = rng.choice(["lost", "back"])
            session.device(rng.choice(["panel", "camera", "broker"]), status, "test")
        else:
            before = Round(played.state)
            action = random_action(played, rng)
            session.submit(action, "sim")
            if isinstance(action, Play) and rng.random() < 0.1:
                others = [p.cards for p in before.legal_plays if p.cards != action.cards]
                if others:
                    session.correct(action.seat, rng.choice(others), "operator", "misread")
