"""``ddz-table panel ...``: listen to a panel, set its LEDs, list ports, or simulate one."""

from __future__ import annotations

import argparse
import contextlib
import queue
import sys
import termios
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO, assert_never

from serial.tools import list_ports

from table.devices.driver import PanelDriver
from table.devices.events import (
    KeyEvent,
    Led,
    LedPattern,
    PanelBack,
    PanelLost,
    PanelNotice,
)
from table.devices.simulated import SimulatedPanel, keyboard_help, keyboard_loop, parse_script
from table.errors import UserError

PORT_HELP = "device path, /dev/serial/by-id/..., USB VID:PID (2341:0043) or a pyserial URL"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the ``panel`` command and its actions to the ``ddz-table`` parser."""
    panel = commands.add_parser("panel", help="serial button panel: listen, LEDs, ports, simulate")
    actions = panel.add_subparsers(dest="panel_action", required=True, metavar="ACTION")

    listen = actions.add_parser("listen", help="print key events and link notices from a panel")
    listen.add_argument("port", help=PORT_HELP)
    listen.add_argument("--count", type=int, help="stop after this many key events")
    listen.add_argument(
        "--hello-timeout", type=float, default=3.0, help="seconds to wait for HELLO (default 3)"
    )
    listen.set_defaults(func=_listen)

    led = actions.add_parser("led", help="set one LED of a seat, then exit")
    led.add_argument("port", help=PORT_HELP)
    led.add_argument("seat", type=int, help="seat number, 0..3")
    led.add_argument("led", help="turn or error")
    led.add_argument("pattern", help="off, on, blink, fast_blink, blip, or a byte such as 0xcc")
    led.set_defaults(func=_led)

    ports = actions.add_parser("ports", help="list serial ports with their USB ids")
    ports.set_defaults(func=_ports)

    sim = actions.add_parser("sim", help="simulated panel: keyboard mode, or run a script")
    sim.add_argument("--seats", type=int, default=4, help="seats on the panel (default 4)")
    sim.add_argument("--script", type=Path, help="script file (press 0 bid1 / wait 0.5 / ...)")
    sim.set_defaults(func=_sim)


def format_notice(notice: PanelNotice) -> str:
    """Describes a notice in one line, for people and for grep.

    >>> from table.devices.events import Key
    >>> format_notice(KeyEvent(None, Key.OK, True, 3, 1200))
    'event operator OK press seq 3 at 1200 ms'
    """
    match notice:
        case KeyEvent():
            who = "operator" if notice.seat is None else f"seat {notice.seat}"
            state = "press" if notice.pressed else "release"
            return f"event {who} {notice.key.name} {state} seq {notice.seq} at {notice.panel_ms} ms"
        case PanelBack():
            info = notice.info
            return (
                f"panel back: id {info.panel_id}, firmware {info.firmware}, {info.seats} seats, "
                f"{info.reset_reason} reset, on {notice.port}"
            )
        case PanelLost():
            return f"panel lost: {notice.reason}"
        case _:
            assert_never(notice)


def parse_pattern(text: str) -> int:
    """Reads an LED pattern by name or as a byte.

    >>> parse_pattern("blink"), parse_pattern("0x0f")
    (240, 15)

    :raises UserError: if it is neither.
    """
    try:
        return int(LedPattern[text.strip().upper()])
    except KeyError:
        pass
    try:
        value = int(text, 0)
    except ValueError:
        value = -1
    if not 0 <= value <= 0xFF:
        names = ", ".join(p.name.lower() for p in LedPattern)
        raise UserError(f"LED pattern {text!r} is not one of {names} nor a byte such as 0xcc")
    return value


def _listen(args: argparse.Namespace) -> int:
    """Prints notices until Ctrl-C or --count events."""
    with PanelDriver(args.port, hello_timeout=args.hello_timeout) as driver:
        driver.start()
        events = 0
        while args.count is None or events < args.count:
            try:
                notice = driver.get(timeout=1.0)
            except queue.Empty:
                continue
            print(format_notice(notice), flush=True)
            events += isinstance(notice, KeyEvent)
    return 0


def _led(args: argparse.Namespace) -> int:
    """Sets one LED and exits; the panel shows it until it is reset (opening the port of an
    Arduino resets it, so a later ``listen`` starts with the LEDs off)."""
    try:
        led = Led[args.led.strip().upper()]
    except KeyError:
        raise UserError(f"LED {args.led!r} is neither 'turn' nor 'error'") from None
    pattern = parse_pattern(args.pattern)
    with PanelDriver(args.port) as driver:
        driver.start()
        try:
            driver.set_led(args.seat, led, pattern)
        except ValueError as error:
            raise UserError(f"{error}; give a seat this panel has") from None
        print(f"seat {args.seat} {led.name.lower()} LED set to 0x{pattern:02x}")
    return 0


def _ports(args: argparse.Namespace) -> int:
    """Lists serial ports, with the USB VID:PID the driver accepts as a port spec."""
    found = sorted(list_ports.comports(), key=lambda p: p.device)
    for port in found:
        usb = f"{port.vid:04x}:{port.pid:04x}" if port.vid is not None else "-"
        print(f"{port.device}\t{usb}\t{port.description}")
    if not found:
        print("no serial ports found")
    return 0


def _sim(args: argparse.Namespace) -> int:
    """Runs a simulated panel from a script or the keyboard, printing what it reports."""
    try:
        panel = SimulatedPanel(seats=args.seats, on_notice=lambda n: print(format_notice(n)))
    except ValueError as error:
        raise UserError(f"{error}; pass --seats 1..4") from None
    panel.start()
    if args.script is not None:
        try:
            text = args.script.read_text()
        except OSError as error:
            raise UserError(f"cannot read script {args.script}: {error.strerror}") from None
        panel.play(parse_script(text))
        return 0
    print(keyboard_help(args.seats), flush=True)
    with keyboard_reader(sys.stdin) as read_char:
        keyboard_loop(panel, read_char)
    return 0


@contextlib.contextmanager
def keyboard_reader(stream: TextIO) -> Iterator[Callable[[], str]]:
    """Yields a one-character reader, in cbreak mode when the stream is a terminal."""
    if not stream.isatty():
        yield lambda: stream.read(1)
        return
    fd = stream.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    try:
        yield lambda: stream.read(1)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
