"""TableSession: the referee spine logs first, tells listeners second, resumes exactly."""

from __future__ import annotations

import logging
import random

import pytest
from log_helpers import play_messy

from table.rules import THREE_PLAYER, Bid, IllegalBidError, Pass, RulesError
from table.rules.simulate import deal
from table.session.entries import LogEntry, SessionError
from table.session.state import TableState
from table.session.store import SessionLog
from table.session.table import TableSession

NAMES = ["Ann", "Bo", "Cy"]


def test_accepted_actions_are_logged_with_their_events(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    entry = session.start_round(first_bidder=2)
    assert entry.data == {"round": 1, "dealer": 0, "first_bidder": 2}
    (accepted,) = session.submit(Bid(2, 2), "panel")
    assert accepted.kind == "action" and accepted.seq == 3
    assert accepted.data == {
        "action": {"type": "bid", "seat": 2, "amount": 2},
        "source": "panel",
        "events": [{"type": "bid", "seat": 2, "amount": 2}],
    }
    assert log.entries(session.session_id)[-1] == accepted
    assert session.state.seq == 3


def test_a_rejection_is_logged_and_the_same_error_raised(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    session.start_round(first_bidder=0)
    session.submit(Bid(0, 2), "panel")
    with pytest.raises(IllegalBidError) as raised:
        session.submit(Bid(1, 1), "panel")
    rejected = log.entries(session.session_id)[-1]
    assert rejected.data == {
        "action": {"type": "bid", "seat": 1, "amount": 1},
        "reason": str(raised.value),
        "error": "IllegalBidError",
        "source": "panel",
    }
    assert "higher than 2" in str(raised.value)
    assert session.state.snapshot()["highest_bid"] == 2


def test_actions_before_a_deal_or_after_the_end_are_rejected(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    with pytest.raises(RulesError, match="no round has started"):
        session.submit(Pass(0), "panel")
    session.end()
    with pytest.raises(RulesError, match="the session has ended"):
        session.submit(Pass(0), "panel")
    with pytest.raises(SessionError, match="has ended; start a new session"):
        session.start_round(first_bidder=0)
    kinds = [e.kind for e in log.entries(session.session_id)]
    assert kinds == ["session_start", "rejected", "session_end", "rejected"]


def test_listeners_hear_each_entry_once_it_is_on_disk(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    heard: list[tuple[LogEntry, LogEntry]] = []
    session.listeners.append(lambda e: heard.append((e, log.entries(e.session_id)[-1])))
    session.start_round(first_bidder=1)
    session.device("camera", "lost", "unplugged")
    assert [(said.seq, stored.seq) for said, stored in heard] == [(2, 2), (3, 3)]
    assert heard[1][0] == heard[1][1]


@pytest.mark.allow_error_log
def test_a_failing_listener_does_not_stop_the_referee(
    log: SessionLog, caplog: pytest.LogCaptureFixture
) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)

    def broken(entry: LogEntry) -> None:
        raise ConnectionError("broker gone")

    heard: list[int] = []
    session.listeners += [broken, lambda e: heard.append(e.seq)]
    with caplog.at_level(logging.ERROR):
        session.start_round(first_bidder=1)
    assert heard == [2]
    assert "a session listener failed on entry 2" in caplog.text


def test_the_dealer_passes_after_a_settled_round_not_after_a_redeal(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    rng = random.Random(4)
    session.start_round(1, *deal(rng, THREE_PLAYER))
    for seat in (1, 2, 0):
        session.submit(Pass(seat), "panel")
    assert session.state.snapshot()["phase"] == "redeal"
    assert session.start_round(1, *deal(rng, THREE_PLAYER)).data["dealer"] == 0
    play_messy(session, 1, rng)
    assert session.state.rounds[-1].outcome is not None
    assert session.start_round(0, *deal(rng, THREE_PLAYER)).data["dealer"] == 1


def test_a_bad_deal_is_refused_before_it_is_logged(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    with pytest.raises(SessionError, match="first bidder must be a seat from 0 to 2"):
        session.start_round(first_bidder=3)
    assert session.state.seq == 1 and len(log.entries(session.session_id)) == 1


@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_resume_rebuilds_the_same_state(log: SessionLog, variant: str) -> None:
    names = [*NAMES, "Di"][: 3 if variant == "3p" else 4]
    session = TableSession.start(log, "t1", variant, names)
    play_messy(session, 2, random.Random(variant))
    session.start_round(first_bidder=0)
    session.submit(Pass(0), "panel")
    resumed = TableSession.resume(log, session.session_id)
    assert resumed.state.snapshot() == session.state.snapshot()
    assert resumed.state.errors == []
    resumed.submit(Pass(1), "panel")
    assert resumed.state.snapshot()["seats"][1]["bid"] == "pass"


def test_a_second_writer_to_the_session_is_folded_in(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    other = TableSession.resume(log, session.session_id)
    other.device("broker", "lost", "")
    session.device("panel", "back", "")
    assert session.state.snapshot()["devices"]["broker"]["status"] == "lost"
    assert session.state.errors == []
    assert (
        session.state.snapshot()
        == TableState.from_entries(log.entries(session.session_id)).snapshot()
    )


def test_end_logs_totals_and_leaders(log: SessionLog) -> None:
    session = TableSession.start(log, "t1", "3p", NAMES)
    play_messy(session, 1, random.Random(8))
    entry = session.end()
    ledger = session.state.ledger
    assert ledger is not None
    assert entry.data == {"totals": ledger.totals, "leaders": ledger.leaders(), "rounds": 1}
    assert session.state.snapshot()["phase"] == "ended"
    assert log.latest_open_session("t1") is None
    with pytest.raises(SessionError, match="has ended"):
        session.end()
