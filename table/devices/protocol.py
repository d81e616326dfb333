"""The panel's wire protocol (docs/protocol.md): COBS frames with a CRC-16, version 1.

Pure functions and values only, no I/O: the driver's reader thread feeds blocks in and
writes the bytes these functions return.

A frame is ``COBS(body + CRC16-BE(body)) + b"\\x00"`` where ``body`` is the protocol version,
the message type and its little-endian payload.

>>> encode_message(Ack(5)).hex()
'0401820503dc7b00'
>>> decode_message(decode_frame(bytes.fromhex("0401820503dc7b")))
Ack(seq=5)
"""

from __future__ import annotations

import binascii
import enum
import struct
from dataclasses import dataclass
from typing import assert_never

from table.devices.events import Key, KeyEvent, Led, PanelInfo

PROTOCOL_VERSION = 1
TERMINATOR = b"\x00"
SEAT_OPERATOR = 0xFF
BODY_MAX = 24


class MessageType(enum.IntEnum):
    """Names the message types; panel-to-host below 0x80, host-to-panel from 0x80."""

    HELLO = 0x01
    EVENT = 0x02
    HEARTBEAT = 0x03
    HELLO_REQUEST = 0x81
    ACK = 0x82
    SET_LED = 0x83
    SET_SESSION = 0x84


class FrameError(ValueError):
    """Reports a block that is not a valid frame (bad stuffing, length, CRC or version)."""


@dataclass(frozen=True)
class Hello:
    """Announces the panel at boot and on request; ``oldest_seq`` is its oldest unacked event."""

    fw_major: int
    fw_minor: int
    panel_id: int
    seats: int
    reset_cause: int
    oldest_seq: int
    panel_ms: int
    session: int

    def info(self) -> PanelInfo:
        """Returns the part of the HELLO the rest of the table cares about."""
        return PanelInfo(
            firmware=f"{self.fw_major}.{self.fw_minor}",
            panel_id=self.panel_id,
            seats=self.seats,
            reset_cause=self.reset_cause,
        )


@dataclass(frozen=True)
class Heartbeat:
    """Shows the panel is alive once a second, with its counters and the LED patterns it shows."""

    panel_ms: int
    next_seq: int
    pending: int
    rx_bad: int
    dropped: int
    session: int
    leds: tuple[int, ...]


@dataclass(frozen=True)
class HelloRequest:
    """Asks the panel for a HELLO."""


@dataclass(frozen=True)
class Ack:
    """Acknowledges every event up to and including ``seq`` (cumulative, modulo 2**16)."""

    seq: int


@dataclass(frozen=True)
class SetLed:
    """Sets one LED of one seat to a pattern byte (see :class:`table.devices.events.LedPattern`)."""

    seat: int
    led: Led
    pattern: int


@dataclass(frozen=True)
class SetSession:
    """Gives the panel the host's session number; a panel that shows another one was reset."""

    session: int


Message = Hello | KeyEvent | Heartbeat | HelloRequest | Ack | SetLed | SetSession

_HELLO = struct.Struct("<BBHBBHIH")
_EVENT = struct.Struct("<HIBBB")
_HEARTBEAT = struct.Struct("<IHBHHH")
_ACK = struct.Struct("<H")
_SET_LED = struct.Struct("<BBB")


def crc16(data: bytes) -> int:
    """Computes CRC-16/XMODEM, the same as avr-libc's ``_crc_xmodem_update``.

    >>> hex(crc16(b"123456789"))
    '0x31c3'
    """
    return binascii.crc_hqx(data, 0)


def cobs_encode(data: bytes) -> bytes:
    """Stuffs ``data`` so that it holds no zero byte (no terminator added).

    >>> cobs_encode(b"\\x11\\x00\\x22").hex()
    '02110222'
    """
    out = bytearray()
    block = bytearray()
    for byte in data:
        if byte == 0:
            out += bytes([len(block) + 1]) + block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out += b"\xff" + block
                block.clear()
    out += bytes([len(block) + 1]) + block
    return bytes(out)


def cobs_decode(block: bytes) -> bytes:
    """Undoes :func:`cobs_encode` for one block without its terminator.

    :raises FrameError: if the block holds a zero or a code runs past its end.
    """
    out = bytearray()
    i = 0
    while i < len(block):
        code = block[i]
        end = i + code
        if code == 0 or end > len(block):
            raise FrameError("bad COBS stuffing")
        chunk = block[i + 1 : end]
        if 0 in chunk:
            raise FrameError("zero byte inside a COBS block")
        out += chunk
        i = end
        if code != 0xFF and i < len(block):
            out.append(0)
    return bytes(out)


def encode_frame(body: bytes) -> bytes:
    """Frames a body: appends its CRC big-endian, stuffs it and adds the terminator."""
    return cobs_encode(body + crc16(body).to_bytes(2, "big")) + TERMINATOR


def decode_frame(block: bytes) -> bytes:
    """Checks one received block (terminator stripped) and returns the body.

    :raises FrameError: if the stuffing, length, CRC or protocol version is wrong.
    """
    raw = cobs_decode(block)
    if len(raw) < 4:
        raise FrameError(f"frame too short ({len(raw)} bytes)")
    if len(raw) > BODY_MAX + 2:
        raise FrameError(f"frame too long ({len(raw)} bytes)")
    if crc16(raw) != 0:
        raise FrameError("CRC mismatch")
    if raw[0] != PROTOCOL_VERSION:
        raise FrameError(f"protocol version {raw[0]}, expected {PROTOCOL_VERSION}")
    return raw[:-2]


def _unpack(layout: struct.Struct, payload: bytes, name: str) -> tuple[int, ...]:
    """Unpacks a fixed-size payload, turning a length mismatch into a FrameError."""
    if len(payload) != layout.size:
        raise FrameError(f"{name} payload of {len(payload)} bytes, expected {layout.size}")
    return layout.unpack(payload)


def decode_message(body: bytes) -> Message:
    """Turns a frame body into a message value.

    :raises FrameError: if the type is unknown or the payload does not fit it.
    """
    if len(body) < 2:
        raise FrameError("body without a message type")
    kind, payload = body[1], body[2:]
    if kind == MessageType.HELLO:
        return Hello(*_unpack(_HELLO, payload, "HELLO"))
    if kind == MessageType.EVENT:
        seq, ms, seat, key, pressed = _unpack(_EVENT, payload, "EVENT")
        if key not in Key._value2member_map_ or pressed > 1:
            raise FrameError(f"EVENT with key {key} state {pressed}")
        return KeyEvent(None if seat == SEAT_OPERATOR else seat, Key(key), bool(pressed), seq, ms)
    if kind == MessageType.HEARTBEAT:
        fixed = payload[: _HEARTBEAT.size]
        leds = payload[_HEARTBEAT.size :]
        if len(leds) % 2:
            raise FrameError("HEARTBEAT with an odd number of LED bytes")
        return Heartbeat(*_unpack(_HEARTBEAT, fixed, "HEARTBEAT"), leds=tuple(leds))
    if kind == MessageType.HELLO_REQUEST:
        _unpack(struct.Struct(""), payload, "HELLO_REQUEST")
        return HelloRequest()
    if kind == MessageType.ACK:
        return Ack(*_unpack(_ACK, payload, "ACK"))
    if kind == MessageType.SET_SESSION:
        return SetSession(*_unpack(_ACK, payload, "SET_SESSION"))
    if kind == MessageType.SET_LED:
        seat, led, pattern = _unpack(_SET_LED, payload, "SET_LED")
        if led not in Led._value2member_map_:
            raise FrameError(f"SET_LED for LED {led}")
        return SetLed(seat, Led(led), pattern)
    raise FrameError(f"unknown message type 0x{kind:02x}")


def encode_body(message: Message) -> bytes:
    """Returns the frame body (version, type, payload) of a message."""
    head = bytes([PROTOCOL_VERSION])
    match message:
        case Hello():
            return (
                head
                + bytes([MessageType.HELLO])
                + _HELLO.pack(
                    message.fw_major,
                    message.fw_minor,
                    message.panel_id,
                    message.seats,
                    message.reset_cause,
                    message.oldest_seq,
                    message.panel_ms,
                    message.session,
                )
            )
        case KeyEvent():
            seat = SEAT_OPERATOR if message.seat is None else message.seat
            payload = _EVENT.pack(message.seq, message.panel_ms, seat, message.key, message.pressed)
            return head + bytes([MessageType.EVENT]) + payload
        case Heartbeat():
            fixed = _HEARTBEAT.pack(
                message.panel_ms,
                message.next_seq,
                message.pending,
                message.rx_bad,
                message.dropped,
                message.session,
            )
            return head + bytes([MessageType.HEARTBEAT]) + fixed + bytes(message.leds)
        case HelloRequest():
            return head + bytes([MessageType.HELLO_REQUEST])
        case Ack():
            return head + bytes([MessageType.ACK]) + _ACK.pack(message.seq)
        case SetLed():
            payload = _SET_LED.pack(message.seat, message.led, message.pattern)
            return head + bytes([MessageType.SET_LED]) + payload
        case SetSession():
            return head + bytes([MessageType.SET_SESSION]) + _ACK.pack(message.session)
        case _:
            assert_never(message)


def encode_message(message: Message) -> bytes:
    """Returns the bytes on the wire for one message, terminator included."""
    return encode_frame(encode_body(message))


def seq_after(seq: int, reference: int) -> int:
    """Returns how far ``seq`` lies after ``reference`` in 16-bit sequence space (-32768..32767).

    >>> seq_after(2, 65534), seq_after(65534, 2)
    (4, -4)
    """
    return (seq - reference + 0x8000) % 0x10000 - 0x8000
