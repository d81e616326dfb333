"""The live pages: venue overview, table screen, and the server-sent event stream that feeds them.

``/stream?table=<id>`` sends a table's rendered screen after every change, with
the snapshot key as the event id; a browser that reconnects sends that id back
in ``Last-Event-ID`` and gets the current screen only if it has changed since.
``/stream`` without a table feeds the venue overview with every table's card.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from flask import (
    Blueprint,
    Response,
    current_app,
    jsonify,
    render_template,
    request,
    stream_with_context,
)

from web import get_access
from web.access import UnknownTableError, Update
from web.render import event, fragment

bp = Blueprint("tables", __name__)

ZOOM_RANGE: Final = (0.5, 3.0)
ROTATE_RANGE: Final = (5, 3600)


class KioskError(ValueError):
    """A kiosk option in the URL that cannot be used."""


@dataclass(frozen=True)
class Kiosk:
    """Display options a venue screen takes from its URL."""

    dark: bool = False
    zoom: float = 1.0
    standings: bool = True
    rotate: int = 0
    tables: tuple[str, ...] = ()

    @property
    def classes(self) -> str:
        """Gets the classes the page's root element carries."""
        return " ".join(
            name for name, on in (("dark", self.dark), ("no-standings", not self.standings)) if on
        )

    def query(self) -> dict[str, str]:
        """Gets the options as URL parameters, to carry them over to a linked page."""
        args: dict[str, str] = {}
        if self.dark:
            args["dark"] = "1"
        if self.zoom != 1.0:
            args["zoom"] = f"{self.zoom:g}"
        if not self.standings:
            args["standings"] = "0"
        if self.rotate:
            args["rotate"] = str(self.rotate)
        if self.tables:
            args["tables"] = ",".join(self.tables)
        return args


def _flag(args: Mapping[str, str], name: str, default: bool) -> bool:
    text = args.get(name)
    if text is None:
        return default
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise KioskError(f"{name} must be 1 or 0, not {text!r}")


def parse_kiosk(args: Mapping[str, str], known: list[str]) -> Kiosk:
    """Reads the kiosk options: ``dark``, ``zoom``, ``standings``, ``rotate``, ``tables``.

    :raises: :exc:`KioskError` naming the option and what it accepts.

    >>> parse_kiosk({"dark": "1", "zoom": "1.5", "standings": "0"}, ["t1"]).classes
    'dark no-standings'
    >>> parse_kiosk({"zoom": "9"}, [])
    Traceback (most recent call last):
    ...
    web.tables.KioskError: zoom must be a number from 0.5 to 3
    """
    low, high = ZOOM_RANGE
    try:
        zoom = float(args.get("zoom", "1"))
    except ValueError:
        zoom = -1.0
    if not low <= zoom <= high:
        raise KioskError(f"zoom must be a number from {low:g} to {high:g}")
    first, last = ROTATE_RANGE
    text = args.get("rotate", "0")
    rotate = int(text) if text.isdigit() else -1
    if rotate != 0 and not first <= rotate <= last:
        raise KioskError(f"rotate must be a whole number of seconds from {first} to {last}")
    tables = tuple(t for t in args.get("tables", "").split(",") if t)
    unknown = [t for t in tables if t not in known]
    if unknown:
        raise KioskError(f"tables names unknown tables: {', '.join(unknown)}")
    return Kiosk(
        dark=_flag(args, "dark", False),
        zoom=zoom,
        standings=_flag(args, "standings", True),
        rotate=rotate,
        tables=tables,
    )


def _kiosk() -> Kiosk | tuple[str, int]:
    try:
        return parse_kiosk(request.args, get_access().tables())
    except KioskError as error:
        return render_template("error.html", message=str(error)), 400


@bp.get("/")
def venue() -> str | tuple[str, int]:
    """Shows every table the dashboard knows, live."""
    kiosk = _kiosk()
    if not isinstance(kiosk, Kiosk):
        return kiosk
    access = get_access()
    cards = [
        (table, fragment(current_app, "venue", table, access.key(table), access.snapshot(table)))
        for table in access.tables()
    ]
    return render_template("tables/venue.html", cards=cards, kiosk=kiosk)


@bp.get("/table/<table>")
def table_screen(table: str) -> str | tuple[str, int]:
    """Shows one table for the room, made to be read from across it."""
    kiosk = _kiosk()
    if not isinstance(kiosk, Kiosk):
        return kiosk
    access = get_access()
    snapshot = access.snapshot(table)
    html = fragment(current_app, "table", table, access.key(table), snapshot)
    rotation = list(kiosk.tables or access.tables()) if kiosk.rotate else []
    return render_template(
        "tables/table.html", table=table, html=html, kiosk=kiosk, rotation=rotation
    )


@bp.get("/api/table/<table>")
def table_json(table: str) -> Response:
    """Gets a table's snapshot as JSON, the same dict MQTT retains."""
    return jsonify(get_access().snapshot(table))


def _merge(older: list[Update], newer: list[Update]) -> list[Update]:
    """Keeps the newest update per table from two batches.

    >>> a1, b1, a2 = Update("a", "1", {}), Update("b", "1", {}), Update("a", "2", {})
    >>> sorted((u.table, u.key) for u in _merge([a1, b1], [a2]))
    [('a', '2'), ('b', '1')]
    """
    newest = {update.table: update for update in older}
    for update in newer:
        newest[update.table] = update
    return list(newest.values())


@bp.get("/stream")
def stream() -> Response | tuple[str, int]:
    """Streams rendered fragments as server-sent events, one table or all of them."""
    access = get_access()
    table = request.args.get("table") or None
    if table is not None and table not in access.tables():
        return str(UnknownTableError(table)), 404
    view = "table" if table else "venue"
    last_id = request.headers.get("Last-Event-ID", "")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    keepalive = float(app.config["SSE_KEEPALIVE"])
    gap = float(app.config["SSE_MIN_GAP"])
    retry = int(app.config["SSE_RETRY_MS"])
    subscription = access.hub.subscribe(table)

    def events() -> Iterator[str]:
        try:
            yield f"retry: {retry}\n\n"
            sent: dict[str, str] = {}
            for name in [table] if table else access.tables():
                key = access.key(name)
                if table is None or key != last_id:
                    yield event(app, view, name, key, access.snapshot(name))
                sent[name] = key
            last_send = 0.0
            while True:
                updates = subscription.latest(keepalive)
                if not updates and subscription.is_closed:
                    return
                if not updates:
                    yield ": keepalive\n\n"
                    continue
                wait = last_send + gap - time.monotonic()
                if wait > 0:  # a burst: let it settle, then send only the newest
                    time.sleep(wait)
                    updates = _merge(updates, subscription.latest(0))
                for update in updates:
                    if sent.get(update.table) != update.key:
                        sent[update.table] = update.key
                        yield event(app, view, update.table, update.key, update.snapshot)
                last_send = time.monotonic()
        finally:
            subscription.close()

    return Response(
        stream_with_context(events()),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
