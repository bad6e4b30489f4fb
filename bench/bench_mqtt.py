"""Many tables over MQTT: latency, recovery, the board's memory (prints figures, asserts nothing).

Against Debian's mosquitto on loopback (a broker started for the run):

1. Log append -> club receipt latency, p50/p99, for 1 and for 20 simultaneous
   simulated tables (real TableService + MQTT publisher), each table in its
   own process as on its own Pi, the board in this one.  CLOCK_MONOTONIC is
   one clock for every process of the machine: the time is taken when the
   service's append returns and when the board takes the line, before it
   writes its mirror.  Target: p99 <= 50 ms at 20.  The same with
   the 20 tables and the board in one Python process (one GIL) beside it.
   Also the messages per second the broker carried and the CPU it used for
   them (from /proc), the basis of the README's sizing.
2. Broker restart -> mirrors complete again: with 20 tables playing, the broker
   is stopped (and, in a second round, killed), the tables play on for
   ``--outage`` seconds, the broker is started again; timed from its start to
   every mirror holding every line the tables had logged by then.
3. The board's memory with 20 tables: ``preftable club`` as its own process
   (VmRSS and VmHWM from /proc) after it has followed the 20 tables above,
   and the same with ``--web`` (the ``/club`` page served).
Also the state messages the board took: how many a second, their payload
size (bounded: they carry the table now, not the session's history).

    .venv/bin/python bench/bench_mqtt.py [--seconds 20] [--speed 5] [--outage 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "app"))      # the test suite's broker launcher

from controller.app.club import Club  # noqa: E402
from mqtt_broker import Broker, SimTable, wait_until  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


class TimedClub(Club):
    """The board, noting when each log line arrives (before its mirror write)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.received: dict[tuple[str, str, int], float] = {}
        self.state_bytes: list[int] = []          # every state message's payload size
        self.state_played: list[int] = []         # its deals played

    def handle(self, topic, payload):
        if topic.endswith("/state"):
            self.state_bytes.append(len(payload))
        super().handle(topic, payload)

    def _state(self, table, doc):
        super()._state(table, doc)
        self.state_played.append((doc.get("snapshot") or {}).get("deals_played", 0))

    def _log_line(self, table, doc):
        line = doc.get("line")
        if isinstance(line, int):
            self.received.setdefault((table, doc.get("session"), line), time.monotonic())
        super()._log_line(table, doc)


class TimedTable(SimTable):
    """A simulated table noting when each of its log lines was appended."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.appended: dict[int, float] = {}
        session = self.session
        append = session.append
        lines = [0]

        def timed_append(event, signals, checkpoint=None):
            signals = list(signals)
            append(event, signals, checkpoint)
            now = time.monotonic()
            for _ in range(1 + len(signals)):
                lines[0] += 1
                self.appended[lines[0]] = now
        session.append = timed_append

    def line_count(self) -> int:
        return self.events_path.read_bytes().count(b"\n")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def start_tables(folder: Path, url: str, count: int, speed: float) -> list[TimedTable]:
    return [TimedTable(folder / f"logs-{i:02}", url, f"table-{i:02}", seed=10 + i, speed=speed,
                       deals=100_000).start() for i in range(count)]


def baseline(folder: Path, broker: Broker, count: int, seconds: float, rate: float) -> None:
    """Bare paho: ``count`` publishers at ``rate`` messages/s each, one subscriber, one process.

    The same hops as a table's line (a thread hands the message to paho's thread, the
    broker, the board's paho thread) without preftable: on a loaded machine the
    scheduler's own tail shows here, and the feed's cost is the difference."""
    from controller.app.mqtt import make_client, parse_broker_url

    address = parse_broker_url(broker.url)
    got: dict[bytes, float] = {}
    sub = make_client("bench-bare-sub", address)
    sub.on_message = lambda c, u, msg: got.setdefault(msg.payload[:24], time.monotonic())
    sub.connect(address.host, address.port)
    sub.subscribe("bare/+/log", 1)
    sub.loop_start()
    sent: dict[bytes, float] = {}
    stop = threading.Event()

    def publisher(i: int) -> None:
        client = make_client(f"bench-bare-{i}", address)
        client.connect(address.host, address.port)
        client.loop_start()
        n = 0
        while not stop.wait(1 / rate):
            n += 1
            key = f"{i:04}-{n:019}".encode()
            sent[key] = time.monotonic()
            client.publish(f"bare/{i}/log", key + b" " + b"x" * 200, qos=1)
        client.disconnect()
        client.loop_stop()
    threads = [threading.Thread(target=publisher, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    time.sleep(seconds)                     # a benchmark: the publishers run for this long
    stop.set()
    for t in threads:
        t.join()
    wait_until(lambda: len(got) >= len(sent), 30, "every bare message received")
    sub.disconnect()
    sub.loop_stop()
    delays = [(got[k] - t) * 1000 for k, t in sent.items() if k in got]
    print(f"baseline, bare paho: {count} publishers x {rate:.0f}/s and a subscriber in one process: "
          f"p50 {statistics.median(delays):.1f} ms, p99 {percentile(delays, 99):.1f} ms, max {max(delays):.1f} ms")


def as_table(args) -> int:
    """Child mode: one timed table until SIGTERM, then its append times to ``--out``."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    table = TimedTable(Path(args.dir), args.url, args.as_table, seed=args.seed, speed=args.speed,
                       deals=100_000).start()
    stop.wait()
    table.stop()
    Path(args.out).write_text(json.dumps({"session": table.session.folder.name,
                                          "appended": table.appended}))
    return 0


def report(label: str, delays: list[float], missing: int, elapsed: float, cpu: float) -> None:
    lines = len(delays) + missing
    print(f"{label}, {elapsed:.0f} s, load average {os.getloadavg()[0]:.1f}: {lines} log lines ({lines / elapsed:.0f}/s), "
          f"append -> board p50 {statistics.median(delays):.1f} ms, p99 {percentile(delays, 99):.1f} ms, "
          f"max {max(delays):.1f} ms; not received before the tables stopped: {missing}")
    print(f"   mosquitto CPU: {cpu:.2f} s for {elapsed:.0f} s = {100 * cpu / elapsed:.1f} % of one core "
          f"({1000 * cpu / max(1, lines):.3f} ms per log line, in and out)")


def report_states(club: TimedClub, elapsed: float) -> None:
    sizes = club.state_bytes
    if not sizes:
        return
    print(f"   state messages: {len(sizes)} ({len(sizes) / elapsed:.0f}/s), payload mean "
          f"{statistics.mean(sizes):.0f} B, max {max(sizes)} B, up to {max(club.state_played or [0])} deals "
          f"played; {sum(sizes) / elapsed / 1024:.1f} kB/s of state into the board")


def latency_processes(folder: Path, broker: Broker, count: int, seconds: float, speed: float) -> None:
    club = TimedClub(broker.url, folder / f"club-p{count}", client_id=f"bench-club-p{count}")
    club.start()
    wait_until(club.subscribed.is_set, 20, "the board to subscribe")
    procs = []
    for i in range(count):
        out = folder / f"times-{count}-{i:02}.json"
        procs.append((f"ptable-{i:02}", out, subprocess.Popen(
            [sys.executable, __file__, "--as-table", f"ptable-{i:02}", "--url", broker.url,
             "--dir", str(folder / f"plogs-{count}-{i:02}"), "--seed", str(10 + i), "--speed", str(speed),
             "--out", str(out)], cwd=ROOT)))
    wait_until(lambda: sum(1 for v in list(club.tables.values()) if v.status == "online") >= count, 60,
               "every table online")
    cpu0, t0 = cpu_seconds(broker.proc.pid), time.monotonic()
    time.sleep(seconds)                     # a benchmark: the tables play for this long
    for _, _, proc in procs:
        proc.terminate()
    for _, _, proc in procs:
        proc.wait(60)
    elapsed, cpu = time.monotonic() - t0, cpu_seconds(broker.proc.pid) - cpu0
    delays, missing = [], 0
    for table_id, out, _ in procs:
        doc = json.loads(out.read_text())
        for line, appended in doc["appended"].items():
            if appended < t0:
                continue                    # steady state only: not while the other tables start up
            got = club.received.get((table_id, doc["session"], int(line)))
            if got is None:
                missing += 1
            else:
                delays.append((got - appended) * 1000)
    club.stop()
    report(f"{count:2d} table(s), a process each", delays, missing, elapsed, cpu)
    report_states(club, elapsed)


def latency(folder: Path, broker: Broker, count: int, seconds: float, speed: float) -> None:
    club = TimedClub(broker.url, folder / f"club-{count}", client_id=f"bench-club-{count}")
    club.start()
    wait_until(club.subscribed.is_set, 20, "the board to subscribe")
    cpu0, t0 = cpu_seconds(broker.proc.pid), time.monotonic()
    tables = start_tables(folder / f"run-{count}", broker.url, count, speed)
    time.sleep(seconds)                     # a benchmark: the tables play for this long
    for table in tables:
        table.stop()
    elapsed, cpu = time.monotonic() - t0, cpu_seconds(broker.proc.pid) - cpu0
    delays = []
    missing = 0
    for table in tables:
        for line, appended in table.appended.items():
            got = club.received.get((table.table_id, table.session.folder.name, line))
            if got is None:
                missing += 1
            else:
                delays.append((got - appended) * 1000)
    club.stop()
    report(f"{count:2d} table(s) and the board in one Python process", delays, missing, elapsed, cpu)


def recovery(folder: Path, broker: Broker, count: int, speed: float, outage: float) -> None:
    club_dir = folder / "club-recovery"
    club = Club(broker.url, club_dir, client_id="bench-club-recovery")
    club.start()
    board = subprocess.Popen([sys.executable, "-m", "controller", "club", "--broker", broker.url,
                              "--dir", str(folder / "club-process"), "--client-id", "bench-board-process"],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    paged = subprocess.Popen([sys.executable, "-m", "controller", "club", "--broker", broker.url,
                              "--dir", str(folder / "club-paged"), "--client-id", "bench-board-paged",
                              "--web", "127.0.0.1:0"],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(club.subscribed.is_set, 20, "the board to subscribe")
    tables = start_tables(folder / "recovery", broker.url, count, speed)

    def complete(targets: dict[str, int]) -> bool:
        return all(club.mirror_lines(t.table_id, t.session.folder.name) >= targets[t.table_id] for t in tables)

    try:
        wait_until(lambda: complete({t.table_id: 20 for t in tables}), 60, "every table to be mirrored")
        for crash in (False, True):
            broker.kill() if crash else broker.stop()
            time.sleep(outage)              # the tables play on without the broker
            broker.start()
            started = time.monotonic()
            targets = {t.table_id: t.line_count() for t in tables}
            wait_until(lambda: complete(targets), 120, "the mirrors to be complete again")
            took = time.monotonic() - started
            behind = sum(targets.values()) - sum(min(club.mirror_lines(t.table_id, t.session.folder.name),
                                                     targets[t.table_id]) for t in tables)
            print(f"broker {'killed' if crash else 'stopped'} for {outage:.0f} s with {count} tables playing: "
                  f"mirrors complete {took:.2f} s after it started again ({sum(targets.values())} lines, "
                  f"{behind} missing)")
        for label, proc in (("", board), (" --web (the /club page, no viewer)", paged)):
            mem = memory_kb(proc.pid)
            print(f"the club board (`preftable club{label}`) following {count} tables: "
                  f"VmRSS {mem['VmRSS'] / 1024:.1f} MB, VmHWM {mem['VmHWM'] / 1024:.1f} MB")
    finally:
        for table in tables:
            table.stop()
        club.stop()
        for proc in (board, paged):
            proc.terminate()
            proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20, help="how long the tables play per latency run")
    ap.add_argument("--speed", type=float, default=5, help="sim speed (1 = a card every ~0.5 s)")
    ap.add_argument("--outage", type=float, default=3, help="seconds the broker is away")
    for child in ("--as-table", "--url", "--dir", "--out"):
        ap.add_argument(child, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.as_table:
        logging.basicConfig(level=logging.ERROR)
        return as_table(args)
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        broker = Broker(folder / "broker").start()
        try:
            for count in (1, 20):
                latency_processes(folder, broker, count, args.seconds, args.speed)
            latency(folder, broker, 20, args.seconds, args.speed)
            baseline(folder, broker, 20, args.seconds, rate=16 * args.speed / 5)
            recovery(folder, broker, 20, args.speed, args.outage)
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
