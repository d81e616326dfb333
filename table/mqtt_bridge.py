"""The table's MQTT publisher: log entries out as events, alerts and state; commands in.

One worker thread does all the publishing, in log order. It keeps its own fold
of the session (a :class:`~table.session.state.TableState`), so the retained
state always matches the last event sent. The session log is the outage
queue: the bridge remembers, per session, the highest sequence number the
broker acknowledged without a gap, and after each (re)connect it re-reads the
log after it and publishes those entries again, with the same ids, then a fresh
state. Nothing waits in memory while the broker is away.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from table import mqtt_messages as messages
from table import mqtt_topics as topics
from table.errors import UserError
from table.mqtt import Broker, Delivery, MqttLink, Received
from table.rules import Play, RulesError, parse_cards
from table.session.entries import LogEntry, NoCameraError, SessionError, house_rules_from_dict
from table.session.state import TableState, show_off
from table.session.store import SessionLog
from table.session.table import TableSession

logger = logging.getLogger(__name__)

#: Answers remembered per table, so a command QoS 1 delivers twice runs once.
MAX_ANSWERS: Final = 256
#: Entries of the current session kept in memory to publish without re-reading the log.
CACHE_SIZE: Final = 256


EnterPlay = Callable[[TableSession, int, str, str, str], LogEntry]
"""Submits a play an operator typed: (session, seat, cards, by, why) -> its log entry."""
NewDeck = Callable[[str], LogEntry]
"""Tells the camera another deck is on the table (who says so) -> the alert logged."""


def _submit_play(session: TableSession, seat: int, cards: str, by: str, why: str) -> LogEntry:
    """Submits an operator's play straight to the session (no controller in this process)."""
    return session.submit(Play(seat, parse_cards(cards)), "console")[0]


def table_link(broker: Broker, table: str, **options: Any) -> MqttLink:
    """Makes the link a table publishes through: its status is the birth and the last will."""
    topics.check_table_id(table)
    return MqttLink(
        broker,
        f"ddz-table-{table}",
        will=messages.status_message(table, online=False),
        birth=messages.status_message(table, online=True),
        **options,
    )


@dataclass
class _Progress:
    """How far one session's events got: published in this connection, acknowledged."""

    published: int = 0
    acked: int = 0
    acked_ahead: set[int] = field(default_factory=set)


class MqttBridge:
    """Publishes one table's sessions to MQTT and runs the operator commands it receives.

    The bridge changes the session only for commands and for the broker's own
    health. ``call`` runs such a change where the session's single writer lives
    (a controller passes its ``call``); without it, changes run under
    :attr:`lock`, which anyone else writing to the session must hold too.
    ``on_session`` is told when a ``start`` command opened a new session;
    ``enter_play`` and ``new_deck`` are the controller's, for the commands that
    reach its camera (``new_deck`` absent: the table has none).
    """

    def __init__(
        self,
        link: MqttLink,
        log: SessionLog,
        table: str,
        session: TableSession | None = None,
        *,
        ha_discovery: bool = False,
        ha_prefix: str = topics.HA_PREFIX,
        call: Callable[[Callable[[], LogEntry]], LogEntry] | None = None,
        on_session: Callable[[TableSession], None] | None = None,
        enter_play: EnterPlay | None = None,
        new_deck: NewDeck | None = None,
        off: Iterable[str] = (),
    ) -> None:
        self.link = link
        self.log = log
        self.table = topics.check_table_id(table)
        self.ha_discovery = ha_discovery
        self.ha_prefix = ha_prefix
        self.lock = threading.Lock()
        self.call = call or self._locked
        self.on_session = on_session
        self.enter_play = enter_play or _submit_play
        self.new_deck = new_deck
        self.off = tuple(off)
        """Devices the table runs without (no panel, no camera): its state shows them off."""
        self.session: TableSession | None = None
        self._state = TableState()
        self._cache: deque[LogEntry] = deque(maxlen=CACHE_SIZE)
        self._progress: dict[str, _Progress] = {}
        self._ack_lock = threading.Lock()
        self._generation = 0
        self._broker_lost = False
        self._ha_seats: int | None = None
        self._closed = False
        self._answers: OrderedDict[tuple[str, bytes], messages.Message] = OrderedDict()
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name=f"mqtt-{table}", daemon=True)
        if session is not None:
            self._follow(session)

    # -- life cycle -----------------------------------------------------------

    def start(self) -> None:
        """Subscribes to commands (and Home Assistant's birth), then connects in the background."""
        self.link.subscribe(topics.command_filter(self.table), self._on_command, live_only=True)
        if self.ha_discovery:
            self.link.subscribe(topics.HA_STATUS_TOPIC, self._on_ha_status)
        self.link.add_connect_handler(lambda: self._queue.put(("connected", None)))
        self.link.add_disconnect_handler(lambda: self._queue.put(("lost", None)))
        self._worker.start()
        self.link.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stops publishing and says ``offline`` on the status topic before disconnecting."""
        if self._closed:
            return
        self._closed = True
        if self.session is not None:
            self.session.listeners.remove(self._on_entry)
        self._queue.put(("stop", None))
        if self._worker.is_alive():
            self._worker.join(timeout)
        self.link.close(messages.status_message(self.table, online=False), timeout)

    def _follow(self, session: TableSession) -> None:
        """Makes ``session`` the one published; an older one still drains its backlog."""
        if session.info.table != self.table:
            raise UserError(f"session {session.session_id} is at table {session.info.table}")
        if self.session is not None:
            self.session.listeners.remove(self._on_entry)
        self.session = session
        self._state = TableState.from_entries(self.log.entries(session.session_id))
        self._cache.clear()
        self._progress.setdefault(session.session_id, _Progress())
        session.listeners.append(self._on_entry)

    # -- callbacks from other threads: hand over to the worker ----------------

    def _on_entry(self, entry: LogEntry) -> None:
        self._queue.put(("entry", entry))

    def _on_command(self, received: Received) -> None:
        self._queue.put(("command", received))

    def _on_ha_status(self, received: Received) -> None:
        if received.payload.strip() == topics.ONLINE.encode():
            self._queue.put(("ha", None))

    def _on_done(self, session_id: str, seq: int) -> Callable[[Delivery], None]:
        def done(_delivery: Delivery) -> None:
            with self._ack_lock:
                progress = self._progress.get(session_id)
                if progress is None or seq <= progress.acked:
                    return
                progress.acked_ahead.add(seq)
                while progress.acked + 1 in progress.acked_ahead:
                    progress.acked += 1
                    progress.acked_ahead.discard(progress.acked)

        return done

    # -- the worker -----------------------------------------------------------

    def _run(self) -> None:
        while True:
            kind, value = self._queue.get()
            if kind == "stop":
                return
            try:
                if kind == "command":
                    self._command(value)
                elif kind == "lost":
                    self._broker_lost = True
                    self._note_broker("lost", "the MQTT connection dropped")
                elif kind == "ha":
                    self._sync(force_state=True, force_discovery=True)
                else:
                    self._sync(value if kind == "entry" else None)
            except UserError as error:
                logger.warning("MQTT publisher for table %s: %s", self.table, error)
            except Exception:
                logger.exception("MQTT publisher for table %s failed on %s", self.table, kind)

    def _locked(self, work: Callable[[], LogEntry]) -> LogEntry:
        with self.lock:
            return work()

    def _note_broker(self, status: str, detail: str = "") -> None:
        """Logs the broker's health, like any device's; a loss is alerted once it is back."""
        session = self.session
        if session is not None and not self._state.is_ended:
            self.call(lambda: session.device("broker", status, detail))
            self._fold(None)

    def _fold(self, hint: LogEntry | None) -> None:
        """Brings the bridge's own fold up to the log, using ``hint`` to skip a read."""
        session = self.session
        if session is None:
            return
        if hint is not None and hint.session_id != session.session_id:
            hint = None
        if hint is not None and hint.seq == self._state.seq + 1:
            fresh = [hint]
        elif hint is not None and hint.seq <= self._state.seq:
            fresh = []
        else:
            fresh = self.log.entries(session.session_id, after=self._state.seq)
        for entry in fresh:
            self._state.apply(entry)
            self._cache.append(entry)

    def _entries_after(self, session_id: str, seq: int) -> list[LogEntry]:
        """Gets a session's entries after ``seq``, from memory when it holds them all.

        For the current session, only entries already folded: an entry appended
        meanwhile goes out with its own sync, followed by the state that shows it.
        """
        is_current = self.session is not None and session_id == self.session.session_id
        if not is_current:
            return self.log.entries(session_id, after=seq)
        folded = self._state.seq
        if seq >= folded:
            return []
        if self._cache and self._cache[0].seq <= seq + 1:
            return [entry for entry in self._cache if seq < entry.seq <= folded]
        return [entry for entry in self.log.entries(session_id, after=seq) if entry.seq <= folded]

    def _sync(
        self,
        hint: LogEntry | None = None,
        *,
        force_state: bool = False,
        force_discovery: bool = False,
    ) -> None:
        """Publishes, in order, whatever the broker has not had yet; then the state."""
        self._fold(hint)
        if not self.link.is_connected:
            return
        reconnected = self.link.generation != self._generation
        if reconnected:
            self._generation = self.link.generation
            with self._ack_lock:
                for progress in self._progress.values():
                    progress.published = progress.acked
            if self._broker_lost:
                self._broker_lost = False
                self._note_broker("back")
        sent = False
        for session_id, progress in list(self._progress.items()):
            for entry in self._entries_after(session_id, progress.published):
                if not self._publish_entry(entry):
                    return
                progress.published = entry.seq
                sent = True
            is_current = self.session is not None and session_id == self.session.session_id
            with self._ack_lock:
                if not is_current and progress.acked >= progress.published:
                    del self._progress[session_id]
        if sent or reconnected or force_state:
            snapshot = self._state.snapshot()
            if "devices" in snapshot:
                show_off(snapshot, self.off)
            if self.ha_discovery:
                seats = messages.seats_of(snapshot)
                if reconnected or force_discovery or seats != self._ha_seats:
                    self._ha_seats = seats
                    self.link.publish(
                        messages.ha_discovery_message(self.table, seats, self.ha_prefix)
                    )
            self.link.publish(messages.state_message(self.table, snapshot))

    def _publish_entry(self, entry: LogEntry) -> bool:
        """Publishes an entry's event (and alert); ``False`` if the broker went away."""
        done = self._on_done(entry.session_id, entry.seq)
        if self.link.publish(messages.event_message(self.table, entry), done) is None:
            return False
        alert = messages.alert_message(self.table, entry)
        return alert is None or self.link.publish(alert) is not None

    # -- commands -------------------------------------------------------------

    def _command(self, received: Received) -> None:
        key = (
            (received.response_topic, received.correlation_data)
            if received.response_topic and received.correlation_data is not None
            else None
        )
        if key is not None and key in self._answers:
            self.link.publish(self._answers[key])
            return
        command: messages.Command | None = None
        error: str | None = None
        entry: LogEntry | None = None
        try:
            if received.retain:
                raise messages.CommandError("a retained command is never run; send it unretained")
            command = messages.parse_command(received.topic, received.payload)
            entry = self._execute(command)
        except (UserError, RulesError, messages.CommandError) as problem:
            error = str(problem)
        outcome = error if entry is None else f"entry {entry.seq}"
        logger.info("table %s command %s: %s", self.table, received.topic, outcome)
        self._sync(entry)
        if received.response_topic is None:
            return
        answer = messages.response_message(
            received.response_topic,
            received.correlation_data,
            command,
            error=error,
            seq=entry.seq if entry is not None else None,
            session=entry.session_id if entry is not None else None,
        )
        if key is not None:
            self._answers[key] = answer
            while len(self._answers) > MAX_ANSWERS:
                self._answers.popitem(last=False)
        self.link.publish(answer)

    def _execute(self, command: messages.Command) -> LogEntry:
        """Runs one command on the session; what it appends is logged like any action."""
        args = command.args
        by = str(args.get("by", "operator"))
        why = str(args.get("why", ""))
        if command.name == topics.CMD_START:
            return self._start_session(args)
        session = self.session
        if session is None:
            raise SessionError(f"table {self.table} has no session; start one first")
        if command.name == topics.CMD_UNDO:
            return self.call(lambda: session.undo(by, why))
        if command.name == topics.CMD_CORRECT:
            seat, cards = int(args["seat"]), str(args["cards"])
            return self.call(lambda: session.correct(seat, cards, by, why))
        if command.name == topics.CMD_PLAY:
            seat, cards = int(args["seat"]), str(args["cards"])
            return self.call(lambda: self.enter_play(session, seat, cards, by, why))
        if command.name == topics.CMD_DECK:
            if self.new_deck is None:
                raise NoCameraError(self.table)
            new_deck = self.new_deck
            return self.call(lambda: new_deck(by))
        if command.name == topics.CMD_ROUND:
            return self.call(lambda: session.start_round(int(args["first_bidder"])))
        return self.call(session.end)

    def _start_session(self, args: dict[str, Any]) -> LogEntry:
        current = self.session
        if current is not None and not current.state.is_ended:
            raise SessionError(
                f"session {current.session_id} is still on at table {self.table}; end it first"
            )
        players = [str(name) for name in args["players"]]
        try:
            rules = house_rules_from_dict(dict(args.get("house_rules", {})))
            session = TableSession.start(
                self.log, self.table, str(args.get("variant", "3p")), players, rules
            )
        except ValueError as error:
            raise SessionError(str(error)) from None
        self._follow(session)
        if self.on_session is not None:
            self.on_session(session)
        return self.log.entries(session.session_id)[0]
