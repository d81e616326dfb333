"""Fixtures for the simavr tests: the firmware built once, a harness and a driver per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from panel_harness import Harness, build_firmware

from table.devices.driver import PanelDriver
from table.devices.events import PanelBack


@pytest.fixture(scope="session")
def firmware_built() -> None:
    """Builds firmware/build/panel.elf and panel_sim once per session."""
    build_firmware()


@pytest.fixture
def harness(firmware_built: None, tmp_path: Path) -> Iterator[Harness]:
    """Runs the firmware in simavr behind a pty linked at tmp_path/panel."""
    sim = Harness(tmp_path / "panel")
    sim.start()
    yield sim
    sim.stop()
    assert sim.errors == []


@pytest.fixture
def driver(harness: Harness) -> Iterator[PanelDriver]:
    """Connects the real driver to the simulated panel and consumes its first PanelBack."""
    panel = PanelDriver(str(harness.link), backoff=(0.05, 0.5))
    panel.start()
    assert isinstance(panel.get(timeout=5), PanelBack)
    yield panel
    panel.stop()
