"""Protocol tests: the byte vectors of docs/protocol.md (shared with the C tests) and properties."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from table.devices.events import Key, KeyEvent, Led, LedPattern, pattern_is_lit
from table.devices.protocol import (
    PROTOCOL_VERSION,
    Ack,
    FrameError,
    Heartbeat,
    Hello,
    SetLed,
    SetSession,
    cobs_decode,
    cobs_encode,
    crc16,
    decode_frame,
    decode_message,
    encode_body,
    encode_frame,
    encode_message,
    seq_after,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def vectors(kind: str) -> list[list[str]]:
    """Reads the lines of one kind from the doc's Test vectors section."""
    found = []
    section = False
    for line in DOC.read_text().splitlines():
        if line.startswith("## "):
            section = line.startswith("## Test vectors")
        words = line.split()
        if section and words and words[0] == kind:
            found.append(words[1:])
    assert found, f"no {kind} vectors in {DOC}"
    return found


def unhex(text: str) -> bytes:
    return b"" if text == "-" else bytes.fromhex(text)


@pytest.mark.parametrize(("data", "crc"), vectors("crc"))
def test_crc_vectors(data: str, crc: str) -> None:
    assert crc16(unhex(data)) == int(crc, 16)


@pytest.mark.parametrize(("name", "body", "wire"), vectors("frame"))
def test_frame_vectors(name: str, body: str, wire: str) -> None:
    assert encode_frame(unhex(body)) == unhex(wire), name
    assert decode_frame(unhex(wire)[:-1]) == unhex(body), name
    assert encode_body(decode_message(unhex(body))) == unhex(body), name


@pytest.mark.parametrize(("name", "block", "reason"), vectors("reject"))
def test_reject_vectors(name: str, block: str, reason: str) -> None:
    words = {"crc": "CRC", "cobs": "COBS", "short": "short", "version": "version"}
    with pytest.raises(FrameError, match=words[reason]):
        decode_frame(unhex(block))


@pytest.mark.parametrize(("name", "body", "wire"), vectors("invalid"))
def test_invalid_vectors(name: str, body: str, wire: str) -> None:
    assert decode_frame(unhex(wire)[:-1]) == unhex(body)
    with pytest.raises(FrameError):
        decode_message(unhex(body))


@given(st.binary(max_size=600))
def test_cobs_round_trip_without_zeros(data: bytes) -> None:
    stuffed = cobs_encode(data)
    assert 0 not in stuffed
    assert len(stuffed) <= len(data) + len(data) // 254 + 1
    assert cobs_decode(stuffed) == data


@given(st.binary(max_size=22))
def test_frames_round_trip(payload: bytes) -> None:
    body = bytes([PROTOCOL_VERSION, 0x42]) + payload
    wire = encode_frame(body)
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    assert decode_frame(wire[:-1]) == body


@given(st.binary(max_size=64))
def test_garbage_never_raises_anything_but_frame_error(block: bytes) -> None:
    with contextlib.suppress(FrameError):
        decode_message(decode_frame(block.replace(b"\x00", b"")))


@given(st.binary(min_size=1, max_size=20), st.integers(0, 1000))
def test_single_bit_flips_are_caught(payload: bytes, position: int) -> None:
    wire = bytearray(encode_frame(bytes([PROTOCOL_VERSION]) + payload)[:-1])
    bit = position % (len(wire) * 8)
    wire[bit // 8] ^= 1 << (bit % 8)
    assume(0 not in wire)  # a flip that makes a zero splits the frame; the receiver resyncs
    with pytest.raises(FrameError):
        decode_frame(bytes(wire))


@pytest.mark.parametrize(
    "message",
    [
        Hello(1, 0, 7, 3, 2, 65535, 2**32 - 1, 1),
        KeyEvent(None, Key.UNDO, True, 0, 0),
        KeyEvent(3, Key.PLAY, False, 65535, 123456),
        Heartbeat(5, 6, 7, 8, 9, 10, (0xFF, 0x00)),
        Ack(0),
        SetLed(2, Led.ERROR, LedPattern.FAST_BLINK),
        SetSession(0xFFFF),
    ],
)
def test_messages_round_trip(message: object) -> None:
    wire = encode_message(message)  # type: ignore[arg-type]
    assert decode_message(decode_frame(wire[:-1])) == message


def test_event_with_unknown_key_is_refused() -> None:
    body = encode_body(KeyEvent(0, Key.PASS, True, 1, 2))
    with pytest.raises(FrameError, match="key 9"):
        decode_message(body[:-2] + b"\x09\x01")


@pytest.mark.parametrize(
    ("seq", "reference", "ahead"), [(5, 5, 0), (6, 5, 1), (4, 5, -1), (0, 65535, 1), (65535, 0, -1)]
)
def test_seq_after_wraps(seq: int, reference: int, ahead: int) -> None:
    assert seq_after(seq, reference) == ahead


@pytest.mark.parametrize(
    ("pattern", "lit_slots"),
    [
        (LedPattern.OFF, ""),
        (LedPattern.ON, "01234567"),
        (LedPattern.BLINK, "0123"),
        (LedPattern.FAST_BLINK, "0246"),
        (LedPattern.BLIP, "0"),
    ],
)
def test_led_patterns_light_the_documented_slots(pattern: LedPattern, lit_slots: str) -> None:
    for ms in range(0, 2000, 125):
        assert pattern_is_lit(pattern, ms + 60) == (str((ms // 125) % 8) in lit_slots)
