"""The ddz-table dashboard: the table screen, venue overview, history and operator console.

:func:`create_app` builds the Flask app around one :class:`~web.access.TableAccess`
(the in-process controller's tables, or a venue followed over MQTT). Importing
this package starts nothing and opens nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flask import Flask, current_app, render_template
from werkzeug.wrappers import Response

from web.access import TableAccess, UnknownTableError

if TYPE_CHECKING:
    from web.seats import SeatHost

#: Content-Security-Policy of every page: no inline script, nothing from elsewhere.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)


def create_app(
    test_config: Mapping[str, Any] | None = None,
    access: TableAccess | None = None,
    seats: SeatHost | None = None,
) -> Flask:
    """Builds the dashboard app around an accessor.

    ``test_config`` overrides the defaults (``PASSWORD_HASH``, ``SECRET_KEY``,
    ``SSE_KEEPALIVE``...). Without ``access`` the app follows the log named by
    ``DATABASE`` (the default log when empty) for the tables in ``TABLES``, so that
    ``flask --app web run`` shows something useful. Only the demo passes
    ``seats``: people in a browser on its machine may then play its simulated seats.
    """
    app = Flask(__name__)
    app.config.from_mapping(
        SECRET_KEY=secrets.token_hex(32),
        PASSWORD_HASH=None,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_NAME="ddz_session",
        PERMANENT_SESSION_LIFETIME=12 * 3600,
        SSE_KEEPALIVE=15.0,
        SSE_RETRY_MS=1000,
        SSE_MIN_GAP=0.05,
        VENUE_NAME="ddz-table",
        MAX_CONTENT_LENGTH=64 * 1024,
        DATABASE=None,
        TABLES=("table-1",),
    )
    if test_config is not None:
        app.config.from_mapping(test_config)
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = secrets.token_hex(32)
    if access is None:
        from table.session import SessionLog
        from web.access import LocalAccess

        local = LocalAccess.resume(SessionLog.open(app.config["DATABASE"]), app.config["TABLES"])
        local.follow()
        access = local
    app.extensions["ddz_access"] = access

    from web import console, history, tables
    from web.render import register_template_helpers

    app.register_blueprint(tables.bp)
    app.register_blueprint(history.bp)
    app.register_blueprint(console.bp)
    app.extensions["ddz_folds"] = history.FoldCache()
    if seats is not None:
        from web import seats as seat_pages

        app.extensions["ddz_seats"] = seats
        app.register_blueprint(seat_pages.bp)
    register_template_helpers(app)

    @app.errorhandler(UnknownTableError)
    def unknown_table(error: UnknownTableError) -> tuple[str, int]:
        return render_template("error.html", message=str(error)), 404

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    return app


def get_access() -> TableAccess:
    """Gets the accessor of the app that handles the current request."""
    access: TableAccess = current_app.extensions["ddz_access"]
    return access
