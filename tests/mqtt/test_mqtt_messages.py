"""Pure tests of topics, payloads and broker URLs: every payload checked against docs/schemas."""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

import jinja2
import jsonschema
import pytest
from mqtt_helpers import play_every_kind

from table import mqtt_messages as messages
from table import mqtt_topics as topics
from table.errors import UserError
from table.mqtt import Broker, MqttError, broker_url
from table.session.entries import LogEntry, parse_time
from table.session.state import TableState
from table.session.store import SessionLog
from table.session.table import TableSession

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
TABLE = "club-7"


@functools.cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """Builds (once) the validator of one schema, with date-time formats checked."""
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(schema(name), format_checker=checker)


def schema(name: str) -> dict[str, Any]:
    """Loads one schema from docs/schemas and checks it is a valid draft 2020-12 schema."""
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def validate(name: str, payload: Any) -> None:
    """Validates a payload against a schema from docs/schemas."""
    validator(name).validate(payload)


def command_schema(name: str) -> dict[str, Any]:
    """Gets the request schema of one command."""
    return {**schema("command"), "$ref": f"#/$defs/{name}"}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[LogEntry, dict[str, Any]]]:
    """Plays five sessions with a known deal; gives each entry with the state after it."""
    log = SessionLog.open(f"sqlite:///{tmp_path_factory.mktemp('log') / 'log.sqlite3'}")
    out: list[tuple[LogEntry, dict[str, Any]]] = []
    for seed in range(5):
        variant, players = ("3p", ["A", "B", "C"]) if seed % 2 else ("4p", ["A", "B", "C", "D"])
        session = TableSession.start(log, TABLE, variant, players)
        play_every_kind(session, random.Random(seed))
        state = TableState()
        for entry in log.entries(session.session_id):
            state.apply(entry)
            out.append((entry, state.snapshot()))
    log.close()
    return out


def test_schemas_are_valid_and_each_payload_has_one() -> None:
    names = {path.name.removesuffix(".schema.json") for path in SCHEMAS.glob("*.schema.json")}
    assert names == {
        "status",
        "state",
        "event",
        "alert",
        "command",
        "command-response",
        "ha-discovery",
    }
    for name in names:
        schema(name)


def test_status_is_retained_plain_text() -> None:
    for online in (True, False):
        message = messages.status_message(TABLE, online=online)
        assert (message.topic, message.qos, message.retain) == ("ddz/club-7/status", 1, True)
        validate("status", message.payload.decode())
    assert messages.status_message(TABLE, online=False).payload == b"offline"


def test_every_event_and_state_matches_its_schema(
    played: list[tuple[LogEntry, dict[str, Any]]],
) -> None:
    kinds = set()
    for entry, snapshot in played:
        event = messages.event_message(TABLE, entry)
        assert (event.topic, event.qos, event.retain) == ("ddz/club-7/event", 1, False)
        payload = event.json()
        validate("event", payload)
        assert payload["id"] == f"{TABLE}/{entry.session_id}/{entry.seq}"
        state = messages.state_message(TABLE, snapshot)
        assert (state.topic, state.qos, state.retain) == ("ddz/club-7/state", 1, True)
        validate("state", state.json())
        assert state.json()["seq"] == entry.seq
        kinds.add(entry.kind)
    assert kinds == {
        "session_start",
        "round_start",
        "action",
        "rejected",
        "undo",
        "correction",
        "device",
        "alert",
        "session_end",
    }
    validate("state", messages.state_message(TABLE, TableState().snapshot()).json())


def test_hidden_information_never_leaves_the_table(
    played: list[tuple[LogEntry, dict[str, Any]]],
) -> None:
    shown_at: dict[str, int] = {}
    for entry, _ in played:
        for event in entry.data.get("events", []):
            if event["type"] == "kitty":
                shown_at.setdefault(entry.session_id, entry.seq)
    assert len(shown_at) == 5
    for entry, snapshot in played:
        published = [messages.event_message(TABLE, entry).json()]
        published.append(messages.state_message(TABLE, snapshot).json())
        alert = messages.alert_message(TABLE, entry)
        if alert is not None:
            published.append(alert.json())
        text = json.dumps(published)
        assert '"hands"' not in text
        if entry.kind == "round_start":
            assert "hands" in entry.data and "kitty" in entry.data
            assert set(published[0]["data"]) == {"round", "dealer", "first_bidder"}
        for event in published[0]["data"].get("events", []):
            if event["type"] == "landlord":
                assert event["kitty"] is None
        if entry.seq < shown_at[entry.session_id]:
            assert published[1].get("kitty") is None


def test_public_data_clears_a_kitty_even_if_the_log_holds_it() -> None:
    entry = LogEntry(
        "s",
        9,
        parse_time("2026-11-30T10:00:00Z"),
        "correction",
        {"replaces_seq": 8, "events": [{"type": "landlord", "seat": 2, "bid": 1, "kitty": "34B"}]},
    )
    assert "34B" not in messages.event_message(TABLE, entry).payload.decode()


def test_alerts_for_rejections_lost_devices_and_logged_alerts(
    played: list[tuple[LogEntry, dict[str, Any]]],
) -> None:
    found = set()
    for entry, _ in played:
        alert = messages.alert_message(TABLE, entry)
        wants_alert = entry.kind in ("rejected", "alert") or (
            entry.kind == "device" and entry.data["status"] == "lost"
        )
        assert (alert is not None) == wants_alert
        if alert is None:
            continue
        payload = alert.json()
        validate("alert", payload)
        assert (alert.topic, alert.qos, alert.retain) == ("ddz/club-7/alert", 1, False)
        assert payload["id"] == messages.event_id(TABLE, entry.session_id, entry.seq)
        found.add(payload["kind"])
        if entry.kind == "rejected":
            assert payload["message"] == entry.data["reason"]
            assert payload["seat"] == entry.data["action"]["seat"]
    assert found == {"illegal_play", "device_lost", "low_confidence"}


def test_impossible_card_counts_are_their_own_alert() -> None:
    entry = LogEntry.from_dict(
        {
            "session": "s",
            "seq": 5,
            "at": "2026-11-30T10:00:00Z",
            "kind": "rejected",
            "data": {
                "action": {"type": "play", "seat": 1, "cards": "33333"},
                "reason": "the 3p deck has four 3s, not five",
                "error": "ImpossibleCardsError",
                "source": "camera",
            },
        }
    )
    alert = messages.alert_message(TABLE, entry)
    assert alert is not None
    assert alert.json()["kind"] == "impossible_cards"
    validate("alert", alert.json())


GOOD_COMMANDS = [
    ("undo", {}),
    ("undo", {"by": "desk", "why": "wrong button"}),
    ("correct", {"seat": 2, "cards": "3334"}),
    ("play", {"seat": 0, "cards": "778899TT", "by": "desk", "why": "camera misread"}),
    ("start", {"players": ["A", "B", "C"], "variant": "3p", "house_rules": {"spring": True}}),
    ("round", {"first_bidder": 1}),
    ("end", {}),
    ("deck", {"by": "desk"}),
]
BAD_COMMANDS = [
    ("undo", {"by": 7}, "'by' must be a string"),
    ("undo", {"seat": 1}, "unknown field 'seat'"),
    ("correct", {"seat": 1}, "'cards' is required"),
    ("correct", {"seat": True, "cards": "3"}, "'seat' must be a whole number"),
    ("play", {"cards": "33"}, "'seat' is required"),
    ("start", {"players": "A,B,C"}, "'players' must be a list"),
    ("round", {}, "'first_bidder' is required"),
    ("end", {"now": True}, "unknown field 'now'"),
    ("deck", {"by": ["desk"]}, "'by' must be a string"),
]


@pytest.mark.parametrize(("name", "args"), GOOD_COMMANDS)
def test_good_commands_parse_and_match_the_schema(name: str, args: dict[str, Any]) -> None:
    jsonschema.validate(args, command_schema(name))
    command = messages.parse_command(f"ddz/{TABLE}/cmd/{name}", json.dumps(args).encode())
    assert command == messages.Command(TABLE, name, args)


@pytest.mark.parametrize(("name", "args", "why"), BAD_COMMANDS)
def test_bad_commands_are_refused_by_parser_and_schema(
    name: str, args: dict[str, Any], why: str
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(args, command_schema(name))
    with pytest.raises(messages.CommandError, match=why):
        messages.parse_command(f"ddz/{TABLE}/cmd/{name}", json.dumps(args).encode())


@pytest.mark.parametrize(
    ("topic", "payload", "why"),
    [
        ("ddz/t1/cmd/shuffle", b"{}", "unknown command 'shuffle'"),
        ("ddz/t1/cmd/undo", b"{not json", "not JSON"),
        ("ddz/t1/cmd/undo", b"\xff\xfe", "not JSON"),
        ("ddz/t1/cmd/undo", b"[1, 2]", "must be a JSON object"),
        ("ddz/t1/cmd/undo", b" " * (messages.MAX_PAYLOAD + 1), "over 65536 bytes"),
        ("elsewhere/t1/cmd/undo", b"{}", "not a ddz-table topic"),
    ],
)
def test_malformed_commands_get_one_clear_reason(topic: str, payload: bytes, why: str) -> None:
    with pytest.raises(messages.CommandError, match=why):
        messages.parse_command(topic, payload)


def test_empty_payload_is_an_empty_command() -> None:
    assert messages.parse_command("ddz/t1/cmd/end", b"").args == {}


def test_responses_match_the_schema() -> None:
    command = messages.parse_command("ddz/t1/cmd/undo", b"{}")
    ok = messages.response_message("ddz/t1/reply/desk", b"c1", command, seq=12, session="s")
    refused = messages.response_message("ddz/t1/reply/desk", b"c2", None, error="not JSON")
    for answer in (ok, refused):
        validate("command-response", answer.json())
        assert (answer.qos, answer.retain) == (1, False)
    assert ok.json()["ok"] and ok.correlation_data == b"c1"
    assert refused.json() == {
        "ok": False,
        "command": None,
        "table": None,
        "session": None,
        "seq": None,
        "error": "not JSON",
    }


JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined)


@functools.cache
def compiled(template: str) -> jinja2.Template:
    """Compiles a value_template once."""
    return JINJA.from_string(template)


def render(template: str, state: dict[str, Any]) -> str:
    """Renders a value_template the way Home Assistant does: Jinja with ``value_json``."""
    return compiled(template).render(value_json=state, value=json.dumps(state)).strip()


def test_ha_discovery_matches_what_home_assistant_expects(
    played: list[tuple[LogEntry, dict[str, Any]]],
) -> None:
    for seats in (3, 4):
        message = messages.ha_discovery_message(TABLE, seats)
        assert message.topic == "homeassistant/device/ddz_table_club-7/config"
        assert (message.qos, message.retain) == (1, True)
        payload = message.json()
        validate("ha-discovery", payload)
        assert payload["state_topic"] == "ddz/club-7/state"
        assert payload["availability_topic"] == "ddz/club-7/status"
        ids = [c["unique_id"] for c in payload["cmps"].values()]
        assert len(set(ids)) == len(ids) == 3 + seats
        assert set(payload["cmps"]) == set(ids)
    waiting = messages.state_message(TABLE, TableState().snapshot()).json()
    for entry, snapshot in [(None, waiting), *played]:
        state = messages.state_message(TABLE, snapshot).json()
        payload = messages.ha_discovery_message(TABLE, messages.seats_of(state)).json()
        prefix = f"{topics.ha_node_id(TABLE)}_"
        values = {
            key.removeprefix(prefix): render(component["value_template"], state)
            for key, component in payload["cmps"].items()
        }
        assert values["phase"] == state["phase"]
        assert values["multiplier"] == str(state.get("multiplier", 1))
        landlord = state.get("landlord")
        expected = state["seats"][landlord]["name"] if landlord is not None else "none"
        assert values["landlord"] == expected
        for seat in range(messages.seats_of(state)):
            assert values[f"score_{seat}"] == str(state.get("totals", [0] * 4)[seat])
        assert entry is None or state["seq"] == entry.seq


@pytest.mark.parametrize("table", ["", "a/b", "+", "#", "t 1", "-x", "x" * 65])
def test_bad_table_ids_are_refused(table: str) -> None:
    with pytest.raises(UserError, match="bad table id"):
        topics.check_table_id(table)


def test_topics_per_table() -> None:
    assert topics.command_filter("t1") == "ddz/t1/cmd/+"
    assert topics.table_topic("+", topics.STATE) == "ddz/+/state"
    assert topics.parse_table_topic("ddz/t1/event") == ("t1", "event", "")
    with pytest.raises(ValueError, match="not a ddz-table topic"):
        topics.parse_table_topic("ddz/t1/unknown")


def test_broker_urls(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked here")
    broker = Broker.from_url(f"mqtts://desk:p%40ss@venue.example?ca={ca}")
    assert broker == Broker("venue.example", 8883, True, "desk", "p@ss", str(ca))
    assert "p@ss" not in repr(broker)
    assert Broker.from_url("mqtt://127.0.0.1") == Broker("127.0.0.1", 1883)
    assert Broker.from_url("mqtts://h:9999", ca_file=str(ca)).ca_file == str(ca)
    assert broker.describe() == "mqtts://desk@venue.example:8883"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://broker", "expected mqtt://host"),
        ("broker:1883", "expected mqtt://host"),
        ("mqtt://", "expected mqtt://host"),
        ("mqtt://h:99999", "Port out of range"),
        ("mqtt://h/path", "it has no path"),
        ("mqtt://h?tls=1", "unknown option 'tls'"),
        ("mqtt://h?ca=/etc/hosts", "use mqtts:// for TLS"),
        ("mqtts://h?ca=/nonexistent/ca.pem", "does not exist"),
        ("mqtt://u:secret@h:x", "mqtt://u:\\*\\*\\*@h:x"),
    ],
)
def test_bad_broker_urls_get_one_clear_message(url: str, why: str) -> None:
    with pytest.raises(MqttError, match=why) as caught:
        Broker.from_url(url)
    assert "secret" not in str(caught.value)


def test_broker_url_comes_from_the_flag_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert broker_url(None) == "mqtt://127.0.0.1:1883"
    monkeypatch.setenv("DDZ_TABLE_MQTT", "mqtt://venue:1884")
    assert broker_url(None) == "mqtt://venue:1884"
    assert broker_url("mqtt://other") == "mqtt://other"
