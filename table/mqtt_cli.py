"""``ddz-table mqtt watch`` and ``ddz-table mqtt cmd``: the tables' MQTT traffic from a shell."""

from __future__ import annotations

import argparse
import json
import queue
import sys
import uuid
from typing import Any

from table import mqtt_topics as topics
from table.cli import positive_int
from table.errors import UserError
from table.mqtt import Broker, MqttLink, Received, broker_url
from table.mqtt_messages import command_message


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the ``mqtt`` sub-commands."""
    mqtt = commands.add_parser("mqtt", help="watch the tables or command one over MQTT")
    mqtt_commands = mqtt.add_subparsers(dest="mqtt_command", required=True, metavar="COMMAND")

    watch = mqtt_commands.add_parser(
        "watch", help="print the live status, state, events and alerts of the tables"
    )
    watch.add_argument("--table", default="+", help="one table id (default: every table)")
    watch.add_argument("--json", action="store_true", help="one JSON object per message")
    watch.add_argument(
        "--count", type=positive_int, metavar="N", help="stop after N messages (default: never)"
    )
    _add_broker(watch)
    watch.set_defaults(func=_watch_command)

    cmd = mqtt_commands.add_parser("cmd", help="send an operator command and print the answer")
    cmd.add_argument("table", help="the table id")
    cmd.add_argument("name", choices=topics.COMMANDS, help="the command")
    cmd.add_argument("args", nargs="?", default="{}", help="its JSON arguments (default {})")
    cmd.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for the answer (default 10)"
    )
    _add_broker(cmd)
    cmd.set_defaults(func=_cmd_command)


def _add_broker(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mqtt",
        metavar="URL",
        help="broker, like mqtts://user:password@host:8883 "
        "(default: $DDZ_TABLE_MQTT, else mqtt://127.0.0.1:1883)",
    )
    parser.add_argument("--ca", metavar="FILE", help="CA certificate file for mqtts://")
    parser.add_argument(
        "--connect-timeout", type=float, default=10.0, help="seconds to reach the broker"
    )


def _link(args: argparse.Namespace, role: str) -> MqttLink:
    broker = Broker.from_url(broker_url(args.mqtt), ca_file=args.ca)
    return MqttLink(broker, f"ddz-{role}-{uuid.uuid4().hex[:10]}")


def describe(received: Received) -> str:
    """Turns one message into a line a person reads.

    >>> describe(Received("ddz/t1/status", b"online", retain=True))
    't1      status  online (retained)'
    """
    try:
        table, part, _ = topics.parse_table_topic(received.topic)
    except ValueError:
        return f"{received.topic}  {received.payload[:200]!r}"
    retained = " (retained)" if received.retain else ""
    if part == topics.STATUS:
        return f"{table:<7} status  {received.payload.decode(errors='replace')}{retained}"
    try:
        data = json.loads(received.payload)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return f"{table:<7} {part:<7} {received.payload[:200]!r}"
    if part == topics.STATE:
        return f"{table:<7} state   {_state_line(data)}{retained}"
    if part == topics.EVENT:
        return f"{table:<7} event   #{data.get('seq')} {_event_line(data)}"
    if part == topics.ALERT:
        return f"{table:<7} ALERT   #{data.get('seq')} {data.get('kind')}: {data.get('message')}"
    return f"{table:<7} {part:<7} {json.dumps(data)}"


def _state_line(state: dict[str, Any]) -> str:
    words = [f"#{state.get('seq')}", str(state.get("phase"))]
    if state.get("session") is None:
        return " ".join(words)
    if state.get("turn") is not None:
        words.append(f"turn seat {state['turn']}")
    if state.get("landlord") is not None:
        words.append(f"landlord seat {state['landlord']}")
    words.append(f"x{state.get('multiplier')}")
    names = [f"{seat['name']} {seat['score']}" for seat in state.get("seats", [])]
    return " ".join(words) + "  |  " + ", ".join(names)


def _event_line(event: dict[str, Any]) -> str:
    data = event.get("data", {})
    action = data.get("action")
    if event.get("kind") in ("action", "correction") and isinstance(action, dict):
        what = {key: value for key, value in action.items() if key != "type"}
        return f"{event['kind']} {action.get('type')} {json.dumps(what, sort_keys=True)}"
    return f"{event.get('kind')} {json.dumps(data, sort_keys=True)}"


def _watch_command(args: argparse.Namespace) -> int:
    if args.table != "+":
        topics.check_table_id(args.table)
    link = _link(args, "watch")
    arrived: queue.Queue[Received] = queue.Queue()
    for part in (topics.STATUS, topics.STATE, topics.EVENT, topics.ALERT):
        link.subscribe(topics.table_topic(args.table, part), arrived.put)
    link.start()
    try:
        link.wait_connected(args.connect_timeout)
        shown = 0
        while args.count is None or shown < args.count:
            received = arrived.get()
            print(_json_line(received) if args.json else describe(received), flush=True)
            shown += 1
    finally:
        link.close()
    return 0


def _json_line(received: Received) -> str:
    payload: Any
    try:
        payload = json.loads(received.payload)
    except (UnicodeDecodeError, json.JSONDecodeError):
        payload = received.payload.decode(errors="replace")
    return json.dumps({"topic": received.topic, "retained": received.retain, "payload": payload})


def _cmd_command(args: argparse.Namespace) -> int:
    topics.check_table_id(args.table)
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as error:
        raise UserError(f"the arguments are not JSON: {error}") from None
    if not isinstance(arguments, dict):
        raise UserError('the arguments must be a JSON object, like {"first_bidder": 0}')
    link = _link(args, "cmd")
    reply_to = topics.reply_topic(args.table, link.client_id)
    answers: queue.Queue[Received] = queue.Queue()
    link.subscribe(reply_to, answers.put)
    correlation = uuid.uuid4().bytes
    link.start()
    try:
        link.wait_connected(args.connect_timeout)
        if link.protocol != "5":
            raise UserError("commands need an MQTT 5 broker, for the answer's response topic")
        message = command_message(args.table, args.name, arguments, reply_to, correlation)
        delivery = link.publish(message)
        if delivery is None or not delivery.wait(args.timeout):
            raise UserError(f"the broker did not take the command within {args.timeout:g} s")
        if delivery.refused is not None:
            raise UserError(
                f"the broker refused the command: {delivery.refused} "
                f"(may this user publish to {message.topic}? see the venue ACL)"
            )
        answer = _answer(answers, correlation, args.timeout)
    finally:
        link.close()
    if answer is None:
        raise UserError(
            f"no answer from table {args.table} within {args.timeout:g} s; "
            "is its publisher running?"
        )
    print(json.dumps(answer))
    if not answer.get("ok"):
        print(
            f"ddz-table: table {args.table} refused {args.name}: {answer.get('error')}",
            file=sys.stderr,
        )
        return 1
    return 0


def _answer(answers: queue.Queue[Received], correlation: bytes, timeout: float) -> Any:
    try:
        while True:
            received = answers.get(timeout=timeout)
            if received.correlation_data == correlation:
                return json.loads(received.payload)
    except queue.Empty:
        return None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"the table's answer is not JSON: {error}") from None
