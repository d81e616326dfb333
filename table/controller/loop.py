"""The controller: one thread that referees a table from panel keys and camera readings.

Everything that changes the session (keys, console commands, MQTT commands,
device health) goes through one queue and is handled on the controller's own
thread, so the session has a single writer and every change is logged before
the LEDs, MQTT or the dashboard hear of it (they are the session's listeners).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol, TypeVar

from table.controller.eyes import Eyes
from table.controller.keys import Confirm, ReadPlay, Refuse, StartRound, Undo, intent_for
from table.controller.leds import LedPlan, changes, led_plan
from table.devices.events import KeyEvent, Led, PanelBack, PanelInfo, PanelLost, PanelNotice
from table.rules import (
    Action,
    Cards,
    ImpossibleCardsError,
    InvalidCardsError,
    Play,
    RulesError,
    TrickWon,
    parse_cards,
)
from table.session.entries import LogEntry, NoCameraError, SessionError
from table.session.table import TableSession

logger = logging.getLogger(__name__)

T = TypeVar("T")
Deal = Callable[[], tuple[list[Cards], Cards]]
"""Deals a round when the referee may know the hands (the demo); None at a real table."""


class Panel(Protocol):
    """The button panel, real (:class:`~table.devices.driver.PanelDriver`) or simulated."""

    def start(self, *, wait: bool = True) -> PanelInfo | None: ...

    def stop(self) -> None: ...

    def get(self, timeout: float | None = None) -> PanelNotice: ...

    def set_led(self, seat: int, led: Led, pattern: int) -> None: ...


@dataclass(frozen=True)
class PendingReading:
    """A camera reading the referee would not trust alone; the operator decides."""

    seat: int
    cards: str
    confidence: float


class Controller:
    """Referees one table: keys and readings in, logged actions and LEDs out."""

    def __init__(
        self,
        session: TableSession,
        *,
        panel: Panel | None = None,
        eyes: Eyes | None = None,
        deal: Deal | None = None,
        read_timeout: float = 8.0,
    ) -> None:
        self.session = session
        self.panel = panel
        self.eyes = eyes
        self.deal = deal
        self.read_timeout = read_timeout
        self.seats = len(session.info.players)
        self.error_seat: int | None = None
        self.pending: PendingReading | None = None
        self._leds: LedPlan = {}
        self._inbox: queue.Queue[Callable[[], None]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._panel_thread: threading.Thread | None = None
        session.listeners.append(self._after_entry)
        if eyes is not None:
            eyes.on_health = self.on_camera

    # -- running ---------------------------------------------------------------

    def start(self) -> None:
        """Starts the controller thread, the panel and the camera."""
        self._thread = threading.Thread(target=self._run, name="ddz-controller", daemon=True)
        self._thread.start()
        if self.panel is not None:
            self.panel.start(wait=False)
            self._panel_thread = threading.Thread(
                target=self._pump_panel, name="ddz-panel-pump", daemon=True
            )
            self._panel_thread.start()
        if self.eyes is not None:
            self.eyes.start()
        self.call(self._show_leds)

    def stop(self) -> None:
        """Stops every thread; what was logged stays logged."""
        self._stop.set()
        self._inbox.put(lambda: None)
        if self.eyes is not None:
            self.eyes.stop()
        if self.panel is not None:
            self.panel.stop()
        for thread in (self._thread, self._panel_thread):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=10)

    def call(self, work: Callable[[], T], timeout: float | None = 30.0) -> T:
        """Runs ``work`` on the controller thread and returns its result (or raises its error)."""
        if threading.current_thread() is self._thread or self._thread is None:
            return work()
        future: Future[T] = Future()

        def job() -> None:
            try:
                future.set_result(work())
            except BaseException as error:  # handed to the caller's thread
                future.set_exception(error)

        self._inbox.put(job)
        return future.result(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            job = self._inbox.get()
            try:
                job()
            except Exception:
                logger.exception("the controller failed on a job; the table goes on")

    def _pump_panel(self) -> None:
        assert self.panel is not None
        while not self._stop.is_set():
            try:
                notice = self.panel.get(timeout=0.5)
            except queue.Empty:
                continue
            self._inbox.put(lambda notice=notice: self.on_notice(notice))  # type: ignore[misc]

    def adopt(self, session: TableSession) -> None:
        """Referees a new session from now on (an operator started one)."""
        self.session.listeners.remove(self._after_entry)
        self.session = session
        self.seats = len(session.info.players)
        self.pending = None
        self.error_seat = None
        session.listeners.append(self._after_entry)
        self._show_leds()

    # -- inputs ----------------------------------------------------------------

    def on_notice(self, notice: PanelNotice) -> None:
        """Handles one notice from the panel."""
        if isinstance(notice, KeyEvent):
            self.on_key(notice)
        elif isinstance(notice, PanelLost):
            self.session.device("panel", "lost", notice.reason)
        elif isinstance(notice, PanelBack):
            self.session.device("panel", "back", f"{notice.port} firmware {notice.info.firmware}")
            self._leds = {}
            self._show_leds()

    def on_camera(self, status: str, detail: str) -> None:
        """Logs the camera's health; called from the camera thread."""
        self._inbox.put(lambda: self._log_device("camera", status, detail))

    def _log_device(self, device: str, status: str, detail: str) -> None:
        self.session.device(device, status, detail)

    def on_key(self, event: KeyEvent) -> None:
        """Turns a key press into the referee's decision."""
        played = self.session.state.round
        intent = intent_for(event, played.state if played is not None else None)
        if intent is None:
            return
        if isinstance(intent, Refuse):
            self._refuse(intent.seat, intent.reason)
        elif isinstance(intent, Undo):
            self.undo("operator", "UNDO key")
        elif isinstance(intent, Confirm):
            self.confirm(None, "operator", "OK key")
        elif isinstance(intent, StartRound):
            self.start_round(intent.first_bidder)
            self.submit(intent.then, "panel")
        elif isinstance(intent, ReadPlay):
            self._read_play(intent.seat)
        else:
            self.submit(intent, "panel")

    def _read_play(self, seat: int) -> None:
        if self.eyes is None:
            self._refuse(seat, "no camera is set up; the operator enters the play on the console")
            return
        self.pending = None
        reading = self.eyes.read_play(seat, self.read_timeout)
        if reading.is_confident:
            if self.submit(Play(seat, parse_cards(reading.cards)), "camera") is not None:
                self.eyes.discard(seat)
            return
        if not reading.cards:
            self._refuse(
                seat, "the camera saw no new cards in your zone; lay them down and press PLAY"
            )
            return
        self.pending = PendingReading(seat, reading.cards, reading.confidence)
        self.session.alert(
            "low_confidence",
            f"seat {seat}: the camera is not sure it read {reading.cards}"
            f" ({reading.confidence:.0%}); the operator confirms (OK) or corrects it",
        )

    # -- referee actions (controller thread) -----------------------------------

    def start_round(self, first_bidder: int) -> LogEntry:
        """Deals a new round (the demo knows the hands; a real table does not)."""
        hands, kitty = self.deal() if self.deal is not None else (None, None)
        self.pending = None
        entry = self.session.start_round(first_bidder, hands=hands, kitty=kitty)
        if self.eyes is not None:
            self.eyes.new_trick()
        return entry

    def submit(self, action: Action, source: str) -> str | None:
        """Submits an action; returns None when accepted, else the reason it was refused."""
        try:
            entries = self.session.submit(action, source)
        except RulesError as error:
            seat = getattr(action, "seat", None)
            if isinstance(error, ImpossibleCardsError):
                self.session.alert("impossible_cards", f"seat {seat}: {error}")
            self.error_seat = seat
            self._show_leds()
            return str(error)
        self.error_seat = None
        self._show_leds()
        if self.eyes is not None and any(
            event.get("type") == TrickWon.type for e in entries for event in e.data["events"]
        ):
            self.eyes.new_trick()
        return None

    def confirm(self, cards: str | None, by: str, why: str) -> str | None:
        """Accepts the pending reading, or the cards the operator typed instead.

        Returns None when the play is accepted, else what is wrong.
        """
        pending = self.pending
        if pending is None:
            return "there is no camera reading waiting for confirmation"
        try:
            chosen = parse_cards(cards) if cards else parse_cards(pending.cards)
        except InvalidCardsError as error:
            return str(error)
        if str(chosen) != pending.cards:
            self.session.alert(
                "reading_corrected",
                f"seat {pending.seat}: the camera read {pending.cards}"
                f" ({pending.confidence:.0%}); {by} entered {chosen}: {why}",
            )
        refused = self.submit(Play(pending.seat, chosen), "console")
        if refused is None:
            self.pending = None
            if self.eyes is not None:
                self.eyes.rebase([pending.seat])
        return refused

    def enter_play(self, seat: int, cards: str, by: str, why: str) -> str | None:
        """Submits a play the operator typed for a seat (the camera misread or cannot read).

        Returns None when the play is accepted, else what is wrong.
        """
        try:
            chosen = parse_cards(cards)
        except InvalidCardsError as error:
            return str(error)
        self.session.alert("play_entered", f"seat {seat}: {by} entered {chosen}: {why}")
        self.pending = None  # what the operator typed replaces what the camera was unsure of
        refused = self.submit(Play(seat, chosen), "console")
        if refused is None and self.eyes is not None:
            self.eyes.rebase([seat])
        return refused

    def undo(self, by: str, why: str) -> str | None:
        """Takes back the last action; returns None when done, else why not."""
        try:
            self.session.undo(by, why)
        except SessionError as error:
            return str(error)
        self.pending = None
        if self.eyes is not None:
            self.eyes.new_trick()
        return None

    def new_deck(self, by: str) -> LogEntry:
        """Tells the camera that another deck is on the table, and the room that it was told.

        The deck memory (``table.vision.memory``) holds how the old deck's marks
        looked; left alone, the new deck's marks would take over only as each rank is
        read surely forty times.

        :raises: :exc:`NoCameraError` when the table has no camera.
        """
        if self.eyes is None:
            raise NoCameraError(self.session.info.table)
        self.eyes.new_deck()
        learnt = (
            "; the model learnt for the old deck stays in use until [camera] model names"
            " one learnt for this deck (ddz-table vision learn) or is removed"
            if self.eyes.is_learnt
            else ""
        )
        return self.session.alert(
            "new_deck", f"{by} put a new deck on the table: the camera forgets the old one{learnt}"
        )

    def _refuse(self, seat: int | None, reason: str) -> None:
        self.session.alert("refused", f"seat {seat}: {reason}" if seat is not None else reason)
        self.error_seat = seat
        self._show_leds()

    # -- outputs ---------------------------------------------------------------

    def _after_entry(self, entry: LogEntry) -> None:
        self._show_leds()

    def _show_leds(self) -> None:
        if self.panel is None:
            return
        played = self.session.state.round
        plan = led_plan(played.state if played else None, self.seats, self.error_seat)
        for (seat, led), pattern in changes(self._leds, plan).items():
            self.panel.set_led(seat, led, pattern)
        self._leds = plan
