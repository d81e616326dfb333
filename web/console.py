"""The operator console: log in, then start and end sessions, deal, undo, correct, acknowledge.

Read-only pages are public; everything here needs a login with the password
whose hash is in the config (never the password itself). Every POST carries the
session's CSRF token. Each form is checked into one ``error`` string, like the
Flask tutorial's views; a table's refusal (a :class:`~web.access.CommandError`)
is shown the same way. Undo and correction ask who and why, and the session log
keeps both.
"""

from __future__ import annotations

import functools
import hmac
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Final, TypeVar

from flask import (
    Blueprint,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.blueprints import BlueprintSetupState
from werkzeug.security import check_password_hash
from werkzeug.wrappers import Response

from table.rules import InvalidCardsError, parse_cards
from web import get_access
from web.access import NAME_MAX, NOTE_MAX, CommandError, check_players
from web.render import fragment

logger = logging.getLogger(__name__)

bp = Blueprint("console", __name__, url_prefix="/console")

CSRF_FIELD: Final = "csrf_token"
CSRF_MESSAGE: Final = (
    "This form has no valid security token (CSRF); reload the console page and try again."
)
View = TypeVar("View", bound=Callable[..., Any])
#: Wrong passwords one address may try within LOCKOUT seconds.
MAX_FAILURES: Final = 5
LOCKOUT: Final = 300.0


class LoginGuard:
    """Counts each address's recent wrong passwords, so that guessing is slow."""

    def __init__(self, limit: int = MAX_FAILURES, window: float = LOCKOUT) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._failures.setdefault(address, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        return times

    def is_locked(self, address: str) -> bool:
        """Tells whether the address used up its tries in the window."""
        with self._lock:
            return len(self._recent(address, time.monotonic())) >= self.limit

    def fail(self, address: str) -> None:
        """Counts one wrong password."""
        with self._lock:
            self._recent(address, time.monotonic()).append(time.monotonic())

    def clear(self, address: str) -> None:
        """Forgets the address's failures after a good login."""
        with self._lock:
            self._failures.pop(address, None)


@bp.record_once
def _make_guard(state: BlueprintSetupState) -> None:
    state.app.extensions["ddz_login_guard"] = LoginGuard()


class FormError(ValueError):
    """A form field that cannot be used, said in words to fix it."""


def csrf_token() -> str:
    """Gets the session's CSRF token, making one on first use."""
    token = session.get(CSRF_FIELD)
    if not isinstance(token, str):
        token = session[CSRF_FIELD] = secrets.token_urlsafe(32)
    return token


@bp.app_context_processor
def _inject_csrf() -> dict[str, Any]:
    return {"csrf_token": csrf_token, "operator": session.get("operator")}


@bp.before_request
def check_csrf() -> tuple[str, int] | None:
    """Refuses any POST whose token is missing or is not this session's."""
    if request.method != "POST":
        return None
    sent = request.form.get(CSRF_FIELD, "")
    token = session.get(CSRF_FIELD)
    if not isinstance(token, str) or not hmac.compare_digest(sent.encode(), token.encode()):
        return render_template("error.html", message=CSRF_MESSAGE), 400
    return None


def login_required(view: View) -> View:
    """Sends a visitor who has not logged in to the login page."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not session.get("operator"):
            return redirect(url_for("console.login", next=request.path))
        return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def text_field(name: str, label: str, limit: int) -> str:
    """Reads a required one-line text field.

    :raises: :exc:`FormError`.
    """
    value = request.form.get(name, "").strip()
    if not value:
        raise FormError(f"{label}: this field is required")
    if len(value) > limit or "\n" in value or "\r" in value:
        raise FormError(f"{label}: one line of at most {limit} characters, please")
    return value


def seat_field(name: str, label: str, players: int) -> int:
    """Reads a seat number that exists at this table.

    :raises: :exc:`FormError`.
    """
    text = request.form.get(name, "").strip()
    if not text.isdigit() or not 0 <= int(text) < players:
        raise FormError(f"{label} must be a seat from 0 to {players - 1}")
    return int(text)


def _safe_next(target: str | None) -> str:
    """Keeps a post-login redirect inside the console."""
    if target and target.startswith("/console/") and not target.startswith("//"):
        return target
    return url_for("console.index")


@bp.route("/login", methods=("GET", "POST"))
def login() -> str | tuple[str, int] | Response:
    """Logs an operator in with the console password and the name the log will show."""
    password_hash = current_app.config["PASSWORD_HASH"]
    if request.method == "GET":
        return render_template("console/login.html", enabled=bool(password_hash))
    error = None
    status = 400
    try:
        name = text_field("name", "Your name", NAME_MAX)
    except FormError as problem:
        error = str(problem)
    else:
        password = request.form.get("password", "")
        guard: LoginGuard = current_app.extensions["ddz_login_guard"]
        address = request.remote_addr or "?"
        if guard.is_locked(address):
            error = "Too many wrong passwords from this address; wait five minutes."
            status = 429
        elif not password_hash:
            error = (
                "The console is off: no password hash is configured"
                " (ddz-table dashboard hash-password)."
            )
            status = 403
        elif not check_password_hash(password_hash, password):
            error = "Wrong password."
            status = 401
            guard.fail(address)
            logger.warning("wrong console password from %s", address)
        else:
            guard.clear(address)
    if error is not None:
        flash(error, "error")
        return render_template("console/login.html", enabled=bool(password_hash)), status
    target = _safe_next(request.args.get("next"))
    session.clear()
    session["operator"] = name
    csrf_token()
    logger.info("%s logged in to the console from %s", name, request.remote_addr)
    return redirect(target, code=303)


@bp.post("/logout")
def logout() -> Response:
    """Logs the operator out."""
    session.clear()
    return redirect(url_for("tables.venue"), code=303)


@bp.get("/")
@login_required
def index() -> str | Response:
    """Lists the tables to operate; one table goes straight to its console."""
    tables = get_access().tables()
    if len(tables) == 1:
        return redirect(url_for("console.table", table=tables[0]))
    return render_template("console/index.html", tables=tables)


def _page(table: str, status: int = 200) -> tuple[str, int]:
    access = get_access()
    snapshot = access.snapshot(table)
    html = fragment(current_app, "table", table, access.key(table), snapshot)
    return render_template("console/table.html", table=table, s=snapshot, html=html), status


@bp.get("/<table>")
@login_required
def table(table: str) -> tuple[str, int]:
    """Shows a table's console: the live screen and the operator's forms."""
    return _page(table)


def _players(snapshot: dict[str, Any]) -> int:
    seats = snapshot.get("seats") or []
    if not seats:
        raise FormError("this table has no session on; start one first")
    return len(seats)


def _start(table: str, by: str, snapshot: dict[str, Any]) -> str:
    names = [request.form.get(f"name{seat}", "").strip() for seat in range(4)]
    if names[3] == "":
        names.pop()
    try:
        players = check_players(names)
    except CommandError as problem:
        raise FormError(str(problem)) from None
    return get_access().start_session(table, players, by)


def _end(table: str, by: str, snapshot: dict[str, Any]) -> str:
    if request.form.get("confirm") != "yes":
        raise FormError("tick the box to confirm that the session should end")
    return get_access().end_session(table, by)


def _deal(table: str, by: str, snapshot: dict[str, Any]) -> str:
    seat = seat_field("first_bidder", "The first bidder", _players(snapshot))
    return get_access().deal(table, seat, by)


def _undo(table: str, by: str, snapshot: dict[str, Any]) -> str:
    who = text_field("who", "Who", NAME_MAX)
    why = text_field("why", "Why", NOTE_MAX)
    return get_access().undo(table, who, why)


def _play_fields(snapshot: dict[str, Any]) -> tuple[int, str, str, str]:
    """Reads the seat, cards, who and why of a correction or a typed play."""
    seat = seat_field("seat", "The seat", _players(snapshot))
    text = text_field("cards", "Cards", 80)
    try:
        cards = str(parse_cards(text))
    except InvalidCardsError as problem:
        raise FormError(f"Cards: {problem}") from None
    if not cards:
        raise FormError("Cards: this field is required")
    who = text_field("who", "Who", NAME_MAX)
    why = text_field("why", "Why", NOTE_MAX)
    return seat, cards, who, why


def _correct(table: str, by: str, snapshot: dict[str, Any]) -> str:
    return get_access().correct(table, *_play_fields(snapshot))


def _play(table: str, by: str, snapshot: dict[str, Any]) -> str:
    return get_access().enter_play(table, *_play_fields(snapshot))


def _acknowledge(table: str, by: str, snapshot: dict[str, Any]) -> str:
    text = request.form.get("seq", "").strip()
    if not text.isdigit():
        raise FormError("the alert to acknowledge is missing; reload the console")
    return get_access().acknowledge(table, int(text), by)


def _deck(table: str, by: str, snapshot: dict[str, Any]) -> str:
    _players(snapshot)
    return get_access().new_deck(table, by)


#: The console's commands, by the last part of their URL.
ACTIONS: Final[dict[str, Callable[[str, str, dict[str, Any]], str]]] = {
    "start": _start,
    "end": _end,
    "deal": _deal,
    "undo": _undo,
    "correct": _correct,
    "play": _play,
    "acknowledge": _acknowledge,
    "deck": _deck,
}


@bp.post("/<table>/<action>")
@login_required
def act(table: str, action: str) -> tuple[str, int] | Response:
    """Runs one console command; bad input is a 400 and a refusal a 409, each with its reason."""
    run = ACTIONS.get(action)
    if run is None:
        flash(f"There is no console command {action!r}.", "error")
        return _page(table, 404)
    snapshot = get_access().snapshot(table)
    operator = str(session["operator"])
    try:
        message = run(table, operator, snapshot)
    except FormError as problem:
        flash(str(problem)[:1].upper() + str(problem)[1:] + ".", "error")
        return _page(table, 400)
    except CommandError as problem:
        flash(f"The table refused: {problem}", "error")
        return _page(table, 409)
    flash(message[:1].upper() + message[1:] + ".", "ok")
    return redirect(url_for("console.table", table=table), code=303)
