"""Every MQTT message the table sends, built by pure functions from log entries and state.

Nothing here touches a socket, so the payloads (and what they must never
carry: a hand, an unshown kitty) are tested without a broker, and the JSON
Schemas in ``docs/schemas/`` describe exactly what these functions return.

>>> status_message("t1", online=True)
Message(topic='ddz/t1/status', payload=b'online', qos=1, retain=True)
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from table import mqtt_topics as topics
from table.session import entries as kinds
from table.session.entries import LogEntry, time_text

#: Rules errors whose rejection means the camera saw more copies than the decks hold.
_IMPOSSIBLE_ERRORS: Final = ("ImpossibleCardsError",)

ALERT_ILLEGAL_PLAY: Final = "illegal_play"
ALERT_IMPOSSIBLE_CARDS: Final = "impossible_cards"
ALERT_DEVICE_LOST: Final = "device_lost"

#: The largest command payload a table reads; a command is a few fields.
MAX_PAYLOAD: Final = 64 * 1024


@dataclass(frozen=True)
class Message:
    """One MQTT publish: what :mod:`table.mqtt` hands to the broker, nothing more.

    ``response_topic`` and ``correlation_data`` are MQTT 5 properties, used by
    command requests and answers only.
    """

    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = False
    response_topic: str | None = field(default=None, repr=False)
    correlation_data: bytes | None = field(default=None, repr=False)

    def json(self) -> Any:
        """Decodes a JSON payload (every payload except ``status``)."""
        return json.loads(self.payload)


def _dump(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def event_id(table: str, session_id: str, seq: int) -> str:
    """Builds the id consumers drop QoS 1 repeats by; a replay keeps the same id.

    >>> event_id("t1", "20261130-ab3de", 7)
    't1/20261130-ab3de/7'
    """
    return f"{table}/{session_id}/{seq}"


def software_version() -> str:
    """Gets the installed ddz-table version, sent to Home Assistant as ``sw``."""
    return importlib.metadata.version("ddz-table")


def status_message(table: str, *, online: bool) -> Message:
    """Builds the retained status; the ``offline`` one is also the last will."""
    payload = topics.ONLINE if online else topics.OFFLINE
    return Message(topics.status_topic(table), payload.encode(), qos=1, retain=True)


def state_message(table: str, snapshot: Mapping[str, Any]) -> Message:
    """Builds the retained snapshot a late screen reads first.

    The snapshot is :meth:`table.session.state.TableState.snapshot`, which holds
    no hand and no unshown kitty; ``table`` is added for a waiting table.

    >>> state_message("t1", {"session": None, "seq": 0, "phase": "waiting"}).json()
    {'phase': 'waiting', 'seq': 0, 'session': None, 'table': 't1'}
    """
    return Message(topics.state_topic(table), _dump({**snapshot, "table": table}), 1, True)


def public_data(entry: LogEntry) -> dict[str, Any]:
    """Gets what an entry may show the room: no deal, no kitty before it is shown.

    :meth:`LogEntry.public` drops the deal; the landlord event is cleared here
    too, so the kitty reaches MQTT only through the ``kitty`` (shown) event.

    >>> from table.session.entries import parse_time
    >>> entry = LogEntry("s", 4, parse_time("2026-11-30T10:20:00Z"), "action",
    ...     {"action": {"type": "bid", "seat": 0, "amount": 3}, "source": "panel",
    ...      "events": [{"type": "landlord", "seat": 0, "bid": 3, "kitty": "3BR"}]})
    >>> public_data(entry)["events"]
    [{'type': 'landlord', 'seat': 0, 'bid': 3, 'kitty': None}]
    """
    data = dict(entry.public().data)
    if isinstance(data.get("events"), list):
        data["events"] = [
            {**event, "kitty": None} if event.get("type") == "landlord" else event
            for event in data["events"]
        ]
    return data


def _entry_fields(table: str, entry: LogEntry) -> dict[str, Any]:
    """Gets what every event and alert says of its entry: stable id, place and time."""
    return {
        "id": event_id(table, entry.session_id, entry.seq),
        "table": table,
        "session": entry.session_id,
        "seq": entry.seq,
        "at": time_text(entry.at),
    }


def event_message(table: str, entry: LogEntry) -> Message:
    """Builds the QoS 1 event for one logged entry, with its stable id."""
    payload = {**_entry_fields(table, entry), "kind": entry.kind, "data": public_data(entry)}
    return Message(topics.event_topic(table), _dump(payload), qos=1, retain=False)


def alert_message(table: str, entry: LogEntry) -> Message | None:
    """Builds the alert an entry calls for, or ``None`` if it needs none.

    Rejected actions (illegal plays, impossible card counts), lost devices and
    logged alerts (low-confidence readings...) become alerts.
    """
    data = entry.data
    seat: int | None = None
    if entry.kind == kinds.REJECTED:
        error = str(data.get("error", ""))
        kind = ALERT_IMPOSSIBLE_CARDS if error in _IMPOSSIBLE_ERRORS else ALERT_ILLEGAL_PLAY
        message = str(data.get("reason", ""))
        action = data.get("action")
        if isinstance(action, dict) and isinstance(action.get("seat"), int):
            seat = action["seat"]
    elif entry.kind == kinds.DEVICE and data.get("status") == "lost":
        kind = ALERT_DEVICE_LOST
        detail = str(data.get("detail", ""))
        message = f"{data.get('device')} lost" + (f": {detail}" if detail else "")
    elif entry.kind == kinds.ALERT:
        kind = str(data.get("kind", "alert"))
        message = str(data.get("message", ""))
    else:
        return None
    payload = {**_entry_fields(table, entry), "kind": kind, "message": message, "seat": seat}
    return Message(topics.alert_topic(table), _dump(payload), qos=1, retain=False)


class CommandError(ValueError):
    """A command that cannot be read: the answer says what is wrong with it."""


@dataclass(frozen=True)
class Command:
    """An operator command read from ``ddz/<table>/cmd/<name>``."""

    table: str
    name: str
    args: dict[str, Any]


#: Arguments each command takes: name -> (type, required).
_ARGS: Final[dict[str, dict[str, tuple[type | tuple[type, ...], bool]]]] = {
    topics.CMD_UNDO: {"by": (str, False), "why": (str, False)},
    topics.CMD_CORRECT: {
        "seat": (int, True),
        "cards": (str, True),
        "by": (str, False),
        "why": (str, False),
    },
    topics.CMD_PLAY: {
        "seat": (int, True),
        "cards": (str, True),
        "by": (str, False),
        "why": (str, False),
    },
    topics.CMD_START: {
        "players": (list, True),
        "variant": (str, False),
        "house_rules": (dict, False),
    },
    topics.CMD_ROUND: {"first_bidder": (int, True)},
    topics.CMD_END: {},
    topics.CMD_DECK: {"by": (str, False)},
}


def parse_command(topic: str, payload: bytes) -> Command:
    """Reads a command from its topic and JSON payload (an empty payload is ``{}``).

    :raises: :exc:`CommandError` naming the first thing wrong.

    >>> parse_command("ddz/t1/cmd/correct", b'{"seat": 1, "cards": "33"}')
    Command(table='t1', name='correct', args={'seat': 1, 'cards': '33'})
    >>> parse_command("ddz/t1/cmd/undo", b'{"why": 3}')
    Traceback (most recent call last):
    ...
    table.mqtt_messages.CommandError: undo: 'why' must be a string
    """
    try:
        table, part, name = topics.parse_table_topic(topic)
    except ValueError as error:
        raise CommandError(str(error)) from None
    if part != topics.CMD or name not in _ARGS:
        raise CommandError(f"unknown command {name!r}; expected one of {', '.join(_ARGS)}")
    if len(payload) > MAX_PAYLOAD:
        raise CommandError(f"{name}: the payload is over {MAX_PAYLOAD} bytes")
    try:
        args = json.loads(payload) if payload.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CommandError(f"{name}: the payload is not JSON ({error})") from None
    if not isinstance(args, dict):
        raise CommandError(f"{name}: the payload must be a JSON object")
    spec = _ARGS[name]
    for key in args:
        if key not in spec:
            raise CommandError(f"{name}: unknown field {key!r}; expected {sorted(spec) or 'none'}")
    for key, (kind, required) in spec.items():
        if key not in args:
            if required:
                raise CommandError(f"{name}: the field {key!r} is required")
            continue
        value = args[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = {int: "a whole number", str: "a string", list: "a list", dict: "an object"}
            raise CommandError(f"{name}: {key!r} must be {names[kind]}")  # type: ignore[index]
    return Command(table, name, args)


def response_message(
    topic: str,
    correlation_data: bytes | None,
    command: Command | None,
    *,
    error: str | None = None,
    seq: int | None = None,
    session: str | None = None,
) -> Message:
    """Builds the answer to a command, sent on the request's MQTT 5 response topic.

    >>> answer = response_message("ddz/t1/reply/desk", b"42", None, error="bad JSON")
    >>> answer.json()["ok"], answer.correlation_data
    (False, b'42')
    """
    payload = {
        "ok": error is None,
        "command": command.name if command is not None else None,
        "table": command.table if command is not None else None,
        "session": session,
        "seq": seq,
        "error": error,
    }
    return Message(topic, _dump(payload), qos=1, retain=False, correlation_data=correlation_data)


def command_message(
    table: str, name: str, args: Mapping[str, Any], reply_to: str, correlation: bytes
) -> Message:
    """Builds an operator's command request, as ``ddz-table mqtt cmd`` sends it."""
    return Message(
        topics.command_topic(table, name),
        _dump(args),
        qos=1,
        retain=False,
        response_topic=reply_to,
        correlation_data=correlation,
    )


def ha_discovery_message(table: str, seats: int, prefix: str = topics.HA_PREFIX) -> Message:
    """Builds the retained Home Assistant device discovery for one table.

    One device per table, with sensors for the phase, the landlord, the
    multiplier and each seat's score, all read from the retained ``state``; the
    table's ``status`` is their availability.
    """
    node = topics.ha_node_id(table)
    components: dict[str, dict[str, Any]] = {
        "phase": {"name": "Phase", "value_template": "{{ value_json.phase }}", "icon": "mdi:cards"},
        "landlord": {
            "name": "Landlord",
            "value_template": (
                "{% if value_json.landlord is defined and value_json.landlord is not none %}"
                "{{ value_json.seats[value_json.landlord].name }}{% else %}none{% endif %}"
            ),
            "icon": "mdi:crown",
        },
        "multiplier": {
            "name": "Multiplier",
            "value_template": "{{ value_json.multiplier | default(1) }}",
            "state_class": "measurement",
            "icon": "mdi:close-box-multiple",
        },
    }
    for seat in range(seats):
        components[f"score_{seat}"] = {
            "name": f"Seat {seat} score",
            "value_template": f"{{{{ (value_json.totals | default([0] * {seats}))[{seat}] }}}}",
            "state_class": "measurement",
            "icon": "mdi:scoreboard",
        }
    version = software_version()
    payload = {
        "dev": {
            "ids": [node],
            "name": f"Dou Dizhu table {table}",
            "mf": "ddz-table",
            "mdl": "Dou Dizhu referee",
            "sw": version,
        },
        "o": {"name": "ddz-table", "sw": version},
        "cmps": {
            f"{node}_{key}": {"p": "sensor", "unique_id": f"{node}_{key}", **config}
            for key, config in components.items()
        },
        "state_topic": topics.state_topic(table),
        "availability_topic": topics.status_topic(table),
        "payload_available": topics.ONLINE,
        "payload_not_available": topics.OFFLINE,
        "qos": 1,
    }
    return Message(topics.ha_discovery_topic(table, prefix), _dump(payload), qos=1, retain=True)


def seats_of(snapshot: Mapping[str, Any]) -> int:
    """Counts a snapshot's seats; a table still waiting for a session shows three.

    >>> seats_of({"phase": "waiting"})
    3
    """
    seats = snapshot.get("seats")
    return len(seats) if isinstance(seats, list) and seats else 3
