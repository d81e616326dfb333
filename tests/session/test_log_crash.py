"""Crash safety: SIGKILL a logging simulation mid-round, restart it, nothing acknowledged is lost.

The simulation prints each entry with the table's state once the entry is on
disk (``--echo``), as the controller lights an LED or updates the dashboard.
After a kill, the log must hold every acknowledged entry, and at most the one
entry that was being acknowledged; the restarted process must resume from
exactly the state rebuilt from the log.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from typing import Any

import pytest

from table.session.state import TableState
from table.session.store import SessionLog

KILLS = 3
#: Rounds the killed runs aim for: more than they can play before the kill.
FOREVER = 1000


def _start(url: str, players: int, seed: int, rounds: int = FOREVER) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "table.cli", "simulate", "--db", url, "--table", "crash"]
    command += ["--rounds", str(rounds), "--players", str(players), "--seed", str(seed), "--echo"]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )


def _lines(text: str) -> list[dict[str, Any]]:
    """Parses the complete JSON lines of an output; a line cut by the kill is dropped."""
    parsed = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        if line.startswith("{"):
            parsed.append(json.loads(line))
    return parsed


def _kill_after(process: subprocess.Popen[str], entries: int) -> list[dict[str, Any]]:
    """Lets the process acknowledge some entries, kills it hard, and reads what it said."""
    with process:
        assert process.stdout is not None
        read: list[str] = []
        while len(read) < entries + 1:
            line = process.stdout.readline()
            if not line:
                break
            read.append(line)
        process.send_signal(signal.SIGKILL)
        rest = process.stdout.read()  # the same buffered reader: nothing read ahead is lost
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL, "the run ended before the kill"
    return _lines("".join(read) + rest)


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_sigkill_loses_nothing_acknowledged(
    players: int, backend: str, request: pytest.FixtureRequest
) -> None:
    url: str = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "postgres_url")
    rng = random.Random(f"{players}-{backend}")
    # One 3p round is about 40 entries and one 4p round about 60: kill anywhere in 2 rounds.
    per_round = 40 if players == 3 else 60
    previous_rebuilt: dict[str, Any] | None = None
    for kill in range(KILLS):
        said = _kill_after(_start(url, players, seed=kill), rng.randrange(1, per_round * 2))
        resumed, acknowledged = said[0]["resumed"], said[1:]
        with SessionLog.open(url) as log:
            info = log.latest_open_session("crash")
            assert info is not None, f"kill {kill}: the session ended before the kill"
            entries = log.entries(info.id)
        if previous_rebuilt is not None:
            assert resumed == previous_rebuilt, f"kill {kill}: resumed from another state"
        last = acknowledged[-1]["state"]
        unsaid = len(entries) - last["seq"]
        assert unsaid in (0, 1), "only the entry being acknowledged may be missing from the output"
        assert TableState.from_entries(entries[: last["seq"]]).snapshot() == last
        rebuilt = TableState.from_entries(entries)
        assert rebuilt.errors == []
        previous_rebuilt = rebuilt.snapshot()
    rounds = rebuilt.ledger.rounds + 1 if rebuilt.ledger is not None else 1
    final = _start(url, players, seed=99, rounds=rounds)
    out, err = final.communicate(timeout=300)
    assert final.returncode == 0, err
    said = _lines(out)
    assert said[0]["resumed"] == previous_rebuilt
    with SessionLog.open(url) as log:
        (info,) = log.sessions("crash")
        entries = log.entries(info.id)
    assert not info.is_open
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    state = TableState.from_entries(entries)
    assert state.errors == [] and state.ledger is not None
    assert state.ledger.rounds == rounds and state.ledger.is_balanced
    assert state.snapshot() == said[-1]["state"]
