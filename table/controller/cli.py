"""``ddz-table demo``, ``ddz-table run`` and ``ddz-table doctor``."""

from __future__ import annotations

import argparse
import functools
import os
import sys
import threading
import webbrowser
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from werkzeug.security import generate_password_hash

from table.cli import number_between, positive_int
from table.config import Config, load_config
from table.controller.eyes import Eyes, FrameSource
from table.controller.loop import Controller
from table.controller.virtual import (
    BrowserSeats,
    ScriptedTable,
    SimPlayers,
    TerminalSeat,
    VirtualTable,
)
from table.devices.driver import PanelDriver
from table.devices.simulated import SimulatedPanel
from table.errors import UserError
from table.interrupts import interrupts
from table.mqtt import Broker, MqttLink
from table.mqtt_bridge import MqttBridge, table_link
from table.rules import HouseRules, get_variant
from table.session.entries import LogEntry, SessionError
from table.session.store import SessionLog
from table.session.table import TableSession
from table.vision.calibration import MARKER_IDS, Calibration, calibrate, detect_markers
from table.vision.calibration import load as load_calibration
from table.vision.camera import Camera
from table.vision.recognize import Model, load_model
from web import create_app
from web.access import LocalAccess
from web.cli import DashboardServer, app_config
from web.seats import SeatHost

DEMO_NAMES = ("Ann", "Bo", "Cy", "Di")
DEMO_PASSWORD = "demo"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the ``demo``, ``run`` and ``doctor`` sub-commands."""
    run = commands.add_parser("run", help="referee a real table: camera, panel, log, screens")
    run.add_argument("--config", type=_config_path, metavar="FILE", help="table.toml")
    run.set_defaults(func=_run)
    doctor = commands.add_parser("doctor", help="check camera, panel, broker, database")
    doctor.add_argument("--config", type=_config_path, metavar="FILE", help="table.toml")
    doctor.set_defaults(func=_doctor)

    demo = commands.add_parser("demo", help="play a whole table without hardware")
    demo.add_argument("--players", type=int, choices=(3, 4), default=3)
    demo.add_argument(
        "--rounds", type=positive_int, metavar="N", help="stop after N settled rounds"
    )
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument(
        "--speed",
        type=number_between(0.01, 100),
        default=1.0,
        help="how fast the players act (default 1)",
    )
    demo.add_argument("--db", metavar="URL", help="session log (default: SQLite in the data dir)")
    demo.add_argument("--mqtt", metavar="URL", help="publish the table to this broker")
    demo.add_argument("--table", default="demo", help="table id (default demo)")
    demo.add_argument("--port", type=int, default=5000, help="dashboard port (default 5000)")
    demo.add_argument(
        "--seat", type=int, metavar="N", help="play seat N yourself, in this terminal"
    )
    demo.add_argument("--no-browser", action="store_true", help="do not open a browser")
    demo.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    config: Config = load_config(None)
    variant = get_variant(args.players)
    log = SessionLog.open(args.db or config["log.url"])
    try:
        session = open_session(log, args.table, DEMO_NAMES[: args.players], HouseRules())
        table = VirtualTable(args.seed)
        calibration = calibrate(table.read())
        panel = SimulatedPanel(seats=variant.players)
        eyes = Eyes(lambda: table, calibration, variant.players)
        controller = Controller(session, panel=panel, eyes=eyes)
        if args.seat is not None and not 0 <= args.seat < variant.players:
            raise UserError(f"--seat must be a seat from 0 to {variant.players - 1}")
        players = SimPlayers(
            controller,
            panel,
            table,
            eyes,
            seed=args.seed,
            rounds=args.rounds,
            speed=args.speed,
            people=() if args.seat is None else (args.seat,),
        )
        controller.deal = players.deal  # the demo's referee sees the hands it deals
        print(f"ddz-table demo: table {args.table!r}, session {session.session_id}, "
              f"{variant.players} players, log {log.url}")  # fmt: skip
        with interrupts() as stop:
            controller.start()
            bridge = _bridge(args.mqtt, log, session, controller, False) if args.mqtt else None
            settings = {"PASSWORD_HASH": generate_password_hash(DEMO_PASSWORD)}
            access, server = _dashboard(
                log,
                session,
                controller,
                settings,
                "127.0.0.1",
                args.port,
                BrowserSeats(players),
                mqtt=bool(args.mqtt),
            )
            print(f"ddz-table demo: dashboard at {server.url}/table/{args.table}"
                  f" (console password: {DEMO_PASSWORD}; play a seat at"
                  f" {server.url}/demo/{args.table}); Ctrl-C stops")  # fmt: skip
            if not args.no_browser:
                webbrowser.open(f"{server.url}/table/{args.table}")
            if args.seat is not None:
                person = TerminalSeat(players, args.seat, sys.stdout)
                threading.Thread(target=person.run, args=(sys.stdin, stop), daemon=True).start()
            worker = threading.Thread(target=players.run, args=(stop,), daemon=True)
            worker.start()
            while worker.is_alive() and not stop.is_set():
                worker.join(0.5)
            stop.set()
            worker.join()
            controller.call(session.end)
            access.close()
            server.stop()
            controller.stop()
            if bridge is not None:
                bridge.close()
        state = session.state
        assert state.ledger is not None
        totals = ", ".join(
            f"{name} {total:+d}"
            for name, total in zip(state.ledger.players, state.ledger.totals, strict=True)
        )
        print(f"{state.ledger.rounds} rounds settled; totals: {totals}")
        return 0
    finally:
        log.close()


def open_session(
    log: SessionLog, table: str, players: Sequence[str], house_rules: HouseRules
) -> TableSession:
    """Resumes the table's open session from the log (after a crash), else starts one.

    :raises: :exc:`UserError` if the open session seats other players.
    """
    info = log.latest_open_session(table)
    if info is None:
        return TableSession.start(log, table, get_variant(len(players)).name, players, house_rules)
    if tuple(info.players) != tuple(players):
        raise UserError(
            f"table {table} has an open session {info.id} for {', '.join(info.players)};"
            " end it on the console or with the same players, or use another table id"
        )
    return TableSession.resume(log, info.id)


def _bridge(
    url: str, log: SessionLog, session: TableSession, controller: Controller, ha: bool
) -> MqttBridge:
    """Publishes the table to a broker; the controller stays the session's only writer."""
    bridge = MqttBridge(
        table_link(Broker.from_url(url), session.info.table),
        log,
        session.info.table,
        session,
        ha_discovery=ha,
        call=controller.call,
        on_session=lambda new: controller.call(lambda: controller.adopt(new)),
        enter_play=lambda _session, seat, cards, by, why: _enter_play(
            controller, seat, cards, by, why
        ),
        new_deck=controller.new_deck,
        off=_off(controller, mqtt=True),
    )
    bridge.start()
    return bridge


def _dashboard(
    log: SessionLog,
    session: TableSession,
    controller: Controller,
    settings: dict[str, Any],
    host: str,
    port: int,
    seats: SeatHost | None = None,
    *,
    mqtt: bool,
) -> tuple[LocalAccess, DashboardServer]:
    """Serves the dashboard in this process; console commands run on the controller thread.

    ``seats`` is the demo's: people in a browser may play its simulated seats.
    The screens show the panel, camera or broker (``mqtt``) the table runs
    without as off.
    """
    access = LocalAccess(
        log,
        [session],
        house_rules=session.state.house_rules,
        call=controller.call,
        play_hook=lambda _session, seat, cards, by, why: _enter_play(
            controller, seat, cards, by, why
        ),
        deck_hook=controller.new_deck,
        off=_off(controller, mqtt=mqtt),
    )
    access.on_session.append(lambda new: controller.call(lambda: controller.adopt(new)))
    server = DashboardServer(create_app(settings, access, seats), host, port)
    server.start()
    return access, server


def _off(controller: Controller, *, mqtt: bool) -> list[str]:
    """Names the devices the table runs without: its screens and its MQTT state show them off."""
    present = {
        "panel": controller.panel is not None,
        "camera": controller.eyes is not None,
        "broker": mqtt,
    }
    return [device for device, there in present.items() if not there]


def _enter_play(controller: Controller, seat: int, cards: str, by: str, why: str) -> LogEntry:
    """Submits an operator's play through the controller; its log entry, or the refusal."""
    refused = controller.enter_play(seat, cards, by, why)
    if refused is not None:
        raise SessionError(refused)
    session = controller.session
    return session.log.entries(session.session_id, after=session.state.seq - 1)[0]


def _run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    log = SessionLog.open(config["log.url"])
    try:
        session = open_session(log, config["table.id"], config["table.players"], config.house_rules)
        panel = PanelDriver(config["panel.port"]) if config["panel.port"] else None
        calibration = _calibration(config) if config["camera.source"] else None
        eyes = None
        if calibration is not None:
            source = config["camera.source"]
            eyes = Eyes(
                lambda: open_camera(source),
                calibration,
                len(config["table.players"]),
                model=_reader_model(config),
            )
        controller = Controller(session, panel=panel, eyes=eyes)
        print(f"ddz-table: table {config['table.id']!r}, session {session.session_id}, "
              f"log {log.url}")  # fmt: skip
        if panel is None:
            print("ddz-table: no panel configured ([panel] port); the console drives the table")
        if eyes is None:
            print(
                "ddz-table: no camera configured ([camera] source); plays are typed on the console"
            )
        with interrupts() as stop:
            controller.start()
            access, server = _dashboard(
                log,
                session,
                controller,
                app_config(config),
                config["dashboard.host"],
                config["dashboard.port"],
                mqtt=bool(config["mqtt.url"]),
            )
            print(f"ddz-table: dashboard at {server.url}")
            bridge = None
            if config["mqtt.url"]:
                bridge = _bridge(
                    config["mqtt.url"], log, session, controller, config["mqtt.home_assistant"]
                )
            stop.wait()
            access.close()
            server.stop()
            controller.stop()
            if bridge is not None:
                bridge.close()
        return 0
    finally:
        log.close()


def open_camera(source: str) -> FrameSource:
    """Opens a camera, a stream, a video file, or ``virtual:FILE`` (a scripted table)."""
    if source.startswith(ScriptedTable.PREFIX):
        return ScriptedTable(Path(source[len(ScriptedTable.PREFIX) :]))
    return Camera(source)


def _calibration(config: Config) -> Calibration:
    path = Path(config["camera.calibration"])
    if not path.is_file():
        raise UserError(
            f"calibration file {path} not found; run 'ddz-table vision calibrate' with the camera"
        )
    return load_calibration(path)


def _reader_model(config: Config) -> Model | None:
    """Loads the card reader model learnt for the table's deck; ``None``: the built-in one."""
    return load_model(Path(config["camera.model"])) if config["camera.model"] else None


def _doctor(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    frame = functools.cache(lambda: _one_frame(config["camera.source"]))  # one for both checks
    checks = [
        ("database", lambda: _check_database(config)),
        ("camera", lambda: _check_camera(config, frame)),
        ("calibration", lambda: _check_calibration(config, frame)),
        ("card reader", lambda: _check_reader(config)),
        ("panel", lambda: _check_panel(config)),
        ("broker", lambda: _check_broker(config)),
    ]
    failed = 0
    for name, check in checks:
        try:
            verdict = check()
        except UserError as error:
            failed += 1
            print(f"{name:<12} PROBLEM  {error}")
        else:
            print(f"{name:<12} ok       {verdict}")
    return 1 if failed else 0


def _check_database(config: Config) -> str:
    log = SessionLog.open(config["log.url"])
    try:
        return f"{log.url}, {len(log.sessions())} sessions"
    finally:
        log.close()


def _check_camera(config: Config, frame: Callable[[], np.ndarray]) -> str:
    source = config["camera.source"]
    if not source:
        return "none configured ([camera] source); plays will be typed on the console"
    height, width = frame().shape[:2]
    return f"{source} gives {width}x{height} frames"


def _one_frame(source: str) -> np.ndarray:
    camera = open_camera(source)
    try:
        return camera.read()
    finally:
        camera.close()


def _check_calibration(config: Config, frame: Callable[[], np.ndarray]) -> str:
    if not config["camera.source"]:
        return "not needed without a camera"
    calibration = _calibration(config)
    problem = calibration.frame_size_problem(frame())
    if problem is not None:
        raise UserError(problem)
    found = detect_markers(frame())
    missing = sorted(set(MARKER_IDS) - set(found))
    if missing:
        raise UserError(
            f"markers {missing} are not visible; uncover the table corners or move the camera,"
            " then run 'ddz-table vision calibrate'"
        )
    problem = calibration.zone_problem() or calibration.card_size_problem()
    if problem is not None:
        raise UserError(problem)
    size = "x".join(str(side) for side in calibration.image_size)
    return (
        f"{config['camera.calibration']} loaded ({size}); all four markers visible; cards"
        f" about {calibration.read_card_width():.0f} px wide to the card reader"
    )


def _check_reader(config: Config) -> str:
    model = _reader_model(config)
    if model is None:
        return "built-in model; 'ddz-table vision learn' fits one to your deck"
    return f"{config['camera.model']}: a model learnt for one deck, {len(model.w1)} networks"


def _check_panel(config: Config) -> str:
    port = config["panel.port"]
    if not port:
        return "none configured ([panel] port); the console drives the table"
    driver = PanelDriver(port)
    try:
        info = driver.start(wait=True)
    finally:
        driver.stop()
    if info is None:
        raise UserError(f"no HELLO from the panel on {port}; check the cable and the firmware")
    return f"{port}: firmware {info.firmware}, panel {info.panel_id}, {info.seats} seats"


def _check_broker(config: Config) -> str:
    url = config["mqtt.url"]
    if not url:
        return "none configured ([mqtt] url); the table is not published"
    with MqttLink(Broker.from_url(url), f"ddz-doctor-{os.getpid()}") as link:
        link.start()
        link.wait_connected(5.0)
        return f"{link.broker.describe()} answers (MQTT {link.protocol})"


def _config_path(value: str) -> Path:
    path = Path(value)
    if not path.is_file():
        raise UserError(f"config file {path} not found; see docs/table.example.toml")
    return path
