"""The session log on disk: SQLite by default, PostgreSQL for a venue, one schema.

:class:`SessionLog` owns the database from :meth:`SessionLog.open` to
:meth:`SessionLog.close`, like the Flask tutorial's ``db.py`` owns its
connection. An append is durable when it returns: SQLite runs in WAL mode with
``synchronous=FULL``, PostgreSQL commits. The sequence number of an entry comes
from an ``UPDATE ... RETURNING`` on the session's row, so several processes
appending to one session (or many tables to one PostgreSQL) never get the same
number; the primary key ``(session_id, seq)`` guards it as well.

Every failure a person can fix (a missing or corrupt file, an unknown session,
an unreachable server) is raised as :class:`~table.errors.UserError` with one
line saying what is wrong and what to do.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.schema import CreateIndex, CreateTable

from table.errors import UserError
from table.rules import get_variant
from table.session import entries as kinds
from table.session.entries import LogEntry, SessionInfo, paused_gc

#: Bumped whenever the tables change; a log with another version is refused.
SCHEMA_VERSION: Final = 1
ENV_DB: Final = "DDZ_TABLE_DB"
_ID_ALPHABET: Final = "abcdefghjkmnpqrstuvwxyz23456789"
_ID_TRIES: Final = 8
_SCHEMA_WAITS: Final = 30

metadata = sa.MetaData()

meta_table = sa.Table(
    "ddz_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.String(200), nullable=False),
)

sessions_table = sa.Table(
    "ddz_sessions",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("table_id", sa.String(100), nullable=False),
    sa.Column("variant", sa.String(8), nullable=False),
    sa.Column("players", sa.JSON, nullable=False),
    sa.Column("house_rules", sa.JSON, nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("last_seq", sa.Integer, nullable=False),
    sa.Index("ddz_sessions_table", "table_id", "started_at"),
)

entries_table = sa.Table(
    "ddz_entries",
    metadata,
    sa.Column("session_id", sa.String(40), sa.ForeignKey("ddz_sessions.id"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("data", sa.JSON, nullable=False),
)


def default_path() -> Path:
    """Gets the default SQLite file: ``$XDG_DATA_HOME/ddz-table/log.sqlite3``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ddz-table" / "log.sqlite3"


def resolve_url(url: str | None) -> str:
    """Turns ``--db`` (a URL, a file path or nothing) into a database URL.

    Nothing means ``$DDZ_TABLE_DB`` if set, else the default SQLite file.

    >>> resolve_url("/tmp/x.sqlite3")
    'sqlite:////tmp/x.sqlite3'
    >>> resolve_url("postgresql+psycopg://postgres@127.0.0.1/test")
    'postgresql+psycopg://postgres@127.0.0.1/test'
    """
    text = url or os.environ.get(ENV_DB) or str(default_path())
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().absolute()}"


def describe_url(url: str) -> str:
    """Names a database for a message, without a password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return f"the log file {parsed.database}"
    where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database or ''}"
    return f"PostgreSQL at {where}"


def _new_id(now: datetime) -> str:
    """Makes a short readable session id: the UTC date and five random letters."""
    suffix = "".join(secrets.choice(_ID_ALPHABET) for _ in range(5))
    return f"{now:%Y%m%d}-{suffix}"


def _sqlite_time(text: str) -> datetime:
    """Reads a time as SQLite keeps it (ISO text in UTC), in C rather than with a regex."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _utc(at: datetime) -> datetime:
    """Reads a stored time as UTC (SQLite keeps no zone; PostgreSQL answers in its own)."""
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


class StoredEntry(LogEntry):
    """A log entry read from the database: its payload is decoded when first read.

    A rebuild of a 1,000-round session reads some 100,000 entries and needs the
    payload of only a few thousand (deals, undos, round ends, the current round).
    """

    def __init__(self, session_id: str, seq: int, at: datetime, kind: str, text: str) -> None:
        for name, value in (("session_id", session_id), ("seq", seq), ("at", at), ("kind", kind)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_data", None)

    @property
    def data(self) -> dict[str, Any]:
        """Gets the payload, decoding the stored JSON the first time."""
        decoded: dict[str, Any] | None = self.__dict__["_data"]
        if decoded is None:
            decoded = json.loads(self.__dict__["_text"])
            object.__setattr__(self, "_data", decoded)
        return decoded

    def may_mention(self, word: str) -> bool:
        """Tells whether the stored JSON text holds ``word`` at all."""
        return word in self.__dict__["_text"]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogEntry):
            return NotImplemented
        mine = (self.session_id, self.seq, self.at, self.kind, self.data)
        return mine == (other.session_id, other.seq, other.at, other.kind, other.data)


@dataclass
class NewSession:
    """A whole session to write at once (an import): its start and its later entries."""

    table: str
    variant: str
    players: tuple[str, ...]
    house_rules: dict[str, Any]
    started_at: datetime
    extra: dict[str, Any] = field(default_factory=dict)
    entries: list[tuple[str, dict[str, Any], datetime]] = field(default_factory=list)


class SessionLog:
    """An open session log; use :meth:`open`, and :meth:`close` or ``with`` when done."""

    def __init__(self, engine: Engine, url: str) -> None:
        self._engine = engine
        self.url = url
        self.where = describe_url(url)

    @classmethod
    def open(cls, url: str | None = None, *, create: bool = True) -> SessionLog:
        """Opens (and if need be creates) a log; ``url`` as for :func:`resolve_url`.

        With ``create=False`` a missing SQLite file is an error instead of a new log.

        :raises: :exc:`~table.errors.UserError` for a missing or corrupt file, an
            unreachable server, a bad URL or a log of another schema version.
        """
        url = resolve_url(url)
        try:
            parsed = make_url(url)
        except sa.exc.ArgumentError:
            raise UserError(f"{url!r} is not a database URL or file path; check --db") from None
        engine = _make_engine(parsed, create)
        log = cls(engine, url)
        try:
            try:
                log._check_schema(create)
            except sa.exc.IntegrityError:
                log._check_schema(create)  # another process created the log just now
        except BaseException:
            engine.dispose()
            raise
        return log

    def close(self) -> None:
        """Closes every connection to the database."""
        self._engine.dispose()

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        """Runs a transaction, turning lost connections into one readable line."""
        try:
            with self._engine.begin() as conn:
                yield conn
        except sa.exc.IntegrityError:
            raise
        except sa.exc.OperationalError as error:
            raise UserError(_operational_message(self.where, error)) from None
        except sa.exc.DatabaseError as error:
            raise UserError(_corrupt_message(self.where, error)) from None

    def _check_schema(self, create: bool) -> None:
        """Creates the schema or checks its version.

        pysqlite runs DDL outside the transaction, so another process may see the
        tables of a brand-new log before its version row: wait for that row.
        """
        for _ in range(_SCHEMA_WAITS):
            version = self._schema_version(create)
            if version is not None:
                break
            time.sleep(0.1)
        if version != str(SCHEMA_VERSION):
            raise UserError(
                f"{self.where} has log schema version {version}, this ddz-table reads version"
                f" {SCHEMA_VERSION}; use a matching ddz-table or another --db"
            )

    def _schema_version(self, create: bool) -> str | None:
        """Gets the log's schema version, creating the schema in an empty database."""
        with self._begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(74170313)"))
            inspector = sa.inspect(conn)
            if not inspector.has_table(meta_table.name):
                if not create:
                    raise UserError(f"{self.where} holds no ddz-table log; check --db or {ENV_DB}")
                for table in metadata.sorted_tables:
                    conn.execute(CreateTable(table, if_not_exists=True))
                    for index in table.indexes:
                        conn.execute(CreateIndex(index, if_not_exists=True))
                conn.execute(
                    sa.insert(meta_table).values(key="schema_version", value=str(SCHEMA_VERSION))
                )
                return str(SCHEMA_VERSION)
            version = conn.execute(
                sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")
            ).scalar_one_or_none()
        return None if version is None else str(version)

    def start_session(
        self,
        table: str,
        variant: str,
        players: Sequence[str],
        house_rules: dict[str, Any] | None = None,
    ) -> SessionInfo:
        """Starts a session and logs its ``session_start`` entry; returns its info.

        :raises: :exc:`~table.errors.UserError` for a wrong number of players.
        """
        new = _new_session(table, variant, players, house_rules, datetime.now(UTC))
        try:
            with self._begin() as conn:
                return self._write_session(conn, new)
        except sa.exc.IntegrityError:  # another process took the same new id just now
            with self._begin() as conn:
                return self._write_session(conn, new)

    def import_sessions(self, sessions: Sequence[NewSession]) -> list[SessionInfo]:
        """Writes whole sessions in one transaction: all of them or, on error, none."""
        with self._begin() as conn:
            return [self._write_session(conn, new) for new in sessions]

    def _write_session(self, conn: Connection, new: NewSession) -> SessionInfo:
        for _ in range(_ID_TRIES):
            session_id = _new_id(new.started_at)
            taken = conn.execute(
                sa.select(sessions_table.c.id).where(sessions_table.c.id == session_id)
            ).first()
            if taken is None:
                break
        else:
            raise UserError("could not find a free session id; try again")
        start = {
            "table": new.table,
            "variant": new.variant,
            "players": list(new.players),
            "house_rules": new.house_rules,
            **new.extra,
        }
        items = [(kinds.SESSION_START, start, new.started_at), *new.entries]
        for kind, _, _ in items:
            if kind not in kinds.KINDS:
                raise UserError(f"unknown log entry kind {kind!r}; expected one of {kinds.KINDS}")
        conn.execute(
            sa.insert(sessions_table).values(
                id=session_id,
                table_id=new.table,
                variant=new.variant,
                players=list(new.players),
                house_rules=new.house_rules,
                started_at=new.started_at,
                ended_at=next((at for kind, _, at in items if kind == kinds.SESSION_END), None),
                last_seq=len(items),
            )
        )
        # A new session has no other writer yet: number its entries here, in one batch.
        rows = [
            {"session_id": session_id, "seq": seq, "at": at.astimezone(UTC), "kind": kind,
             "data": data}
            for seq, (kind, data, at) in enumerate(items, start=1)
        ]  # fmt: skip
        conn.execute(sa.insert(entries_table), rows)
        return self._info(conn, session_id)

    def append(self, session_id: str, kind: str, data: dict[str, Any]) -> LogEntry:
        """Appends one entry with the next sequence number; it is on disk when this returns.

        :raises: :exc:`~table.errors.UserError` for an unknown session or kind.
        """
        with self._begin() as conn:
            return self._append(conn, session_id, kind, data, datetime.now(UTC))

    def _append(
        self, conn: Connection, session_id: str, kind: str, data: dict[str, Any], at: datetime
    ) -> LogEntry:
        if kind not in kinds.KINDS:
            raise UserError(f"unknown log entry kind {kind!r}; expected one of {kinds.KINDS}")
        at = at.astimezone(UTC)
        seq = conn.execute(
            sa.update(sessions_table)
            .where(sessions_table.c.id == session_id)
            .values(last_seq=sessions_table.c.last_seq + 1)
            .returning(sessions_table.c.last_seq)
        ).scalar_one_or_none()
        if seq is None:
            raise self._unknown(session_id)
        conn.execute(
            sa.insert(entries_table).values(
                session_id=session_id, seq=seq, at=at, kind=kind, data=data
            )
        )
        if kind == kinds.SESSION_END:
            conn.execute(
                sa.update(sessions_table)
                .where(sessions_table.c.id == session_id)
                .values(ended_at=at)
            )
        return LogEntry(session_id, seq, at, kind, data)

    def entries(self, session_id: str, after: int = 0) -> list[LogEntry]:
        """Lists a session's entries after sequence number ``after``, oldest first.

        :raises: :exc:`~table.errors.UserError` for an unknown session.
        """
        table = entries_table.c
        with self._begin() as conn, paused_gc():
            sqlite = conn.dialect.name == "sqlite"
            # A rebuild reads every entry, so the per-row work is kept small: SQLite's
            # ISO times go through fromisoformat rather than SQLAlchemy's regular
            # expression, and payloads stay JSON text until someone reads them.
            at = sa.type_coerce(table.at, sa.String) if sqlite else table.at
            rows = conn.execute(
                sa.select(table.seq, at, table.kind, sa.cast(table.data, sa.Text))
                .where(table.session_id == session_id, table.seq > after)
                .order_by(table.seq)
            ).all()
            if not rows:
                self._info(conn, session_id)
            read_time = _sqlite_time if sqlite else _utc
            return [
                StoredEntry(session_id, seq, read_time(when), kind, text)
                for seq, when, kind, text in rows
            ]

    def sessions(self, table: str | None = None) -> list[SessionInfo]:
        """Lists the sessions, oldest first, of one table or of all."""
        query = sa.select(sessions_table).order_by(sessions_table.c.started_at, sessions_table.c.id)
        if table is not None:
            query = query.where(sessions_table.c.table_id == table)
        with self._begin() as conn:
            return [_row_info(row) for row in conn.execute(query).mappings()]

    def find_session(self, id_or_prefix: str) -> SessionInfo:
        """Finds a session by its id or the start of it.

        :raises: :exc:`~table.errors.UserError` when none or several match.
        """
        with self._begin() as conn:
            row = (
                conn.execute(sa.select(sessions_table).where(sessions_table.c.id == id_or_prefix))
                .mappings()
                .first()
            )
            if row is not None:
                return _row_info(row)
            rows = (
                conn.execute(
                    sa.select(sessions_table)
                    .where(sessions_table.c.id.startswith(id_or_prefix, autoescape=True))
                    .order_by(sessions_table.c.id)
                )
                .mappings()
                .all()
            )
        if len(rows) == 1:
            return _row_info(rows[0])
        if not rows:
            raise self._unknown(id_or_prefix)
        ids = ", ".join(str(row["id"]) for row in rows[:5])
        raise UserError(f"{id_or_prefix!r} matches {len(rows)} sessions ({ids}); give more of it")

    def latest_open_session(self, table: str) -> SessionInfo | None:
        """Gets the table's most recent session that has not ended, if any."""
        with self._begin() as conn:
            row = (
                conn.execute(
                    sa.select(sessions_table)
                    .where(sessions_table.c.table_id == table, sessions_table.c.ended_at.is_(None))
                    .order_by(sessions_table.c.started_at.desc(), sessions_table.c.id.desc())
                    .limit(1)
                )
                .mappings()
                .first()
            )
        return None if row is None else _row_info(row)

    def _info(self, conn: Connection, session_id: str) -> SessionInfo:
        row = (
            conn.execute(sa.select(sessions_table).where(sessions_table.c.id == session_id))
            .mappings()
            .first()
        )
        if row is None:
            raise self._unknown(session_id)
        return _row_info(row)

    def _unknown(self, session_id: str) -> UserError:
        return UserError(
            f"no session {session_id!r} in {self.where}; `ddz-table sessions` lists them"
        )


def _new_session(
    table: str,
    variant: str,
    players: Sequence[str],
    house_rules: dict[str, Any] | None,
    started_at: datetime,
) -> NewSession:
    """Checks a new session's header and normalises it."""
    try:
        name = get_variant(variant).name
    except ValueError as error:
        raise UserError(str(error)) from None
    wanted = get_variant(name).players
    if len(players) != wanted:
        raise UserError(f"a {name} session needs {wanted} player names, not {len(players)}")
    if not table:
        raise UserError("a session needs a table id")
    return NewSession(table, name, tuple(players), dict(house_rules or {}), started_at)


def _row_info(row: Any) -> SessionInfo:
    ended = row["ended_at"]
    return SessionInfo(
        id=row["id"],
        table=row["table_id"],
        variant=row["variant"],
        players=tuple(row["players"]),
        house_rules=dict(row["house_rules"]),
        started_at=_utc(row["started_at"]),
        ended_at=None if ended is None else _utc(ended),
        last_seq=row["last_seq"],
    )


def _make_engine(parsed: sa.URL, create: bool) -> Engine:
    """Builds the engine: SQLite in WAL mode with full sync, PostgreSQL with a timeout."""
    backend = parsed.get_backend_name()
    try:
        if backend == "sqlite":
            return _sqlite_engine(parsed, create)
        if backend == "postgresql":
            args: dict[str, Any] = {}
            if "connect_timeout" not in parsed.query:
                args["connect_timeout"] = 5
            # A controller writes one entry at a time: a small pool lets a venue run
            # many tables within PostgreSQL's default 100 connections.
            return sa.create_engine(
                parsed, connect_args=args, pool_pre_ping=True, pool_size=2, max_overflow=8
            )
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as error:
        raise UserError(f"cannot use the database URL {parsed!r}: {error}") from None
    raise UserError(
        f"the log lives in SQLite or PostgreSQL, not {backend!r};"
        " use a file path or postgresql+psycopg://..."
    )


def _sqlite_engine(parsed: sa.URL, create: bool) -> Engine:
    path = parsed.database
    if not path or path == ":memory:":
        raise UserError("the log needs a SQLite file, not an in-memory database")
    file = Path(path)
    if not file.exists():
        if not create:
            raise UserError(
                f"there is no log file {file}; play a session first, or point --db"
                f" (or {ENV_DB}) at the right file"
            )
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UserError(f"cannot make the folder for the log file {file}: {error}") from None
    engine = sa.create_engine(parsed, connect_args={"timeout": 30})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        """Sets WAL and full sync on every new connection, so a commit is on disk."""
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    return engine


def _operational_message(where: str, error: sa.exc.OperationalError) -> str:
    detail = str(error.orig).strip().splitlines()[0] if error.orig is not None else str(error)
    if where.startswith("PostgreSQL"):
        return (
            f"cannot reach {where} ({detail}); start the server or fix the URL in --db or {ENV_DB}"
        )
    if "not a database" in detail or "malformed" in detail:
        return _corrupt_message(where, error)
    return f"cannot use {where} ({detail}); check that it is a readable, writable file"


def _corrupt_message(where: str, error: sa.exc.DatabaseError) -> str:
    detail = str(error.orig).strip().splitlines()[0] if error.orig is not None else str(error)
    if where.startswith("PostgreSQL"):
        return f"cannot use {where} ({detail}); check the URL in --db or {ENV_DB}"
    return (
        f"{where} is damaged or is not a ddz-table log ({detail});"
        " move it aside and start a new log, or point --db at the right file"
    )
