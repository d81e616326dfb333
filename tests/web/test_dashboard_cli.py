"""``ddz-table dashboard`` and ``ddz-table dashboard hash-password`` as a user runs them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from werkzeug.security import check_password_hash

from table.session import SessionLog, TableSession
from web.cli import check_host


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "table.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_hash_password_prints_a_hash_of_what_it_read() -> None:
    result = run("dashboard", "hash-password", stdin="correct horse\n")
    assert result.returncode == 0, result.stderr
    hashed = result.stdout.strip()
    assert check_password_hash(hashed, "correct horse")
    assert "correct horse" not in result.stdout + result.stderr


def test_hash_password_refuses_a_short_password() -> None:
    result = run("dashboard", "hash-password", stdin="abc\n")
    assert result.returncode == 2
    assert result.stderr.strip() == "ddz-table: use a console password of at least 8 characters"


def test_bad_port_is_one_line(tmp_path: Path) -> None:
    result = run("dashboard", "--db", str(tmp_path / "log.sqlite3"), "--port", "70000")
    assert result.returncode == 2
    assert result.stderr.strip() == "ddz-table: --port 70000 is not a TCP port (0 to 65535)"


def test_missing_log_is_one_line(tmp_path: Path) -> None:
    result = run("dashboard", "--db", str(tmp_path / "none.sqlite3"))
    assert result.returncode == 2
    assert result.stderr.startswith("ddz-table: there is no log file")
    assert "Traceback" not in result.stderr


def test_dashboard_follows_the_log_written_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite3"
    with SessionLog.open(str(path)) as log:
        session = TableSession.start(log, "club-1", "3p", ["Ann", "Bo", "Cy"])
        env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
        command = [sys.executable, "-m", "table.cli", "dashboard", "--db", str(path), "--port", "0"]
        with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as server:
            try:
                assert server.stderr is not None
                line = server.stderr.readline()
                found = re.search(r"on (http://127\.0\.0\.1:\d+) ", line)
                assert found is not None, line
                session.start_round(1)
                stream_url = f"{found.group(1)}/stream?table=club-1"
                with urllib.request.urlopen(stream_url, timeout=10) as stream:
                    for raw in stream:
                        text = raw.decode()
                        if text.startswith("data: ") and "auction" in text:
                            assert json.loads(text[6:])["table"] == "club-1"
                            break
            finally:
                server.send_signal(signal.SIGINT)
                assert server.wait(timeout=20) == 0


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    ("stop_with", "ignored_at_start"),
    [(signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGTERM from a service manager", "Ctrl-C after a shell started it ignoring SIGINT"],
)
def test_the_dashboard_stops_cleanly_when_asked(
    tmp_path: Path, stop_with: signal.Signals, ignored_at_start: bool
) -> None:
    path = tmp_path / "log.sqlite3"
    SessionLog.open(str(path)).close()
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    command = [sys.executable, "-m", "table.cli", "dashboard", "--db", str(path), "--port", "0"]
    with subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_ignore_sigint if ignored_at_start else None,
    ) as server:
        assert server.stderr is not None
        assert "ddz-table dashboard on http://127.0.0.1:" in server.stderr.readline()
        server.send_signal(stop_with)
        try:
            assert server.wait(timeout=20) == 0
        finally:
            server.kill()
        assert "ddz-table: dashboard stopped" in server.stderr.read()


@pytest.mark.parametrize(
    ("host", "password_hash", "warned"),
    [("0.0.0.0", None, True), ("127.0.0.1", None, False), ("0.0.0.0", "scrypt:x", False)],
)
def test_serving_the_room_without_a_console_password_warns(
    caplog: pytest.LogCaptureFixture, host: str, password_hash: str | None, warned: bool
) -> None:
    check_host(host, password_hash)
    assert ("with the console off" in caplog.text) is warned
