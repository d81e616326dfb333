"""``ddz-table rules`` and ``ddz-table simulate`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from table.cli import main


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "table.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_classify_names_the_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "classify", "33344456"]) == 0
    assert "airplane_singles" in capsys.readouterr().out


def test_classify_bad_play_is_one_clear_line() -> None:
    result = run("rules", "classify", "JQKA2")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "ddz-table: JQKA2 is not a combination: a straight cannot contain a 2 or a joker"
    )
    assert "Traceback" not in result.stderr


def test_classify_stdin_writes_json_lines() -> None:
    result = run("rules", "classify", "-", "--players", "4", stdin="BB\n3334\n34x\n\n")
    assert result.returncode == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line.get("kind") for line in lines] == ["pair", None, None]
    assert "4-player game" in lines[1]["error"]
    assert "'x'" in lines[2]["error"]


def test_moves_after_a_play(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "moves", "334455BR", "--after", "33"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "3 legal answers to a pair of 3s"
    assert [line.split()[0] for line in out[:-1]] == ["44", "55", "BR"]


def test_moves_rejects_an_impossible_hand() -> None:
    result = run("rules", "moves", "BB")
    assert result.returncode == 2
    assert "more copies of a card than the 3p deck" in result.stderr


def test_simulate_prints_a_balanced_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--rounds", "30", "--players", "4", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "rounds settled        30" in out
    assert "ledger sums to zero   yes" in out


def test_simulate_rejects_zero_rounds() -> None:
    result = run("simulate", "--rounds", "0")
    assert result.returncode == 2
    assert "0 must be 1 or more" in result.stderr
