"""``ddz-table sessions|replay|export|import|stats``: the session log from a shell."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from table.errors import UserError
from table.rules import Cards, classify, describe, get_variant
from table.session.record import (
    Record,
    plan_import,
    read_records,
    session_records,
    write_csv,
    write_records,
)
from table.session.state import TableState
from table.session.stats import player_stats
from table.session.store import ENV_DB, SessionLog


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the ``sessions``, ``replay``, ``export``, ``import`` and ``stats`` sub-commands."""
    sessions = commands.add_parser("sessions", help="list the logged sessions")
    sessions.add_argument("--table", metavar="ID", help="only this table's sessions")
    _add_db(sessions)
    sessions.set_defaults(func=_sessions_command)

    replay = commands.add_parser("replay", help="print a session's rounds move by move")
    replay.add_argument("session", help="session id (or the start of it)")
    replay.add_argument("--round", type=int, metavar="N", help="only round N")
    _add_db(replay)
    replay.set_defaults(func=_replay_command)

    export = commands.add_parser("export", help="write sessions as a hand record")
    export.add_argument("sessions", nargs="+", metavar="SESSION", help="session ids")
    export.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    export.add_argument("-o", "--output", metavar="FILE", help="write here (default stdout)")
    _add_db(export)
    export.set_defaults(func=_export_command)

    imports = commands.add_parser("import", help="read a JSON Lines hand record into the log")
    imports.add_argument("file", help="a .jsonl file, or - for stdin")
    _add_db(imports)
    imports.set_defaults(func=_import_command)

    stats = commands.add_parser("stats", help="rounds, landlord rates, bombs and net per player")
    which = stats.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="S", help="one session (default: all)")
    which.add_argument("--player", metavar="NAME", help="one player over every session")
    _add_db(stats)
    stats.set_defaults(func=_stats_command)


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        help=f"log file or database URL (default: ${ENV_DB} or the SQLite file in the data dir)",
    )


@contextmanager
def _opened(url: str | None, create: bool = False) -> Iterator[SessionLog]:
    log = SessionLog.open(url, create=create)
    try:
        yield log
    finally:
        log.close()


def _fold(log: SessionLog, session: str) -> TableState:
    info = log.find_session(session)
    return TableState.from_entries(log.entries(info.id))


def _sessions_command(args: argparse.Namespace) -> int:
    with _opened(args.db) as log:
        found = log.sessions(args.table)
        where = log.where
    if not found:
        print(f"no sessions in {where}")
        return 0
    rows = [("session", "table", "variant", "started (UTC)", "status", "entries", "players")]
    for info in found:
        status = "open" if info.is_open else "ended"
        started = f"{info.started_at:%Y-%m-%d %H:%M}"
        players = ", ".join(info.players)
        rows.append(
            (info.id, info.table, info.variant, started, status, str(info.last_seq), players)
        )
    _print_table(rows)
    return 0


def _print_table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[col]) for row in rows) for col in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def _replay_command(args: argparse.Namespace) -> int:
    with _opened(args.db) as log:
        state = _fold(log, args.session)
    records = session_records(state)
    info = state.info
    assert info is not None
    if args.round is not None:
        records = [r for r in records if r["round"] == args.round]
        if not records:
            raise UserError(
                f"session {info.id} has no round {args.round}; it has rounds 1"
                f" to {len(state.rounds)}"
            )
    print(f"session {info.id} at table {info.table} ({info.variant}): {', '.join(info.players)}")
    for record in records:
        print()
        replay_round(record, sys.stdout)
    if state.errors:
        print(f"\n{len(state.errors)} log entries could not be replayed:")
        for seq, message in state.errors:
            print(f"  entry {seq}: {message}")
    return 0


def replay_round(record: Record, out: TextIO) -> None:
    """Prints one round move by move: bids, plays with running card counts, payments."""
    names = record["players"]
    variant = get_variant(record["variant"])
    width = max(len(name) for name in names)
    left = [variant.hand_size] * len(names)
    out.write(
        f"round {record['round']} at {record['started']}, dealt by {names[record['dealer']]}\n"
    )
    for bid in record["bids"]:
        amount = bid["bid"]
        said = "passes" if amount == "pass" else f"bids {amount}"
        out.write(f"  {names[bid['seat']]:<{width}}  {said}\n")
    landlord = record["landlord"]
    if landlord is None:
        if record["result"] == "redeal":
            out.write("  every seat passed: the cards are dealt again\n")
        return
    left[landlord] += variant.kitty_size
    kitty = f"; kitty shown: {record['kitty']}" if record["kitty"] else ""
    out.write(f"  {names[landlord]} is the landlord at {record['bid']}{kitty}\n")
    for play in record["plays"]:
        seat = play["seat"]
        if play.get("pass"):
            out.write(f"  {names[seat]:<{width}}  passes\n")
            continue
        cards = Cards.from_str(play["cards"])
        left[seat] -= cards.size
        counts = " · ".join(f"{name} {count}" for name, count in zip(names, left, strict=True))
        what = _describe(play["cards"], variant.name)
        out.write(f"  {names[seat]:<{width}}  plays {play['cards']:<14} {what:<44} [{counts}]\n")
    _write_result(record, names, out)


def _describe(cards: str, variant: str) -> str:
    combination = classify(cards, variant)
    return describe(combination) if combination is not None else cards


def _count(number: int, noun: str) -> str:
    """Says how many, or nothing for none: ``1 bomb``, ``2 rockets``."""
    if not number:
        return ""
    return f"{number} {noun}{'s' if number != 1 else ''}"


def _write_result(record: Record, names: list[str], out: TextIO) -> None:
    if record["payments"] is None:
        out.write("  (the round was not finished)\n")
        return
    side = "the landlord wins" if record["result"] == "landlord" else "the farmers win"
    extras = [_count(record["bombs"], "bomb"), _count(record["rockets"], "rocket")]
    extras = [extra for extra in extras if extra]
    if record["spring"]:
        extras.append("spring")
    detail = f" ({', '.join(extras)})" if extras else ""
    out.write(
        f"  {names[record['winner']]} is out: {side}; multiplier {record['multiplier']}{detail}\n"
    )
    paid = ", ".join(
        f"{name} {amount:+d}" for name, amount in zip(names, record["payments"], strict=True)
    )
    out.write(f"  payments: {paid}\n")


def _export_command(args: argparse.Namespace) -> int:
    with _opened(args.db) as log:
        records = [r for session in args.sessions for r in session_records(_fold(log, session))]
    write = write_records if args.format == "jsonl" else write_csv
    if args.output is None:
        write(records, sys.stdout)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            count = write(records, handle)
    except OSError as error:
        raise UserError(f"cannot write {args.output}: {error.strerror}") from None
    print(f"wrote {count} rounds to {args.output}", file=sys.stderr)
    return 0


def _import_command(args: argparse.Namespace) -> int:
    name = "stdin" if args.file == "-" else args.file
    if args.file == "-":
        found = read_records(sys.stdin)
    else:
        try:
            with open(args.file, encoding="utf-8") as handle:
                found = read_records(handle)
        except OSError as error:
            raise UserError(f"cannot read {args.file}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise UserError(f"{args.file} is not a UTF-8 text file; nothing was imported") from None
    sessions = plan_import(found)
    if found.errors:
        for number, reason in found.errors:
            print(f"{name}:{number}: {reason}", file=sys.stderr)
        first = found.errors[0]
        raise UserError(
            f"{name}: {len(found.errors)} bad line(s), the first is line {first[0]}"
            f" ({first[1]}); nothing was imported"
        )
    if not sessions:
        raise UserError(f"{name} holds no rounds; nothing was imported")
    with _opened(args.db, create=True) as log:
        written = log.import_sessions(sessions)
    rounds = len(found.records)
    for info in written:
        print(f"imported session {info.id} (table {info.table}, {info.last_seq} entries)")
    print(f"{rounds} rounds in {len(written)} session(s) from {name}")
    return 0


STATS_COLUMNS = (
    *("player", "rounds", "landlord", "landlord rate", "landlord win rate"),
    *("bombs", "rockets", "net"),
)


def _stats_command(args: argparse.Namespace) -> int:
    with _opened(args.db) as log:
        chosen = [log.find_session(args.session)] if args.session else log.sessions()
        records: list[dict[str, Any]] = []
        for info in chosen:
            records += session_records(TableState.from_entries(log.entries(info.id)))
    table = player_stats(records)
    if args.player is not None:
        table = [s for s in table if s.name == args.player]
        if not table:
            raise UserError(f"no settled rounds of a player named {args.player!r} in the log")
    rows: list[tuple[str, ...]] = [STATS_COLUMNS]
    for s in table:
        rows.append(
            (
                s.name,
                str(s.rounds),
                str(s.landlord),
                f"{s.landlord_rate:.1%}",
                f"{s.landlord_win_rate:.1%}" if s.landlord else "-",
                str(s.bombs),
                str(s.rockets),
                f"{s.net:+d}",
            )
        )
    if len(rows) == 1:
        print("no settled rounds yet")
        return 0
    _print_table(rows)
    return 0
