"""The demo's seats in the browser: take a simulated seat, see its hand, bid, pass and play.

Only ``ddz-table demo`` gives :func:`web.create_app` a :class:`SeatHost`; at a
real table the players hold real cards, and this blueprint is not registered.
The moves take the same path as a simulated player's (cards laid on the virtual
table, read by the camera, PLAY pressed on the simulated panel), so the rules
judge them as they judge any seat. The pages answer only requests from this
machine (the demo serves on 127.0.0.1), every POST carries the session's CSRF
token, and the seat's token in the signed session cookie is what lets a
browser see a hand or move for it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Final, Protocol

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
from werkzeug.wrappers import Response

from table.errors import UserError
from web import get_access
from web.console import check_csrf
from web.display import reason_text
from web.render import fragment

bp = Blueprint("seats", __name__, url_prefix="/demo")

#: The moves the seat page offers, by the value of the button pressed.
MOVES: Final = {"pass": "pass", "bid1": "bid 1", "bid2": "bid 2", "bid3": "bid 3"}
LOCAL_ONLY: Final = "a seat can be taken only in a browser on the machine that runs the demo"


@dataclass(frozen=True)
class SeatView:
    """What the person at a seat sees: the hand (canonical text), the task, the referee's words."""

    seat: int
    hand: str
    task: str
    on_turn: bool
    phase: str
    messages: tuple[str, ...]


class SeatHost(Protocol):
    """Lends simulated seats to people; every failure is a :exc:`UserError` to show as is."""

    def free_seats(self, table: str) -> list[int]:
        """Lists the seats a person may take now."""
        ...

    def take(self, table: str, seat: int) -> str:
        """Takes a seat; returns the token that proves it."""
        ...

    def give_back(self, table: str, seat: int, token: str) -> None:
        """Gives a held seat back to the simulated players."""
        ...

    def view(self, table: str, seat: int, token: str) -> SeatView:
        """Gets what the seat's person sees."""
        ...

    def act(self, table: str, seat: int, token: str, move: str) -> str:
        """Makes a move (``pass``, ``bid 2``, ``play 33``); says what happens next."""
        ...


def get_host() -> SeatHost:
    """Gets the seat host of the app that handles the current request."""
    host: SeatHost = current_app.extensions["ddz_seats"]
    return host


@bp.before_request
def local_only() -> tuple[str, int] | None:
    """Refuses every request that does not come from this machine."""
    try:
        is_local = ipaddress.ip_address(request.remote_addr or "").is_loopback
    except ValueError:
        is_local = False
    if not is_local:
        return render_template("error.html", message=LOCAL_ONLY), 403
    return None


bp.before_request(check_csrf)  # after the address check: a stranger learns nothing more


@bp.app_context_processor
def _inject_seats() -> dict[str, Any]:
    return {"seats_enabled": True}


def _held(table: str) -> tuple[int, str] | None:
    """Gets the seat and token this browser holds at a table, if any."""
    held = (session.get("seats") or {}).get(table)
    if isinstance(held, list) and len(held) == 2:
        return int(held[0]), str(held[1])
    return None


def _keep(table: str, held: tuple[int, str] | None) -> None:
    seats = dict(session.get("seats") or {})
    if held is None:
        seats.pop(table, None)
    else:
        seats[table] = list(held)
    session["seats"] = seats


def _view(table: str) -> SeatView | None:
    """Gets this browser's seat view, if the host still lends it the seat.

    It never writes the session: the page's panel refreshes run beside the
    forms' POSTs, and a cookie written by one would drop another's flash.
    """
    held = _held(table)
    if held is None:
        return None
    try:
        return get_host().view(table, *held)
    except UserError:
        return None


@bp.get("/<table>")
def seat_page(table: str, status: int = 200) -> tuple[str, int]:
    """Shows the live table with this browser's seat, or the seats free to take."""
    access = get_access()
    snapshot = access.snapshot(table)
    html = fragment(current_app, "table", table, access.key(table), snapshot)
    view = _view(table)
    free = [] if view is not None else get_host().free_seats(table)
    return render_template(
        "seats/seat.html", table=table, html=html, s=snapshot, view=view, free=free
    ), status


@bp.get("/<table>/panel")
def panel(table: str) -> str | tuple[str, int]:
    """Renders this browser's seat panel alone, for the page to refresh after each change."""
    view = _view(table)
    if view is None:
        return "", 204
    snapshot = get_access().snapshot(table)
    return render_template("seats/_panel.html", table=table, view=view, s=snapshot)


def _sentence(text: str) -> str:
    """Makes a message from the table a sentence for the page."""
    return text[:1].upper() + text[1:] + "."


def _error(table: str, message: str, status: int) -> tuple[str, int]:
    flash(_sentence(reason_text(get_access().snapshot(table), message)), "error")
    return seat_page(table, status)


@bp.post("/<table>/take")
def take(table: str) -> tuple[str, int] | Response:
    """Takes a free seat for this browser."""
    text = request.form.get("seat", "").strip()
    if not text.isdigit():
        return _error(table, "choose a seat to take", 400)
    if _view(table) is not None:
        return _error(table, "this browser plays a seat already; give it back first", 409)
    try:
        token = get_host().take(table, int(text))
    except UserError as error:
        return _error(table, str(error), 409)
    _keep(table, (int(text), token))
    return redirect(url_for("seats.seat_page", table=table), code=303)


def _move() -> str:
    """Reads the move from the button pressed and the cards ticked."""
    move = request.form.get("move", "")
    if move == "play":
        return "play " + "".join(request.form.getlist("card"))
    return MOVES.get(move, move)


@bp.post("/<table>/act")
def act(table: str) -> tuple[str, int] | Response:
    """Makes this browser's move at its seat; a refusal is shown with its reason."""
    held = _held(table)
    if held is None:
        return _error(table, "take a seat first", 409)
    move = _move()
    if move == "play ":
        return _error(table, "tick the cards to play first", 400)
    try:
        message = get_host().act(table, *held, move)
    except UserError as error:
        return _error(table, str(error), 409)
    flash(_sentence(message), "ok")
    return redirect(url_for("seats.seat_page", table=table), code=303)


@bp.post("/<table>/leave")
def leave(table: str) -> tuple[str, int] | Response:
    """Gives this browser's seat back to the simulated players."""
    held = _held(table)
    if held is not None:
        _keep(table, None)
        try:
            get_host().give_back(table, *held)
        except UserError as error:
            return _error(table, str(error), 409)
        flash(f"Seat {held[0]} is played by the simulation again.", "ok")
    return redirect(url_for("seats.seat_page", table=table), code=303)
