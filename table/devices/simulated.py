"""A panel without hardware, for the demo and for people without a soldering iron.

:class:`SimulatedPanel` has the driver's interface (start, stop, get, set_led, notices), so the
controller takes either. Keys are pressed by a script (:func:`parse_script`), by code
(:meth:`SimulatedPanel.press`) or from a terminal (:func:`keyboard_loop`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from table.devices.driver import NoticeSink, PanelStats
from table.devices.events import (
    MAX_SEATS,
    Key,
    KeyEvent,
    Led,
    PanelBack,
    PanelInfo,
    PanelLost,
    PanelNotice,
)
from table.devices.notices import NoticeQueue
from table.errors import UserError

SIM_PORT = "sim://"

# Keyboard mode: one keyboard row per seat, keys in the order PASS, BID 1, BID 2, BID 3, PLAY.
KEYBOARD_ROWS: tuple[str, ...] = ("qwert", "asdfg", "zxcvb", "yuiop")
KEYBOARD_OPERATOR: dict[str, Key] = {"-": Key.UNDO, "\x7f": Key.UNDO, "\r": Key.OK, "\n": Key.OK}
KEYBOARD_QUIT = ("\x03", "\x04", "\x1b")


class SimulatedPanel(NoticeQueue):
    """Produces the same notices as :class:`~table.devices.driver.PanelDriver`, from code.

    >>> panel = SimulatedPanel(seats=3)
    >>> panel.start().seats
    3
    >>> panel.press(1, Key.BID2)
    >>> [type(n).__name__ for n in (panel.get(0), panel.get(0), panel.get(0))]
    ['PanelBack', 'KeyEvent', 'KeyEvent']
    """

    def __init__(
        self,
        *,
        seats: int = MAX_SEATS,
        on_notice: NoticeSink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 1 <= seats <= MAX_SEATS:
            raise ValueError(f"a panel serves 1..{MAX_SEATS} seats, not {seats}")
        self.port = SIM_PORT
        self._seats = seats
        self._on_notice = on_notice
        super().__init__()
        self._clock = clock
        self._epoch = clock()
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._connected = False
        self._events = 0
        self.leds: dict[tuple[int, Led], int] = {}

    @property
    def is_connected(self) -> bool:
        """Tells whether the simulated panel is plugged in."""
        return self._connected

    @property
    def info(self) -> PanelInfo:
        """Describes the simulated panel as a HELLO would."""
        return PanelInfo(firmware="sim", panel_id=0, seats=self._seats, reset_cause=1)

    @property
    def stats(self) -> PanelStats:
        """Returns link counters; a simulated link never corrupts a frame."""
        return PanelStats(events=self._events, connects=1 if self._connected else 0)

    def start(self, *, wait: bool = True) -> PanelInfo:
        """Plugs the panel in; ``wait`` is accepted for the driver's signature."""
        self.replug()
        return self.info

    def stop(self) -> None:
        """Unplugs the panel without a notice, as the driver does when stopped."""
        self._connected = False

    def set_led(self, seat: int, led: Led, pattern: int) -> None:
        """Records the LED pattern, checked like the driver checks it.

        :raises ValueError: for a seat or pattern out of range.
        """
        if not 0 <= seat < self._seats:
            raise ValueError(f"seat {seat} out of range 0..{self._seats - 1}")
        if not 0 <= pattern <= 0xFF:
            raise ValueError(f"LED pattern {pattern} is not a byte")
        self.leds[(seat, Led(led))] = pattern

    def press(self, seat: int | None, key: Key) -> None:
        """Presses and releases a key: two events, as a real tap gives."""
        self.key_down(seat, key)
        self.key_up(seat, key)

    def key_down(self, seat: int | None, key: Key) -> None:
        """Presses a key and holds it."""
        self._emit(seat, key, True)

    def key_up(self, seat: int | None, key: Key) -> None:
        """Releases a held key."""
        self._emit(seat, key, False)

    def unplug(self) -> None:
        """Pulls the cable: a PanelLost notice; keys do nothing until :meth:`replug`."""
        if self._connected:
            self._connected = False
            self._notify(PanelLost("simulated unplug"))

    def replug(self) -> None:
        """Plugs the cable back: a PanelBack notice."""
        if not self._connected:
            self._connected = True
            self._notify(PanelBack(self.info, self.port))

    def play(
        self, steps: Iterable[ScriptStep], sleep: Callable[[float], None] = time.sleep
    ) -> None:
        """Runs script steps in order, sleeping through ``wait`` steps."""
        for step in steps:
            if step.action == "wait":
                sleep(step.seconds)
            elif step.action == "unplug":
                self.unplug()
            elif step.action == "replug":
                self.replug()
            else:
                assert step.key is not None
                {"press": self.press, "down": self.key_down, "up": self.key_up}[step.action](
                    step.seat, step.key
                )

    def _emit(self, seat: int | None, key: Key, pressed: bool) -> None:
        if key.is_operator != (seat is None):
            raise ValueError(_owner_error(key))
        if seat is not None and not 0 <= seat < self._seats:
            raise ValueError(f"seat {seat} out of range 0..{self._seats - 1}")
        if not self._connected:
            return
        with self._lock:
            seq = next(self._seq) & 0xFFFF
            self._events += 1
        panel_ms = int((self._clock() - self._epoch) * 1000)
        self._notify(KeyEvent(seat, key, pressed, seq, panel_ms))

    def _notify(self, notice: PanelNotice) -> None:
        if self._on_notice is None:
            self._notices.put(notice)
        else:
            self._on_notice(notice)


@dataclass(frozen=True)
class ScriptStep:
    """Is one line of a panel script: a key action, a wait, or a cable action."""

    action: str
    seat: int | None = None
    key: Key | None = None
    seconds: float = 0.0


def parse_script(text: str) -> list[ScriptStep]:
    """Parses a panel script: one step a line (or ``;``-separated), ``#`` starts a comment.

    Steps: ``press SEAT KEY``, ``down SEAT KEY``, ``up SEAT KEY`` (SEAT a number, or ``op`` for
    the operator's UNDO and OK), ``wait SECONDS``, ``unplug``, ``replug``.

    >>> parse_script("press 0 bid1; wait 0.5; press op ok")[2]
    ScriptStep(action='press', seat=None, key=<Key.OK: 6>, seconds=0.0)

    :raises UserError: naming the first bad line.
    """
    steps = []
    for number, raw in enumerate(text.replace(";", "\n").splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        try:
            steps.append(_parse_step(words))
        except ValueError as error:
            raise UserError(f"script line {number} {raw.strip()!r}: {error}") from None
    return steps


def _owner_error(key: Key) -> str:
    return f"{key.name} is {'an operator key (seat op)' if key.is_operator else 'a seat key'}"


def _parse_step(words: list[str]) -> ScriptStep:
    action = words[0].lower()
    if action in ("unplug", "replug") and len(words) == 1:
        return ScriptStep(action)
    if action == "wait" and len(words) == 2:
        seconds = float(words[1])
        if seconds < 0:
            raise ValueError("wait needs a time of 0 seconds or more")
        return ScriptStep(action, seconds=seconds)
    if action in ("press", "down", "up") and len(words) == 3:
        seat = None if words[1].lower() == "op" else int(words[1])
        key = Key.from_name(words[2])
        if key.is_operator != (seat is None):
            raise ValueError(_owner_error(key))
        return ScriptStep(action, seat=seat, key=key)
    raise ValueError("expected press/down/up SEAT KEY, wait SECONDS, unplug or replug")


def keyboard_key(char: str, seats: int) -> tuple[int | None, Key] | None:
    """Maps a typed character to (seat, key) in keyboard mode, or None if it means nothing.

    >>> keyboard_key("s", 4)
    (1, <Key.BID1: 1>)
    """
    if char in KEYBOARD_OPERATOR:
        return None, KEYBOARD_OPERATOR[char]
    for seat, row in enumerate(KEYBOARD_ROWS[:seats]):
        if char.lower() in row:
            return seat, Key(row.index(char.lower()))
    return None


def keyboard_help(seats: int) -> str:
    """Describes the keyboard layout in a few lines for the terminal."""
    names = " ".join(k.name for k in Key if not k.is_operator)
    lines = [f"keys per seat, in the order {names}:"]
    lines += [f"  seat {seat}: {' '.join(row)}" for seat, row in enumerate(KEYBOARD_ROWS[:seats])]
    lines.append("  operator: '-' or Backspace = UNDO, Enter = OK; Esc or Ctrl-D quits")
    return "\n".join(lines)


def keyboard_loop(panel: SimulatedPanel, read_char: Callable[[], str]) -> None:
    """Turns typed characters into taps until a quit key or the end of input."""
    while True:
        char = read_char()
        if char == "" or char in KEYBOARD_QUIT:
            return
        mapped = keyboard_key(char, panel.info.seats)
        if mapped is not None:
            panel.press(*mapped)
