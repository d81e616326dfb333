"""Stopping a long-running command cleanly on Ctrl-C or on the service manager's SIGTERM."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts() -> Iterator[threading.Event]:
    """Turns SIGINT/SIGTERM into an event, so threads stop and the log stays whole.

    The handlers are installed even where SIGINT arrives ignored (a command
    started in the background by a shell without job control), so a stop
    request is never lost; the previous handlers come back on exit.
    """
    stop = threading.Event()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
