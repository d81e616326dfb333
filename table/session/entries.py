"""Log entries: the record of a session, one appended fact per entry.

An entry is never rewritten: an undo or a correction is a new entry that names
the one it takes back. This module is pure; :mod:`table.session.store` writes
entries and :mod:`table.session.state` folds them into the table's state.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from table.errors import UserError
from table.rules import HouseRules

SESSION_START: Final = "session_start"
ROUND_START: Final = "round_start"
ACTION: Final = "action"
REJECTED: Final = "rejected"
UNDO: Final = "undo"
CORRECTION: Final = "correction"
DEVICE: Final = "device"
ALERT: Final = "alert"
SESSION_END: Final = "session_end"

#: Every entry kind, in the order a session usually meets them.
KINDS: Final = (
    SESSION_START,
    ROUND_START,
    ACTION,
    REJECTED,
    UNDO,
    CORRECTION,
    DEVICE,
    ALERT,
    SESSION_END,
)

#: Payload keys that hold what the players must not see (the deal).
HIDDEN_KEYS: Final = {ROUND_START: ("hands", "kitty")}


def parse_time(text: str) -> datetime:
    """Reads an ISO-8601 time; a time without a zone is taken as UTC.

    :raises: :exc:`ValueError` for text that is no time.

    >>> parse_time("2026-11-30T10:20:00Z").isoformat()
    '2026-11-30T10:20:00+00:00'
    """
    at = datetime.fromisoformat(text)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def time_text(at: datetime) -> str:
    """Writes a time as ISO-8601 in UTC with a ``Z``, the form the record files use.

    >>> time_text(parse_time("2026-11-30T11:20:00+01:00"))
    '2026-11-30T10:20:00Z'
    """
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pauses the cyclic garbage collector while a long log is loaded.

    Loading makes about ten small objects per entry and no cycles; on a
    65,000-entry session the collector would rescan them all again and again,
    which costs more than the loading itself.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class LogEntry:
    """One appended fact: ``seq`` counts from 1 within the session, ``at`` is UTC.

    >>> entry = LogEntry("20261130-ab3de", 1, parse_time("2026-11-30T10:20:00Z"),
    ...                  "device", {"device": "camera", "status": "lost", "detail": ""})
    >>> LogEntry.from_dict(entry.to_dict()) == entry
    True
    """

    session_id: str
    seq: int
    at: datetime
    kind: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Turns the entry into a JSON-ready dict."""
        return {
            "session": self.session_id,
            "seq": self.seq,
            "at": time_text(self.at),
            "kind": self.kind,
            "data": self.data,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LogEntry:
        """Rebuilds an entry from :meth:`to_dict` output.

        :raises: :exc:`ValueError` naming the missing or wrong field.
        """
        try:
            entry = cls(
                session_id=str(data["session"]),
                seq=int(data["seq"]),
                at=parse_time(str(data["at"])),
                kind=str(data["kind"]),
                data=dict(data["data"]),
            )
        except KeyError as missing:
            raise ValueError(f"a log entry needs the field {missing}") from None
        except (TypeError, ValueError) as error:
            raise ValueError(f"bad log entry {data!r}: {error}") from None
        if entry.kind not in KINDS:
            raise ValueError(f"unknown entry kind {entry.kind!r}; expected one of {KINDS}")
        return entry

    def may_mention(self, word: str) -> bool:
        """Tells whether the payload may hold ``word``; false only when it surely does not.

        Lets a fold skip decoding payloads it does not need (see
        :class:`~table.session.store.StoredEntry`); a decoded entry always says yes.
        """
        return True

    def public(self) -> LogEntry:
        """Gets the entry without hidden information (hands, an unshown kitty), to publish.

        >>> entry = LogEntry("s", 2, parse_time("2026-11-30T10:20:00Z"), "round_start",
        ...                  {"round": 1, "dealer": 0, "first_bidder": 1, "hands": ["33"]})
        >>> entry.public().data
        {'round': 1, 'dealer': 0, 'first_bidder': 1}
        """
        hidden = HIDDEN_KEYS.get(self.kind, ())
        if not any(key in self.data for key in hidden):
            return self
        data = {key: value for key, value in self.data.items() if key not in hidden}
        return LogEntry(self.session_id, self.seq, self.at, self.kind, data)


class SessionError(UserError):
    """An operator request the session cannot carry out now, said in words to act on."""


class NoCameraError(SessionError):
    """A command that needs the table's camera, at a table without one (a new deck)."""

    def __init__(self, table: str) -> None:
        super().__init__(f"table {table} has no camera, so there is no deck to forget")


@dataclass(frozen=True)
class SessionInfo:
    """Who sits at which table under which rules; ``last_seq`` counts the entries so far."""

    id: str
    table: str
    variant: str
    players: tuple[str, ...]
    house_rules: dict[str, Any]
    started_at: datetime
    ended_at: datetime | None = None
    last_seq: int = 0

    @property
    def is_open(self) -> bool:
        """Tells whether the session has not ended yet."""
        return self.ended_at is None


def house_rules_to_dict(rules: HouseRules) -> dict[str, Any]:
    """Turns house rules into the JSON form the log keeps.

    >>> house_rules_to_dict(HouseRules(spring=True))
    {'spring': True, 'multiplier_cap': None}
    """
    return {"spring": rules.spring, "multiplier_cap": rules.multiplier_cap}


def house_rules_from_dict(data: dict[str, Any]) -> HouseRules:
    """Reads house rules from the log; missing keys are off.

    :raises: :exc:`ValueError` for a bad value.
    """
    cap = data.get("multiplier_cap")
    return HouseRules(spring=bool(data.get("spring", False)), multiplier_cap=_opt_int(cap))


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)
