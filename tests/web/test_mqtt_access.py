"""The venue screen's accessor against the real Mosquitto at 127.0.0.1:1883, with real bridges."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from playwright.sync_api import expect
from web_helpers import screenshot

from table import mqtt_topics as topics
from table.mqtt import Broker, MqttLink
from table.mqtt_bridge import MqttBridge, table_link
from table.mqtt_messages import Message, state_message
from table.rules import Bid
from table.session import SessionLog, TableSession
from web import create_app
from web.access import CommandError, TableAccess
from web.cli import DashboardServer
from web.mqtt_access import MqttAccess

pytestmark = pytest.mark.mqtt

URL = "mqtt://127.0.0.1:1883"
LOCAL = Broker.from_url(URL)


def wait_for(access: MqttAccess, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Waits on the accessor's own updates until ``condition`` holds."""
    deadline = time.monotonic() + timeout
    with access.hub.subscribe() as subscription:
        while not condition():
            assert time.monotonic() < deadline, "the broker never brought the expected state"
            subscription.get(0.2)


@pytest.fixture
def tables() -> Iterator[list[str]]:
    """Gets two fresh table ids and clears what they left retained on the shared broker."""
    made = [f"web-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    yield made
    link = MqttLink(LOCAL, f"web-cleanup-{uuid.uuid4().hex[:8]}")
    link.start()
    link.wait_connected(10)
    for table in made:
        for topic in (topics.status_topic(table), topics.state_topic(table)):
            delivery = link.publish(Message(topic, b"", 1, True))
            assert delivery is not None and delivery.wait(10)
    link.close()


@pytest.fixture
def venue(log: SessionLog, tables: list[str]) -> Iterator[list[TableSession]]:
    """Runs a session behind a real MQTT bridge at each table."""
    sessions = [TableSession.start(log, table, "3p", ["Ann", "Bo", "Cy"]) for table in tables]
    bridges = [MqttBridge(table_link(LOCAL, s.info.table), log, s.info.table, s) for s in sessions]
    for bridge in bridges:
        bridge.start()
    yield sessions
    for bridge in bridges:
        bridge.close()


@pytest.fixture
def mqtt_access(log: SessionLog) -> Iterator[MqttAccess]:
    """Connects a venue screen's accessor to the shared broker."""
    access = MqttAccess.connect(URL, log)
    access.timeout = 5.0
    yield access
    access.close()


def test_follows_every_table_live(
    mqtt_access: MqttAccess, venue: list[TableSession], tables: list[str]
) -> None:
    wait_for(mqtt_access, lambda: set(tables) <= set(mqtt_access.tables()))
    wait_for(mqtt_access, lambda: all(mqtt_access.snapshot(t)["online"] for t in tables))
    wait_for(mqtt_access, lambda: mqtt_access.snapshot(tables[0])["session"] is not None)
    assert mqtt_access.snapshot(tables[0])["session"] == venue[0].session_id
    venue[1].start_round(2)
    wait_for(mqtt_access, lambda: mqtt_access.snapshot(tables[1])["phase"] == "auction")
    assert mqtt_access.snapshot(tables[1])["turn"] == 2
    assert mqtt_access.key(tables[1]).startswith(f"{venue[1].session_id}/2/")


def test_commands_are_requests_answered_by_the_table(
    mqtt_access: MqttAccess, venue: list[TableSession], tables: list[str], log: SessionLog
) -> None:
    table = tables[0]
    wait_for(mqtt_access, lambda: table in mqtt_access.tables())
    assert "seat 1 bids first" in mqtt_access.deal(table, 1, "Dee")
    with pytest.raises(CommandError, match="there is no action to undo"):
        mqtt_access.undo(table, "Dee", "nothing yet")
    with pytest.raises(CommandError, match=f"table {table} has no camera"):
        mqtt_access.new_deck(table, "Dee")
    venue[0].submit(Bid(1, 2), "panel")
    mqtt_access.undo(table, "Dee", "wrong button")
    undo = log.entries(venue[0].session_id)[-1]
    assert (undo.kind, undo.data["by"], undo.data["why"]) == ("undo", "Dee", "wrong button")
    wait_for(mqtt_access, lambda: mqtt_access.snapshot(table)["seq"] == undo.seq)


def test_a_table_without_a_controller_does_not_answer(
    mqtt_access: MqttAccess, tables: list[str]
) -> None:
    table = tables[0]
    link = MqttLink(LOCAL, f"web-fake-{uuid.uuid4().hex[:8]}")
    link.start()
    link.wait_connected(10)
    snapshot = {"session": None, "seq": 0, "phase": "waiting"}
    delivery = link.publish(state_message(table, snapshot))
    assert delivery is not None and delivery.wait(10)
    link.close()
    wait_for(mqtt_access, lambda: table in mqtt_access.tables())
    mqtt_access.timeout = 0.5
    with pytest.raises(CommandError, match=f"table {table} did not answer within 0.5 s"):
        mqtt_access.deal(table, 0, "Dee")


@pytest.mark.browser
def test_venue_page_over_mqtt(
    page: Any,
    app_config: dict[str, Any],
    mqtt_access: MqttAccess,
    venue: list[TableSession],
    tables: list[str],
    serve: Callable[[Flask, TableAccess], DashboardServer],
) -> None:
    wait_for(mqtt_access, lambda: set(tables) <= set(mqtt_access.tables()))
    server = serve(create_app(app_config, mqtt_access), mqtt_access)
    page.goto(f"{server.url}/")
    for table in tables:
        expect(page.locator(f"#venue-{table} .phase")).to_have_text("Waiting for a deal")
    venue[0].start_round(0)
    venue[0].submit(Bid(0, 3), "panel")
    expect(page.locator(f"#venue-{tables[0]} .landlord")).to_have_text("Ann")
    screenshot(page, "venue-mqtt")
    page.click(f"#venue-{tables[0]}")
    expect(page).to_have_url(re.compile(f"/table/{tables[0]}$"))
    expect(page.locator("#seat-0")).to_have_class(re.compile(r"\blandlord\b"))
