"""A venue screen's accessor: every table that publishes to the broker, followed over MQTT.

It subscribes to ``ddz/+/state`` (the retained snapshot each table publishes
after every logged entry) and ``ddz/+/status`` (online, or the last will's
offline) through :mod:`table.mqtt`, the project's one paho wrapper. The state
already carries the last rejection and the last alert, so events and alerts
need no subscription of their own. Console commands go out as MQTT 5 requests
on ``ddz/<table>/cmd/<name>`` with a response topic and correlation data, and
the table's bridge answers whether its session took them.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from table import mqtt_topics as topics
from table.errors import UserError
from table.mqtt import Broker, MqttLink, Received
from table.mqtt_messages import command_message
from table.rules import get_variant
from table.session import SessionLog
from web.access import (
    NEW_DECK_DONE,
    QUEUE_SIZE,
    CommandError,
    Hub,
    ScreenTable,
    Snapshot,
    UnknownTableError,
    Update,
    check_players,
    waiting_snapshot,
)

logger = logging.getLogger(__name__)

#: How long a console command waits for the table's answer.
ANSWER_TIMEOUT: Final = 5.0


@dataclass
class RemoteTable(ScreenTable):
    """What the screen knows of one table from the broker."""

    online: bool = False

    def view(self) -> Snapshot:
        """Gets the snapshot with the accessor's own keys filled in."""
        return {
            **self.snapshot,
            "table": self.table,
            "online": self.online,
            "alert_ack": self.current_ack(self.snapshot),
        }


@dataclass
class _Request:
    """A command waiting for its answer."""

    done: threading.Event = field(default_factory=threading.Event)
    answer: dict[str, Any] | None = None


class MqttAccess:
    """Follows every table on a broker; the history pages read ``log`` when one is given."""

    def __init__(
        self,
        link: MqttLink,
        log: SessionLog | None = None,
        *,
        timeout: float = ANSWER_TIMEOUT,
        queue_size: int = QUEUE_SIZE,
    ) -> None:
        self.hub = Hub(queue_size)
        self.log = log
        self.link = link
        self.timeout = timeout
        self._tables: dict[str, RemoteTable] = {}
        self._requests: dict[bytes, _Request] = {}
        self._lock = threading.Lock()
        link.subscribe(topics.state_topic("+"), self._on_state)
        link.subscribe(topics.status_topic("+"), self._on_status)
        link.subscribe(topics.reply_topic("+", link.client_id), self._on_reply, live_only=True)
        link.add_disconnect_handler(self._on_lost)

    @classmethod
    def connect(cls, url: str, log: SessionLog | None = None, *, wait: float = 10.0) -> MqttAccess:
        """Connects to the broker at ``url`` and waits until the subscriptions stand.

        :raises: :exc:`~table.mqtt.MqttError` saying why the broker cannot be used.
        """
        link = MqttLink(Broker.from_url(url), f"ddz-dashboard-{secrets.token_hex(4)}")
        access = cls(link, log)
        link.start()
        try:
            link.wait_connected(wait)
        except UserError:
            link.close()
            raise
        return access

    # -- messages from the broker (paho's network thread) ---------------------

    def _table(self, topic: str) -> RemoteTable | None:
        try:
            table, _, _ = topics.parse_table_topic(topic)
            topics.check_table_id(table)
        except (ValueError, UserError):
            return None
        with self._lock:
            remote = self._tables.get(table)
            if remote is None:
                remote = self._tables[table] = RemoteTable(table, waiting_snapshot(table))
        return remote

    def _publish(self, remote: RemoteTable) -> None:
        self.hub.publish(Update(remote.table, remote.key, remote.view()))

    def _on_state(self, received: Received) -> None:
        if not received.payload:  # the retained state was cleared: the table is gone
            self._forget(received.topic)
            return
        remote = self._table(received.topic)
        if remote is None:
            return
        try:
            snapshot = json.loads(received.payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            logger.warning("ignored a state on %s that is not JSON", received.topic)
            return
        if not isinstance(snapshot, dict) or "phase" not in snapshot:
            logger.warning("ignored a state on %s that is not a table snapshot", received.topic)
            return
        remote.snapshot = snapshot
        self._publish(remote)

    def _forget(self, topic: str) -> None:
        table = topic.split("/")[1]
        with self._lock:
            self._tables.pop(table, None)

    def _on_status(self, received: Received) -> None:
        if not received.payload:
            return
        remote = self._table(received.topic)
        if remote is None:
            return
        online = received.payload.decode("utf-8", "replace").strip() == topics.ONLINE
        if online != remote.online:
            remote.online = online
            remote.revision += 1
            self._publish(remote)

    def _on_lost(self) -> None:
        """Marks every table offline: the screen cannot vouch for them while the broker is gone."""
        with self._lock:
            remotes = list(self._tables.values())
        for remote in remotes:
            if remote.online:
                remote.online = False
                remote.revision += 1
                self._publish(remote)

    def _on_reply(self, received: Received) -> None:
        with self._lock:
            request = self._requests.get(received.correlation_data or b"")
        if request is None:
            return
        try:
            answer = json.loads(received.payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            answer = {"ok": False, "error": "the table's answer was not JSON"}
        if not isinstance(answer, dict):
            answer = {"ok": False, "error": "the table's answer was not a JSON object"}
        request.answer = answer
        request.done.set()

    # -- what the views read --------------------------------------------------

    def _get(self, table: str) -> RemoteTable:
        with self._lock:
            remote = self._tables.get(table)
        if remote is None:
            raise UnknownTableError(table)
        return remote

    def tables(self) -> list[str]:
        """Lists every table the broker has told of, sorted."""
        with self._lock:
            return sorted(self._tables)

    def snapshot(self, table: str) -> Snapshot:
        """Gets the table's latest snapshot as the screens see it."""
        return self._get(table).view()

    def key(self, table: str) -> str:
        """Gets the key of the table's latest snapshot."""
        return self._get(table).key

    # -- console commands -----------------------------------------------------

    def _request(self, table: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Sends one command and waits for the table's answer.

        :raises: :exc:`CommandError` if it cannot be sent, gets no answer or is refused.
        """
        self._get(table)
        if self.link.protocol != "5":
            raise CommandError("the broker speaks MQTT 3.1.1, which cannot carry command answers")
        correlation = secrets.token_bytes(12)
        request = _Request()
        with self._lock:
            self._requests[correlation] = request
        try:
            reply = topics.reply_topic(table, self.link.client_id)
            message = command_message(table, name, args, reply, correlation)
            if self.link.publish(message) is None:
                raise CommandError("the broker is not connected; try again in a moment")
            if not request.done.wait(self.timeout):
                raise CommandError(
                    f"table {table} did not answer within {self.timeout:g} s;"
                    " is its controller running and connected?"
                )
        finally:
            with self._lock:
                del self._requests[correlation]
        answer = request.answer or {}
        if not answer.get("ok"):
            raise CommandError(str(answer.get("error") or "the table refused without a reason"))
        return answer

    def start_session(self, table: str, players: Sequence[str], by: str) -> str:
        """Asks the table to start a session with these names in seat order."""
        names = check_players(players)
        variant = get_variant(len(names)).name
        answer = self._request(
            table, topics.CMD_START, {"players": list(names), "variant": variant}
        )
        logger.info("%s started session %s at table %s", by, answer.get("session"), table)
        return f"session {answer.get('session')} started: {', '.join(names)}"

    def end_session(self, table: str, by: str) -> str:
        """Asks the table to end its session."""
        answer = self._request(table, topics.CMD_END, {})
        logger.info("%s ended session %s at table %s", by, answer.get("session"), table)
        return f"session {answer.get('session')} ended"

    def deal(self, table: str, first_bidder: int, by: str) -> str:
        """Asks the table to log the next deal."""
        self._request(table, topics.CMD_ROUND, {"first_bidder": first_bidder})
        logger.info("%s dealt at table %s", by, table)
        return f"dealt; seat {first_bidder} bids first"

    def undo(self, table: str, by: str, why: str) -> str:
        """Asks the table to take back its last action, with who and why."""
        answer = self._request(table, topics.CMD_UNDO, {"by": by, "why": why})
        return f"took back the last action (entry {answer.get('seq')})"

    def correct(self, table: str, seat: int, cards: str, by: str, why: str) -> str:
        """Asks the table to replace its last play's cards, with who and why."""
        args = {"seat": seat, "cards": cards, "by": by, "why": why}
        self._request(table, topics.CMD_CORRECT, args)
        return f"seat {seat}'s play corrected to {cards}"

    def enter_play(self, table: str, seat: int, cards: str, by: str, why: str) -> str:
        """Asks the table to take a play the operator typed, with who and why."""
        args = {"seat": seat, "cards": cards, "by": by, "why": why}
        self._request(table, topics.CMD_PLAY, args)
        return f"seat {seat} plays {cards}"

    def new_deck(self, table: str, by: str) -> str:
        """Asks the table's camera to forget the old deck's marks."""
        self._request(table, topics.CMD_DECK, {"by": by})
        logger.info("%s put a new deck on table %s", by, table)
        return NEW_DECK_DONE

    def acknowledge(self, table: str, seq: int, by: str) -> str:
        """Marks the table's last alert as seen on this screen (the bridge has no command)."""
        remote = self._get(table)
        done = remote.acknowledge(seq, by)
        self._publish(remote)
        return done

    def close(self) -> None:
        """Disconnects from the broker and ends every subscription."""
        self.link.close()
        self.hub.close()
