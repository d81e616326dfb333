"""Values the button panel hands to the rest of the table: key events, LED states, link notices.

These types carry no I/O; the driver (:mod:`table.devices.driver`) and the simulated panel
(:mod:`table.devices.simulated`) both deliver them, so the controller cannot tell the two apart.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Key(enum.IntEnum):
    """Names the panel's keys; the values are the key codes on the wire.

    >>> Key.from_name("bid2")
    <Key.BID2: 2>
    """

    PASS = 0
    BID1 = 1
    BID2 = 2
    BID3 = 3
    PLAY = 4
    UNDO = 5
    OK = 6

    @property
    def is_operator(self) -> bool:
        """Tells whether the key sits on the operator's row rather than at a seat."""
        return self in (Key.UNDO, Key.OK)

    @classmethod
    def from_name(cls, name: str) -> Key:
        """Parses a key name, case-insensitive, as typed on a command line.

        :raises ValueError: if no key has that name.
        """
        try:
            return cls[name.strip().upper().replace(" ", "")]
        except KeyError:
            names = ", ".join(k.name.lower() for k in cls)
            raise ValueError(f"unknown key {name!r}; expected one of {names}") from None


SEAT_KEYS: tuple[Key, ...] = (Key.PASS, Key.BID1, Key.BID2, Key.BID3, Key.PLAY)
OPERATOR_KEYS: tuple[Key, ...] = (Key.UNDO, Key.OK)
MAX_SEATS = 4


@dataclass(frozen=True)
class KeyEvent:
    """Reports one debounced press or release, exactly once, in panel order.

    ``seat`` is ``None`` for the operator's keys. ``seq`` is the panel's 16-bit event counter
    and ``panel_ms`` its millisecond clock when the key settled.

    >>> KeyEvent(1, Key.PLAY, True, 7, 1500)
    KeyEvent(seat=1, key=<Key.PLAY: 4>, pressed=True, seq=7, panel_ms=1500)
    """

    seat: int | None
    key: Key
    pressed: bool
    seq: int
    panel_ms: int


class Led(enum.IntEnum):
    """Names the two LEDs of a seat; the values are the LED codes on the wire."""

    TURN = 0
    ERROR = 1


class LedPattern(enum.IntEnum):
    """Names common LED patterns.

    A pattern is one byte: eight 125 ms slots of a one-second loop, most significant bit
    first, 1 = lit. Any byte is allowed; these are the usual ones.

    >>> LedPattern.BLINK.is_lit_at(0), LedPattern.BLINK.is_lit_at(600)
    (True, False)
    """

    OFF = 0x00
    ON = 0xFF
    BLINK = 0xF0
    FAST_BLINK = 0xAA
    BLIP = 0x80

    def is_lit_at(self, panel_ms: int) -> bool:
        """Tells whether the LED is lit at a given panel time."""
        return pattern_is_lit(int(self), panel_ms)


def pattern_is_lit(pattern: int, panel_ms: int) -> bool:
    """Tells whether an LED showing ``pattern`` is lit at ``panel_ms``, as the firmware does."""
    slot = (panel_ms // 125) % 8
    return bool((pattern << slot) & 0x80)


@dataclass(frozen=True)
class PanelInfo:
    """Describes a panel from its HELLO: firmware version, id, seat count, why it last reset."""

    firmware: str
    panel_id: int
    seats: int
    reset_cause: int

    @property
    def reset_reason(self) -> str:
        """Names the reset cause from the MCUSR bits: watchdog, brown-out, external, power-on."""
        for bit, name in ((3, "watchdog"), (2, "brown-out"), (1, "external"), (0, "power-on")):
            if self.reset_cause & (1 << bit):
                return name
        return "unknown"


@dataclass(frozen=True)
class PanelBack:
    """Reports that the panel answered (again) on ``port``; sent on every (re)connection."""

    info: PanelInfo
    port: str


@dataclass(frozen=True)
class PanelLost:
    """Reports that the panel stopped answering; the driver keeps trying to reconnect."""

    reason: str


PanelNotice = KeyEvent | PanelBack | PanelLost
