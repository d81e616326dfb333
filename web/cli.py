"""``ddz-table dashboard``: a venue screen on its own, and ``dashboard hash-password``.

With ``--mqtt URL`` the dashboard follows every table on that broker (a screen on
another machine); without it, it follows the tables in the session log, reading
what the controllers append (a screen that shares the venue's PostgreSQL). The
table's own dashboard runs inside the controller, in-process, on the same
:class:`DashboardServer`.
"""

from __future__ import annotations

import argparse
import getpass
import ipaddress
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.security import generate_password_hash
from werkzeug.serving import BaseWSGIServer, make_server

from table.config import Config, load_config
from table.errors import UserError
from table.interrupts import interrupts
from table.session import SessionLog
from web import create_app
from web.access import LocalAccess, TableAccess

logger = logging.getLogger(__name__)


class DashboardServer:
    """Serves the dashboard on a threaded WSGI server: one thread per request, so per screen.

    ``port`` 0 picks a free port; :attr:`url` tells which.
    """

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 5000) -> None:
        try:
            self.server: BaseWSGIServer = make_server(host, port, app, threaded=True)
        except OSError as error:
            raise UserError(
                f"cannot serve the dashboard on {host}:{port}: {error.strerror}"
            ) from None
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self.server.server_port}"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Serves in a background thread, so the caller's thread can wait for a stop."""
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="ddz-dashboard", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stops serving; close the accessor first so that open streams end."""
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join()


def app_config(config: Config) -> dict[str, Any]:
    """Maps the table's settings (``[dashboard]``) to the Flask config keys."""
    return {
        "PASSWORD_HASH": config["dashboard.password_hash"],
        "SECRET_KEY": config["dashboard.secret_key"],
    }


def check_host(host: str, password_hash: str | None) -> None:
    """Warns when the dashboard is reachable from the room without a console password."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback and not password_hash:
        logger.warning("serving on %s with the console off (no password hash configured)", host)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds ``dashboard`` and ``dashboard hash-password``."""
    dashboard = commands.add_parser(
        "dashboard", help="serve the scoreboard for a venue screen (over MQTT or the log)"
    )
    dashboard.add_argument("--config", type=Path, metavar="FILE", help="table.toml")
    dashboard.add_argument(
        "--mqtt", metavar="URL", help="follow every table on this broker (mqtt[s]://...)"
    )
    dashboard.add_argument(
        "--db", metavar="URL", help="session log for history (default: the config's, or SQLite)"
    )
    dashboard.add_argument(
        "--table",
        action="append",
        metavar="ID",
        help="without --mqtt: a table to follow in the log (repeat; default: every table logged)",
    )
    dashboard.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    dashboard.add_argument("--port", type=int, help="port (default 5000)")
    dashboard.set_defaults(func=_serve_command)
    actions = dashboard.add_subparsers(dest="dashboard_command", metavar="COMMAND")
    hashing = actions.add_parser(
        "hash-password", help="read the console password, print its hash for the config"
    )
    hashing.set_defaults(func=_hash_command)


def _read_password() -> str:
    """Reads the password twice from a terminal, or once from a pipe."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("console password: ")
    if first != getpass.getpass("again: "):
        raise UserError("the two passwords differ; run hash-password again")
    return first


def _hash_command(args: argparse.Namespace) -> int:
    password = _read_password()
    if len(password) < 8:
        raise UserError("use a console password of at least 8 characters")
    print(generate_password_hash(password))
    print(
        "put it in table.toml as [dashboard] password_hash, or in $DDZ_TABLE_PASSWORD_HASH",
        file=sys.stderr,
    )
    return 0


def _access(args: argparse.Namespace, config: Config) -> TableAccess:
    db = args.db or config["log.url"]
    if args.mqtt:
        from web.mqtt_access import MqttAccess

        log = SessionLog.open(db, create=False) if db else None
        return MqttAccess.connect(args.mqtt, log)
    log = SessionLog.open(db, create=False)
    tables = args.table or sorted({info.table for info in log.sessions()} | {config["table.id"]})
    local = LocalAccess.resume(log, tables, config.house_rules)
    local.follow()
    return local


def _serve_command(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    host = args.host or config["dashboard.host"]
    port = config["dashboard.port"] if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise UserError(f"--port {port} is not a TCP port (0 to 65535)")
    settings = app_config(config)
    check_host(host, settings["PASSWORD_HASH"])
    access = _access(args, config)
    server: DashboardServer | None = None
    try:
        server = DashboardServer(create_app(settings, access), host, port)
        with interrupts() as stop:
            server.start()
            print(f"ddz-table dashboard on {server.url} (Ctrl-C stops it)", file=sys.stderr)
            stop.wait()
        print("ddz-table: dashboard stopped", file=sys.stderr)
    finally:
        access.close()  # ends the open streams first, as the server's stop asks
        if server is not None:
            server.stop()
        if access.log is not None:
            access.log.close()
    return 0
