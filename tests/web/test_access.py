"""The accessor: fan-out to screens, snapshots that follow the log, console commands."""

from __future__ import annotations

import threading

import pytest

from table.rules import Bid, Pass
from table.session import SessionLog, TableSession
from web.access import (
    CommandError,
    Hub,
    LocalAccess,
    UnknownTableError,
    Update,
    check_players,
)


def _update(table: str, n: int) -> Update:
    return Update(table, f"s/{n}/0", {"seq": n})


def test_hub_delivers_to_matching_subscriptions_only() -> None:
    hub = Hub(queue_size=4)
    everything = hub.subscribe()
    one = hub.subscribe("t1")
    other = hub.subscribe("t2")
    hub.publish(_update("t1", 1))
    assert everything.get(0.1) == _update("t1", 1)
    assert one.get(0.1) == _update("t1", 1)
    assert other.get(0.01) is None
    assert not other.is_closed


def test_hub_drops_a_slow_screen_without_waiting() -> None:
    hub = Hub(queue_size=2)
    slow = hub.subscribe("t1")
    fast = hub.subscribe("t1")
    for n in range(1, 6):
        hub.publish(_update("t1", n))
        assert fast.get(0.1) == _update("t1", n)
    assert hub.dropped == 1
    assert hub.count == 1
    assert slow.is_closed
    assert slow.get(0.01) is None


def test_hub_close_ends_every_reader() -> None:
    hub = Hub()
    subscription = hub.subscribe()
    got: list[Update | None] = []
    reader = threading.Thread(target=lambda: got.append(subscription.get(5.0)))
    reader.start()
    hub.close()
    reader.join(2.0)
    assert got == [None]
    assert subscription.is_closed
    assert hub.count == 0


def test_snapshot_follows_the_session_and_publishes(
    access: LocalAccess, table_session: TableSession
) -> None:
    with access.hub.subscribe("t1") as subscription:
        table_session.start_round(1)
        update = subscription.get(1.0)
    assert update is not None
    assert update.snapshot["phase"] == "auction"
    assert update.snapshot["turn"] == 1
    assert update.key == access.key("t1") == f"{table_session.session_id}/2/0"
    assert access.snapshot("t1")["table"] == "t1"
    assert access.snapshot("t1")["online"] is True


def test_unknown_table_is_one_clear_error(access: LocalAccess) -> None:
    with pytest.raises(UnknownTableError, match="no table 'nope'"):
        access.snapshot("nope")


def test_commands_run_through_the_session_and_log_who_and_why(
    access: LocalAccess, table_session: TableSession, log: SessionLog
) -> None:
    assert "round 1 dealt" in access.deal("t1", 0, "Dee")
    table_session.submit(Bid(0, 1), "panel")
    access.undo("t1", "Dee", "wrong button")
    undo = log.entries(table_session.session_id)[-1]
    assert undo.kind == "undo"
    assert (undo.data["by"], undo.data["why"]) == ("Dee", "wrong button")
    assert access.snapshot("t1")["turn"] == 0


def test_correct_refusal_is_a_command_error(
    access: LocalAccess, table_session: TableSession
) -> None:
    access.deal("t1", 0, "Dee")
    table_session.submit(Pass(0), "panel")
    with pytest.raises(CommandError, match="the last action is not a play"):
        access.correct("t1", 0, "33", "Dee", "misread")


def test_start_is_refused_while_a_session_is_on(access: LocalAccess) -> None:
    with pytest.raises(CommandError, match="still on at table t1; end it first"):
        access.start_session("t1", ["A", "B", "C"], "Dee")


def test_end_then_start_a_four_player_session(
    access: LocalAccess, table_session: TableSession
) -> None:
    started: list[TableSession] = []
    access.on_session.append(started.append)
    access.end_session("t1", "Dee")
    assert access.snapshot("t1")["phase"] == "ended"
    message = access.start_session("t1", ["A", "B", "C", "D"], "Dee")
    assert message.startswith("session ")
    assert len(started) == 1
    assert started[0].info.variant == "4p"
    assert access.session("t1") is started[0]
    assert table_session.listeners == []
    assert [seat["name"] for seat in access.snapshot("t1")["seats"]] == ["A", "B", "C", "D"]


def test_acknowledge_marks_the_last_alert(access: LocalAccess, table_session: TableSession) -> None:
    entry = table_session.alert("camera", "lens covered")
    before = access.key("t1")
    access.acknowledge("t1", entry.seq, "Dee")
    assert access.snapshot("t1")["alert_ack"] == {"seq": entry.seq, "by": "Dee"}
    assert access.key("t1") != before
    table_session.alert("panel", "battery low")
    assert access.snapshot("t1")["alert_ack"] is None
    with pytest.raises(CommandError, match="no longer the table's last alert"):
        access.acknowledge("t1", entry.seq, "Dee")


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["A", "B"], "3 or 4 player names, not 2"),
        (["A", "", "C"], "every seat needs a name"),
        (["A", "b", "B"], "same name"),
        (["A", "B", "C" * 25], "at most 24"),
    ],
)
def test_check_players_refuses_bad_names(names: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        check_players(names)


def test_resume_and_follow_a_log_written_elsewhere(log: SessionLog) -> None:
    access = LocalAccess.resume(log, ["t9"])
    try:
        assert access.snapshot("t9")["phase"] == "waiting"
        writer = TableSession.start(log, "t9", "3p", ["A", "B", "C"])
        access.catch_up("t9")
        assert access.snapshot("t9")["session"] == writer.session_id
        writer.start_round(2)
        with access.hub.subscribe("t9") as subscription:
            access.follow(interval=0.02)
            update = subscription.get(5.0)
        assert update is not None
        assert update.snapshot["turn"] == 2
        with pytest.raises(CommandError, match="only follows the log"):
            access.undo("t9", "Dee", "x")
    finally:
        access.close()
