"""Event publish-to-receive latency with many simulated tables on one broker.

Each simulated table is a real :class:`table.mqtt.MqttLink` (its own client,
last will and network thread, as a controller has) that publishes, per action,
the QoS 1 event and the retained state the bridge sends. One subscriber follows
``ddz/+/event`` like a venue screen. The latency of an event is the time from
just before its message is built to its arrival at the subscriber, on one
clock (same process). Not a test: run it by hand and read the figures.

    .venv/bin/python benchmarks/bench_mqtt.py --tables 1 50 200
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
import uuid
from datetime import UTC, datetime

from table.mqtt import Broker, MqttLink, Received, broker_url
from table.mqtt_bridge import table_link
from table.mqtt_messages import Message, event_message, state_message
from table.mqtt_topics import state_topic, status_topic
from table.session.entries import LogEntry


def action_entry(session: str, seq: int, rng: random.Random) -> LogEntry:
    """Makes a logged play like the ones a table sends most."""
    seat = rng.randrange(3)
    data = {
        "action": {"type": "play", "seat": seat, "cards": "34567"},
        "source": "camera",
        "events": [
            {
                "type": "play",
                "seat": seat,
                "combination": {"cards": "34567", "kind": "straight"},
                "cards_left": rng.randrange(20),
            }
        ],
    }
    return LogEntry(session, seq, datetime.now(UTC), "action", data)


def snapshot(table: str, session: str, seq: int) -> dict[str, object]:
    """Makes a state payload of realistic size (about 1.5 kB)."""
    seats = [
        {
            "seat": s,
            "name": f"Player {s}",
            "cards_left": 10,
            "is_landlord": s == 0,
            "is_dealer": s == 1,
            "bid": None,
            "score": 0,
        }
        for s in range(3)
    ]
    return {
        "table": table,
        "session": session,
        "seq": seq,
        "variant": "3p",
        "phase": "play",
        "round": 1,
        "seats": seats,
        "turn": seq % 3,
        "highest_bid": 3,
        "landlord": 0,
        "kitty": None,
        "trick": {
            "cards": "34567",
            "kind": "straight",
            "seat": 0,
            "description": "a straight from 3 to 7",
        },
        "trick_plays": [None, None, None],
        "multiplier": 1,
        "bombs": 0,
        "rockets": 0,
        "winner": None,
        "history": [],
        "totals": [0, 0, 0],
        "rounds_settled": 0,
        "last_rejection": None,
        "last_alert": None,
        "devices": {d: {"status": "ok", "detail": ""} for d in ("panel", "camera", "broker")},
        "leaders": None,
    }


def run(broker: Broker, tables: int, events: int, rate: float, seed: int) -> dict[str, float]:
    """Runs ``tables`` publishers, each sending ``events`` actions at ``rate`` per second."""
    rng = random.Random(seed)
    run_id = uuid.uuid4().hex[:6]
    names = [f"bench-{run_id}-{n}" for n in range(tables)]
    sent: dict[str, float] = {}
    latencies: list[float] = []
    lock = threading.Lock()
    done = threading.Event()
    expected = tables * events

    def received(message: Received) -> None:
        now = time.perf_counter()
        event_id = json.loads(message.payload)["id"]
        with lock:
            start = sent.pop(event_id, None)
            if start is not None:
                latencies.append(now - start)
                if len(latencies) == expected:
                    done.set()

    screen = MqttLink(broker, f"bench-screen-{run_id}")
    screen.subscribe("ddz/+/event", received)
    screen.start()
    screen.wait_connected(30)
    links = [table_link(broker, name) for name in names]
    for link in links:
        link.start()
    for link in links:
        link.wait_connected(60)

    # every table acts at `rate` on average, at random moments, all interleaved
    schedule = sorted(
        ((step + rng.random()) / rate, n) for n in range(tables) for step in range(events)
    )
    seqs = [0] * tables
    began = time.perf_counter()
    for at, n in schedule:
        delay = began + at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        seqs[n] += 1
        table = names[n]
        start = time.perf_counter()
        entry = action_entry("s1", seqs[n], rng)
        message = event_message(table, entry)
        with lock:
            sent[json.loads(message.payload)["id"]] = start
        links[n].publish(message)
        links[n].publish(state_message(table, snapshot(table, "s1", seqs[n])))
    finished = done.wait(30)
    closing = [threading.Thread(target=link.close) for link in links]
    for thread in closing:
        thread.start()
    for thread in closing:
        thread.join()
    cleared = [  # leave nothing retained on a shared broker
        screen.publish(Message(topic, b"", 1, True))
        for table in names
        for topic in (status_topic(table), state_topic(table))
    ]
    for delivery in cleared:
        if delivery is not None:
            delivery.wait(10)
    screen.close()
    if not finished:
        print(f"  lost {expected - len(latencies)} of {expected} events", file=sys.stderr)
    ordered = sorted(latencies)
    return {
        "events": len(ordered),
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[max(0, int(len(ordered) * 0.99) - 1)],
        "max_ms": 1000 * ordered[-1],
        "rate_per_s": tables * rate,
    }


def main() -> int:
    """Runs the benchmark for each table count and prints one line per run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 50, 200])
    parser.add_argument("--events", type=int, default=30, help="actions per table (default 30)")
    parser.add_argument(
        "--rate", type=float, default=1.0, help="actions per second per table (default 1)"
    )
    parser.add_argument("--mqtt", metavar="URL", help="broker URL (default: the local broker)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    broker = Broker.from_url(broker_url(args.mqtt))
    print(f"broker {broker.describe()}, {args.events} actions per table at {args.rate}/s each")
    print(f"{'tables':>6} {'events':>7} {'msg/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for tables in args.tables:
        result = run(broker, tables, args.events, args.rate, args.seed)
        print(
            f"{tables:>6} {result['events']:>7.0f} {2 * result['rate_per_s']:>7.0f} "
            f"{result['p50_ms']:>8.2f} {result['p99_ms']:>8.2f} {result['max_ms']:>8.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
