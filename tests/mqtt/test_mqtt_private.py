"""Tests with a broker of their own: SIGKILL, broker restart, passwords and ACL, MQTT 3.1.1."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mqtt_helpers import (
    LOCAL,
    Collector,
    PrivateMosquitto,
    first_seen_order,
    free_port,
    make_certificates,
    new_table_id,
    play_some,
)

from table import mqtt_bridge
from table import mqtt_topics as topics
from table.mqtt import Broker, MqttError, MqttLink
from table.mqtt_bridge import MqttBridge
from table.mqtt_messages import command_message, status_message
from table.session.store import SessionLog
from table.session.table import TableSession

pytestmark = pytest.mark.mqtt

Subscribe = Callable[..., Collector]
BridgeFor = Callable[..., MqttBridge]
StartMosquitto = Callable[..., PrivateMosquitto]

REPO = Path(__file__).resolve().parents[2]


def wait_until(condition: Callable[[], bool], timeout: float = 15) -> None:
    """Polls a condition that no message announces (a connection flag)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not true within {timeout} s"
        time.sleep(0.02)


PUBLISHER = """
import sys
from table.mqtt import Broker
from table.mqtt_bridge import MqttBridge, table_link
from table.session.store import SessionLog
from table.session.table import TableSession

port, table, db = int(sys.argv[1]), sys.argv[2], sys.argv[3]
log = SessionLog.open(db)
session = TableSession.start(log, table, "3p", ["Ann", "Bo", "Cy"])
bridge = MqttBridge(table_link(Broker("127.0.0.1", port), table), log, table, session)
bridge.start()
bridge.link.wait_connected(10)
print("ready", flush=True)
sys.stdin.read()
"""


def test_sigkill_of_the_publisher_turns_status_offline(
    tmp_path: Path, mosquitto: StartMosquitto, subscribe: Subscribe
) -> None:
    broker = mosquitto()
    table = new_table_id()
    watcher = subscribe(broker.broker(), topics.status_topic(table))
    command = [sys.executable, "-c", PUBLISHER, str(broker.port), table]
    command.append(str(tmp_path / "log.sqlite3"))
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    with subprocess.Popen(command, cwd=REPO, **pipes) as process:  # type: ignore[call-overload]
        try:
            assert process.stdout.readline() == b"ready\n"
            watcher.wait_for(lambda m: m and m[-1].payload == b"online")
            os.kill(process.pid, signal.SIGKILL)
            assert process.wait(10) == -signal.SIGKILL
            watcher.wait_for(lambda m: m[-1].payload == b"offline")
        finally:
            process.kill()
    late = subscribe(broker.broker(), topics.status_topic(table))
    late.wait_for(lambda m: m and m[-1].payload == b"offline" and m[-1].retain)


def test_a_broker_restart_in_the_middle_of_a_round_loses_nothing(
    mosquitto: StartMosquitto,
    subscribe: Subscribe,
    bridge_for: BridgeFor,
    log: SessionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mqtt_bridge, "CACHE_SIZE", 4)  # the replay must come from the log
    broker = mosquitto()
    table = new_table_id()
    session = TableSession.start(log, table, "3p", ["Ann", "Bo", "Cy"])
    quick = {"reconnect_delay": (1, 2)}
    watcher = subscribe(
        broker.broker(), f"ddz/{table}/#", session_expiry=600, **quick
    )  # a persistent session: the broker keeps its messages while it reconnects
    bridge = bridge_for(broker.broker(), table, session, link_options=quick)
    rng = random.Random(7)
    play_some(session, 10, rng)

    def state_is_current(_: object) -> bool:
        states = watcher.json_on(topics.state_topic(table))
        return bool(states) and states[-1]["seq"] == session.state.seq

    watcher.wait_for(state_is_current)
    broker.stop()
    wait_until(lambda: not bridge.link.is_connected)
    before = session.state.seq
    with bridge.lock:  # the bridge logs the outage itself, from its own thread
        play_some(session, 15, rng)
    assert session.state.seq >= before + 15  # the table kept refereeing
    broker.start()
    watcher.wait_for(
        lambda m: (
            state_is_current(m)
            and any(
                e["data"].get("status") == "back" for e in watcher.json_on(f"ddz/{table}/event")
            )
        )
    )
    events = watcher.json_on(f"ddz/{table}/event")
    assert first_seen_order(watcher, table) == list(range(1, session.state.seq + 1))
    by_id: dict[str, dict[str, object]] = {}
    for event in events:
        assert by_id.setdefault(event["id"], event) == event  # a repeat is the same event
        assert event["id"] == f"{table}/{session.session_id}/{event['seq']}"
    broker_health = [
        e["data"]["status"]
        for e in by_id.values()
        if e["kind"] == "device" and e["data"]["device"] == "broker"
    ]
    assert broker_health == ["lost", "back"]
    assert watcher.json_on(topics.state_topic(table))[-1]["devices"]["broker"]["status"] == "back"


def documented_acl() -> str:
    """Reads the venue ACL from docs/mqtt.md, so the documented one is the one tested."""
    text = (REPO / "docs" / "mqtt.md").read_text()
    after = text.split("/etc/mosquitto/ddz.acl` (the one the tests run against):", 1)[1]
    return after.split("```", 2)[1].removeprefix("\n")


@pytest.fixture
def venue(mosquitto: StartMosquitto) -> Iterator[tuple[PrivateMosquitto, str]]:
    """Starts a venue broker with a password file and the documented ACL; gives it and a table."""
    table = new_table_id()
    users = {table: "table-pw", "desk": "desk-pw", "screen": "screen-pw", "homeassistant": "ha"}
    yield mosquitto(users=users, acl=documented_acl()), table


def test_commands_without_permission_are_refused(
    venue: tuple[PrivateMosquitto, str],
    log: SessionLog,
    subscribe: Subscribe,
    bridge_for: BridgeFor,
) -> None:
    broker, table = venue
    session = TableSession.start(log, table, "3p", ["Ann", "Bo", "Cy"])
    bridge = bridge_for(broker.broker(table), table, session, ha_discovery=True)
    bridge.link.wait_connected(10)
    play_some(session, 5, random.Random(3))
    home_assistant = subscribe(broker.broker("homeassistant"), "homeassistant/#", "ddz/+/state")
    home_assistant.wait_for(
        lambda m: (
            {x.topic for x in m} >= {topics.ha_discovery_topic(table), topics.state_topic(table)}
        )
    )
    screen_id = f"screen-{uuid.uuid4().hex[:6]}"
    screen = subscribe(broker.broker("screen"), topics.state_topic(table), client_id=screen_id)
    screen.wait_for(lambda m: m and json.loads(m[-1].payload)["seq"] == session.state.seq)
    before = session.state.seq
    attempt = command_message(table, "undo", {}, topics.reply_topic(table, screen_id), b"sneaky")
    delivery = screen.link.publish(attempt)
    assert delivery is not None and delivery.wait(10)
    assert delivery.refused == "Not authorized"

    desk_id = f"desk-{uuid.uuid4().hex[:6]}"
    desk = subscribe(broker.broker("desk"), topics.reply_topic(table, desk_id), client_id=desk_id)
    allowed = command_message(
        table, "undo", {"by": "desk"}, topics.reply_topic(table, desk_id), b"ok"
    )
    sent = desk.link.publish(allowed)
    assert sent is not None and sent.wait(10) and sent.refused is None
    answer = json.loads(desk.wait_for(lambda m: m)[0].payload)
    assert answer["ok"] and answer["seq"] == before + 1
    undos = [e.seq for e in log.entries(session.session_id) if e.kind == "undo"]
    assert undos == [answer["seq"]]  # the screen's attempt never reached the table


@pytest.mark.parametrize(("user", "password"), [("desk", "wrong"), (None, None)])
def test_a_wrong_password_gets_one_clear_message(
    venue: tuple[PrivateMosquitto, str], user: str | None, password: str | None
) -> None:
    broker, _ = venue
    link = MqttLink(Broker("127.0.0.1", broker.port, username=user, password=password), "x")
    link.start()
    try:
        with pytest.raises(
            MqttError, match=r"refused us: (Bad user name or password|Not authorized)"
        ):
            link.wait_connected(10)
    finally:
        link.close()


def test_an_unreachable_broker_gets_one_clear_message() -> None:
    link = MqttLink(Broker("127.0.0.1", free_port()), "x", reconnect_delay=(1, 1))
    link.start()
    try:
        with pytest.raises(
            MqttError,
            match=r"cannot reach the MQTT broker at mqtt://127\.0\.0\.1:\d+: Connection refused",
        ):
            link.wait_connected(1)
    finally:
        link.close()


class Mqtt311OnlyProxy:
    """Stands in front of Mosquitto like a broker that speaks only 3.1.1.

    An MQTT 5 CONNECT gets CONNACK "unacceptable protocol version" and the
    socket is closed; anything else is piped to the real broker.
    """

    def __init__(self, upstream: Broker) -> None:
        self.upstream = upstream
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.server.getsockname()[1])
        self.refused = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        while len(head) < 9:  # fixed header, length, protocol name, level (short lengths)
            chunk = client.recv(9 - len(head))
            if not chunk:
                client.close()
                return
            head += chunk
        if head[8] == 5:
            self.refused += 1
            client.sendall(b"\x20\x02\x00\x01")
            client.close()
            return
        upstream = socket.create_connection((self.upstream.host, self.upstream.port))
        upstream.sendall(head)
        threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()
        self._pipe(client, upstream)

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                end.close()

    def close(self) -> None:
        """Stops accepting."""
        self.server.close()


def test_a_broker_without_mqtt5_gets_3_1_1(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    proxy = Mqtt311OnlyProxy(LOCAL)
    try:
        watcher = subscribe(LOCAL, f"ddz/{table_id}/#")
        bridge = bridge_for(Broker("127.0.0.1", proxy.port), table_id, session)
        bridge.link.wait_connected(10)
        assert bridge.link.protocol == "3.1.1" and proxy.refused == 1
        play_some(session, 5, random.Random(9))
        watcher.wait_for(
            lambda _: (
                (states := watcher.json_on(topics.state_topic(table_id)))
                and states[-1]["seq"] == session.state.seq
            )
        )
        assert first_seen_order(watcher, table_id) == list(range(1, session.state.seq + 1))
    finally:
        proxy.close()


# paho 2.2 does not close the socket of a failed TLS handshake; it is collected later
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_mqtts_with_the_venue_ca(
    tmp_path: Path, mosquitto: StartMosquitto, subscribe: Subscribe
) -> None:
    ca, cert, key = make_certificates(tmp_path / "tls")
    broker = mosquitto(tls=(cert, key))
    secure = Broker.from_url(f"mqtts://127.0.0.1:{broker.port}?ca={ca}")
    watcher = subscribe(secure, "ddz/+/status")
    link = MqttLink(secure, "tls-test", birth=status_message("tls-table", online=True))
    link.start()
    try:
        link.wait_connected(10)
        watcher.wait_for(lambda m: m and m[-1].topic == "ddz/tls-table/status")
    finally:
        link.close()
    untrusted = MqttLink(Broker.from_url(f"mqtts://127.0.0.1:{broker.port}"), "tls-no-ca")
    untrusted.start()
    try:
        with pytest.raises(
            MqttError, match=r"TLS with the MQTT broker at .* CERTIFICATE_VERIFY_FAILED"
        ):
            untrusted.wait_connected(1)
    finally:
        untrusted.close()
