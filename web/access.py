"""The one way the dashboard reaches the tables: snapshots, live updates, console commands.

Views only ever talk to a :class:`TableAccess`. :class:`LocalAccess` wraps the
:class:`~table.session.TableSession` objects of the controller in the same
process; :class:`web.mqtt_access.MqttAccess` follows a whole venue over MQTT.
Both fan updates out through a :class:`Hub`: every screen gets its own bounded
queue, and a screen that falls behind is dropped (its browser reconnects and
gets the current snapshot) instead of ever slowing the table.

A snapshot is the dict of :meth:`TableState.snapshot` plus three keys the
accessor adds: ``table``, ``online`` (is the table's controller reachable) and
``alert_ack`` (who acknowledged ``last_alert``, or ``None``). A controller that
runs without a device (no broker configured, say) has its accessor show that
device as ``off``: nothing is logged about a device that is not there.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from table.errors import UserError
from table.mqtt_topics import check_table_id
from table.rules import HouseRules, Play, RulesError, get_variant, parse_cards
from table.session import LogEntry, SessionLog, TableSession
from table.session.entries import NoCameraError
from table.session.state import show_off
from web.display import action_text

logger = logging.getLogger(__name__)

Snapshot = dict[str, Any]

#: How many updates a screen may fall behind before it is dropped.
QUEUE_SIZE: Final = 64
#: Longest player name the console accepts (it is shown on a TV).
NAME_MAX: Final = 24
#: Longest "who" or "why" text for a correction.
NOTE_MAX: Final = 200
#: What the console says once the camera was told of a new deck, locally or over MQTT.
NEW_DECK_DONE: Final = (
    "the camera forgets the old deck and learns the new one's marks as it reads them"
)


class CommandError(UserError):
    """A console command the table refused, with the reason in words to act on."""


class UnknownTableError(CommandError):
    """A table id no accessor knows."""

    def __init__(self, table: str) -> None:
        super().__init__(f"there is no table {table!r} here")


@dataclass(frozen=True)
class Update:
    """A table's new snapshot; ``key`` changes whenever the snapshot does (the SSE id)."""

    table: str
    key: str
    snapshot: Snapshot


#: Put in a queue to tell its reader that the subscription has ended.
_CLOSED: Final = Update("", "", {})


class Subscription:
    """One screen's view of the updates: a bounded queue that the hub may close."""

    def __init__(self, hub: Hub, table: str | None, size: int) -> None:
        self.table = table
        self._hub = hub
        self._queue: queue.Queue[Update] = queue.Queue(size)
        self.is_closed = False

    def get(self, timeout: float) -> Update | None:
        """Waits for the next update; ``None`` on a timeout or once the subscription ended."""
        if self.is_closed:
            return None
        try:
            update = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        return None if self.is_closed or update is _CLOSED else update

    def latest(self, timeout: float) -> list[Update]:
        """Waits for updates, then takes all that are queued, keeping the newest per table.

        Every update is a whole snapshot, so a screen that is behind skips to the
        newest one instead of drawing each step; an empty list means a timeout or
        the end of the subscription.
        """
        first = self.get(timeout)
        if first is None:
            return []
        newest = {first.table: first}
        while not self.is_closed:
            try:
                update = self._queue.get_nowait()
            except queue.Empty:
                break
            if update is not _CLOSED:
                newest.pop(update.table, None)
                newest[update.table] = update
        return list(newest.values())

    def offer(self, update: Update) -> bool:
        """Queues an update without waiting; tells whether it fitted."""
        try:
            self._queue.put_nowait(update)
        except queue.Full:
            return False
        return True

    def close(self) -> None:
        """Ends the subscription (the reader is gone)."""
        self._hub.unsubscribe(self)
        self._end()

    def _end(self) -> None:
        """Drops the backlog, which a reconnecting screen replaces by the current snapshot."""
        self.is_closed = True
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        # Wakes a reader waiting on an empty queue; if a publisher got in first, its item does.
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_CLOSED)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Hub:
    """A thread-safe fan-out of updates to subscriptions, each with its own queue."""

    def __init__(self, queue_size: int = QUEUE_SIZE) -> None:
        self._queue_size = queue_size
        self._subscriptions: list[Subscription] = []
        self._lock = threading.Lock()
        self.dropped = 0

    def subscribe(self, table: str | None = None) -> Subscription:
        """Subscribes to one table's updates, or to every table's with ``None``."""
        subscription = Subscription(self, table, self._queue_size)
        with self._lock:
            self._subscriptions.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Forgets a subscription; unknown ones are ignored."""
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

    @property
    def count(self) -> int:
        """Counts the live subscriptions (the screens connected)."""
        with self._lock:
            return len(self._subscriptions)

    def publish(self, update: Update) -> None:
        """Offers an update to every matching subscription; a full queue is dropped."""
        with self._lock:
            targets = [s for s in self._subscriptions if s.table in (None, update.table)]
        for subscription in targets:
            if not subscription.offer(update):
                self.unsubscribe(subscription)
                subscription._end()
                with self._lock:
                    self.dropped += 1
                logger.info("a screen fell %d updates behind; dropped it", self._queue_size)

    def close(self) -> None:
        """Ends every subscription, so streaming responses finish."""
        with self._lock:
            subscriptions, self._subscriptions = self._subscriptions, []
        for subscription in subscriptions:
            subscription._end()


class TableAccess(Protocol):
    """What the views may know and do; nothing else reaches a table."""

    hub: Hub

    @property
    def log(self) -> SessionLog | None:
        """Gets the session log the history pages read, if there is one."""
        ...

    def tables(self) -> list[str]:
        """Lists the table ids known now, sorted."""
        ...

    def snapshot(self, table: str) -> Snapshot:
        """Gets a table's current snapshot.

        :raises: :exc:`UnknownTableError`.
        """
        ...

    def key(self, table: str) -> str:
        """Gets the key of the table's current snapshot (what an SSE id carries)."""
        ...

    def start_session(self, table: str, players: Sequence[str], by: str) -> str:
        """Starts a session with these names in seat order; the number of names picks 3p/4p."""
        ...

    def end_session(self, table: str, by: str) -> str:
        """Ends the table's session with its totals."""
        ...

    def deal(self, table: str, first_bidder: int, by: str) -> str:
        """Starts the next deal (also how a redeal is confirmed)."""
        ...

    def undo(self, table: str, by: str, why: str) -> str:
        """Takes back the last action of the round, logged with who and why."""
        ...

    def correct(self, table: str, seat: int, cards: str, by: str, why: str) -> str:
        """Replaces a misread last play, logged with who and why."""
        ...

    def enter_play(self, table: str, seat: int, cards: str, by: str, why: str) -> str:
        """Submits a play the operator typed (the camera could not read it), with who and why."""
        ...

    def acknowledge(self, table: str, seq: int, by: str) -> str:
        """Marks the table's last alert as seen by the operator."""
        ...

    def new_deck(self, table: str, by: str) -> str:
        """Tells the table's camera that another deck is on the table, logged as an alert."""
        ...

    def close(self) -> None:
        """Stops following the tables and ends every subscription."""
        ...


def waiting_snapshot(table: str) -> Snapshot:
    """Gets the snapshot of a table that has no session yet.

    >>> waiting_snapshot("t1")["phase"]
    'waiting'
    """
    return {"table": table, "session": None, "seq": 0, "phase": "waiting"}


def snapshot_key(snapshot: Snapshot, revision: int) -> str:
    """Builds the key of a snapshot: session, log sequence and the accessor's own revision.

    The revision counts changes that are not in the log (an acknowledged alert,
    a table going offline), so that a reconnecting screen catches those too.

    >>> snapshot_key({"session": "20261130-abcde", "seq": 12}, 0)
    '20261130-abcde/12/0'
    """
    return f"{snapshot.get('session') or '-'}/{snapshot.get('seq', 0)}/{revision}"


def check_players(players: Sequence[str]) -> tuple[str, ...]:
    """Checks the names for a new session, in seat order.

    :raises: :exc:`CommandError` naming what is wrong.

    >>> check_players([" Ann", "Bo", "Cy "])
    ('Ann', 'Bo', 'Cy')
    """
    names = tuple(name.strip() for name in players)
    if len(names) not in (3, 4):
        raise CommandError(f"a session needs 3 or 4 player names, not {len(names)}")
    if any(not name for name in names):
        raise CommandError("every seat needs a name")
    if any(len(name) > NAME_MAX for name in names):
        raise CommandError(f"a player name can be at most {NAME_MAX} characters")
    if len({name.casefold() for name in names}) != len(names):
        raise CommandError("two seats have the same name; give each player a different name")
    return names


@dataclass
class ScreenTable:
    """What the screens know of one table, whichever accessor feeds them.

    ``revision`` counts changes that are not in the log; ``alert_ack`` is who
    acknowledged the table's last alert, kept only by this accessor.
    """

    table: str
    snapshot: Snapshot = field(default_factory=dict)
    revision: int = 0
    alert_ack: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        """Gets the key of the snapshot as the screens see it."""
        return snapshot_key(self.snapshot, self.revision)

    def current_ack(self, snapshot: Snapshot) -> dict[str, Any] | None:
        """Gets the acknowledgement if it is of the snapshot's last alert, else ``None``."""
        last = snapshot.get("last_alert")
        ack = self.alert_ack
        return ack if ack and last and ack["seq"] == last.get("seq") else None

    def acknowledge(self, seq: int, by: str) -> str:
        """Marks the last alert as seen by ``by``.

        :raises: :exc:`CommandError` if another alert came meanwhile.
        """
        last = self.snapshot.get("last_alert")
        if not last or last.get("seq") != seq:
            raise CommandError("that alert is no longer the table's last alert; reload")
        self.alert_ack = {"seq": seq, "by": by}
        self.revision += 1
        logger.info("%s acknowledged alert %d at table %s", by, seq, self.table)
        return f"alert acknowledged by {by}"


@dataclass
class LocalTable(ScreenTable):
    """One table served in-process: its session (if any) and what the screens last saw."""

    session: TableSession | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)


PlayHook = Callable[[TableSession, int, str, str, str], LogEntry]
"""Submits a typed play (session, seat, cards, by, why); a controller also resets its camera."""
DeckHook = Callable[[str], LogEntry]
"""Tells the controller's camera another deck is on the table (who says so)."""


class LocalAccess:
    """Serves tables whose :class:`TableSession` lives in this process.

    Each table's session gets a listener that folds a fresh snapshot after every
    logged entry, caches it and offers it to the hub; requests only read that
    cache, never the live state. Console commands take the table's ``lock``, which
    the controller must also hold around its own calls into the session, or run
    through ``call`` (the controller's single writer) when one is given.
    ``on_session`` hooks hear of a session started from the console.
    """

    def __init__(
        self,
        log: SessionLog,
        sessions: Iterable[TableSession] = (),
        *,
        house_rules: HouseRules | None = None,
        queue_size: int = QUEUE_SIZE,
        call: Callable[[Callable[[], str]], str] | None = None,
        play_hook: PlayHook | None = None,
        deck_hook: DeckHook | None = None,
        off: Iterable[str] = (),
    ) -> None:
        self.log = log
        self.off = tuple(off)
        """Devices this table runs without (``broker`` when MQTT is off): shown as off."""
        self.call = call
        self.play_hook = play_hook
        self.deck_hook = deck_hook
        """The controller's ``new_deck``; with none, the console's new deck is refused."""
        self.hub = Hub(queue_size)
        self.house_rules = house_rules
        self.on_session: list[Callable[[TableSession], None]] = []
        self._tables: dict[str, LocalTable] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None
        self.refusal: str | None = None
        for session in sessions:
            self.attach(session)

    @classmethod
    def resume(
        cls, log: SessionLog, tables: Iterable[str], house_rules: HouseRules | None = None
    ) -> LocalAccess:
        """Serves these tables, each resuming its open session from the log if it has one."""
        access = cls(log, house_rules=house_rules)
        for table in tables:
            info = log.latest_open_session(table)
            if info is None:
                access.add_table(table)
            else:
                access.attach(TableSession.resume(log, info.id))
        return access

    def add_table(self, table: str) -> LocalTable:
        """Adds a table with no session yet (the console can start one)."""
        check_table_id(table)
        with self._lock:
            local = self._tables.get(table)
            if local is None:
                local = self._tables[table] = LocalTable(table, snapshot=waiting_snapshot(table))
        return local

    def attach(self, session: TableSession) -> None:
        """Serves a session at its table, replacing the table's previous one."""
        local = self.add_table(session.info.table)
        with local.lock:
            previous = local.session
            if previous is not None and self._on_entry in previous.listeners:
                previous.listeners.remove(self._on_entry)
            local.session = session
            local.alert_ack = None
            session.listeners.append(self._on_entry)
            self._refresh(local)

    def _on_entry(self, entry: LogEntry) -> None:
        """Refreshes the table of the session that just logged ``entry``."""
        for local in self._locals():
            if local.session is not None and local.session.session_id == entry.session_id:
                self._refresh(local)
                return

    def _refresh(self, local: LocalTable) -> None:
        session = local.session
        snapshot = waiting_snapshot(local.table)
        if session is not None:
            snapshot.update(session.state.snapshot())
            show_off(snapshot, self.off)
        snapshot["online"] = True
        snapshot["alert_ack"] = local.current_ack(snapshot)
        local.snapshot = snapshot
        self.hub.publish(Update(local.table, local.key, snapshot))

    def _locals(self) -> list[LocalTable]:
        with self._lock:
            return list(self._tables.values())

    def _get(self, table: str) -> LocalTable:
        with self._lock:
            local = self._tables.get(table)
        if local is None:
            raise UnknownTableError(table)
        return local

    def _session(self, local: LocalTable) -> TableSession:
        session = local.session
        if session is None or session.state.is_ended:
            raise CommandError(f"table {local.table} has no session on; start one first")
        return session

    def tables(self) -> list[str]:
        """Lists the tables served here, sorted."""
        with self._lock:
            return sorted(self._tables)

    def snapshot(self, table: str) -> Snapshot:
        """Gets the table's cached snapshot."""
        return self._get(table).snapshot

    def key(self, table: str) -> str:
        """Gets the key of the table's cached snapshot."""
        return self._get(table).key

    def session(self, table: str) -> TableSession | None:
        """Gets the session a table runs now (for the controller)."""
        return self._get(table).session

    def lock(self, table: str) -> threading.RLock:
        """Gets the lock every writer to the table's session must hold."""
        return self._get(table).lock

    def _run(self, table: str, what: Callable[[LocalTable], str]) -> str:
        local = self._get(table)
        if self.refusal is not None:
            raise CommandError(self.refusal)

        def run() -> str:
            with local.lock:
                try:
                    return what(local)
                except (UserError, RulesError) as error:
                    raise CommandError(str(error)) from None

        return run() if self.call is None else self.call(run)

    def start_session(self, table: str, players: Sequence[str], by: str) -> str:
        """Starts a session at the table, refused while another one is on."""
        names = check_players(players)

        def start(local: LocalTable) -> str:
            if local.session is not None and not local.session.state.is_ended:
                raise CommandError(
                    f"session {local.session.session_id} is still on at table {table}; end it first"
                )
            variant = get_variant(len(names)).name
            session = TableSession.start(self.log, table, variant, names, self.house_rules)
            logger.info("%s started session %s at table %s", by, session.session_id, table)
            self.attach(session)
            for hook in list(self.on_session):
                hook(session)
            return f"session {session.session_id} started: {', '.join(names)}"

        return self._run(table, start)

    def end_session(self, table: str, by: str) -> str:
        """Ends the table's session."""

        def end(local: LocalTable) -> str:
            session = self._session(local)
            session.end()
            logger.info("%s ended session %s", by, session.session_id)
            return f"session {session.session_id} ended"

        return self._run(table, end)

    def deal(self, table: str, first_bidder: int, by: str) -> str:
        """Logs a new deal with the given first bidder."""

        def deal(local: LocalTable) -> str:
            session = self._session(local)
            entry = session.start_round(first_bidder)
            logger.info("%s dealt round %s at table %s", by, entry.data["round"], table)
            return f"round {entry.data['round']} dealt; seat {first_bidder} bids first"

        return self._run(table, deal)

    def undo(self, table: str, by: str, why: str) -> str:
        """Takes back the last action, logged with who and why."""

        def undo(local: LocalTable) -> str:
            entry = self._session(local).undo(by, why)
            return f"took back: {action_text(local.snapshot, entry.data['action'])}"

        return self._run(table, undo)

    def correct(self, table: str, seat: int, cards: str, by: str, why: str) -> str:
        """Replaces the last play's cards, logged with who and why."""

        def correct(local: LocalTable) -> str:
            entry = self._session(local).correct(seat, cards, by, why)
            return f"seat {seat}'s play corrected to {entry.data['action']['cards']}"

        return self._run(table, correct)

    def enter_play(self, table: str, seat: int, cards: str, by: str, why: str) -> str:
        """Submits a typed play: through the controller's hook when there is one."""

        def enter(local: LocalTable) -> str:
            session = self._session(local)
            if self.play_hook is not None:
                entry = self.play_hook(session, seat, cards, by, why)
            else:
                entry = session.submit(Play(seat, parse_cards(cards)), "console")[0]
            return f"seat {seat} plays {entry.data['action']['cards']}"

        return self._run(table, enter)

    def new_deck(self, table: str, by: str) -> str:
        """Has the controller's camera forget the old deck: through the deck hook."""

        def new_deck(local: LocalTable) -> str:
            self._session(local)
            if self.deck_hook is None:
                raise NoCameraError(table)
            self.deck_hook(by)
            logger.info("%s put a new deck on table %s", by, table)
            return NEW_DECK_DONE

        return self._run(table, new_deck)

    def acknowledge(self, table: str, seq: int, by: str) -> str:
        """Marks the last alert as seen; kept in memory, as the log has no entry for it."""

        def acknowledge(local: LocalTable) -> str:
            done = local.acknowledge(seq, by)
            self._refresh(local)
            return done

        return self._run(table, acknowledge)

    def follow(self, interval: float = 0.25) -> None:
        """Follows tables that another process writes, by reading new log entries.

        For a screen on a second machine that shares the log (PostgreSQL) but not
        the broker; it also picks up a session started by that process. The
        console then refuses commands: the table's controller is the only writer.
        """
        self.refusal = (
            "this screen only follows the log; use the table's own console or send"
            " the command over MQTT"
        )
        if self._follower is None:
            self._follower = threading.Thread(
                target=self._follow, args=(interval,), name="ddz-log-follower", daemon=True
            )
            self._follower.start()

    def _follow(self, interval: float) -> None:
        while not self._stop.wait(interval):
            for local in self._locals():
                try:
                    self.catch_up(local.table)
                except UserError as error:
                    logger.warning("cannot follow table %s: %s", local.table, error)

    def catch_up(self, table: str) -> None:
        """Folds the entries another process logged since the last look, and tells the screens."""
        local = self._get(table)
        with local.lock:
            session = local.session
            if session is None or session.state.is_ended:
                info = self.log.latest_open_session(table)
                if info is not None and (session is None or info.id != session.session_id):
                    self.attach(TableSession.resume(self.log, info.id))
                return
            new = self.log.entries(session.session_id, after=session.state.seq)
            for entry in new:
                session.state.apply(entry)
            if new:
                self._refresh(local)

    def close(self) -> None:
        """Stops following, detaches from every session and ends every subscription."""
        self._stop.set()
        if self._follower is not None:
            self._follower.join()
        for local in self._locals():
            with local.lock:
                if local.session is not None and self._on_entry in local.session.listeners:
                    local.session.listeners.remove(self._on_entry)
        self.hub.close()
