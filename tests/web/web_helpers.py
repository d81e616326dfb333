"""Helpers for the dashboard tests: the login flow, a live server, screenshots, Chromium flags."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from flask.testing import FlaskClient

PASSWORD = "correct horse battery staple"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"
PLAYERS = ("Ann", "Bo", "Cy")


def form_token(html: str) -> str:
    """Finds the CSRF token in a rendered form."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found is not None, "the page has no CSRF token"
    return found.group(1)


class AuthActions:
    """Logs the test client in and out, as the Flask tutorial's tests do."""

    def __init__(self, client: FlaskClient) -> None:
        self._client = client

    def login(self, name: str = "Dee", password: str = PASSWORD) -> Any:
        """Posts the login form with its CSRF token."""
        token = form_token(self._client.get("/console/login").get_data(as_text=True))
        return self._client.post(
            "/console/login", data={"name": name, "password": password, "csrf_token": token}
        )

    def token(self, table: str = "t1") -> str:
        """Gets the CSRF token from the table's console page."""
        return form_token(self._client.get(f"/console/{table}").get_data(as_text=True))


def screenshot(page: Any, name: str) -> Path:
    """Saves a screenshot of the page under test-artifacts/web/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path
