"""Host driver for the serial button panel: connects, delivers key events once, survives unplugging.

One supervisor thread opens the port, waits for the panel's HELLO and reconnects with backoff;
per connection a pyserial :class:`serial.threaded.ReaderThread` runs :class:`PanelPacketizer`,
the only code that reads the port. Events come out in panel order, each exactly once, as
:class:`~table.devices.events.KeyEvent` values, mixed with
:class:`~table.devices.events.PanelBack` and :class:`~table.devices.events.PanelLost` notices.
"""

from __future__ import annotations

import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import serial
import serial.threaded
from serial.tools import list_ports

from table.devices.events import (
    MAX_SEATS,
    KeyEvent,
    Led,
    PanelBack,
    PanelInfo,
    PanelLost,
    PanelNotice,
)
from table.devices.notices import NoticeQueue
from table.devices.protocol import (
    TERMINATOR,
    Ack,
    FrameError,
    Heartbeat,
    Hello,
    HelloRequest,
    Message,
    SetLed,
    SetSession,
    decode_frame,
    decode_message,
    encode_message,
    seq_after,
)
from table.errors import UserError

log = logging.getLogger(__name__)

BAUDRATE = 115200
HELLO_RETRY_S = 0.5
# Bounds how long stop() waits on ports without cancel_read (socket://, loop://).
READ_TIMEOUT_S = 0.2
MAX_BLOCK = 64
_USB_ID = re.compile(r"^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$")

NoticeSink = Callable[[PanelNotice], None]


@dataclass(frozen=True)
class PanelStats:
    """Counts what happened on the link, for the operator screen and for tests."""

    frames: int = 0
    corrupt_frames: int = 0
    events: int = 0
    duplicates: int = 0
    gaps: int = 0
    connects: int = 0
    panel_rx_bad: int = 0
    panel_dropped: int = 0


def resolve_port(spec: str) -> str:
    """Turns a port spec into something :func:`serial.serial_for_url` opens.

    A spec is a pyserial URL (``loop://``, ``socket://host:port``, ``rfc2217://...``), a device
    path (``/dev/ttyACM0``, ``/dev/serial/by-id/usb-Arduino...``), or a USB ``VID:PID`` such as
    ``2341:0043`` (the first matching device).

    :raises UserError: if the device does not exist or no USB device has that id.
    """
    if "://" in spec:
        return spec
    match = _USB_ID.match(spec)
    if match:
        vid, pid = (int(part, 16) for part in match.groups())
        for port in sorted(list_ports.comports(), key=lambda p: p.device):
            if port.vid == vid and port.pid == pid:
                return str(port.device)
        raise UserError(
            f"no serial device with USB id {spec}; plug in the panel "
            "or list devices with 'ddz-table panel ports'"
        )
    if not os.path.exists(spec):
        raise UserError(
            f"serial port {spec} does not exist; plug in the panel "
            "or list devices with 'ddz-table panel ports'"
        )
    return spec


class PanelPacketizer(serial.threaded.Packetizer):
    """Splits the byte stream at zero bytes and hands decoded messages to the driver.

    A block longer than any valid frame is cut off and counted as corrupt, so garbage without
    zeros cannot grow the buffer.
    """

    TERMINATOR = TERMINATOR

    def __init__(self, driver: PanelDriver) -> None:
        super().__init__()
        self._driver = driver
        self._overlong = False

    def data_received(self, data: bytes) -> None:
        """Buffers data and handles each complete block, bounding the buffer."""
        self.buffer.extend(data)
        while True:
            end = self.buffer.find(self.TERMINATOR)
            if end < 0:
                if len(self.buffer) > MAX_BLOCK:
                    self.buffer.clear()
                    self._overlong = True
                return
            packet = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            if self._overlong or len(packet) > MAX_BLOCK:
                self._overlong = False
                self._driver._corrupt("overlong block")
            else:
                self.handle_packet(packet)

    def handle_packet(self, packet: bytes) -> None:
        """Decodes one block; empty blocks are padding, bad ones are counted."""
        if not packet:
            return
        try:
            message = decode_message(decode_frame(packet))
        except FrameError as error:
            self._driver._corrupt(str(error))
            return
        self._driver._received(message)

    def connection_lost(self, exc: BaseException | None) -> None:
        """Tells the driver the port is gone (exc is None when we closed it).

        The base class would re-raise ``exc`` on the reader thread; the driver reports it instead.
        """
        self.transport = None
        self.buffer.clear()
        self._driver._connection_ended(exc)


class PanelReader(serial.threaded.ReaderThread):
    """Is pyserial's reader thread, also ending cleanly on an OSError from a vanished device.

    pyserial's loop catches only SerialException, but on a pseudo-terminal whose other end
    closed, ``in_waiting`` raises a bare OSError, which would kill the thread silently.
    """

    def run(self) -> None:
        """Reads until stopped or the port fails, then reports connection_lost once."""
        protocol = self.protocol_factory()
        self.protocol = protocol
        protocol.connection_made(self)
        self._connection_made.set()
        error: BaseException | None = None
        while self.alive and self.serial.is_open:
            try:
                data = self.serial.read(self.serial.in_waiting or 1)
            except (serial.SerialException, OSError) as failure:
                error = failure
                break
            if data:
                try:
                    protocol.data_received(data)
                except Exception as failure:
                    error = failure
                    break
        self.alive = False
        protocol.connection_lost(error)
        self.protocol = None


class PanelDriver(NoticeQueue):
    """Talks to one button panel on a serial port and keeps talking through unplugs.

    Notices (:class:`KeyEvent`, :class:`PanelBack`, :class:`PanelLost`) go to ``on_notice`` if
    given, called on the reader thread (keep it short), else to a queue read with :meth:`get`.

    >>> driver = PanelDriver("loop://")
    >>> driver.is_connected
    False
    """

    def __init__(
        self,
        port: str,
        *,
        on_notice: NoticeSink | None = None,
        hello_timeout: float = 3.0,
        silence_timeout: float = 3.0,
        backoff: tuple[float, float] = (0.1, 2.0),
        baudrate: int = BAUDRATE,
    ) -> None:
        self.port = port
        self._on_notice = on_notice
        super().__init__()
        self._hello_timeout = hello_timeout
        self._silence_timeout = silence_timeout
        self._backoff = backoff
        self._baudrate = baudrate
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._reader: serial.threaded.ReaderThread | None = None
        self._hello: Hello | None = None
        self._hello_ms: int | None = None
        self._confirmed = False
        self._info: PanelInfo | None = None
        self._connected = False
        self._ended: str | None = None
        self._last_frame = 0.0
        self._expected: int | None = None
        self._session = random.randrange(1, 0x10000)
        self._leds: dict[tuple[int, Led], int] = {}
        self._url = port
        self._stats = PanelStats()
        self._first_error: UserError | None = None
        self._first_done = threading.Event()

    # -- public interface -------------------------------------------------------------------

    @property
    def is_connected(self) -> bool:
        """Tells whether the panel has answered on the current connection."""
        return self._connected

    @property
    def info(self) -> PanelInfo | None:
        """Returns the last HELLO's description of the panel, or None before the first."""
        return self._info

    @property
    def stats(self) -> PanelStats:
        """Returns a snapshot of the link counters."""
        with self._lock:
            return self._stats

    def start(self, *, wait: bool = True) -> PanelInfo | None:
        """Starts the supervisor thread; with ``wait`` returns once the panel said HELLO.

        :raises UserError: with ``wait``, if the port is missing or the panel never answers.
        """
        if self._thread is not None:
            raise RuntimeError("driver already started")
        self._thread = threading.Thread(target=self._supervise, name="panel-driver", daemon=True)
        self._thread.start()
        if not wait:
            return None
        self._first_done.wait()
        if self._first_error is not None:
            self.stop()
            raise self._first_error
        return self._info

    def stop(self) -> None:
        """Closes the port and ends the supervisor thread."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def set_led(self, seat: int, led: Led, pattern: int) -> None:
        """Shows a pattern on one LED; kept and restored after reconnects and panel resets.

        :raises ValueError: for a seat or pattern out of range.
        """
        seats = self._info.seats if self._info else MAX_SEATS
        if not 0 <= seat < seats:
            raise ValueError(f"seat {seat} out of range 0..{seats - 1}")
        if not 0 <= pattern <= 0xFF:
            raise ValueError(f"LED pattern {pattern} is not a byte")
        with self._lock:
            self._leds[(seat, Led(led))] = pattern
            connected = self._connected
        if connected:
            self._send(SetLed(seat, Led(led), pattern))

    # -- supervisor thread ------------------------------------------------------------------

    def _supervise(self) -> None:
        """Connects, watches the link, and reconnects with exponential backoff until stopped."""
        delay = self._backoff[0]
        first = True
        while not self._stopping:
            reason = self._connect_once()
            if first:
                first = False
                if reason is not None:
                    self._first_error = UserError(reason)
                    self._first_done.set()
            if self._stopping:
                break
            if reason is None:
                delay = self._backoff[0]
            else:
                log.debug("panel not reachable: %s", reason)
            with self._wake:
                self._wake.wait_for(lambda: self._stopping, timeout=delay)
            delay = min(delay * 2, self._backoff[1])
        self._first_done.set()

    def _connect_once(self) -> str | None:
        """Runs one connection from open to loss; returns why it never came up, or None."""
        try:
            url = resolve_port(self.port)
            port = serial.serial_for_url(url, baudrate=self._baudrate, timeout=READ_TIMEOUT_S)
        except UserError as error:
            return str(error)
        except (serial.SerialException, OSError, ValueError) as error:
            return f"cannot open serial port {self.port}: {error}; check the cable and permissions"
        reader = PanelReader(port, lambda: PanelPacketizer(self))
        with self._lock:
            self._reader = reader
            self._ended = None
            self._hello = None
            self._hello_ms = None
            self._confirmed = False
        reader.start()
        try:
            if not self._await_hello():
                if self._stopping:
                    return None
                with self._lock:
                    ended = self._ended
                return (
                    f"panel on {self.port} stopped: {ended}"
                    if ended
                    else f"no HELLO from a panel on {self.port} within {self._hello_timeout:g} s; "
                    "is the panel firmware flashed and the port right?"
                )
            self._came_up(url)
            reason = self._watch()
            with self._lock:
                self._connected = False
            if not self._stopping:
                log.warning("panel lost on %s: %s", self.port, reason)
                self._notify(PanelLost(reason))
            return None
        finally:
            with self._lock:
                self._reader = None
                self._connected = False
            try:
                reader.close()
            except (serial.SerialException, OSError) as error:
                log.debug("closing %s: %s", self.port, error)

    def _await_hello(self) -> bool:
        """Asks for HELLO every half second until one comes, the port dies or time runs out."""
        deadline = time.monotonic() + self._hello_timeout
        while True:
            self._send(HelloRequest(), resync=True)
            with self._wake:
                retry = min(time.monotonic() + HELLO_RETRY_S, deadline)
                self._wake.wait_for(
                    lambda: self._hello is not None or self._ended or self._stopping,
                    timeout=max(0.0, retry - time.monotonic()),
                )
                if self._hello is not None:
                    return True
                if self._ended or self._stopping or time.monotonic() >= deadline:
                    return False

    def _came_up(self, url: str) -> None:
        """Marks the link up, restores the LEDs and tells the listeners."""
        with self._lock:
            self._connected = True
            self._url = url
            self._last_frame = time.monotonic()
            self._stats = replace(self._stats, connects=self._stats.connects + 1)
            info = self._info
            leds = list(self._leds.items())
        for (seat, led), pattern in leds:
            self._send(SetLed(seat, led, pattern))
        assert info is not None
        log.info("panel %d (firmware %s) on %s", info.panel_id, info.firmware, url)
        self._notify(PanelBack(info, url))
        self._first_done.set()

    def _watch(self) -> str:
        """Waits until the port fails, the panel falls silent, or the driver stops."""
        with self._wake:
            while not self._stopping:
                if self._ended:
                    return self._ended
                silent = time.monotonic() - self._last_frame
                if silent >= self._silence_timeout:
                    return f"no frame for {silent:.1f} s"
                self._wake.wait(timeout=self._silence_timeout - silent)
        return "driver stopped"

    # -- reader thread callbacks ------------------------------------------------------------

    def _corrupt(self, why: str) -> None:
        with self._lock:
            self._stats = replace(self._stats, corrupt_frames=self._stats.corrupt_frames + 1)
        log.debug("corrupt frame from %s: %s", self.port, why)

    def _connection_ended(self, exc: BaseException | None) -> None:
        with self._wake:
            self._ended = f"port closed ({exc})" if exc else "port closed"
            self._wake.notify_all()

    def _received(self, message: Message) -> None:
        """Dispatches one valid frame from the panel."""
        with self._wake:
            self._last_frame = time.monotonic()
            self._stats = replace(self._stats, frames=self._stats.frames + 1)
        match message:
            case Hello():
                self._on_hello(message)
            case KeyEvent():
                self._on_event(message)
            case Heartbeat():
                self._on_heartbeat(message)
            case _:
                self._corrupt(f"host message {type(message).__name__} from the panel")

    def _on_hello(self, hello: Hello) -> None:
        """Learns where the sequence starts: afresh unless the panel still has our session.

        A second HELLO on a connection, still without our session and with a clock that did not
        go back, answers a request sent before our SET_SESSION arrived: not a restart.
        """
        info = hello.info()
        with self._wake:
            ours = hello.session == self._session and self._expected is not None
            echo = (
                not self._confirmed
                and self._hello_ms is not None
                and hello.panel_ms >= self._hello_ms
            )
            self._confirmed = ours
            reset = not ours and not echo
            if reset:
                self._expected = hello.oldest_seq
            self._hello_ms = hello.panel_ms
            self._info = info
            was_connected = self._connected
            self._hello = hello
            self._wake.notify_all()
            leds = list(self._leds.items())
        if not ours:
            self._send(SetSession(self._session))
        if was_connected and reset:
            log.warning("panel %d restarted (%s)", info.panel_id, info.reset_reason)
            self._notify(PanelLost(f"panel restarted ({info.reset_reason} reset)"))
            for (seat, led), pattern in leds:
                self._send(SetLed(seat, led, pattern))
            self._notify(PanelBack(info, self._url))

    def _on_event(self, event: KeyEvent) -> None:
        """Delivers the expected event and acknowledges; drops repeats and events past a gap."""
        with self._lock:
            if self._expected is None or self._hello is None:
                # Until this connection's HELLO, an event may come from a panel that was reset
                # while we were away; acknowledging it as a repeat would lose it.
                return
            ahead = seq_after(event.seq, self._expected)
            if ahead == 0:
                self._expected = (event.seq + 1) & 0xFFFF
                self._stats = replace(self._stats, events=self._stats.events + 1)
                ack = event.seq
            elif ahead < 0:
                self._stats = replace(self._stats, duplicates=self._stats.duplicates + 1)
                ack = (self._expected - 1) & 0xFFFF
            else:
                self._stats = replace(self._stats, gaps=self._stats.gaps + 1)
                return
        self._send(Ack(ack))
        if ahead == 0:
            self._notify(event)

    def _on_heartbeat(self, beat: Heartbeat) -> None:
        """Spots a reset without HELLO, keeps the panel's counters, and re-sends stray LEDs."""
        with self._lock:
            restarted = beat.session != self._session
            self._confirmed = not restarted
            if restarted:
                # Take no events until a HELLO says whether the panel was reset.
                self._hello = None
            self._stats = replace(self._stats, panel_rx_bad=beat.rx_bad, panel_dropped=beat.dropped)
            stray = [
                (seat, led, pattern)
                for (seat, led), pattern in self._leds.items()
                if seat * 2 + led < len(beat.leds) and beat.leds[seat * 2 + led] != pattern
            ]
        if restarted:
            self._send(HelloRequest(), resync=True)
        for seat, led, pattern in stray:
            self._send(SetLed(seat, led, pattern))

    # -- helpers ----------------------------------------------------------------------------

    def _send(self, message: Message, *, resync: bool = False) -> None:
        """Writes one message; a leading zero first makes the panel drop any partial frame."""
        with self._lock:
            reader = self._reader
        if reader is None:
            return
        data = encode_message(message)
        try:
            reader.write(TERMINATOR + data if resync else data)
        except (serial.SerialException, OSError) as error:
            log.debug("write to %s failed: %s", self.port, error)

    def _notify(self, notice: PanelNotice) -> None:
        if self._on_notice is None:
            self._notices.put(notice)
            return
        try:
            self._on_notice(notice)
        except Exception:
            log.warning("panel notice handler failed on %r", notice, exc_info=True)
