"""The table service: start-up, memory, and card-to-indicator latency (prints figures).

1. Start to ready: ``preftable run`` (hub backend, an emulated hub on a pty) with
   a 1,000-deal session in its log dir, timed from process start to systemd's
   ``READY=1`` on a notify socket; beside it ``python -c "import transitions, serial"``
   in the same run.  Target: ready within 3x the bare import.
2. Peak memory (VmHWM) of that service process after it has resumed and played
   on for a while.  Target: under 40 MB resident.
3. Latency from the emulated hub writing a SEEN frame to the service issuing the
   LED/TEXT command for that card (the real link, tracker, view and hub outputs
   in one process), p50/p99.  Target: p99 <= 5 ms.

    .venv/bin/python bench/bench_service.py [--deals 1000] [--runs 5] [--samples 300]
"""

from __future__ import annotations

import argparse
import compileall
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.core.config import GameConfig  # noqa: E402
from controller.store.gamelog import SessionLog  # noqa: E402
from controller.app.sim import Noise, TableSimulator, make_deck  # noqa: E402
from controller.core.tracker import DealTracker  # noqa: E402

ZONES = ["seat1", "seat2", "seat3", "prikup"]


def write_session(log_dir: Path, deals: int, deck) -> Path:
    """A session of ``deals`` finished deals, logged as the service logs them."""
    game = GameConfig()
    session = SessionLog.create(log_dir, game, deck)
    tracker = DealTracker(game, deck)
    for n, event in enumerate(TableSimulator(game, seed=1, deck=deck, noise=Noise.demo()).deals(deals)):
        signals = tracker.feed(event)
        ended = any(s.kind == "deal" for s in signals)
        session.append(event, signals, tracker.checkpoint() if ended else None)
        if ended and len(tracker.records) % 100 == 0:
            print(f"\rwriting the session log: {len(tracker.records)}/{deals} deals", end="",
                  file=sys.stderr, flush=True)
    session.close()
    print(file=sys.stderr)
    return session.folder


def bare_import() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import transitions, serial"], check=True)
    return time.perf_counter() - start


def start_service(cfg: Path, log_dir: Path, deck_path: Path, sock_path: str) -> tuple[float, subprocess.Popen]:
    """Start ``preftable run``; return seconds to READY=1 and the process."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    server.settimeout(30)
    env = dict(os.environ, NOTIFY_SOCKET=sock_path)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config", str(cfg),
                             "--log-dir", str(log_dir), "--deck", str(deck_path)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while True:
            msg = server.recv(4096).decode()
            if "READY=1" in msg:
                return time.perf_counter() - start, proc
    finally:
        server.close()
        os.unlink(sock_path)


def vm_hwm_mb(pid: int) -> tuple[float, float]:
    fields = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024


def startup_and_memory(deals: int, runs: int) -> None:
    from firmware_bridge.emulator import HubEmulator

    deck = make_deck(5)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log_dir = tmp / "logs"
        write_session(log_dir, deals, deck)
        deck_path = tmp / "deck.toml"
        deck_path.write_text(deck.to_toml())
        emu = HubEmulator(readers=4)
        port = emu.open_pty()
        cfg = tmp / "table.toml"
        cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n[display]\nkind = "hub"\n')
        ready, bare = [], []
        proc = None
        for i in range(runs):
            bare.append(bare_import())
            seconds, proc = start_service(cfg, log_dir, deck_path, str(tmp / f"notify{i}"))
            ready.append(seconds)
            if i < runs - 1:
                proc.terminate()
                proc.wait(10)
        # the last service plays on: two more deals through the emulated hub
        events = list(TableSimulator(GameConfig(), seed=9, deck=deck, noise=Noise.demo(), step_s=0.05,
                                     gather_s=0.6, min_gap_s=0.06).deals(2))
        emu.play(events, ZONES, {}, speed=1.0).join()
        time.sleep(1.0)
        hwm, rss = vm_hwm_mb(proc.pid)
        proc.terminate()
        rc = proc.wait(10)
        emu.close()
        r, b = statistics.median(ready), statistics.median(bare)
        print(f"start to ready, {deals}-deal session resumed: {r * 1000:7.1f} ms (median of {runs})")
        print(f"python -c 'import transitions, serial':   {b * 1000:7.1f} ms (median of {runs})")
        print(f"ratio ready / bare import:                {r / b:7.2f}x   (target <= 3x)")
        print(f"service peak resident memory (VmHWM):     {hwm:7.1f} MB  (now {rss:.1f} MB; target < 40 MB)")
        print(f"service exit status after SIGTERM:        {rc}")


class StampingLink:
    """Passes the hub outputs' commands to the real link, noting when each was issued."""

    def __init__(self, link, stamps: list[float]):
        self._link = link
        self._stamps = stamps

    @property
    def ready(self) -> bool:
        return self._link.ready

    def set_led(self, index, rgb):
        self._stamps.append(time.monotonic())
        return self._link.set_led(index, rgb)

    def text(self, row, text):
        self._stamps.append(time.monotonic())
        return self._link.text(row, text)

    def beep(self, ms):
        self._stamps.append(time.monotonic())
        return self._link.beep(ms)


def latency(samples: int) -> list[float]:
    from firmware_bridge.emulator import HubEmulator
    from controller.app.outputs import HubOutputs
    from controller.app.service import TableService
    from controller.app.backends.display import DisplayConfig
    from controller.app.backends.hub import HubConfig, HubSource
    from controller.app.settings import Settings

    deck = make_deck(6)
    emu = HubEmulator(readers=4)
    port = emu.open_pty()
    game = GameConfig()
    settings = Settings(game=game, backend="hub", sections={"hub": HubConfig(port=port, zones=tuple(ZONES)),
                                                            "display": DisplayConfig("hub")})
    out: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        service = TableService(settings, deck, Path(tmp))
        service.open_session(new=True)
        source = HubSource(game, settings.section("hub"), service.clock)
        stamps: list[float] = []
        service.outputs = [HubOutputs(StampingLink(source.link, stamps), game.table.seats)]
        runner = threading.Thread(target=service.run, args=(source,), daemon=True)
        runner.start()
        if not source.link.wait_ready(10):
            raise SystemExit("the emulated hub did not answer")
        time.sleep(0.3)
        sim = TableSimulator(game, seed=2, deck=deck)
        reader = {z: i for i, z in enumerate(ZONES)}
        while len(out) < samples:
            for event in sim.deal():
                if event.event == "removed":
                    emu.flip(reader[event.zone], None)
                    time.sleep(0.002)
                    continue
                before = len(stamps)
                sent = emu.flip(reader[event.zone], event.uid)
                deadline = time.monotonic() + 1.0
                while len(stamps) == before and time.monotonic() < deadline:
                    time.sleep(0.0001)
                if len(stamps) > before:
                    out.append(stamps[before] - sent)
                time.sleep(0.004)
            print(f"\rlatency samples: {len(out)}/{samples}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        service.stop()
        runner.join(5)
    emu.close()
    return out[:samples]


def main() -> None:
    # A real install byte-compiles the package (pip does); with PYTHONDONTWRITEBYTECODE set, an
    # editable checkout would recompile every module at every start, unlike transitions and serial.
    for package in ("controller", "hw", "firmware_bridge"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args()
    startup_and_memory(args.deals, args.runs)
    lat = sorted(latency(args.samples))
    p50 = statistics.median(lat)
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
    print(f"SEEN -> LED/TEXT command latency:         p50 {p50 * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, "
          f"max {lat[-1] * 1000:.2f} ms over {len(lat)} cards (target p99 <= 5 ms)")


if __name__ == "__main__":
    main()
