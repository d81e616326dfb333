"""Dashboard speed: event to visible change in a real browser, and 50 screens on one table.

Run: ``.venv/bin/python benchmarks/bench_web.py`` (needs Debian's chromium).
Targets (issue 7): from a logged action to the changed table screen in the
browser, p95 under 250 ms; 50 screens connected to one dashboard without
slowing the table.

1. Latency. A real :class:`TableSession` on a SQLite log plays random rounds
   behind a :class:`LocalAccess`, served by the threaded :class:`DashboardServer`;
   headless Chromium shows ``/table/t1``. A MutationObserver notes when the
   screen's ``data-seq`` changes and the animation frame after it (the frame
   that paints it). Times are wall-clock on one machine, from the moment the
   action is submitted (log write included) and from the moment it is on disk.
2. Load. The table appends as fast as it can (every append is an fsync'ed
   SQLite commit) for a few seconds, first with no screen, then with 50
   server-sent event clients in another process reading every update. The
   table's appends per second are compared; the clients report how many
   updates each got and whether each saw the last one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from table.rules import get_variant
from table.rules.simulate import deal, random_action
from table.session import LogEntry, SessionLog, TableSession
from web import create_app
from web.access import LocalAccess, snapshot_key
from web.cli import DashboardServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

OBSERVER = """
window.__seen = {};
const live = document.getElementById("live");
new MutationObserver(() => {
  const screen = live.querySelector(".table-screen");
  const seq = screen && screen.dataset.seq;
  if (seq && !(seq in window.__seen)) {
    const changed = performance.timeOrigin + performance.now();
    window.__seen[seq] = {changed: changed, painted: null};
    requestAnimationFrame(() => {
      window.__seen[seq].painted = performance.timeOrigin + performance.now();
    });
  }
}).observe(live, {childList: true, subtree: true});
"""


def step(session: TableSession, rng: random.Random) -> None:
    """Logs one more action of endless random rounds (a new deal when a round is over)."""
    played = session.state.round
    if played is None or played.state.is_over:
        hands, kitty = deal(rng, get_variant(session.info.variant))
        session.start_round(rng.randrange(3), hands, kitty)
    else:
        session.submit(random_action(played, rng), "bench")


def percentile(values: list[float], share: float) -> float:
    """Gets the nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def latency(server: DashboardServer, session: TableSession, actions: int, pause: float) -> None:
    """Measures action to changed DOM in Chromium, one action every ``pause`` seconds or more."""
    from playwright.sync_api import sync_playwright

    on_disk: dict[int, float] = {}

    def note(entry: LogEntry) -> None:
        on_disk[entry.seq] = time.time() * 1000

    session.listeners.insert(0, note)
    rng = random.Random(11)
    submitted: dict[int, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 900})
        page.goto(f"{server.url}/table/t1")
        page.wait_for_selector(".table-screen")
        page.evaluate(OBSERVER)
        for _ in range(actions):
            time.sleep(pause)
            seq = session.state.seq + 1
            submitted[seq] = time.time() * 1000
            step(session, rng)
            page.wait_for_function(
                "seq => window.__seen[seq] && window.__seen[seq].painted", arg=str(seq)
            )
        seen: dict[str, Any] = page.evaluate("window.__seen")
        browser.close()
    session.listeners.remove(note)
    from_submit = [seen[str(s)]["painted"] - t for s, t in submitted.items()]
    from_disk = [seen[str(s)]["painted"] - on_disk[s] for s in submitted]
    mutation = [seen[str(s)]["changed"] - on_disk[s] for s in submitted]
    print(f"latency over {actions} actions, {pause:g} s apart (ms)   p50     p95     max")
    for name, values in (
        ("submit -> painted frame", from_submit),
        ("on disk -> painted frame", from_disk),
        ("on disk -> DOM changed", mutation),
    ):
        print(
            f"  {name:<28} {statistics.median(values):7.1f} {percentile(values, 0.95):7.1f}"
            f" {max(values):7.1f}"
        )


CLIENTS = r"""
import json, socket, sys, threading
host, port, count, stop_key_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
results = [None] * count
ready = threading.Barrier(count + 1)

def read(i):
    sock = socket.create_connection((host, port))
    request = f"GET /stream?table=t1 HTTP/1.1\r\nHost: {host}\r\n\r\n"
    sock.sendall(request.encode())
    buffer, events, last = b"", 0, ""
    sock.settimeout(30)
    ready.wait()
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            buffer += data
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                for line in block.split(b"\n"):
                    if line.startswith(b"id: "):
                        events += 1
                        last = line[4:].decode()
                if last and last == open(stop_key_file).read().strip():
                    raise StopIteration
    except (StopIteration, socket.timeout):
        pass
    sock.close()
    results[i] = (events, last)

threads = [threading.Thread(target=read, args=(i,)) for i in range(count)]
for t in threads: t.start()
ready.wait()
print("ready", flush=True)
for t in threads: t.join()
print(json.dumps(results), flush=True)
"""


def append_rate(session: TableSession, seconds: float, rng: random.Random) -> tuple[int, float]:
    """Appends as fast as the table can for ``seconds``; returns the count and the rate."""
    done = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        step(session, rng)
        done += 1
    return done, done / (time.perf_counter() - started)


def paced(session: TableSession, per_second: float, seconds: float, rng: random.Random) -> str:
    """Appends at a steady pace and times each append (log write, fold, listeners)."""
    took = []
    for _ in range(int(per_second * seconds)):
        started = time.perf_counter()
        step(session, rng)
        took.append((time.perf_counter() - started) * 1000)
        time.sleep(max(0.0, 1 / per_second - took[-1] / 1000))
    return f"append p50 {statistics.median(took):5.2f} ms, p95 {percentile(took, 0.95):5.2f} ms"


def load(
    server: DashboardServer,
    access: LocalAccess,
    session: TableSession,
    screens: int,
    seconds: float,
    client_cpu: int | None,
) -> None:
    """Compares the table's append rate with no screen and with ``screens`` SSE clients."""
    rng = random.Random(5)
    alone, rate_alone = append_rate(session, seconds, rng)
    pace_alone = paced(session, 20, seconds, rng)
    with tempfile.NamedTemporaryFile("w", suffix=".key", delete=False) as handle:
        stop_file = Path(handle.name)
    host, port = server.server.server_address[:2]
    pin = ["taskset", "-c", str(client_cpu)] if client_cpu is not None else []
    clients = subprocess.Popen(
        [*pin, sys.executable, "-c", CLIENTS, str(host), str(port), str(screens), str(stop_file)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert clients.stdout is not None
    assert clients.stdout.readline().strip() == "ready"
    deadline = time.monotonic() + 30
    while access.hub.count < screens and time.monotonic() < deadline:
        time.sleep(0.05)
    connected = access.hub.count
    loaded, rate_loaded = append_rate(session, seconds, rng)
    pace_loaded = paced(session, 20, seconds, rng)
    final = snapshot_key({"session": session.session_id, "seq": session.state.seq + 1}, 0)
    stop_file.write_text(final)
    session.alert("bench", "the load run is over")
    results = json.loads(clients.stdout.readline())
    clients.wait(30)
    clients.stdout.close()
    stop_file.unlink()
    got = [events for events, _ in results]
    complete = sum(1 for _, last in results if last == final)
    print(f"load: {seconds:g} s of appends at full speed, each a SQLite commit")
    print(f"  no screen:          {alone:5d} appends, {rate_alone:7.1f} appends/s")
    print(
        f"  {connected:2d} SSE screens:     {loaded:5d} appends, {rate_loaded:7.1f} appends/s"
        f" ({100 * rate_loaded / rate_alone:.0f}% of the rate alone)"
    )
    print(f"load: {seconds:g} s at 20 appends/s (a busy table makes about 1 a second)")
    print(f"  no screen:          {pace_alone}")
    print(f"  {connected:2d} SSE screens:     {pace_loaded}")
    print(
        f"  updates per screen: min {min(got)}, median {statistics.median(got):g}, max {max(got)};"
        f" {complete}/{screens} saw the last update; {access.hub.dropped} drops (slow screens)"
    )


def main() -> None:
    """Prints the measured figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--actions", type=int, default=200, help="actions for the latency run")
    parser.add_argument("--screens", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each load run")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between actions")
    parser.add_argument(
        "--db-dir",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where the SQLite log lives (default /dev/shm: no disk noise in the figures)",
    )
    parser.add_argument(
        "--client-cpu",
        type=int,
        help="pin the 50 clients to this CPU (run the script itself under taskset on another)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.db_dir) as folder:
        log = SessionLog.open(str(Path(folder) / "log.sqlite3"))
        session = TableSession.start(log, "t1", "3p", ["Ann", "Bo", "Cy"])
        access = LocalAccess(log, [session])
        server = DashboardServer(create_app({"SSE_KEEPALIVE": 5.0}, access), "127.0.0.1", 0)
        server.start()
        print(f"{os.cpu_count()} CPUs; dashboard on {server.url} (werkzeug, threaded)")
        try:
            latency(server, session, args.actions, args.pause)
            load(server, access, session, args.screens, args.seconds, args.client_cpu)
        finally:
            access.close()
            server.stop()
            log.close()


if __name__ == "__main__":
    main()
