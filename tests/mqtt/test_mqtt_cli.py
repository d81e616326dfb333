"""``ddz-table mqtt watch`` and ``ddz-table mqtt cmd`` against the shared broker."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest
from mqtt_helpers import LOCAL, free_port, play_some

from table.cli import main
from table.mqtt_bridge import MqttBridge
from table.session.table import TableSession

pytestmark = pytest.mark.mqtt

BridgeFor = Callable[..., MqttBridge]


def test_watch_shows_a_table_at_once_from_the_retained_messages(
    table_id: str,
    session: TableSession,
    bridge_for: BridgeFor,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bridge = bridge_for(LOCAL, table_id, session)
    bridge.link.wait_connected(10)
    play_some(session, 5, random.Random(11))
    assert main(["mqtt", "cmd", table_id, "undo", '{"by": "test"}']) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["ok"] and answer["seq"] == session.state.seq
    assert main(["mqtt", "watch", "--table", table_id, "--json", "--count", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_topic = {line["topic"]: line for line in lines}
    assert by_topic[f"ddz/{table_id}/status"]["payload"] == "online"
    assert by_topic[f"ddz/{table_id}/state"]["payload"]["seq"] == session.state.seq
    assert all(line["retained"] for line in lines)
    assert main(["mqtt", "watch", "--table", table_id, "--count", "2"]) == 0
    out = capsys.readouterr().out
    assert f"{table_id} status  online (retained)" in out
    assert f"#{session.state.seq} " in out and "Ann 0, Bo 0, Cy 0" in out


def test_cmd_reports_a_refusal_on_stderr(
    table_id: str,
    session: TableSession,
    bridge_for: BridgeFor,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bridge_for(LOCAL, table_id, session).link.wait_connected(10)
    assert main(["mqtt", "cmd", table_id, "correct", '{"seat": 0, "cards": "3"}']) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ok"] is False
    assert captured.err == (
        f"ddz-table: table {table_id} refused correct: "
        "the last action is not a play; only the last play can be corrected\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["watch", "--mqtt", "http://h"], "bad MQTT broker URL 'http://h'"),
        (["watch", "--table", "a/b"], "bad table id 'a/b'"),
        (["cmd", "t1", "undo", "[1]"], "the arguments must be a JSON object"),
        (["cmd", "t1", "undo", "{x"], "the arguments are not JSON"),
        (["watch", "--mqtt", "mqtt://127.0.0.1:PORT", "--connect-timeout", "0.5"], "refused"),
    ],
)
def test_bad_input_gets_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [arg.replace("PORT", str(free_port())) for arg in argv]
    assert main(["mqtt", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ddz-table: ") and message in err and err.count("\n") == 1
