"""The fold: incremental equals full, undo and correction, hidden cards stay hidden."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from log_helpers import play_messy

from table.rules import Bid, Cards, Pass, Play, RulesError, ShowKitty, get_variant
from table.rules.simulate import deal, random_action
from table.session.entries import LogEntry, SessionError
from table.session.state import TableState
from table.session.store import SessionLog
from table.session.table import TableSession

AT = datetime(2026, 11, 30, 10, 20, tzinfo=UTC)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32), variant=st.sampled_from(["3p", "4p"]))
def test_incremental_fold_equals_full_fold(log: SessionLog, seed: int, variant: str) -> None:
    rng = random.Random(seed)
    players = ["Ann", "Bo", "Cy", "Di"][: 3 if variant == "3p" else 4]
    session = TableSession.start(log, f"t-{seed}", variant, players)
    play_messy(session, 2, rng)
    entries = log.entries(session.session_id)
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    incremental = TableState()
    cuts = set(rng.sample(range(1, len(entries) + 1), k=min(8, len(entries)))) | {len(entries)}
    for count, entry in enumerate(entries, start=1):
        incremental.apply(entry)
        if count in cuts:
            assert incremental.snapshot() == TableState.from_entries(entries[:count]).snapshot()
    assert incremental.snapshot() == session.state.snapshot()
    assert incremental.errors == []
    assert incremental.ledger is not None and incremental.ledger.is_balanced
    assert incremental.ledger.rounds == 2


def _dealt(session: TableSession, seed: int = 3) -> tuple[list[Cards], Cards]:
    """Deals a round with known hands, as the demo and the simulation do."""
    hands, kitty = deal(random.Random(seed), get_variant(session.info.variant))
    session.start_round(first_bidder=0, hands=hands, kitty=kitty)
    return hands, kitty


def test_snapshot_never_shows_hands_or_an_unshown_kitty(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    hands, kitty = _dealt(session)
    session.submit(Bid(0, 3), "panel")
    snapshot = session.state.snapshot()
    text = json.dumps(snapshot)
    assert snapshot["kitty"] is None
    assert not any(str(hand) in text for hand in hands)
    assert "hands" not in text
    landlord_event = log.entries(session.session_id)[-1].data["events"][-1]
    assert landlord_event == {"type": "landlord", "seat": 0, "bid": 3, "kitty": None}
    start = log.entries(session.session_id)[1]
    assert start.data["hands"] == [str(hand) for hand in hands]
    assert "hands" not in start.public().data and "kitty" not in start.public().data
    session.submit(ShowKitty(kitty), "camera")
    assert session.state.snapshot()["kitty"] == str(kitty)
    assert session.state.snapshot()["seats"][0]["cards_left"] == 20


def test_undo_restores_the_snapshot_before_the_action(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    _dealt(session)
    session.submit(Bid(0, 1), "panel")
    before = session.state.snapshot()
    session.submit(Bid(1, 2), "panel")
    assert session.state.snapshot()["highest_bid"] == 2
    entry = session.undo("Ann", "pressed the wrong button")
    assert entry.data["undone_seq"] == entry.seq - 1
    after = session.state.snapshot()
    assert {**after, "seq": 0} == {**before, "seq": 0}
    session.undo("Ann", "the first bid too")
    with pytest.raises(SessionError, match="no action to undo"):
        session.undo("Ann", "nothing left")


def test_undoing_the_winning_play_unsettles_the_round(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    rng = random.Random(11)
    play_messy_until_settled(session, rng)
    state = session.state
    assert state.ledger is not None
    settled = (list(state.ledger.totals), state.ledger.dealer, state.ledger.rounds)
    assert settled[2] == 1
    session.undo("operator", "misread")
    assert state.ledger.rounds == 0 and state.ledger.totals == [0, 0, 0]
    assert state.ledger.dealer == 0
    assert state.snapshot()["phase"] == "play" and state.snapshot()["history"] == []
    with pytest.raises(SessionError, match="still on"):
        session.start_round(first_bidder=1)
    assert TableState.from_entries(log.entries(session.session_id)).snapshot() == (state.snapshot())


def play_messy_until_settled(session: TableSession, rng: random.Random) -> None:
    """Plays random legal actions until one round is settled."""
    state = session.state
    assert state.ledger is not None
    while state.ledger.rounds < 1:
        played = state.round
        if played is None or played.state.is_over:
            _dealt(session, rng.randrange(1000))
        else:
            session.submit(random_action(played, rng), "sim")


def test_correction_replaces_the_last_play(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    hands, _ = _dealt(session)
    session.submit(Bid(0, 3), "panel")
    low = Cards.from_ranks(hands[0].ranks()[:1])
    high = Cards.from_ranks(hands[0].ranks()[-1:])
    session.submit(Play(0, low), "camera")
    entry = session.correct(0, high, "Ann", "the camera read the wrong card")
    assert entry.kind == "correction" and entry.data["replaces_seq"] == entry.seq - 1
    trick = session.state.snapshot()["trick"]
    assert trick is not None and trick["cards"] == str(high) and trick["seat"] == 0
    assert session.state.current is not None
    assert [step.source for step in session.state.current.steps][-1] == "correction"
    with pytest.raises(SessionError, match="not seat 1"):
        session.correct(1, high, "Bo", "no")
    with pytest.raises(RulesError):
        session.correct(0, "BR" if str(high) != "BR" else "33", "Ann", "not held")
    rejected = log.entries(session.session_id)[-1]
    assert rejected.kind == "rejected" and rejected.data["source"] == "correction"
    assert session.state.snapshot()["trick"] == trick
    assert TableState.from_entries(log.entries(session.session_id)).snapshot() == (
        session.state.snapshot()
    )


def test_a_rejection_is_shown_until_the_next_accepted_action(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
    _dealt(session)
    with pytest.raises(RulesError, match="not on turn"):
        session.submit(Pass(2), "panel")
    rejection = session.state.snapshot()["last_rejection"]
    assert rejection == {
        "seat": 2,
        "action": {"type": "pass", "seat": 2},
        "reason": "seat 2 is not on turn; seat 0 is",
    }
    session.submit(Pass(0), "panel")
    assert session.state.snapshot()["last_rejection"] is None


def _entry(seq: int, kind: str, data: Mapping[str, object]) -> LogEntry:
    return LogEntry("s1", seq, AT, kind, dict(data))


START = {"table": "t1", "variant": "3p", "players": ["A", "B", "C"], "house_rules": {}}


def _bid(seat: int, amount: int) -> dict[str, object]:
    bid = {"type": "bid", "seat": seat, "amount": amount}
    return {"action": bid, "source": "panel", "events": [bid]}


def test_fold_keeps_bad_entries_in_errors_and_goes_on() -> None:
    entries = [
        _entry(1, "session_start", START),
        _entry(2, "round_start", {"round": 1, "dealer": 0, "first_bidder": 1}),
        _entry(3, "action", _bid(0, 1)),
        _entry(5, "action", _bid(1, 1)),
        _entry(5, "device", {"device": "camera", "status": "lost"}),
        _entry(6, "undo", {"by": "x", "why": "y", "undone_seq": 3}),
        _entry(7, "action", {"action": {"type": "pass", "seat": 2}}),
    ]
    state = TableState.from_entries(entries)
    assert state.errors == [
        (5, "expected entry 4, got 5"),
        (5, "expected entry 6, got 5"),
        (6, "undo: entry 3 is not the last action of the round"),
        (7, "action: 'events'"),
    ]
    assert state.snapshot()["highest_bid"] == 1
    assert state.round_errors == [(3, "the rules refuse it: seat 0 is not on turn; seat 1 is")]
    assert state.snapshot()["devices"]["camera"]["status"] == "unknown"
    assert state.seq == 7


def test_a_log_must_begin_with_its_session() -> None:
    state = TableState.from_entries([_entry(1, "device", {"device": "panel", "status": "x"})])
    assert state.errors == [(1, "the log does not begin with session_start")]
    assert state.snapshot() == {"session": None, "seq": 1, "phase": "waiting"}


def test_devices_and_alerts_show_in_the_snapshot(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "4p", ["A", "B", "C", "D"])
    session.device("camera", "lost", "no frames for 2 s")
    session.alert("camera", "the camera is not seeing the table")
    snapshot = session.state.snapshot()
    assert snapshot["devices"]["camera"] == {"status": "lost", "detail": "no frames for 2 s"}
    assert snapshot["devices"]["panel"]["status"] == "unknown"
    assert snapshot["last_alert"]["message"] == "the camera is not seeing the table"
    assert snapshot["phase"] == "waiting" and snapshot["variant"] == "4p"
