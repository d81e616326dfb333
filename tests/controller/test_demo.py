"""The demo as a user runs it: simulated players, the virtual camera, the real vision and log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from table.session.state import TableState
from table.session.store import SessionLog

pytestmark = [pytest.mark.vision, pytest.mark.slow]


def demo(db: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "table.cli", "demo", "--db", db, "--table", "t1",
            "--speed", "20", "--port", "0", "--no-browser", *extra]  # fmt: skip


def session_state(db: str) -> tuple[str, TableState]:
    log = SessionLog.open(db)
    try:
        (info,) = log.sessions("t1")
        return info.id, TableState.from_entries(log.entries(info.id))
    finally:
        log.close()


def test_demo_referees_rounds_read_by_the_camera(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'log.sqlite3'}"
    result = subprocess.run(
        demo(db, "--rounds", "1", "--players", "4"),
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "1 rounds settled" in result.stdout
    session_id, state = session_state(db)
    assert state.is_ended and state.ledger is not None and state.ledger.rounds == 1
    assert state.ledger.is_balanced
    log = SessionLog.open(db)
    try:
        entries = log.entries(session_id)
    finally:
        log.close()
    sources = {e.data.get("source") for e in entries if e.kind == "action"}
    assert "camera" in sources, "no play was read by the camera"
    assert not state.errors


def test_demo_resumes_the_round_after_sigkill(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'log.sqlite3'}"
    first = subprocess.Popen(
        demo(db, "--rounds", "1"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 600
    seq = 0
    while time.monotonic() < deadline and first.poll() is None:
        if Path(tmp_path / "log.sqlite3").exists():
            try:
                _, before = session_state(db)
                seq = before.seq
            except ValueError:
                seq = 0
            if seq >= 12 and before.round is not None and not before.round.state.is_over:
                break
        time.sleep(0.2)
    assert first.poll() is None, "the demo ended before it could be killed"
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    _, killed = session_state(db)
    assert killed.round is not None
    second = subprocess.run(demo(db, "--rounds", "1"), capture_output=True, text=True,
                            timeout=900, check=False)  # fmt: skip
    assert second.returncode == 0, second.stderr
    _, after = session_state(db)
    assert after.ledger is not None and after.ledger.rounds == 1 and after.is_ended
    before_kill = [(step.seq, step.action) for step in killed.rounds[0].steps]
    resumed = [(step.seq, step.action) for step in after.rounds[0].steps]
    assert resumed[: len(before_kill)] == before_kill


def test_a_person_plays_a_seat_from_the_terminal(tmp_path: Path) -> None:
    """The person passes when they may and leads their lowest card; the round ends."""
    db = f"sqlite:///{tmp_path / 'log.sqlite3'}"
    with subprocess.Popen(
        demo(db, "--rounds", "1", "--seat", "1"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    ) as person:
        assert person.stdin is not None and person.stdout is not None
        person.stdin.write("bid 7\n")
        told = []
        for line in person.stdout:
            told.append(line.strip())
            if not line.startswith("your turn"):
                continue
            if "to lead" in line:
                hand = line.rsplit("your hand: ", 1)[1].strip()
                person.stdin.write(f"play {hand[0]}\n")
            else:
                person.stdin.write("pass\n")
        person.stdin.close()
        assert person.wait(60) == 0
    assert any("is not a move" in line for line in told), "a bad move gets a clear answer"
    assert any(line.startswith("seat 1 ") for line in told), "the person's moves were played"
    _, state = session_state(db)
    assert state.ledger is not None and state.ledger.rounds == 1
    person_plays = [
        step for step in state.rounds[0].steps if getattr(step.action, "seat", None) == 1
    ]
    assert person_plays, "seat 1 acted through the terminal"
