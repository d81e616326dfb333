"""The publisher against the shared Mosquitto at 127.0.0.1:1883: state, events, commands, HA."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from mqtt_helpers import (
    LOCAL,
    Collector,
    events_by_seq,
    first_seen_order,
    play_every_kind,
    play_some,
)

from table import mqtt_topics as topics
from table.controller.eyes import Eyes
from table.controller.loop import Controller
from table.mqtt import MqttLink, Received
from table.mqtt_bridge import MqttBridge
from table.mqtt_messages import Message, command_message
from table.rules import Bid, Cards, Pass, Play
from table.session.store import SessionLog
from table.session.table import TableSession
from tests.controller.test_eyes import CALIBRATION
from tests.controller.test_loop import StillCamera

pytestmark = pytest.mark.mqtt

Subscribe = Callable[..., Collector]
BridgeFor = Callable[..., MqttBridge]


def state_at(collector: Collector, table: str, seq: int) -> Callable[[list[Received]], Any]:
    """Makes a condition: the latest state on ``table`` is the one after entry ``seq``."""

    def condition(_: list[Received]) -> Any:
        states = collector.json_on(topics.state_topic(table))
        return states and states[-1]["seq"] == seq and states[-1]

    return condition


def test_events_go_out_in_order_with_ids_and_a_state_after_each(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, f"ddz/{table_id}/#")
    bridge_for(LOCAL, table_id, session)
    play_some(session, 25, random.Random(1))
    last = session.state.seq
    watcher.wait_for(state_at(watcher, table_id, last))
    assert first_seen_order(watcher, table_id) == list(range(1, last + 1))
    for seq, event in events_by_seq(watcher, table_id).items():
        assert event["id"] == f"{table_id}/{session.session_id}/{seq}"
    assert watcher.messages[0].topic == topics.status_topic(table_id)
    assert watcher.messages[0].payload == b"online"
    states = [s["seq"] for s in watcher.json_on(topics.state_topic(table_id))]
    assert states == sorted(states) and states[-1] == last


def test_a_late_subscriber_sees_the_table_at_once(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    first = subscribe(LOCAL, topics.state_topic(table_id))
    bridge_for(LOCAL, table_id, session)
    play_some(session, 12, random.Random(2))
    first.wait_for(state_at(first, table_id, session.state.seq))
    late = subscribe(LOCAL, "ddz/+/state", "ddz/+/status")

    def both(messages: list[Received]) -> list[Received] | None:
        found = [m for m in messages if m.topic.startswith(f"ddz/{table_id}/")]
        return found if len(found) == 2 else None

    mine = late.wait_for(both)
    assert all(m.retain for m in mine)
    by_topic = {m.topic: m.payload for m in mine}
    assert by_topic[topics.status_topic(table_id)] == b"online"
    state = json.loads(by_topic[topics.state_topic(table_id)])
    assert state == session.state.snapshot() | {"table": table_id}


def test_a_clean_close_says_offline(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, topics.status_topic(table_id))
    bridge = bridge_for(LOCAL, table_id, session)
    watcher.wait_for(lambda m: m and m[-1].payload == b"online")
    bridge.close()
    watcher.wait_for(lambda m: m[-1].payload == b"offline")
    late = subscribe(LOCAL, topics.status_topic(table_id))
    late.wait_for(lambda m: m and m[-1].payload == b"offline" and m[-1].retain)


class Operator:
    """An operator's MQTT 5 client: sends commands, waits for the answer by correlation."""

    def __init__(self, subscribe: Subscribe, table: str) -> None:
        self.table = table
        self.client_id = f"desk-{uuid.uuid4().hex[:8]}"
        self.reply_to = topics.reply_topic(table, self.client_id)
        self.inbox = subscribe(LOCAL, self.reply_to, client_id=self.client_id)

    def send(self, name: str, args: dict[str, Any], *, retain: bool = False) -> bytes:
        """Publishes one command and returns its correlation data."""
        correlation = uuid.uuid4().bytes
        message = command_message(self.table, name, args, self.reply_to, correlation)
        if retain:
            message = Message(
                message.topic,
                message.payload,
                1,
                True,
                message.response_topic,
                message.correlation_data,
            )
        delivery = self.inbox.link.publish(message)
        assert delivery is not None and delivery.wait(10) and delivery.refused is None
        return correlation

    def answer(self, correlation: bytes) -> dict[str, Any]:
        """Waits for the answer that carries ``correlation``."""
        found = self.inbox.wait_for(
            lambda messages: [m for m in messages if m.correlation_data == correlation]
        )
        answer: dict[str, Any] = json.loads(found[0].payload)
        return answer

    def ask(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Sends a command and waits for its answer."""
        return self.answer(self.send(name, args))


def test_operator_commands_run_and_are_answered_on_the_response_topic(
    table_id: str, log: SessionLog, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, topics.event_topic(table_id))
    opened: list[TableSession] = []
    bridge = bridge_for(LOCAL, table_id, None, on_session=opened.append)
    bridge.link.wait_connected(10)
    desk = Operator(subscribe, table_id)

    refused = desk.ask("undo", {})
    assert not refused["ok"] and "has no session" in refused["error"]
    started = desk.ask("start", {"players": ["Ann", "Bo", "Cy"], "house_rules": {"spring": True}})
    assert started["ok"] and started["seq"] == 1
    assert [s.session_id for s in opened] == [started["session"]]
    session = opened[0]
    assert desk.ask("round", {"first_bidder": 1})["ok"]
    with bridge.lock:
        for action in (Bid(1, 3), Play(1, Cards.from_str("3")), Pass(2)):
            session.submit(action, "panel")
    last_action = session.state.current.steps[-1].seq if session.state.current else None
    undone = desk.ask("undo", {"by": "desk", "why": "wrong button"})
    assert undone["ok"] and undone["seq"] == session.state.seq
    assert log.entries(session.session_id, after=undone["seq"] - 1)[0].data["undone_seq"] == (
        last_action
    )
    entered = desk.ask("play", {"seat": 2, "cards": "5", "by": "desk", "why": "misread"})
    assert (
        entered["ok"]
        and log.entries(session.session_id, after=entered["seq"] - 1)[0].data["source"] == "console"
    )
    refused_play = desk.ask("play", {"seat": 2, "cards": "6"})
    assert not refused_play["ok"] and "not on turn" in refused_play["error"]
    again = desk.ask("start", {"players": ["A", "B", "C"]})
    assert not again["ok"] and "end it first" in again["error"]
    ended = desk.ask("end", {})
    assert ended["ok"]
    events = watcher.wait_for(
        lambda _: (
            ended["seq"] in events_by_seq(watcher, table_id) and events_by_seq(watcher, table_id)
        )
    )
    assert events[undone["seq"]]["kind"] == "undo"
    assert events[ended["seq"]]["kind"] == "session_end"


def test_bad_commands_get_one_clear_answer_and_change_nothing(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    bridge = bridge_for(LOCAL, table_id, session)
    bridge.link.wait_connected(10)
    desk = Operator(subscribe, table_id)
    before = session.state.seq
    bad_json = desk.inbox.link.publish(
        Message(
            topics.command_topic(table_id, "undo"),
            b"{oops",
            1,
            False,
            desk.reply_to,
            b"c-json",
        )
    )
    assert bad_json is not None
    assert "not JSON" in desk.answer(b"c-json")["error"]
    assert "unknown field" in desk.ask("correct", {"seat": 0, "cards": "3", "x": 1})["error"]
    assert "unknown command 'shuffle'" in desk.ask("shuffle", {})["error"]
    assert "no action to undo" in desk.ask("undo", {})["error"]
    assert session.state.seq == before


def test_the_state_shows_the_devices_a_table_runs_without_as_off(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, topics.state_topic(table_id))
    bridge_for(LOCAL, table_id, session, off=("panel", "camera"))
    state = watcher.wait_for(lambda _: watcher.json_on(topics.state_topic(table_id)))[-1]
    off = {"status": "off", "detail": "not configured"}
    assert state["devices"]["panel"] == state["devices"]["camera"] == off
    assert state["devices"]["broker"]["status"] != "off"


def test_a_new_deck_reaches_the_controllers_camera_and_the_room_hears_of_it(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    alerts = subscribe(LOCAL, topics.alert_topic(table_id))
    eyes = Eyes(StillCamera, CALIBRATION, 3, reader=lambda _frame: [])
    controller = Controller(session, eyes=eyes)
    controller.start()
    try:
        bridge = bridge_for(
            LOCAL, table_id, session, call=controller.call, new_deck=controller.new_deck
        )
        bridge.link.wait_connected(10)
        answer = Operator(subscribe, table_id).ask("deck", {"by": "desk"})
        # The answer names the alert's entry; the camera thread may log its own status after.
        assert answer["ok"]
        logged = session.log.entries(session.session_id, after=answer["seq"] - 1)[0]
        assert logged.seq == answer["seq"] and logged.data["kind"] == "new_deck"
        alert = alerts.wait_for(lambda _: alerts.json_on(topics.alert_topic(table_id)))[-1]
        assert alert["kind"] == "new_deck" and alert["message"].startswith("desk put a new deck")
    finally:
        controller.stop()


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_a_command_left_retained_on_the_broker_never_runs(
    table_id: str,
    session: TableSession,
    subscribe: Subscribe,
    bridge_for: BridgeFor,
    protocol: str,
) -> None:
    desk = Operator(subscribe, table_id)
    desk.send("end", {}, retain=True)
    watcher = subscribe(LOCAL, topics.event_topic(table_id))
    try:
        bridge = bridge_for(LOCAL, table_id, session, link_options={"protocol": protocol})
        bridge.link.wait_connected(10)
        assert bridge.link.protocol == protocol
        later = command_message(table_id, "round", {"first_bidder": 0}, desk.reply_to, b"c")
        delivery = desk.inbox.link.publish(later)
        assert delivery is not None and delivery.wait(10)
        watcher.wait_for(
            lambda _: [
                e
                for e in watcher.json_on(topics.event_topic(table_id))
                if e["kind"] == "round_start"
            ]
        )
        assert not session.state.is_ended
    finally:
        clear = desk.inbox.link.publish(
            Message(topics.command_topic(table_id, "end"), b"", 1, True)
        )
        assert clear is not None and clear.wait(10)


def test_a_repeated_command_runs_once(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    bridge = bridge_for(LOCAL, table_id, session)
    bridge.link.wait_connected(10)
    play_some(session, 6, random.Random(4))
    desk = Operator(subscribe, table_id)
    message = command_message(table_id, "undo", {}, desk.reply_to, b"same-id")
    for _ in range(2):
        delivery = desk.inbox.link.publish(message)
        assert delivery is not None and delivery.wait(10)
    answers = desk.inbox.wait_for(lambda m: len(m) == 2 and m)
    first, second = (json.loads(m.payload) for m in answers)
    assert first == second and first["ok"]
    undos = [e for e in session.log.entries(session.session_id) if e.kind == "undo"]
    assert [e.seq for e in undos] == [first["seq"]]


def test_home_assistant_discovery_is_sent_and_resent_when_it_comes_online(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    discovery = topics.ha_discovery_topic(table_id)
    watcher = subscribe(LOCAL, discovery, topics.state_topic(table_id))
    bridge_for(LOCAL, table_id, session, ha_discovery=True)
    watcher.wait_for(lambda m: any(x.topic == discovery for x in m))
    config = watcher.json_on(discovery)[0]
    assert config["state_topic"] == topics.state_topic(table_id)
    assert len([key for key in config["cmps"] if "_score_" in key]) == 3
    counts = (len(watcher.json_on(discovery)), len(watcher.json_on(topics.state_topic(table_id))))
    home_assistant = MqttLink(LOCAL, f"ha-{uuid.uuid4().hex[:8]}")
    home_assistant.start()
    home_assistant.wait_connected(10)
    birth = home_assistant.publish(Message(topics.HA_STATUS_TOPIC, b"online", 1, False))
    assert birth is not None and birth.wait(10)
    home_assistant.close()
    watcher.wait_for(
        lambda _: (
            len(watcher.json_on(discovery)) > counts[0]
            and len(watcher.json_on(topics.state_topic(table_id))) > counts[1]
        )
    )


def test_home_assistant_discovery_is_off_by_default(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, "homeassistant/device/+/config", topics.state_topic(table_id))
    bridge_for(LOCAL, table_id, session)
    play_some(session, 3, random.Random(5))
    watcher.wait_for(state_at(watcher, table_id, session.state.seq))
    assert not [m for m in watcher.messages if table_id in m.topic and "homeassistant" in m.topic]


def test_every_kind_of_entry_goes_out_with_alerts_and_no_hidden_cards(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, f"ddz/{table_id}/#")
    bridge_for(LOCAL, table_id, session)
    play_every_kind(session, random.Random(12))
    watcher.wait_for(state_at(watcher, table_id, session.state.seq))
    events = events_by_seq(watcher, table_id)
    assert sorted(events) == list(range(1, session.state.seq + 1))
    alerts = watcher.json_on(topics.alert_topic(table_id))
    assert {a["kind"] for a in alerts} == {"illegal_play", "device_lost", "low_confidence"}
    for alert in alerts:
        assert events[alert["seq"]]["id"] == alert["id"]
    dealt = [e for e in session.log.entries(session.session_id) if e.kind == "round_start"]
    assert dealt and all("hands" in e.data for e in dealt)
    for message in watcher.messages:
        assert b'"hands"' not in message.payload


def test_a_restarted_publisher_resends_the_session_with_the_same_ids(
    table_id: str, session: TableSession, subscribe: Subscribe, bridge_for: BridgeFor
) -> None:
    watcher = subscribe(LOCAL, topics.event_topic(table_id))
    first = bridge_for(LOCAL, table_id, session)
    play_some(session, 8, random.Random(13))
    watcher.wait_for(lambda _: len(events_by_seq(watcher, table_id)) == session.state.seq)
    first.close()
    play_some(session, 4, random.Random(14))  # refereed while no publisher runs
    bridge_for(LOCAL, table_id, session)
    last = session.state.seq
    watcher.wait_for(lambda m: len(m) >= (last - 4) + last)
    by_id: dict[str, bytes] = {}
    for message in watcher.messages:
        event = json.loads(message.payload)
        assert by_id.setdefault(event["id"], message.payload) == message.payload
    assert first_seen_order(watcher, table_id) == list(range(1, last + 1))
