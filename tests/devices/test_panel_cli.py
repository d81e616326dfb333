"""``ddz-table panel ...``: each action on good and bad input."""

from __future__ import annotations

import argparse
import io
import os
import termios
from pathlib import Path

import pytest

from table.devices.cli import keyboard_reader, register
from table.errors import UserError


def run(argv: list[str]) -> int:
    """Parses argv with only the panel commands registered and runs the action."""
    parser = argparse.ArgumentParser(prog="ddz-table")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    status: int = args.func(args)
    return status


def test_sim_script_prints_notices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "demo.panel"
    script.write_text("press 1 bid2\nwait 0\npress op undo\n")
    assert run(["panel", "sim", "--seats", "3", "--script", str(script)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("panel back: id 0, firmware sim, 3 seats")
    assert [line.split(" seq")[0] for line in lines[1:]] == [
        "event seat 1 BID2 press",
        "event seat 1 BID2 release",
        "event operator UNDO press",
        "event operator UNDO release",
    ]


def test_sim_keyboard_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("t\n"))
    assert run(["panel", "sim"]) == 0
    out = capsys.readouterr().out
    assert "seat 3: y u i o p" in out
    assert "event seat 0 PLAY press" in out
    assert "event operator OK release" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["panel", "sim", "--seats", "5"], "1..4 seats, not 5; pass --seats 1..4"),
        (["panel", "sim", "--script", "/nonexistent/demo.panel"], "cannot read script"),
        (["panel", "listen", "/dev/ttyNOPE0"], "/dev/ttyNOPE0 does not exist"),
        (["panel", "led", "/dev/ttyNOPE0", "0", "turn", "on"], "does not exist"),
        (["panel", "led", "loop://", "0", "green", "on"], "neither 'turn' nor 'error'"),
        (["panel", "led", "loop://", "0", "turn", "0x100"], "not one of off, on"),
        (["panel", "listen", "loop://", "--hello-timeout", "0.2"], "no HELLO"),
    ],
)
def test_bad_input_is_one_user_error(argv: list[str], message: str) -> None:
    with pytest.raises(UserError, match=message):
        run(argv)


def test_ports_lists_without_failing(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["panel", "ports"]) == 0
    assert capsys.readouterr().out.strip() != ""


def test_keyboard_reads_single_keys_from_a_terminal() -> None:
    master, slave = os.openpty()
    with open(slave, encoding="utf-8") as terminal:
        saved = termios.tcgetattr(terminal)
        with keyboard_reader(terminal) as read_char:
            # In cbreak mode a key arrives without Enter and is not echoed.
            assert not termios.tcgetattr(terminal)[3] & (termios.ICANON | termios.ECHO)
            os.write(master, b"w")
            assert read_char() == "w"
        assert termios.tcgetattr(terminal) == saved
    os.close(master)
