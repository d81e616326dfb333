"""Fixtures for the session log: a SQLite log in a temp folder and a PostgreSQL schema."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from table.session.store import SessionLog

#: The venue database every developer and CI machine runs (see DESIGN.md).
POSTGRES_URL = os.environ.get(
    "DDZ_TABLE_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(autouse=True)
def _isolated_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeps every test away from the user's real log and from a set DDZ_TABLE_DB."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.delenv("DDZ_TABLE_DB", raising=False)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """Gets the URL of a fresh SQLite log file."""
    return f"sqlite:///{tmp_path / 'log.sqlite3'}"


@pytest.fixture
def log(sqlite_url: str) -> Iterator[SessionLog]:
    """Opens a fresh SQLite log and closes it after the test."""
    opened = SessionLog.open(sqlite_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """Gets a URL whose tables live in a schema of their own, dropped after the test.

    The schema name is unique per test and run, so parallel runs and other
    projects' tests in the database ``test`` never see each other's rows.
    """
    schema = f"ddz_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(POSTGRES_URL)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def postgres_log(postgres_url: str) -> Iterator[SessionLog]:
    """Opens a fresh log in PostgreSQL and closes it after the test."""
    opened = SessionLog.open(postgres_url)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def any_log(request: pytest.FixtureRequest) -> SessionLog:
    """Runs a test on both back ends: the same schema and the same behaviour."""
    name = "log" if request.param == "sqlite" else "postgres_log"
    opened: SessionLog = request.getfixturevalue(name)
    return opened
