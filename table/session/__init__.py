"""The session log: every accepted or rejected action, correction and device event.

The log is the source of truth. :mod:`~table.session.entries` is the record,
:mod:`~table.session.state` folds it into the table's state,
:mod:`~table.session.store` keeps it in SQLite or PostgreSQL,
:mod:`~table.session.table` is the referee spine that writes it, and
:mod:`~table.session.record` turns it into the portable hand record
(``docs/record-format.md``). Importing this package opens nothing.
"""

from table.session.entries import LogEntry, SessionError, SessionInfo
from table.session.state import TableState
from table.session.store import SessionLog
from table.session.table import TableSession

__all__ = ["LogEntry", "SessionError", "SessionInfo", "SessionLog", "TableSession", "TableState"]
