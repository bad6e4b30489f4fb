"""The table's card -> log latency, idle and with hostile web clients (prints figures, asserts nothing).

One table in this process, as ``preftable run`` has it: a real TableService fed
by simulated players (``[sim]``, ``--speed`` times real pace) with the live
page on its bus (``[web]``).  Its log dir also holds an older unfinished
session of ``--old-deals`` deals, whose pulka the page makes by replaying its
whole log.  The latency is from the source handing a card to the service
(``sink``) to its line appended to ``events.jsonl`` (``handle`` returned),
per card, CLOCK_MONOTONIC.

Phases of ``--seconds`` each, one run:

1. idle: nobody on the page;
2. hammered: ``--clients`` client processes loop over every route (every page,
   ``/sessions/<old>/pulka``, ``/sessions/<old>/events.jsonl``, ``/api/state``,
   the event stream's first event, a wrong PIN, the static files), as fast as
   the table answers (at nice 19: they stand for other machines);
3. hammered, replays inline: the same, with the old sessions' pulkas made as
   before, on a thread of the table's own process (uncached), for comparison.

    .venv/bin/python bench/bench_web_load.py [--seconds 20] [--clients 10] [--speed 8] [--old-deals 150]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.app.backends.sim import SimSource  # noqa: E402
from controller.app.service import TableService  # noqa: E402
from controller.app.settings import settings_from_dict  # noqa: E402
from controller.app.web import WebConfig, for_service  # noqa: E402
from controller.app.web import replays as replay_module  # noqa: E402

PIN = "246810"


def old_session(log_dir: Path, deals: int, seed: int) -> str:
    """An unfinished session of ``deals`` simulated deals (written as the table writes)."""
    from controller.app.sim import Noise, TableSimulator
    from controller.core.config import GameConfig
    from controller.core.tracker import DealTracker
    from controller.store.gamelog import SessionLog

    game = GameConfig()
    session = SessionLog.create(log_dir, game, None)
    tracker = DealTracker(game)
    for event in TableSimulator(game, seed=seed, noise=Noise.demo()).deals(deals):
        signals = tracker.feed(event)
        ended = any(s.kind == "deal" for s in signals)
        session.append(event, signals, tracker.checkpoint() if ended else None)
    session.close()
    return session.folder.name


class TimedService(TableService):
    """The service, timing each card from ``sink`` to its line in the log."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.handed: collections.deque[float] = collections.deque()
        self.latencies: list[float] = []
        self.recording = False

    def sink(self, event) -> None:
        self.handed.append(time.monotonic())
        super().sink(event)

    def handle(self, event):
        signals = super().handle(event)
        if self.handed:
            took = time.monotonic() - self.handed.popleft()
            if self.recording:
                self.latencies.append(took)
        return signals


def client(base: str, old: str, stop_at: float, results, source: str) -> None:
    """One hostile client: every route in a loop until ``stop_at`` (a process of its own, at the
    lowest priority: the clients stand for phones and laptops on the LAN, not for programs on
    the table's own CPU, so they do not take the table's core from it here).  Each client has
    its own address (``source``, 127.0.0.N), as machines on the LAN would."""
    import http.client
    from urllib.parse import urlsplit

    os.nice(19)
    where = urlsplit(base)
    gets = ["/", "/pulka", "/history", "/sessions", f"/sessions/{old}/pulka", f"/sessions/{old}/events.jsonl",
            "/api/state", "/static/pulka.css", "/static/live.js", "/static/table.css", "/nope"]
    counts: collections.Counter = collections.Counter()
    while time.monotonic() < stop_at:
        for path in gets + ["/api/events", "/pin"]:
            conn = http.client.HTTPConnection(where.hostname, where.port, timeout=10, source_address=(source, 0))
            try:
                if path == "/pin":
                    conn.request("POST", path, body=json.dumps({"pin": "000000"}),
                                 headers={"Content-Type": "application/json"})
                else:
                    conn.request("GET", path)
                response = conn.getresponse()
                if path == "/api/events":
                    response.readline()             # the first line of the first event, then gone
                else:
                    response.read()
                counts[response.status] += 1
            except OSError:
                counts["error"] += 1
            finally:
                conn.close()
    results.put(dict(counts))


class InlineReplays:
    """The old way, for comparison: the pulka made on a thread of the table's process, uncached."""

    async def pulka_html(self, folder: Path, names_from_config: bool) -> str:
        ok, text = await asyncio.get_running_loop().run_in_executor(
            None, replay_module.session_pulka_html, str(folder), names_from_config)
        if not ok:
            raise replay_module.ReplayFailed(text)
        return text

    def close(self) -> None:
        pass


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--speed", type=float, default=8.0)
    parser.add_argument("--old-deals", type=int, default=150)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)

    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        log_dir = Path(tmp) / "logs"
        started = time.monotonic()
        old = old_session(log_dir, args.old_deals, seed=3)
        old_lines = (log_dir / old / "events.jsonl").read_bytes().count(b"\n")
        print(f"older unfinished session {old}: {args.old_deals} deals, {old_lines} lines "
              f"(written in {time.monotonic() - started:.1f} s)")
        settings = settings_from_dict({"readers": {"backend": "sim"}, "display": {"kind": "none"},
                                       "sim": {"seed": 1, "speed": args.speed, "noise": True}})
        service = TimedService(settings, None, log_dir)
        service.open_session(new=True)
        web = for_service(service, WebConfig(port=0, pin=PIN), start=False)
        service.outputs = [web]
        source = SimSource(settings.game, settings.section("sim"), service.tracker.deck)
        table = threading.Thread(target=service.run, args=(source,), name="table")
        table.start()
        try:
            deadline = time.monotonic() + 30
            while web.server is None or web.server.socket is None:
                if time.monotonic() > deadline:
                    raise SystemExit("the web page did not start")
                time.sleep(0.05)
            base = web.server.url.rstrip("/")
            rows = []
            context = multiprocessing.get_context("spawn")
            for phase in ("idle", "hammered", "hammered, replays inline (before)"):
                if phase.endswith("(before)"):
                    web.server.replays = InlineReplays()
                results = context.Queue()
                procs = []
                stop_at = time.monotonic() + args.seconds
                if phase != "idle":
                    procs = [context.Process(target=client, args=(base, old, stop_at, results, f"127.0.0.{n + 2}"))
                             for n in range(args.clients)]
                    for proc in procs:
                        proc.start()
                    time.sleep(1.0)                  # the clients are up (spawn) before counting
                service.latencies.clear()
                service.recording = True
                time.sleep(max(0.0, stop_at - time.monotonic()))
                service.recording = False
                counts: collections.Counter = collections.Counter()
                for proc in procs:
                    counts.update(results.get(timeout=60))
                    proc.join(timeout=30)
                lat = service.latencies
                requests = sum(v for k, v in counts.items())
                rows.append((phase, len(lat), statistics.median(lat) * 1e3 if lat else 0,
                             percentile(lat, 0.99) * 1e3 if lat else 0, max(lat) * 1e3 if lat else 0,
                             requests, dict(sorted(counts.items(), key=str))))
        finally:
            service.stop()
            table.join(timeout=30)
            web.close() if hasattr(web, "close") else None

    print(f"\ncard -> log latency, {args.seconds:g} s a phase, sim at {args.speed:g}x real pace, "
          f"{args.clients} client processes")
    print(f"| phase | cards | p50 ms | p99 ms | max ms | requests answered | statuses |")
    print("|---|---|---|---|---|---|---|")
    for phase, n, p50, p99, top, requests, statuses in rows:
        print(f"| {phase} | {n} | {p50:.2f} | {p99:.2f} | {top:.2f} | {requests} | {statuses} |")


if __name__ == "__main__":
    main()
