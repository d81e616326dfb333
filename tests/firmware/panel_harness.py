"""Drives firmware/build/panel_sim: the real panel firmware in simavr, seen through a pty.

The harness prints ``pty PATH`` once, then ``led TIME HEX`` whenever the modelled 74HC595
latches new outputs (and, traced, ``key TIME ROW COL STATE`` for every contact change); it takes
key and noise commands on stdin (see firmware/sim/panel_sim.c).
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
BUILD = FIRMWARE / "build"
ELF = BUILD / "panel.elf"
TEST_ELF = BUILD / "panel_test.elf"  # with a TEST_HANG message for the watchdog test
SIM = BUILD / "panel_sim"
OPERATOR_ROW = 4


def build_firmware() -> None:
    """Builds the firmware and the harness; a failing build fails with the compiler's words."""
    result = subprocess.run(
        ["make", "-s", "-C", str(FIRMWARE), "all", "sim"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(
            "building the firmware failed; install gcc-avr avr-libc simavr libsimavr-dev "
            f"(scripts do this)\n{result.stdout}\n{result.stderr}"
        )


@dataclass(frozen=True)
class LedChange:
    """Is one latch of the 74HC595 outputs at a simulated time in microseconds."""

    sim_us: int
    bits: int


class Harness:
    """Runs one panel_sim process; restartable at the same symlinked port path."""

    def __init__(self, link: Path, elf: Path = ELF, *, trace: bool = False) -> None:
        self.link = link
        self.elf = elf
        self.trace = trace
        self.contacts: list[tuple[int, int, int, bool]] = []
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._cond = threading.Condition()
        self.leds: list[LedChange] = []
        self._times: list[int] = []
        self._errors: list[str] = []

    def start(self) -> None:
        """Starts the simulator and waits until its pty exists."""
        command = [str(SIM), str(self.elf), "--link", str(self.link)]
        # simavr's own messages go to a log beside the link, for whoever reads a failure.
        with open(self.link.with_suffix(".log"), "a") as log:
            self._process = subprocess.Popen(
                command + (["--trace"] if self.trace else []),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                bufsize=1,
            )
        assert self._process.stdout is not None
        first = self._process.stdout.readline()
        if not first.startswith("pty "):
            raise RuntimeError(f"panel_sim did not start: {first!r}")
        self._reader = threading.Thread(target=self._read, args=(self._process,), daemon=True)
        self._reader.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            words = line.split()
            with self._cond:
                if words[0] == "led":
                    self.leds.append(LedChange(int(words[1]), int(words[2], 16)))
                elif words[0] == "key":
                    sim_us, row, col, closed = (int(w) for w in words[1:])
                    self.contacts.append((sim_us, row, col, bool(closed)))
                elif words[0] == "time":
                    self._times.append(int(words[1]))
                else:
                    self._errors.append(line.strip())
                self._cond.notify_all()

    def send(self, line: str) -> None:
        """Sends one command line to the harness."""
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def tap(self, row: int, col: int, delay_us: int, hold_us: int, bounces: int = 0) -> None:
        """Schedules a press after delay_us and its release hold_us later."""
        self.send(f"tap {row} {col} {delay_us} {hold_us} {bounces}")

    def sim_time_us(self, timeout: float = 5.0) -> int:
        """Asks the simulator for its clock."""
        with self._cond:
            count = len(self._times)
        self.send("time")
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._times) > count, timeout):
                raise TimeoutError("panel_sim did not answer 'time'")
            return self._times[count]

    def wait_led(
        self, predicate: Callable[[int], bool], start: int = 0, timeout: float = 5.0
    ) -> tuple[int, LedChange]:
        """Waits for a latch, from index ``start`` on, whose bits satisfy ``predicate``.

        Returns the index after the match and the match.
        """
        deadline = time.monotonic() + timeout
        index = start
        with self._cond:
            while True:
                while index < len(self.leds):
                    change = self.leds[index]
                    index += 1
                    if predicate(change.bits):
                        return index, change
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no LED latch as expected; last: {self.leds[-5:]}")
                self._cond.wait(remaining)

    @property
    def errors(self) -> list[str]:
        """Lists lines the harness could not parse or explain."""
        with self._cond:
            return list(self._errors)

    def kill(self) -> None:
        """Kills the simulator at once, as pulling the USB cable would."""
        if self._process is None:
            return
        self._process.kill()
        self._process.wait()
        if self._reader is not None:
            self._reader.join()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()
        self._process = None

    def stop(self) -> None:
        """Ends the simulator by closing its stdin (it exits on EOF)."""
        if self._process is None:
            return
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._reader is not None:
            self._reader.join()
        assert self._process.stdout is not None
        self._process.stdout.close()
        self._process = None
