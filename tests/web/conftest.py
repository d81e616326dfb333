"""Fixtures for the dashboard: a real session log, tables, the app, a login helper, a browser.

Browser tests run the real app on a free localhost port in a thread and drive
Debian's Chromium through Playwright; the test command installs ``chromium``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import CHROMIUM, CHROMIUM_ARGS, PASSWORD, PLAYERS, AuthActions
from werkzeug.security import generate_password_hash

from table.session import SessionLog, TableSession
from web import create_app
from web.access import LocalAccess, TableAccess
from web.cli import DashboardServer


@pytest.fixture(autouse=True)
def _isolated_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeps every test away from the user's real log and from a set DDZ_TABLE_DB."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.delenv("DDZ_TABLE_DB", raising=False)


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SessionLog]:
    """Opens a fresh SQLite session log."""
    opened = SessionLog.open(f"sqlite:///{tmp_path / 'log.sqlite3'}")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def table_session(log: SessionLog) -> TableSession:
    """Starts a three-player session at table t1."""
    return TableSession.start(log, "t1", "3p", PLAYERS)


@pytest.fixture
def access(log: SessionLog, table_session: TableSession) -> Iterator[LocalAccess]:
    """Serves table t1 in-process."""
    local = LocalAccess(log, [table_session])
    try:
        yield local
    finally:
        local.close()


@pytest.fixture(scope="session")
def password_hash() -> str:
    """Hashes the test password once: scrypt is slow on purpose."""
    return generate_password_hash(PASSWORD)


@pytest.fixture
def app_config(password_hash: str) -> dict[str, Any]:
    """Gets the test configuration: a known password, quick keepalives and retries."""
    return {
        "TESTING": True,
        "PASSWORD_HASH": password_hash,
        "SECRET_KEY": "test secret",
        "SSE_KEEPALIVE": 0.05,
        "SSE_RETRY_MS": 200,
    }


@pytest.fixture
def app(app_config: dict[str, Any], access: LocalAccess) -> Flask:
    """Builds the dashboard around the in-process table."""
    return create_app(app_config, access)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """Gets a test client of the app."""
    return app.test_client()


@pytest.fixture
def auth(client: FlaskClient) -> AuthActions:
    """Gets the login helper."""
    return AuthActions(client)


@pytest.fixture
def serve() -> Iterator[Callable[[Flask, TableAccess], DashboardServer]]:
    """Serves apps on free localhost ports; each stops (after its streams end) at teardown."""
    running: list[tuple[DashboardServer, TableAccess]] = []

    def start(app: Flask, access: TableAccess) -> DashboardServer:
        server = DashboardServer(app, "127.0.0.1", 0)
        server.start()
        running.append((server, access))
        return server

    yield start
    for server, access in running:
        access.close()
        server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Launches Debian's Chromium headless once for all browser tests."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"browser tests need Debian's chromium at {CHROMIUM}; apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """Opens a fresh 16:9 page, the shape of a TV."""
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    opened = context.new_page()
    try:
        yield opened
    finally:
        context.close()
