"""Suite-wide settings (an ERROR log line anywhere fails the test that caused it) and a
scene tests of several parts read."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np
import pytest


class _RaiseOnErrorHandler(logging.Handler):
    """Collects ERROR records so the test that logged them fails."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def fail_on_error_log(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test that logged at ERROR, unless it is marked ``allow_error_log``."""
    handler = _RaiseOnErrorHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
    if handler.records and not request.node.get_closest_marker("allow_error_log"):
        messages = "; ".join(r.getMessage() for r in handler.records)
        pytest.fail(f"ERROR logged during test: {messages}")


@pytest.fixture(scope="session")
def loosely_framed_chain() -> np.ndarray:
    """A 1080p camera's frame of a table in its middle 1270 px (1.3 px a millimetre, cards
    82 px wide) with the chain 3456789TJ of paris in seat 0's zone: read whole, shrunk to
    1280 px, its 4 and its 7 are missed. Read-only, as tests share it."""
    from table.vision.synth import render_table

    image, _ = render_table(
        {"seat0": "3456789TJ"}, seed=4, deck="paris", size=(1920, 1080), px_per_mm=1.3 / 1.5
    )
    image.flags.writeable = False
    return image
