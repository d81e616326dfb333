"""The firmware's pure logic (debounce, COBS, CRC, framing, queueing) built with gcc and run."""

from __future__ import annotations

import subprocess

from panel_harness import FIRMWARE


def test_host_unit_tests_pass() -> None:
    result = subprocess.run(
        ["make", "-s", "-C", str(FIRMWARE), "test"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith(" 0 failed"), result.stdout
