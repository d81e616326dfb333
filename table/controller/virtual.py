"""The demo's table without hardware: a rendered camera and players who play by themselves.

:class:`VirtualTable` is a frame source: it renders the cards lying in each seat's
zone with the project's scene renderer, so the demo's readings go through the
real vision pipeline. :class:`SimPlayers` presses the simulated panel's keys for
every seat: random legal bids and plays, laid on the virtual table first.
"""

from __future__ import annotations

import hmac
import json
import queue
import random
import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from table.controller.eyes import Eyes, seat_zone
from table.controller.loop import Controller
from table.devices.events import Key
from table.devices.simulated import SimulatedPanel
from table.errors import UserError
from table.rules import (
    Bid,
    Cards,
    Pass,
    Phase,
    Play,
    RulesError,
    get_variant,
    parse_cards,
    to_dict,
)
from table.rules.simulate import deal, random_action
from table.session.entries import LogEntry, SessionError
from table.vision.synth import render_table
from web.access import CommandError, UnknownTableError
from web.seats import SeatView

DEMO_OPERATOR = "demo operator"
_PERSON = object()
"""Marks the turn of the seat a person plays: its action comes from the terminal."""
_BID_KEYS = {1: Key.BID1, 2: Key.BID2, 3: Key.BID3}
SceneKey = tuple[tuple[str, tuple[str, ...]], ...]
"""What lies in each zone, as a key to a scene's renders."""


class VirtualTable:
    """Renders the table as a camera would see it, at most ``fps`` frames a second.

    Rendering a scene costs about twice as much as reading it, so each scene is
    rendered ``VARIANTS`` times (light, blur, noise and JPEG differ, as between a
    camera's frames) and the frames cycle through those renders until the cards
    change: a table left alone (a person thinking) costs no rendering. Any
    ``VARIANTS`` frames in a row are distinct renders, so a card that one render
    makes unreadable is not misread in every frame, and the reader's check that
    a play reads the same in several frames keeps its meaning. The renders of
    the last ``scenes_kept`` scenes are kept (about 33 MB a scene), so a table
    that returns to a scene it showed before, as a rehearsed benchmark does,
    delivers frames as fast as a camera would.
    """

    VARIANTS = 12
    """Renders kept per scene: as many frames as a PLAY press looks at (2 before, 10 after)."""

    def __init__(
        self, seed: int, *, deck: str = "own0", fps: float = 8.0, scenes_kept: int = 1
    ) -> None:
        self.seed = seed
        self.deck = deck
        self._interval = 1.0 / fps
        self._scenes_kept = scenes_kept
        self._plays: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._frame = 0
        self._last = 0.0
        self._renders: OrderedDict[SceneKey, dict[int, np.ndarray]] = OrderedDict()

    def lay(self, seat: int, cards: Cards) -> None:
        """Puts a play down in the seat's zone, next to or over its earlier ones."""
        with self._lock:
            self._plays.setdefault(seat_zone(seat), []).append(str(cards))

    def take_back(self, seat: int) -> None:
        """Takes the seat's last play back into the hand."""
        with self._lock:
            plays = self._plays.get(seat_zone(seat))
            if plays:
                plays.pop()

    def clear(self) -> None:
        """Pushes every play aside, as players do when a trick is won."""
        with self._lock:
            self._plays.clear()

    def read(self) -> np.ndarray:
        """Gives the next frame: one of the scene's renders, rendered once when first needed."""
        wait = self._last + self._interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()
        with self._lock:
            plays = {zone: list(cards) for zone, cards in self._plays.items() if cards}
            self._frame += 1
            frame = self._frame
        key = tuple(sorted((zone, tuple(cards)) for zone, cards in plays.items()))
        renders = self._renders.setdefault(key, {})
        self._renders.move_to_end(key)  # the scene seen last is dropped last
        while len(self._renders) > self._scenes_kept:
            self._renders.popitem(last=False)
        variant = frame % self.VARIANTS
        if variant not in renders:
            renders[variant], _ = render_table(plays, self.seed, deck=self.deck, frame=frame)
        return renders[variant].copy()  # the caller's own, as a camera's frames are

    def close(self) -> None:
        """Nothing to release; here to be a frame source."""


class ScriptedTable(VirtualTable):
    """A virtual table whose cards a script sets: the camera source ``virtual:FILE``.

    ``FILE`` is JSON ``{"seed": 3, "zones": {"seat0": ["33", "4444"], ...}}``; it is
    read again whenever it changes, so a test or a rehearsal lays cards by
    rewriting it while ``ddz-table run`` watches.
    """

    PREFIX = "virtual:"

    def __init__(self, path: Path) -> None:
        self.path = path
        data = self._load()
        super().__init__(int(data.get("seed", 1)), deck=str(data.get("deck", "own0")))
        self._mtime = -1.0

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"virtual table file {self.path} not found") from None
        except json.JSONDecodeError as error:
            raise UserError(f"virtual table file {self.path} is not JSON: {error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("zones", {}), dict):
            raise UserError(f"virtual table file {self.path} needs an object with 'zones'")
        return data

    def read(self) -> np.ndarray:
        """Renders the cards the file lays now."""
        mtime = self.path.stat().st_mtime if self.path.exists() else -1.0
        if mtime != self._mtime:
            self._mtime = mtime
            zones = self._load().get("zones", {})
            with self._lock:
                self._plays = {str(zone): [str(p) for p in plays] for zone, plays in zones.items()}
        return super().read()


class SimPlayers:
    """Plays every seat of the demo by pressing the simulated panel's keys.

    It also stands in for the operator: an unsure reading is confirmed with the
    cards really laid, and a misread that the rules accepted is corrected.
    """

    def __init__(
        self,
        controller: Controller,
        panel: SimulatedPanel,
        table: VirtualTable,
        eyes: Eyes,
        *,
        seed: int,
        rounds: int | None,
        speed: float = 1.0,
        people: Iterable[int] = (),
    ) -> None:
        self.controller = controller
        self.panel = panel
        self.table = table
        self.eyes = eyes
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.pause = 0.6 / max(speed, 0.01)
        self.people = set(people)
        """Seats people play (terminal or browser); changed on the controller thread only."""
        self.person_actions: queue.Queue[Bid | Pass | Play] = queue.Queue()
        self.finished = threading.Event()
        self._moving = threading.Lock()
        """Held while a simulated move is chosen and made."""
        self._table_has_cards = False

    def deal(self) -> tuple[list[Cards], Cards]:
        """Deals the next round (the demo's referee may see the hands)."""
        return deal(self.rng, get_variant(self.controller.session.info.variant))

    def run(self, stop: threading.Event) -> None:
        """Plays until ``rounds`` rounds are settled or ``stop`` is set."""
        while not stop.wait(self.pause):
            with self._moving:
                action, trick_over = self.controller.call(self._next_action)
                if trick_over:
                    self._clear_table()
                if action is not _PERSON:
                    if action is None:
                        self.finished.set()
                        return
                    self._make(action, stop)
                    continue
            try:
                move = self.person_actions.get(timeout=0.5)
            except queue.Empty:
                continue
            if self.controller.call(lambda seat=move.seat: self._is_persons_turn(seat)):
                self._make(move, stop)  # else a move of a seat given back, or not on turn now

    def lend(self, seat: int, to_person: bool) -> None:
        """Gives a seat to a person, or back to the simulation.

        Waits for a simulated move in progress (cards laid, PLAY not yet read),
        so that none is made for a seat once a person holds it.
        """
        with self._moving:
            self.controller.call(
                lambda: self.people.add(seat) if to_person else self.people.discard(seat)
            )

    def _make(self, action: Bid | Pass | Play, stop: threading.Event) -> None:
        if isinstance(action, Play):
            self._play(action, stop)
        else:
            self._press(action, stop)

    def _seq(self) -> int:
        return self.controller.call(lambda: self.controller.session.state.seq)

    def _press(self, action: Bid | Pass, stop: threading.Event) -> None:
        seq = self._seq()
        key = _BID_KEYS[action.amount] if isinstance(action, Bid) else Key.PASS
        self.panel.press(action.seat, key)
        self._wait_for_change(seq, stop)

    def _play(self, play: Play, stop: threading.Event) -> None:
        """Lays the cards, presses PLAY, then acts as the operator if the camera erred."""
        self._table_has_cards = True
        self.table.lay(play.seat, play.cards)
        self.eyes.wait_frames(1, timeout=5)
        seq = self._seq()
        self.panel.press(play.seat, Key.PLAY)
        self._wait_for_change(seq, stop)
        if not self.controller.call(lambda: self._settle_reading(play)):
            self.table.take_back(play.seat)

    def _settle_reading(self, play: Play) -> bool:
        """Makes the log match the laid cards, as an operator would; false to take them back."""
        controller = self.controller
        cards = str(play.cards)
        if controller.pending is not None and controller.pending.seat == play.seat:
            return controller.confirm(cards, DEMO_OPERATOR, "the camera was not sure") is None
        rejection = controller.session.state.last_rejection
        if rejection is not None and rejection["action"] == to_dict(play):
            return False  # read right and refused by the rules: the cards go back to the hand
        played = controller.session.state.round
        last = played.actions[-1] if played is not None and played.actions else None
        if isinstance(last, Play) and last.seat == play.seat:
            if last.cards != play.cards:
                try:
                    controller.session.correct(play.seat, play.cards, DEMO_OPERATOR, "misread")
                except (RulesError, SessionError):
                    controller.undo(DEMO_OPERATOR, "the camera misread a play")
                    return False
            return True
        why = "the camera misread the cards"
        return controller.enter_play(play.seat, cards, DEMO_OPERATOR, why) is None

    def _wait_for_change(self, seq: int, stop: threading.Event) -> None:
        deadline = time.monotonic() + self.controller.read_timeout + 5
        while not stop.is_set() and time.monotonic() < deadline:
            if self._seq() != seq:
                return
            stop.wait(0.05)

    def _next_action(self) -> tuple[Bid | Pass | Play | object | None, bool]:
        """Picks the next key press on the controller thread, where the state is consistent.

        Also tells whether the cards on the table belong to a finished trick or round.
        """
        session = self.controller.session
        played = session.state.round
        if played is None or played.state.is_over:
            ledger = session.state.ledger
            if self.rounds is not None and ledger is not None and ledger.rounds >= self.rounds:
                return None, True
            seats = [seat for seat in range(self.controller.seats) if seat not in self.people]
            seat = self.rng.choice(seats)
            return self.rng.choice([Pass(seat), Bid(seat, 1), Bid(seat, 2), Bid(seat, 3)]), True
        trick_over = played.state.phase is Phase.PLAY and played.state.trick is None
        if played.state.turn in self.people:
            return _PERSON, trick_over
        return random_action(played, self.rng), trick_over

    def _is_persons_turn(self, seat: int) -> bool:
        played = self.controller.session.state.round
        on_turn = played is not None and not played.state.is_over and played.state.turn == seat
        return on_turn and seat in self.people

    def _clear_table(self) -> None:
        """Pushes the trick aside and lets the camera take the empty zones as the baseline."""
        if not self._table_has_cards:
            return
        self._table_has_cards = False
        self.table.clear()
        self.eyes.wait_frames(2, timeout=5)
        self.eyes.new_trick()
        self.eyes.wait_frames(1, timeout=5)


PERSON_HELP = "type: pass | bid 1 | bid 2 | bid 3 | play CARDS (like 33 or 345678) | hand | quit"


MESSAGES = 6
"""How many of the referee's last words a browser seat keeps for its page."""


def person_action(line: str, seat: int) -> Bid | Pass | Play:
    """Reads what the person at the terminal wants to do; the rules judge it later.

    :raises: :exc:`ValueError` with what to type instead.

    >>> person_action("play 3 3", 1)
    Play(seat=1, cards=Cards.from_str('33'))
    """
    words = line.split(maxsplit=1)
    verb = words[0].lower() if words else ""
    rest = words[1] if len(words) > 1 else ""
    if verb == "pass" and not rest:
        return Pass(seat)
    if verb == "bid" and rest.strip() in ("1", "2", "3"):
        return Bid(seat, int(rest))
    if verb == "play" and rest.strip():
        return Play(seat, parse_cards(rest))
    raise ValueError(f"{line.strip()!r} is not a move; {PERSON_HELP}")


class PersonSeat(ABC):
    """One seat of the demo that a person plays: their moves go in, the referee's words come out.

    The moves take the simulated players' path (cards laid on the virtual table,
    read by the camera, PLAY pressed on the simulated panel); subclasses say the
    referee's words where the person is (:meth:`_say`).
    """

    def __init__(self, players: SimPlayers, seat: int) -> None:
        self.players = players
        self.seat = seat
        self._session = players.controller.session
        self._session.listeners.append(self._told)

    def close(self) -> None:
        """Stops hearing the referee (the seat is given back)."""
        if self._told in self._session.listeners:
            self._session.listeners.remove(self._told)

    def submit(self, line: str) -> Bid | Pass | Play:
        """Queues the person's move; the rules judge it when it reaches the table.

        :raises: :exc:`ValueError` or :exc:`RulesError` saying what to do instead.
        """
        action = person_action(line, self.seat)
        turn = self.players.controller.call(self.turn)
        if turn != self.seat:
            on_turn = "no round is on" if turn is None else f"seat {turn} is on turn"
            raise ValueError(f"not your turn yet: {on_turn}")
        self.players.person_actions.put(action)
        return action

    def turn(self) -> int | None:
        """Gets the seat on turn, ``None`` between rounds (controller thread)."""
        played = self.players.controller.session.state.round
        return None if played is None or played.state.is_over else played.state.turn

    def hand(self) -> Cards | None:
        """Gets the seat's hand, ``None`` before a deal (controller thread)."""
        played = self.players.controller.session.state.round
        return played.state.hands[self.seat] if played is not None else None

    def _hand_text(self) -> str:
        hand = self.hand()
        return f"your hand: {hand}" if hand is not None else "no cards dealt yet"

    def task(self) -> str:
        """Says what the seat has to do now, or who is on turn (controller thread)."""
        turn = self.turn()
        played = self.players.controller.session.state.round
        if turn is None or played is None:
            return "waiting for the next deal"
        if turn != self.seat:
            return f"seat {turn} is on turn"
        if played.state.phase is Phase.AUCTION:
            return "your turn to bid"
        trick = played.state.trick
        return "your turn to lead" if trick is None else f"your turn to beat {trick.cards}"

    def _told(self, entry: LogEntry) -> None:
        """Tells the person what the referee just decided (on the controller thread)."""
        data = entry.data
        if entry.kind == "rejected" and data["action"].get("seat") == self.seat:
            self._say(f"refused: {data['reason']}")
        elif entry.kind in ("action", "correction"):
            action = data["action"]
            verb = {"bid": f"bids {action.get('amount')}", "pass": "passes"}.get(
                action["type"], f"plays {action.get('cards')}"
            )
            corrected = " (the misread play corrected)" if entry.kind == "correction" else ""
            self._say(f"seat {action.get('seat')} {verb}{corrected}")
        if entry.kind in ("action", "round_start") and self.turn() == self.seat:
            self._say(f"{self.task()}; {self._hand_text()}")

    @abstractmethod
    def _say(self, text: str) -> None:
        """Shows the person one line: the terminal prints it, the browser lists it."""


class TerminalSeat(PersonSeat):
    """Lets a person play one seat of the demo from the terminal."""

    def __init__(self, players: SimPlayers, seat: int, out: TextIO) -> None:
        self.out = out
        super().__init__(players, seat)

    def run(self, lines: Iterable[str], stop: threading.Event) -> None:
        """Reads moves until the input ends, ``quit`` or ``stop``."""
        self._say(f"You play seat {self.seat}. {PERSON_HELP}")
        for line in lines:
            if stop.is_set() or line.strip().lower() == "quit":
                break
            if not line.strip():
                continue
            if line.strip().lower() == "hand":
                self._say(self.players.controller.call(self._hand_text))
                continue
            try:
                self.submit(line)
            except (ValueError, RulesError) as error:
                self._say(str(error))
        stop.set()

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()


class BrowserSeat(PersonSeat):
    """A seat played from the demo's dashboard: the referee's last words wait for the page."""

    def __init__(self, players: SimPlayers, seat: int, token: str) -> None:
        self.token = token
        self.messages: deque[str] = deque(maxlen=MESSAGES)
        super().__init__(players, seat)

    def _say(self, text: str) -> None:
        self.messages.append(text)


class BrowserSeats:
    """Lends the demo's simulated seats to people at the dashboard (:class:`web.seats.SeatHost`).

    Whoever takes a seat gets a token, which the page keeps in its signed session
    cookie; only that token sees the seat's hand, moves for it or gives it back.
    One seat always stays simulated: its bid or pass deals the next round.
    """

    def __init__(self, players: SimPlayers) -> None:
        self.players = players
        self._held: dict[int, BrowserSeat] = {}
        self._lock = threading.Lock()

    def _check_table(self, table: str) -> None:
        if table != self.players.controller.session.info.table:
            raise UnknownTableError(table)

    def _seat(self, table: str, seat: int, token: str) -> BrowserSeat:
        self._check_table(table)
        with self._lock:
            held = self._held.get(seat)
        if held is None or not hmac.compare_digest(held.token, token):
            raise CommandError(f"you do not hold seat {seat}; take a free seat first")
        return held

    def free_seats(self, table: str) -> list[int]:
        """Lists the seats the simulated players play now, which a person may take."""
        self._check_table(table)
        people = self.players.controller.call(lambda: set(self.players.people))
        return [seat for seat in range(self.players.controller.seats) if seat not in people]

    def take(self, table: str, seat: int) -> str:
        """Hands a simulated seat to the person asking; returns the token that proves it.

        :raises: :exc:`CommandError` if there is no such seat, it is not free, or it is
            the last simulated one.
        """
        seats = self.players.controller.seats
        if not 0 <= seat < seats:
            raise CommandError(f"there is no seat {seat}; the seats are 0 to {seats - 1}")
        with self._lock:  # two browsers asking for one seat: the first gets it
            free = [s for s in self.free_seats(table) if s not in self._held]
            if seat not in free:
                raise CommandError(f"seat {seat} is not free; a person plays it already")
            if len(free) == 1:
                raise CommandError(
                    "one seat stays with the simulated players: its bid deals a round"
                )
            held = BrowserSeat(self.players, seat, secrets.token_urlsafe(16))
            self._held[seat] = held
        self.players.lend(seat, to_person=True)
        held.messages.append(f"You play seat {seat}. {self.players.controller.call(held.task)}")
        return held.token

    def give_back(self, table: str, seat: int, token: str) -> None:
        """Gives the seat back to the simulated players."""
        held = self._seat(table, seat, token)
        with self._lock:
            self._held.pop(seat, None)
        held.close()
        self.players.lend(seat, to_person=False)

    def view(self, table: str, seat: int, token: str) -> SeatView:
        """Gets what the seat's person sees: the hand, the task, the referee's last words."""
        held = self._seat(table, seat, token)

        def look() -> SeatView:
            played = self.players.controller.session.state.round
            hand = held.hand()
            return SeatView(
                seat=seat,
                hand=str(hand) if hand is not None else "",
                task=held.task(),
                on_turn=held.turn() == seat,
                phase=played.state.phase.value if played is not None else "waiting",
                messages=tuple(held.messages),
            )

        return self.players.controller.call(look)

    def act(self, table: str, seat: int, token: str, move: str) -> str:
        """Queues a move (``pass``, ``bid 2``, ``play 33``); says what happens next.

        :raises: :exc:`CommandError` with what to do instead.
        """
        held = self._seat(table, seat, token)
        try:
            action = held.submit(move)
        except (ValueError, RulesError) as error:
            raise CommandError(str(error)) from None
        if isinstance(action, Play):
            return f"{action.cards} laid on the table; the camera reads them and PLAY is pressed"
        return "bid made" if isinstance(action, Bid) else "pass made"
