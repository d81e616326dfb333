"""The demo's table without hardware: a rendered camera and players who play by themselves.

:class:`VirtualTable` is a frame source: it renders the cards lying in each seat's
zone with the project's scene renderer, so the demo's readings go through the
real vision pipeline. :class:`SimPlayers` presses the simulated panel's keys for
every seat: random legal bids and plays, laid on the virtual table first.
"""

from __future__ import annotations

import json
import queue
import random
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from table.controller.eyes import Eyes, seat_zone
from table.controller.loop import Controller
from table.devices.events import Key
from table.devices.simulated import SimulatedPanel
from table.errors import UserError
from table.rules import Bid, Cards, Pass, Phase, Play, RulesError, get_variant, parse_cards
from table.rules.simulate import deal, random_action
from table.session.entries import LogEntry, SessionError
from table.vision.synth import render_table

DEMO_OPERATOR = "demo operator"
_PERSON = object()
"""Marks the turn of the seat a person plays: its action comes from the terminal."""
_BID_KEYS = {1: Key.BID1, 2: Key.BID2, 3: Key.BID3}


class VirtualTable:
    """Renders the table as a camera would see it, at most ``fps`` frames a second."""

    def __init__(self, seed: int, *, deck: str = "own0", fps: float = 8.0) -> None:
        self.seed = seed
        self.deck = deck
        self._interval = 1.0 / fps
        self._plays: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self._frame = 0
        self._last = 0.0

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
        """Renders the next frame."""
        wait = self._last + self._interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()
        with self._lock:
            plays = {zone: list(cards) for zone, cards in self._plays.items() if cards}
            self._frame += 1
            frame = self._frame
        image, _ = render_table(plays, self.seed, deck=self.deck, frame=frame)
        return image

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
        person: int | None = None,
    ) -> None:
        self.controller = controller
        self.panel = panel
        self.table = table
        self.eyes = eyes
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.pause = 0.6 / max(speed, 0.01)
        self.person = person
        self.person_actions: queue.Queue[Bid | Pass | Play] = queue.Queue()
        self.finished = threading.Event()
        self._table_has_cards = False

    def deal(self) -> tuple[list[Cards], Cards]:
        """Deals the next round (the demo's referee may see the hands)."""
        return deal(self.rng, get_variant(self.controller.session.info.variant))

    def run(self, stop: threading.Event) -> None:
        """Plays until ``rounds`` rounds are settled or ``stop`` is set."""
        while not stop.wait(self.pause):
            action, trick_over = self.controller.call(self._next_action)
            if trick_over:
                self._clear_table()
            if action is _PERSON:
                try:
                    action = self.person_actions.get(timeout=0.5)
                except queue.Empty:
                    continue
            if action is None:
                self.finished.set()
                return
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
            seats = [seat for seat in range(self.controller.seats) if seat != self.person]
            seat = self.rng.choice(seats)
            return self.rng.choice([Pass(seat), Bid(seat, 1), Bid(seat, 2), Bid(seat, 3)]), True
        trick_over = played.state.phase is Phase.PLAY and played.state.trick is None
        if played.state.turn == self.person:
            return _PERSON, trick_over
        return random_action(played, self.rng), trick_over

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


class TerminalSeat:
    """Lets a person play one seat of the demo from the terminal."""

    def __init__(self, players: SimPlayers, seat: int, out: TextIO) -> None:
        self.players = players
        self.seat = seat
        self.out = out
        players.controller.session.listeners.append(self._told)

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
                action = person_action(line, self.seat)
            except (ValueError, RulesError) as error:
                self._say(str(error))
                continue
            turn = self.players.controller.call(self._turn)
            if turn != self.seat:
                self._say(f"not your turn yet: seat {turn} is on turn")
                continue
            self.players.person_actions.put(action)
        stop.set()

    def _turn(self) -> int | None:
        played = self.players.controller.session.state.round
        return None if played is None or played.state.is_over else played.state.turn

    def _hand_text(self) -> str:
        played = self.players.controller.session.state.round
        hand = played.state.hands[self.seat] if played is not None else None
        return f"your hand: {hand}" if hand is not None else "no cards dealt yet"

    def _told(self, entry: LogEntry) -> None:
        """Tells the person what the referee just decided (on the controller thread)."""
        data = entry.data
        if entry.kind == "rejected" and data["action"].get("seat") == self.seat:
            self._say(f"refused: {data['reason']}")
        elif entry.kind == "action":
            action = data["action"]
            verb = {"bid": f"bids {action.get('amount')}", "pass": "passes"}.get(
                action["type"], f"plays {action.get('cards')}"
            )
            self._say(f"seat {action.get('seat')} {verb}")
        if entry.kind in ("action", "round_start") and self._turn() == self.seat:
            self._say(f"your turn {self._task()}; {self._hand_text()}")

    def _task(self) -> str:
        played = self.players.controller.session.state.round
        assert played is not None
        if played.state.phase is Phase.AUCTION:
            return "to bid"
        trick = played.state.trick
        return "to lead" if trick is None else f"to beat {trick.cards}"

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()
