"""Suite-wide settings: an ERROR log line anywhere fails the test that caused it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

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
