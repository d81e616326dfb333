"""Session history from the log: sessions, their rounds, a move-by-move replay, player stats.

Everything here is read from the :class:`~table.session.SessionLog` and folded
with the same :class:`~table.session.TableState` the live table uses, so a
replayed moment looks exactly like the table screen looked then.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from flask import Blueprint, current_app, render_template, request

from table.errors import UserError
from table.rules import Action, LandlordChosen, Redeal, RoundEnded, TrickWon, to_dict
from table.session import LogEntry, SessionInfo, SessionLog, TableState
from table.session import entries as kinds
from table.session.record import session_records
from table.session.state import Step
from table.session.stats import player_stats
from web import display, get_access

bp = Blueprint("history", __name__, url_prefix="/history")

FOLD_CACHE: Final = 32


class HistoryError(LookupError):
    """A session, round or step the log does not have."""


@dataclass(frozen=True)
class Folded:
    """A session read back from the log: its entries and their fold."""

    info: SessionInfo
    entries: list[LogEntry]
    state: TableState


class FoldCache:
    """Keeps recent folds, keyed by session and its last sequence number."""

    def __init__(self, size: int = FOLD_CACHE) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, int], Folded] = OrderedDict()
        self._lock = threading.Lock()

    def fold(self, log: SessionLog, session_id: str) -> Folded:
        """Reads and folds a session, or reuses the fold if nothing was logged since."""
        info = log.find_session(session_id)
        key = (info.id, info.last_seq)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        entries = log.entries(info.id)
        folded = Folded(info, entries, TableState.from_entries(entries))
        with self._lock:
            self._items[key] = folded
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return folded


def _log() -> SessionLog:
    log = get_access().log
    if log is None:
        raise HistoryError(
            "this dashboard has no session log; start it with --db to read the history"
        )
    return log


def _fold(session_id: str) -> Folded:
    cache: FoldCache = current_app.extensions["ddz_folds"]
    try:
        return cache.fold(_log(), session_id)
    except UserError as error:
        raise HistoryError(str(error)) from None


@bp.errorhandler(HistoryError)
def _missing(error: HistoryError) -> tuple[str, int]:
    return render_template("error.html", message=str(error)), 404


@bp.get("/")
def sessions() -> str:
    """Lists the logged sessions, newest first, of one table or of all."""
    table = request.args.get("table") or None
    try:
        found = _log().sessions(table)
    except UserError as error:
        raise HistoryError(str(error)) from None
    return render_template("history/sessions.html", sessions=found[::-1], table=table)


def _notes(entries: list[LogEntry]) -> list[dict[str, Any]]:
    """Lists the operator's undos and corrections, with who and why."""
    notes = []
    for entry in entries:
        if entry.kind in (kinds.UNDO, kinds.CORRECTION):
            data = entry.data
            notes.append(
                {
                    "seq": entry.seq,
                    "at": entry.at,
                    "kind": "undo" if entry.kind == kinds.UNDO else "correction",
                    "action": data.get("action"),
                    "by": data.get("by", ""),
                    "why": data.get("why", ""),
                }
            )
    return notes


@bp.get("/<session_id>")
def session_page(session_id: str) -> str:
    """Shows a session: standings, every round with its result, and the operator's notes."""
    folded = _fold(session_id)
    snapshot = folded.state.snapshot()
    return render_template(
        "history/session.html",
        info=folded.info,
        s=snapshot,
        records=session_records(folded.state),
        notes=_notes(folded.entries),
    )


def _event_words(snapshot: dict[str, Any], step: Step) -> list[str]:
    words = []
    for event in step.events:
        if isinstance(event, LandlordChosen):
            words.append(f"{display.seat_name(snapshot, event.seat)} is the landlord")
        elif isinstance(event, TrickWon):
            words.append(f"{display.seat_name(snapshot, event.seat)} wins the trick")
        elif isinstance(event, Redeal):
            words.append("everyone passed: redeal")
        elif isinstance(event, RoundEnded):
            outcome = event.outcome
            side = "the landlord wins" if outcome.landlord_won else "the farmers win"
            words.append(f"{side}, ×{outcome.multiplier}")
    return words


def _move(snapshot: dict[str, Any], action: Action) -> str:
    return display.action_text(snapshot, to_dict(action))


@bp.get("/<session_id>/round/<int:number>")
def replay(session_id: str, number: int) -> str | tuple[str, int]:
    """Replays a logged round one move at a time: ``?step=0`` is the deal."""
    folded = _fold(session_id)
    rounds = {log.number: log for log in folded.state.rounds}
    played = rounds.get(number)
    if played is None:
        raise HistoryError(f"session {folded.info.id} has no round {number}")
    text = request.args.get("step", "0")
    last = len(played.steps)
    if not text.isdigit() or int(text) > last:
        message = f"step must be a whole number from 0 to {last} (round {number} has {last} moves)"
        return render_template("error.html", message=message), 400
    step = int(text)
    upto = played.steps[step - 1].seq if step else played.seq
    state = TableState.from_entries(e for e in folded.entries if e.seq <= upto)
    snapshot = state.snapshot()
    final = folded.state.snapshot()
    moves = [
        {
            "step": i + 1,
            "text": _move(final, s.action),
            "source": s.source,
            "events": _event_words(final, s),
        }
        for i, s in enumerate(played.steps)
    ]
    return render_template(
        "history/replay.html",
        info=folded.info,
        number=number,
        step=step,
        last=last,
        moves=moves,
        s=snapshot,
        table=folded.info.table,
        hands=played.hands if played.outcome is not None or played.is_redeal else None,
        numbers=sorted(rounds),
    )


@bp.get("/players")
def players() -> str:
    """Sums every settled round in the log per player name, best first."""
    table = request.args.get("table") or None
    log = _log()
    try:
        found = log.sessions(table)
    except UserError as error:
        raise HistoryError(str(error)) from None
    records = [record for info in found for record in session_records(_fold(info.id).state)]
    return render_template("history/players.html", stats=player_stats(records), table=table)
