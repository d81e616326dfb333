"""The store on SQLite and PostgreSQL: sequence numbers, lookups, durability, bad input."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

from table.errors import UserError
from table.session import store
from table.session.store import SCHEMA_VERSION, SessionLog, resolve_url

PLAYERS = ["Ann", "Bo", "Cy"]


def test_append_numbers_entries_per_session(any_log: SessionLog) -> None:
    first = any_log.start_session("t1", "3p", PLAYERS, {"spring": True})
    second = any_log.start_session("t2", "3p", PLAYERS)
    for n in range(3):
        any_log.append(first.id, "alert", {"kind": "test", "message": str(n)})
    entry = any_log.append(second.id, "device", {"device": "panel", "status": "lost"})
    assert entry.seq == 2 and entry.at.tzinfo is not None
    entries = any_log.entries(first.id)
    assert [e.seq for e in entries] == [1, 2, 3, 4]
    assert entries[0].kind == "session_start"
    assert entries[0].data == {
        "table": "t1",
        "variant": "3p",
        "players": PLAYERS,
        "house_rules": {"spring": True},
    }
    assert [e.data["message"] for e in any_log.entries(first.id, after=2)] == ["1", "2"]
    assert any_log.entries(first.id, after=4) == []
    assert entries[1].at >= entries[0].at


def test_sessions_are_listed_found_and_ended(any_log: SessionLog) -> None:
    a = any_log.start_session("t1", "3p", PLAYERS)
    b = any_log.start_session("t1", "4p", [*PLAYERS, "Di"])
    c = any_log.start_session("t2", "3p", PLAYERS)
    assert [s.id for s in any_log.sessions()] == [a.id, b.id, c.id]
    assert [s.id for s in any_log.sessions("t1")] == [a.id, b.id]
    assert any_log.find_session(b.id) == b
    assert any_log.find_session(b.id[:-1]) == b
    assert any_log.latest_open_session("t1") == b
    any_log.append(b.id, "session_end", {"totals": [0, 0, 0, 0], "leaders": []})
    ended = any_log.find_session(b.id)
    assert not ended.is_open and ended.last_seq == 2
    assert any_log.latest_open_session("t1") == a
    assert any_log.latest_open_session("t9") is None


def test_lookups_of_unknown_sessions_say_what_to_do(any_log: SessionLog) -> None:
    any_log.start_session("t1", "3p", PLAYERS)
    any_log.start_session("t1", "3p", PLAYERS)
    with pytest.raises(UserError, match=r"no session 'nope' in .*`ddz-table sessions` lists"):
        any_log.find_session("nope")
    with pytest.raises(UserError, match="matches 2 sessions"):
        any_log.find_session("2")
    with pytest.raises(UserError, match="no session 'x_%'"):
        any_log.entries("x_%")
    with pytest.raises(UserError, match="no session"):
        any_log.append("nope", "alert", {"kind": "x", "message": "y"})
    with pytest.raises(UserError, match="unknown log entry kind"):
        any_log.append(any_log.sessions()[0].id, "chat", {})
    with pytest.raises(UserError, match="needs 3 player names"):
        any_log.start_session("t1", "3p", ["solo"])
    with pytest.raises(UserError, match="3 or 4 players"):
        any_log.start_session("t1", "5p", PLAYERS)


WRITER = textwrap.dedent(
    """
    import sys
    from table.session.store import SessionLog
    url, shared, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with SessionLog.open(url) as log:
        own = log.start_session("own", "3p", ["a", "b", "c"])
        for n in range(count):
            log.append(shared, "alert", {"kind": "load", "message": str(n)})
            log.append(own.id, "alert", {"kind": "load", "message": str(n)})
        print(own.id)
    """
)


def _writers(url: str, shared: str, processes: int, count: int) -> list[str]:
    """Runs writer processes at once and returns the ids of their own sessions."""
    running = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, url, shared, str(count)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    ids = []
    for process in running:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        ids.append(out.strip())
    return ids


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_processes_appending_at_once_lose_nothing(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "postgres_url")
    with SessionLog.open(url) as log:
        shared = log.start_session("shared", "3p", PLAYERS)
        own = _writers(url, shared.id, processes=4, count=40)
        seqs = [e.seq for e in log.entries(shared.id)]
        assert seqs == list(range(1, 4 * 40 + 2))
        for session_id in own:
            assert [e.seq for e in log.entries(session_id)] == list(range(1, 42))
        assert log.find_session(shared.id).last_seq == 161


def test_sqlite_log_is_in_wal_mode_with_full_sync(log: SessionLog, tmp_path: Path) -> None:
    log.start_session("t1", "3p", PLAYERS)
    with sqlite3.connect(tmp_path / "log.sqlite3") as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    raw.close()
    with log._engine.connect() as conn:  # the setting is per connection: ask the log's own
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_default_log_lives_in_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with SessionLog.open() as log:
        log.start_session("t1", "3p", PLAYERS)
    assert (tmp_path / "xdg" / "ddz-table" / "log.sqlite3").is_file()
    monkeypatch.setenv("DDZ_TABLE_DB", str(tmp_path / "other.sqlite3"))
    assert resolve_url(None) == f"sqlite:///{tmp_path / 'other.sqlite3'}"


def test_a_missing_file_is_not_created_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "none.sqlite3"
    with pytest.raises(UserError, match=r"there is no log file .*none.sqlite3; play a session"):
        SessionLog.open(str(path), create=False)
    assert not path.exists()


def test_a_corrupt_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    path.write_bytes(b"this is not a database\n" * 100)
    with pytest.raises(UserError, match="is damaged or is not a ddz-table log"):
        SessionLog.open(str(path))


def test_another_sqlite_database_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE notes (text)")
    raw.close()
    with pytest.raises(UserError, match="holds no ddz-table log"):
        SessionLog.open(str(path), create=False)


def test_a_log_of_another_schema_version_is_refused(sqlite_url: str) -> None:
    SessionLog.open(sqlite_url).close()
    engine = sa.create_engine(sqlite_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ddz_meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    with pytest.raises(
        UserError, match=f"version 99, this ddz-table reads version {SCHEMA_VERSION}"
    ):
        SessionLog.open(sqlite_url)


def test_a_log_being_created_by_another_process_is_waited_for(sqlite_url: str) -> None:
    """Tables without their version row yet: the other process is still creating the log."""
    SessionLog.open(sqlite_url).close()
    engine = sa.create_engine(sqlite_url)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM ddz_meta"))

    def finish_creating() -> None:
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO ddz_meta VALUES ('schema_version', :v)"),
                {"v": str(SCHEMA_VERSION)},
            )

    late = threading.Timer(0.3, finish_creating)
    late.start()
    try:
        SessionLog.open(sqlite_url).close()
    finally:
        late.join()
        engine.dispose()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://x@localhost/db", "SQLite or PostgreSQL, not 'mysql'"),
        ("postgresql+nodriver://x@localhost/db", "cannot use the database URL"),
        ("sqlite://", "needs a SQLite file"),
    ],
)
def test_bad_urls_say_what_to_use(url: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        SessionLog.open(url)


def test_an_unreachable_postgres_says_what_to_do() -> None:
    with pytest.raises(UserError, match=r"cannot reach PostgreSQL at 127.0.0.1:1/test .*start"):
        SessionLog.open("postgresql+psycopg://postgres@127.0.0.1:1/test")


@pytest.mark.postgres
def test_every_controller_of_a_venue_shares_one_log(
    postgres_url: str, postgres_log: SessionLog
) -> None:
    info = postgres_log.start_session("t1", "3p", PLAYERS)
    with SessionLog.open(postgres_url) as other_table:
        assert other_table.find_session(info.id) == info
        other = other_table.start_session("t2", "3p", PLAYERS)
    assert [s.id for s in postgres_log.sessions()] == [info.id, other.id]


def test_read_entries_equal_the_appended_ones(any_log: SessionLog) -> None:
    info = any_log.start_session("t1", "3p", PLAYERS)
    data = {"round": 1, "dealer": 0, "first_bidder": 2, "hands": ["3", "4", "5"]}
    appended = any_log.append(info.id, "round_start", data)
    (stored,) = any_log.entries(info.id, after=1)
    assert stored == appended and appended == stored
    assert stored.may_mention("first_bidder") and not stored.may_mention("round_end")
    assert stored.public().data == {"round": 1, "dealer": 0, "first_bidder": 2}
    assert stored.to_dict() == appended.to_dict()


def test_session_ids_never_collide(log: SessionLog, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = iter(["20261130-aaaaa", "20261130-aaaaa", "20261130-bbbbb"])
    monkeypatch.setattr(store, "_new_id", lambda now: next(ids))
    first = log.start_session("t1", "3p", PLAYERS)
    second = log.start_session("t1", "3p", PLAYERS)
    assert (first.id, second.id) == ("20261130-aaaaa", "20261130-bbbbb")
    monkeypatch.setattr(store, "_new_id", lambda now: "20261130-aaaaa")
    with pytest.raises(UserError, match="could not find a free session id"):
        log.start_session("t1", "3p", PLAYERS)


def test_a_new_id_taken_by_another_process_at_once_is_retried(
    log: SessionLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = SessionLog._write_session
    calls: list[str] = []

    def racing(self: SessionLog, conn: sa.Connection, new: store.NewSession) -> object:
        calls.append(new.table)
        if len(calls) == 1:
            raise sa.exc.IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed"))
        return real(self, conn, new)

    monkeypatch.setattr(SessionLog, "_write_session", racing)
    info = log.start_session("t1", "3p", PLAYERS)
    assert calls == ["t1", "t1"] and log.find_session(info.id) == info
