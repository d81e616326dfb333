"""Session log speed: append rate, rebuilding a 1,000-round session, 100 tables on one PostgreSQL.

Run: ``.venv/bin/python benchmarks/bench_log.py`` (add ``--no-postgres`` without a
server). Targets (issue 3): a full rebuild of a 1,000-round session in under
1 second; 100 concurrent tables appending to one PostgreSQL at human pace with
no event lost. Every PostgreSQL figure runs in a schema of its own, dropped at
the end, in the database of ``--postgres``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from table.rules import Round, RoundEnded, get_variant, new_round, to_dict
from table.rules.simulate import deal, random_action
from table.session.state import TableState
from table.session.store import NewSession, SessionLog
from table.session.table import public_event

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """Makes a throw-away schema and yields a URL that uses it."""
    schema = f"ddz_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(url)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        yield f"{url}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def append_rate(url: str, count: int) -> tuple[float, float, float]:
    """Appends ``count`` action-sized entries one by one; returns per second, p50 and p99 ms."""
    data = {
        "action": {"type": "play", "seat": 1, "cards": "33344456"},
        "source": "camera",
        "events": [{"type": "play", "seat": 1, "combination": {"cards": "33344456"}}],
    }
    with SessionLog.open(url) as log:
        info = log.start_session("bench", "3p", ["a", "b", "c"])
        times = []
        started = time.perf_counter()
        for _ in range(count):
            before = time.perf_counter()
            log.append(info.id, "action", data)
            times.append(time.perf_counter() - before)
        total = time.perf_counter() - started
    times.sort()
    return count / total, times[len(times) // 2] * 1e3, times[int(len(times) * 0.99)] * 1e3


def session_plan(rounds: int, variant_name: str, seed: int) -> NewSession:
    """Plays ``rounds`` settled random rounds and lays them out as log entries."""
    variant = get_variant(variant_name)
    rng = random.Random(seed)
    names = tuple(f"p{seat}" for seat in range(variant.players))
    now = datetime.now(UTC)
    plan = NewSession("bench", variant.name, names, {}, now)
    dealer, number, settled = 0, 0, 0
    while settled < rounds:
        hands, kitty = deal(rng, variant)
        first = rng.randrange(variant.players)
        number += 1
        start: dict[str, Any] = {"round": number, "dealer": dealer, "first_bidder": first}
        start |= {"hands": [str(h) for h in hands], "kitty": str(kitty)}
        plan.entries.append(("round_start", start, now))
        played = Round(
            new_round(variant, dealer=dealer, first_bidder=first, hands=hands, kitty=kitty)
        )
        while not played.state.is_over:
            action = random_action(played, rng)
            events = played.push(action)
            logged = {
                "action": to_dict(action),
                "source": "sim",
                "events": [public_event(e) for e in events],
            }
            plan.entries.append(("action", logged, now))
            if any(isinstance(e, RoundEnded) for e in events):
                settled += 1
                dealer = (dealer + 1) % variant.players
    return plan


def rebuild(url: str, plan: NewSession, repeats: int) -> tuple[int, float, float, float]:
    """Writes a planned session, then times reading and folding it.

    Returns the entry count, the best wall times of reading and of folding, and
    the best CPU time of this process for both (what a machine not shared with
    other work would take, for SQLite; PostgreSQL's own work is not in it).
    """
    with SessionLog.open(url) as log:
        (info,) = log.import_sessions([plan])
        loads, folds, cpus = [], [], []
        for _ in range(repeats):
            cpu = time.process_time()
            started = time.perf_counter()
            entries = log.entries(info.id)
            loaded = time.perf_counter()
            state = TableState.from_entries(entries)
            state.snapshot()
            folds.append(time.perf_counter() - loaded)
            loads.append(loaded - started)
            cpus.append(time.process_time() - cpu)
        assert state.errors == [] and state.ledger is not None and state.ledger.is_balanced
    return len(entries), min(loads), min(folds), min(cpus)


def _table(log: SessionLog, seconds: float, pace: float, seed: int, out: list[Any]) -> None:
    """One table: appends at human pace (a random wait around ``pace`` seconds)."""
    rng = random.Random(seed)
    info = log.start_session(f"table-{seed}", "3p", ["a", "b", "c"])
    acknowledged, latencies = 0, []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        time.sleep(rng.uniform(0.2, 2 * pace - 0.2))
        before = time.perf_counter()
        log.append(info.id, "alert", {"kind": "load", "message": str(acknowledged)})
        latencies.append(time.perf_counter() - before)
        acknowledged += 1
    out.append((info.id, acknowledged, latencies))


def _tables_process(
    url: str, first: int, tables: int, seconds: float, pace: float, queue: Any
) -> None:
    """Runs ``tables`` table threads sharing one log (one small pool) in one process."""
    results: list[Any] = []
    with SessionLog.open(url) as log:
        threads = [
            threading.Thread(target=_table, args=(log, seconds, pace, first + n, results))
            for n in range(tables)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    queue.put(results)


def many_tables(
    url: str, tables: int, processes: int, seconds: float, pace: float
) -> dict[str, Any]:
    """Runs many tables in several processes against one database and counts every event."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    per = tables // processes
    workers = [
        context.Process(target=_tables_process, args=(url, n * per, per, seconds, pace, queue))
        for n in range(processes)
    ]
    for worker in workers:
        worker.start()
    results = [row for _ in workers for row in queue.get()]
    for worker in workers:
        worker.join()
    lost = 0
    with SessionLog.open(url) as log:
        for session_id, acknowledged, _ in results:
            seqs = [e.seq for e in log.entries(session_id)]
            lost += acknowledged + 1 - len(seqs)
            assert seqs == list(range(1, len(seqs) + 1)), f"gap in session {session_id}"
    latencies = sorted(t for _, _, times in results for t in times)
    return {
        "tables": len(results),
        "events": sum(acknowledged for _, acknowledged, _ in results),
        "lost": lost,
        "p50_ms": statistics.median(latencies) * 1e3,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1e3,
    }


def main() -> None:
    """Prints the measured figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--pace", type=float, default=1.0, help="mean seconds between events")
    parser.add_argument("--postgres", default=POSTGRES)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        sqlite = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        rate, p50, p99 = append_rate(sqlite, args.appends)
        print(f"append, SQLite (WAL, synchronous=FULL): {rate:7.0f} events/s,"
              f" p50 {p50:.2f} ms, p99 {p99:.2f} ms")  # fmt: skip
        for variant in ("3p", "4p"):
            plan = session_plan(args.rounds, variant, seed=7)
            entries, load, fold, cpu = rebuild(sqlite, plan, args.repeats)
            print(f"rebuild {args.rounds} {variant} rounds, SQLite ({entries} entries):"
                  f" read {load:.3f} s + fold {fold:.3f} s = {load + fold:.3f} s"
                  f" (CPU {cpu:.3f} s)")  # fmt: skip
    if args.no_postgres:
        return
    with postgres_schema(args.postgres) as url:
        rate, p50, p99 = append_rate(url, args.appends)
        print(f"append, PostgreSQL: {rate:7.0f} events/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms")
        plan = session_plan(args.rounds, "3p", seed=7)
        entries, load, fold, cpu = rebuild(url, plan, args.repeats)
        print(f"rebuild {args.rounds} 3p rounds, PostgreSQL ({entries} entries):"
              f" read {load:.3f} s + fold {fold:.3f} s = {load + fold:.3f} s"
              f" (client CPU {cpu:.3f} s)")  # fmt: skip
        load_figures = many_tables(url, args.tables, args.processes, args.seconds, args.pace)
        print(f"{load_figures['tables']} tables x {args.seconds:.0f} s at one event per"
              f" ~{args.pace:.1f} s, PostgreSQL: {load_figures['events']} events acknowledged,"
              f" {load_figures['lost']} lost, append p50 {load_figures['p50_ms']:.2f} ms,"
              f" p99 {load_figures['p99_ms']:.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
