"""``ddz-table sessions|replay|export|import|stats`` and ``simulate --db`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from table.cli import main
from table.session.store import SessionLog
from table.session.table import TableSession


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "table.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def played(sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Logs a simulated 3-round session and returns its id."""
    assert (
        main(
            [
                "simulate",
                "--db",
                sqlite_url,
                "--table",
                "t1",
                "--rounds",
                "3",
                "--names",
                "Ann,Bo,Cy",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "ledger sums to zero   yes" in out
    return out.splitlines()[0].removeprefix("session ")


def test_sessions_lists_the_logged_session(
    played: str, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "--db", sqlite_url]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["session", "table", "variant"]
    assert row.split()[:3] == [played, "t1", "3p"] and "ended" in row
    assert row.endswith("Ann, Bo, Cy")
    assert main(["sessions", "--db", sqlite_url, "--table", "t2"]) == 0
    assert capsys.readouterr().out.startswith("no sessions in the log file")


def test_replay_prints_a_round_move_by_move(
    played: str, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The simulation's moves depend on the session id, so any round may be dealt again:
    # the last round is the session's third settled one.
    log = SessionLog.open(sqlite_url)
    try:
        last = TableSession.resume(log, played).state.rounds[-1]
    finally:
        log.close()
    assert not last.is_redeal
    assert main(["replay", played[:12], "--round", str(last.number), "--db", sqlite_url]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"session {played} at table t1 (3p): Ann, Bo, Cy\n\nround {last.number} at "
    )
    assert "is the landlord at" in out and "payments: " in out
    assert "[Ann " in out  # running card counts
    assert "round 1 at" not in out


def test_replay_of_a_missing_round_says_which_exist(played: str, sqlite_url: str) -> None:
    result = run("replay", played, "--round", "99", "--db", sqlite_url)
    assert result.returncode == 2
    assert result.stderr.startswith(f"ddz-table: session {played} has no round 99; it has rounds 1")


def test_export_and_import_through_the_command_line(
    played: str, sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "hands.jsonl"
    assert main(["export", played, "--db", sqlite_url, "-o", str(file)]) == 0
    lines = file.read_text().splitlines()
    assert len(lines) >= 3 and all(json.loads(line)["session"] == played for line in lines)
    assert main(["import", str(file), "--db", sqlite_url]) == 0
    assert f"{len(lines)} rounds in 1 session(s)" in capsys.readouterr().out
    with SessionLog.open(sqlite_url) as log:
        first, second = log.sessions()
    assert main(["export", second.id, "--db", sqlite_url]) == 0
    exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    originals = [json.loads(line) for line in lines]
    assert [{**r, "session": 0} for r in exported] == [{**r, "session": 0} for r in originals]
    assert main(["export", first.id, "--format", "csv", "--db", sqlite_url]) == 0
    assert capsys.readouterr().out.startswith("session,table,variant,round,")


def test_a_malformed_line_imports_nothing(played: str, sqlite_url: str, tmp_path: Path) -> None:
    file = tmp_path / "hands.jsonl"
    assert run("export", played, "--db", sqlite_url, "-o", str(file)).returncode == 0
    lines = file.read_text().splitlines()
    lines[2] = lines[2].replace('"bids": [', '"bids": [{"seat": 9, "bid": 1}, ')
    file.write_text("\n".join(lines) + "\n")
    result = run("import", str(file), "--db", sqlite_url)
    assert result.returncode == 2
    assert (
        f"{file}:3: action 1 (seat 9 bids 1) breaks the rules: there is no seat 9" in result.stderr
    )
    assert result.stderr.splitlines()[-1] == (
        f"ddz-table: {file}: 1 bad line(s), the first is line 3 (action 1 (seat 9 bids 1) breaks"
        " the rules: there is no seat 9 at a 3-player table); nothing was imported"
    )
    with SessionLog.open(sqlite_url) as log:
        assert len(log.sessions()) == 1


def test_stats_per_player_and_session(
    played: str, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--db", sqlite_url, "--session", played]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["player", "rounds", "landlord"]
    assert sorted(row.split()[0] for row in rows) == ["Ann", "Bo", "Cy"]
    assert sum(int(row.split()[-1]) for row in rows) == 0
    assert all(row.split()[1] == "3" for row in rows)
    assert main(["stats", "--db", sqlite_url, "--player", "Bo"]) == 0
    (bo,) = capsys.readouterr().out.splitlines()[1:]
    assert bo.startswith("Bo ")
    result = run("stats", "--db", sqlite_url, "--player", "Zed")
    assert result.returncode == 2
    assert result.stderr == "ddz-table: no settled rounds of a player named 'Zed' in the log\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sessions", "--db", "/nonexistent/dir/log.sqlite3"], "there is no log file"),
        (
            ["replay", "nope", "--db", "postgresql+psycopg://postgres@127.0.0.1:1/test"],
            "cannot reach PostgreSQL at 127.0.0.1:1/test",
        ),
        (["import", "/nonexistent/hands.jsonl"], "cannot read /nonexistent/hands.jsonl"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert result.stderr.startswith(f"ddz-table: {message}")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_an_unknown_session_and_a_corrupt_file_are_one_line(
    played: str, sqlite_url: str, tmp_path: Path
) -> None:
    result = run("replay", "zzz", "--db", sqlite_url)
    assert result.returncode == 2
    assert result.stderr.endswith("; `ddz-table sessions` lists them\n")
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"\x00garbage" * 500)
    result = run("sessions", "--db", str(bad))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert "is damaged or is not a ddz-table log" in result.stderr


def test_the_default_log_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DDZ_TABLE_DB", str(tmp_path / "env.sqlite3"))
    assert main(["simulate", "--table", "t9", "--rounds", "1", "--players", "4"]) == 0
    capsys.readouterr()
    assert main(["sessions"]) == 0
    assert " t9 " in capsys.readouterr().out
    assert (tmp_path / "env.sqlite3").is_file()
