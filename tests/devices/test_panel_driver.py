"""PanelDriver against a protocol-level fake panel on ``socket://``, and its framing on ``loop://``.

The fake lets each test send exactly the frames it wants (repeats, gaps, garbage, resets), which
the real firmware in simavr (tests/firmware) would only produce by chance.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial
import serial.threaded

from table.devices.driver import PanelDriver, PanelPacketizer, resolve_port
from table.devices.events import Key, KeyEvent, Led, LedPattern, PanelBack, PanelLost
from table.devices.protocol import (
    Ack,
    Heartbeat,
    Hello,
    HelloRequest,
    Message,
    SetLed,
    SetSession,
    decode_frame,
    decode_message,
    encode_message,
)
from table.errors import UserError


class FakePanel:
    """Plays the panel's side of the protocol on a TCP port, one host connection at a time."""

    def __init__(self, *, answers_hello: bool = True, port: int = 0) -> None:
        self._server = socket.create_server(("127.0.0.1", port), reuse_port=True)
        self.url = f"socket://127.0.0.1:{self._server.getsockname()[1]}"
        self.answers_hello = answers_hello
        self.session = 0
        self.oldest_seq = 0
        self.panel_ms = 1000
        self.received: list[Message] = []
        self._conn: socket.socket | None = None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._cond:
                self._conn = conn
                self._cond.notify_all()
            buffer = b""
            while True:
                try:
                    chunk = conn.recv(4096)
                except OSError:
                    break
                if not chunk:
                    break
                buffer += chunk
                *blocks, buffer = buffer.split(b"\x00")
                for block in blocks:
                    if block:
                        self._handle(decode_message(decode_frame(block)), conn)
            conn.close()

    def _handle(self, message: Message, conn: socket.socket) -> None:
        """Takes one message from the host, answering on the connection it came by.

        A message read after :meth:`unplug` crossed a pulled cable: it is dropped,
        and an answer to it must not wait for the next connection, which only
        this same thread can accept.
        """
        with self._cond:
            if conn is not self._conn:
                return
            self.received.append(message)
            self._cond.notify_all()
        if isinstance(message, SetSession):
            self.session = message.session
        if isinstance(message, HelloRequest | SetSession) and self.answers_hello:
            try:
                conn.sendall(encode_message(self._hello()))
            except OSError:  # unplugged between reading and answering
                return

    def _hello(self) -> Hello:
        return Hello(1, 0, 9, 4, 2, self.oldest_seq, self.panel_ms, self.session)

    def hello(self) -> None:
        """Sends a HELLO describing the fake's current state."""
        self.send(self._hello())

    def send(self, message: Message | bytes) -> None:
        """Sends a message (framed) or raw bytes to the connected host."""
        data = message if isinstance(message, bytes) else encode_message(message)
        with self._cond:
            assert self._cond.wait_for(lambda: self._conn is not None, timeout=5)
            assert self._conn is not None
            self._conn.sendall(data)

    def event(self, seq: int, key: Key = Key.PLAY, seat: int | None = 0) -> KeyEvent:
        """Sends one EVENT frame and returns the event it carries."""
        event = KeyEvent(seat, key, True, seq, self.panel_ms + seq)
        self.send(event)
        return event

    def unplug(self) -> None:
        """Drops the host's connection, as a pulled cable would."""
        with self._cond:
            conn, self._conn = self._conn, None
        assert conn is not None
        conn.shutdown(socket.SHUT_RDWR)

    def wait_received(self, predicate: Callable[[Message], bool], timeout: float = 5.0) -> Message:
        """Waits until the host has sent a message matching predicate."""
        with self._cond:
            assert self._cond.wait_for(
                lambda: any(predicate(m) for m in self.received), timeout=timeout
            ), f"host never sent it; got {self.received}"
            return next(m for m in self.received if predicate(m))

    def close(self) -> None:
        self._server.shutdown(socket.SHUT_RDWR)  # wakes accept() on Linux
        self._server.close()
        with self._cond:
            if self._conn is not None:
                self._conn.close()
        self._thread.join(timeout=5)


@pytest.fixture
def fake() -> Iterator[FakePanel]:
    panel = FakePanel()
    yield panel
    panel.close()


@pytest.fixture
def driver(fake: FakePanel) -> Iterator[PanelDriver]:
    panel = PanelDriver(fake.url, backoff=(0.02, 0.2))
    info = panel.start()
    assert info is not None and info.panel_id == 9
    assert isinstance(panel.get(timeout=5), PanelBack)
    yield panel
    panel.stop()


def test_events_are_delivered_once_in_order_and_acknowledged(
    fake: FakePanel, driver: PanelDriver
) -> None:
    first = fake.event(0)
    fake.event(0)  # a repeat: the ACK was lost
    fake.event(2)  # past a gap: seq 1 was lost
    second = fake.event(1, Key.BID3)
    third = fake.event(2, Key.PASS, seat=None)
    assert [driver.get(timeout=5) for _ in range(3)] == [first, second, third]
    fake.wait_received(lambda m: m == Ack(2))
    stats = driver.stats
    assert (stats.events, stats.duplicates, stats.gaps) == (3, 1, 1)


def test_garbage_is_counted_and_framing_resynchronises(
    fake: FakePanel, driver: PanelDriver
) -> None:
    fake.send(b"\x13\x37garbage\x00\x05\x01\x02\x00" + b"\x55" * 200)
    fake.send(b"\x00")
    event = fake.event(0)
    assert driver.get(timeout=5) == event
    assert driver.stats.corrupt_frames == 3


def test_reconnect_keeps_the_sequence_of_the_same_panel(
    fake: FakePanel, driver: PanelDriver
) -> None:
    fake.event(0)
    assert isinstance(driver.get(timeout=5), KeyEvent)
    # The premise: the panel holds our session before the cable goes. (A panel unplugged
    # before SET_SESSION arrived looks reset on reconnect, and rightly so.)
    fake.wait_received(lambda m: isinstance(m, SetSession))
    fake.unplug()
    assert isinstance(driver.get(timeout=5), PanelLost)
    assert isinstance(driver.get(timeout=5), PanelBack)
    fake.event(0)  # resent after the reconnect: the driver already has it
    event = fake.event(1)
    assert driver.get(timeout=5) == event
    assert driver.stats.connects == 2


def test_panel_reset_restarts_the_sequence(fake: FakePanel, driver: PanelDriver) -> None:
    fake.event(0)
    fake.event(1)
    driver.get(timeout=5)
    driver.get(timeout=5)
    fake.session, fake.panel_ms = 0, 3
    fake.hello()  # the HELLO a panel sends at boot
    lost = driver.get(timeout=5)
    assert isinstance(lost, PanelLost) and "restarted" in lost.reason
    assert isinstance(driver.get(timeout=5), PanelBack)
    event = fake.event(0)
    assert driver.get(timeout=5) == event


def test_heartbeat_without_our_session_asks_for_hello(fake: FakePanel, driver: PanelDriver) -> None:
    count = sum(isinstance(m, HelloRequest) for m in fake.received)
    fake.send(Heartbeat(5, 0, 0, 0, 0, 0, (0,) * 8))
    fake.wait_received(lambda m: sum(isinstance(x, HelloRequest) for x in fake.received) > count)


def test_leds_are_sent_and_reconciled_from_heartbeats(fake: FakePanel, driver: PanelDriver) -> None:
    driver.set_led(2, Led.ERROR, LedPattern.BLINK)
    wanted = SetLed(2, Led.ERROR, LedPattern.BLINK)
    fake.wait_received(lambda m: m == wanted)
    fake.received.clear()
    fake.send(Heartbeat(2000, 0, 0, 0, 0, fake.session, (0,) * 8))
    fake.wait_received(lambda m: m == wanted)
    with pytest.raises(ValueError, match="seat 4"):
        driver.set_led(4, Led.TURN, LedPattern.ON)


def test_silent_port_gives_one_clear_error() -> None:
    mute = FakePanel(answers_hello=False)
    try:
        with pytest.raises(UserError, match="no HELLO"):
            PanelDriver(mute.url, hello_timeout=0.3).start()
    finally:
        mute.close()


def test_missing_port_gives_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        PanelDriver(str(tmp_path / "ttyACM9")).start()


def test_port_specs_resolve(tmp_path: Path) -> None:
    assert resolve_port("loop://") == "loop://"
    device = tmp_path / "ttyUSB0"
    device.touch()
    assert resolve_port(str(device)) == str(device)
    with pytest.raises(UserError, match="USB id ffff:fffe"):
        resolve_port("ffff:fffe")


class _Recorder:
    """Stands in for the driver behind a PanelPacketizer."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.corrupt: list[str] = []
        self.ended = threading.Event()
        self.arrived = threading.Condition()

    def _received(self, message: Message) -> None:
        with self.arrived:
            self.messages.append(message)
            self.arrived.notify_all()

    def _corrupt(self, why: str) -> None:
        self.corrupt.append(why)

    def _connection_ended(self, exc: BaseException | None) -> None:
        self.ended.set()


def test_packetizer_splits_frames_on_loop_url() -> None:
    recorder = _Recorder()
    port = serial.serial_for_url("loop://", timeout=1)
    messages: list[Message] = [KeyEvent(s, Key(s), bool(s % 2), s, 10 * s) for s in range(4)]
    wire = b"".join(encode_message(m) for m in messages)
    with serial.threaded.ReaderThread(port, lambda: PanelPacketizer(recorder)) as protocol:  # type: ignore[arg-type]
        for start in range(0, len(wire), 7):  # frames cut at arbitrary points
            protocol.transport.write(wire[start : start + 7])
        protocol.transport.write(b"\xff" * 100 + b"\x00" + encode_message(Ack(3)))
        with recorder.arrived:
            assert recorder.arrived.wait_for(lambda: len(recorder.messages) == 5, timeout=5)
    assert recorder.messages == [*messages, Ack(3)]
    assert recorder.corrupt == ["overlong block"]
    assert recorder.ended.wait(timeout=5)


def test_driver_survives_its_own_echo_on_loop_url() -> None:
    # loop:// returns what the driver writes: host messages, never a HELLO.
    driver = PanelDriver("loop://", hello_timeout=0.3)
    with pytest.raises(UserError, match="no HELLO from a panel on loop://"):
        driver.start()
    assert driver.stats.corrupt_frames > 0


def test_driver_started_before_the_panel_connects_when_it_appears() -> None:
    probe = socket.create_server(("127.0.0.1", 0), reuse_port=True)
    port = probe.getsockname()[1]
    probe.close()
    driver = PanelDriver(f"socket://127.0.0.1:{port}", backoff=(0.02, 0.1))
    assert driver.start(wait=False) is None
    late = FakePanel(port=port)
    try:
        back = driver.get(timeout=5)
        assert isinstance(back, PanelBack) and driver.is_connected
        event = late.event(0)
        assert driver.get(timeout=5) == event
    finally:
        driver.stop()
        late.close()
