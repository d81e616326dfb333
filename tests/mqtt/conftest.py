"""Fixtures for the MQTT tests: unique tables, a temp log, subscribers, private brokers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mqtt_helpers import LOCAL, Collector, PrivateMosquitto, new_table_id

from table import mqtt_topics as topics
from table.mqtt import Broker, MqttLink
from table.mqtt_bridge import MqttBridge, table_link
from table.mqtt_messages import Message
from table.session.store import SessionLog
from table.session.table import TableSession


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeps tests away from the user's log and from a broker set in the environment."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.delenv("DDZ_TABLE_DB", raising=False)
    monkeypatch.delenv("DDZ_TABLE_MQTT", raising=False)


@pytest.fixture
def table_id() -> Iterator[str]:
    """Gets a fresh table id and clears what it left retained on the shared broker."""
    table = new_table_id()
    yield table
    link = MqttLink(LOCAL, f"{table}-cleanup")
    link.start()
    link.wait_connected(10)
    retained = [topics.status_topic(table), topics.state_topic(table)]
    retained.append(topics.ha_discovery_topic(table))
    deliveries = [link.publish(Message(topic, b"", 1, True)) for topic in retained]
    for delivery in deliveries:
        assert delivery is not None and delivery.wait(10)
    link.close()


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SessionLog]:
    """Opens a fresh SQLite session log."""
    opened = SessionLog.open(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    yield opened
    opened.close()


@pytest.fixture
def session(log: SessionLog, table_id: str) -> TableSession:
    """Starts a three-player session at the test's table."""
    return TableSession.start(log, table_id, "3p", ["Ann", "Bo", "Cy"])


@pytest.fixture
def subscribe() -> Iterator[Callable[..., Collector]]:
    """Makes connected collecting subscribers, closed after the test."""
    made: list[Collector] = []

    def make(broker: Broker, *filters: str, **options: Any) -> Collector:
        collector = Collector(broker, *filters, **options)
        made.append(collector)
        return collector.start()

    yield make
    for collector in made:
        collector.close()


@pytest.fixture
def bridge_for(log: SessionLog) -> Iterator[Callable[..., MqttBridge]]:
    """Makes started bridges for a table, closed after the test."""
    made: list[MqttBridge] = []

    def make(
        broker: Broker, table: str, session: TableSession | None, **options: Any
    ) -> MqttBridge:
        link_options = options.pop("link_options", {})
        link = table_link(broker, table, **link_options)
        bridge = MqttBridge(link, log, table, session, **options)
        made.append(bridge)
        bridge.start()
        return bridge

    yield make
    for bridge in made:
        bridge.close()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Callable[..., PrivateMosquitto]]:
    """Starts private Mosquitto brokers on free ports, stopped after the test."""
    started: list[PrivateMosquitto] = []

    def start(**options: Any) -> PrivateMosquitto:
        broker = PrivateMosquitto(tmp_path / f"mosquitto-{len(started)}", **options)
        started.append(broker)
        broker.start()
        return broker

    yield start
    for broker in started:
        broker.stop()
