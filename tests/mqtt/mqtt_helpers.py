"""Test helpers for MQTT: a collecting subscriber, private Mosquitto brokers, a table driver."""

from __future__ import annotations

import json
import os
import pwd
import random
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from table.mqtt import Broker, MqttLink, Received
from table.rules import Cards, Phase, Play, RulesError, ShowKitty, get_variant
from table.rules.simulate import deal, random_action
from table.session.table import TableSession

MOSQUITTO = "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = "/usr/bin/mosquitto_passwd"
LOCAL = Broker("127.0.0.1", 1883)

T = TypeVar("T")


def new_table_id() -> str:
    """Makes a table id no other test run uses, so runs on a shared broker never collide."""
    return f"test-{uuid.uuid4().hex[:12]}"


class Collector:
    """A subscriber that keeps every message and lets a test wait for a condition on them."""

    def __init__(self, broker: Broker, *filters: str, **link_options: Any) -> None:
        self.messages: list[Received] = []
        self._changed = threading.Condition()
        client_id = link_options.pop("client_id", f"test-sub-{uuid.uuid4().hex[:10]}")
        self.link = MqttLink(broker, client_id, **link_options)
        for topic_filter in filters:
            self.link.subscribe(topic_filter, self._add)

    def _add(self, received: Received) -> None:
        with self._changed:
            self.messages.append(received)
            self._changed.notify_all()

    def start(self, timeout: float = 10) -> Collector:
        """Connects and waits until the subscriptions are acknowledged."""
        self.link.start()
        self.link.wait_connected(timeout)
        return self

    def wait_for(self, condition: Callable[[list[Received]], T], timeout: float = 15) -> T:
        """Waits until ``condition(messages)`` is truthy and returns its value."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                result = condition(self.messages)
                if result:
                    return result
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(m.topic, m.payload[:80]) for m in self.messages[-10:]]
                    raise AssertionError(f"condition not met in {timeout} s; last messages {seen}")
                self._changed.wait(left)

    def json_on(self, topic: str) -> list[Any]:
        """Decodes the payloads that came on one topic, in order of arrival."""
        with self._changed:
            return [json.loads(m.payload) for m in self.messages if m.topic == topic]

    def close(self) -> None:
        """Disconnects."""
        self.link.close()


def events_by_seq(collector: Collector, table: str) -> dict[int, dict[str, Any]]:
    """Maps seq to event payload, dropping QoS 1 repeats by id as a consumer would."""
    seen: dict[int, dict[str, Any]] = {}
    for event in collector.json_on(f"ddz/{table}/event"):
        seen.setdefault(event["seq"], event)
    return seen


def first_seen_order(collector: Collector, table: str) -> list[int]:
    """Lists event sequence numbers in the order a deduplicating consumer first sees them."""
    order: list[int] = []
    for event in collector.json_on(f"ddz/{table}/event"):
        if event["seq"] not in order:
            order.append(event["seq"])
    return order


def free_port() -> int:
    """Finds a TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """Waits until something accepts connections on ``port``, or the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the process exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise AssertionError(f"nothing listened on port {port} within {timeout} s")


class PrivateMosquitto:
    """A Mosquitto of the test's own on a free port: restartable, with users and an ACL."""

    def __init__(
        self,
        folder: Path,
        users: dict[str, str] | None = None,
        acl: str | None = None,
        tls: tuple[Path, Path] | None = None,
    ) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.users = users or {}
        lines = [
            f"listener {self.port} 127.0.0.1",
            # run as root, Mosquitto would drop to user mosquitto and lose the temp folder
            f"user {pwd.getpwuid(os.getuid()).pw_name}",
            "persistence true",
            f"persistence_location {folder}/",
            f"log_dest file {folder / 'mosquitto.log'}",
            "log_type all",
        ]
        if tls is not None:
            lines += [f"certfile {tls[0]}", f"keyfile {tls[1]}"]
        if self.users:
            passwords = folder / "passwords"
            for number, (user, password) in enumerate(self.users.items()):
                flags = ["-b", "-c"] if number == 0 else ["-b"]
                subprocess.run(
                    [MOSQUITTO_PASSWD, *flags, str(passwords), user, password], check=True
                )
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        else:
            lines.append("allow_anonymous true")
        if acl is not None:
            (folder / "acl").write_text(acl)
            lines.append(f"acl_file {folder / 'acl'}")
        self.config = folder / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.process: subprocess.Popen[bytes] | None = None

    def broker(self, user: str | None = None) -> Broker:
        """Gets the address, logged in as ``user`` with the password it was made with."""
        password = self.users.get(user) if user else None
        return Broker("127.0.0.1", self.port, username=user, password=password)

    def start(self) -> None:
        """Starts (or restarts) the broker and waits until it listens."""
        self.process = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.process)

    def stop(self) -> None:
        """Stops the broker the way a service manager does (it saves its sessions)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None


def play_some(session: TableSession, actions: int, rng: random.Random) -> None:
    """Deals (with the hands known, as in a simulation) and plays ``actions`` random actions."""
    variant = get_variant(session.info.variant)
    for _ in range(actions):
        played = session.state.round
        if played is None or played.state.is_over:
            hands, kitty = deal(rng, variant)
            session.start_round(rng.randrange(variant.players), hands, kitty)
            continue
        session.submit(random_action(played, rng), "sim")


def play_every_kind(session: TableSession, rng: random.Random) -> None:
    """Plays one round that logs every entry kind: rejections, undo, correction, health, end.

    The deal is known (hands and kitty logged), so tests can check none of it leaks.
    """
    variant = get_variant(session.info.variant)
    hands, kitty = deal(rng, variant)
    session.start_round(0, hands, kitty)
    session.device("camera", "lost", "cable out")
    session.device("camera", "back")
    session.alert("low_confidence", "seat 1: read 7 at 0.41")
    played = session.state.round
    assert played is not None
    while played.state.phase is Phase.AUCTION:
        session.submit(random_action(played, rng), "panel")
    if played.state.phase is Phase.REDEAL:
        session.end()
        return
    session.submit(ShowKitty(kitty), "camera")
    corrected = undone = rejected = False
    while not played.state.is_over:
        if not rejected:
            wrong = (played.state.turn + 1) % variant.players
            try:
                session.submit(Play(wrong, Cards.from_str("3")), "camera")
            except RulesError:
                rejected = True
            continue
        before = [p.cards for p in played.legal_plays]
        action = random_action(played, rng)
        session.submit(action, "sim")
        if not undone:
            session.undo("operator", "wrong button")
            undone = True
        elif not corrected and isinstance(action, Play):
            others = [cards for cards in before if cards != action.cards]
            if others:
                session.correct(action.seat, others[0], "operator", "misread")
                corrected = True
    session.end()


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """Makes a throwaway CA and a server certificate for 127.0.0.1; gives CA, cert, key."""
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = folder / "ca.pem", folder / "ca.key"
    cert, key, request = folder / "server.pem", folder / "server.key", folder / "server.csr"
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    new_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for command in (
        ["req", "-x509", *new_key, "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=ca"],
        ["req", *new_key, "-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"],
        [
            "x509",
            "-req",
            "-in",
            request,
            "-CA",
            ca,
            "-CAkey",
            ca_key,
            "-CAcreateserial",
            "-out",
            cert,
            "-days",
            "2",
            "-extfile",
            folder / "san.cnf",
        ],
    ):
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True)
    return ca, cert, key
