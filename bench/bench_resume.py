"""Resume after a restart: start to ready and peak memory against the log's length (prints figures).

``preftable run`` (hub backend, an emulated hub on a pty) is started on a log
dir holding one unfinished session of 1,000 and of 10,000 deals, with its
checkpoint journal and without it (the journal deleted before each start), and
timed from process start to systemd's ``READY=1``; beside it, in the same run,
``python -c "import transitions, serial"``.  The service's peak resident memory
(VmHWM) is read at ready, after the resume.  The targets: at 10,000
deals with the journal, ready within 3x the bare import and VmHWM <= 40 MB.

    .venv/bin/python bench/bench_resume.py [--deals 1000 10000] [--runs 3] [--journal both]
        [--fixtures DIR]

``--fixtures DIR`` keeps each written session in ``DIR/<deals>-<code>/`` and reuses it on
the next run (writing a 10,000-deal session takes a while; the start measured is the same);
``<code>`` is a digest of the controller's sources, so a session is written again by
changed code.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import os
import socket
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_service import bare_import, vm_hwm_mb, write_session  # noqa: E402
from controller.app.sim import make_deck  # noqa: E402


def write_fast(log_dir: Path, deals: int, deck) -> Path:
    """The session as the service writes it, without waiting for each fsync (the bytes are
    the same; only the writing of a 10,000-deal fixture gets minutes shorter)."""
    fsync = os.fsync
    os.fsync = lambda fd: None
    try:
        return write_session(log_dir, deals, deck)
    finally:
        os.fsync = fsync


def fixture(fixtures: Path | None, tmp: Path, deals: int, deck) -> Path:
    """The log dir of a ``deals``-deal session under ``tmp``: written afresh, or copied from
    ``fixtures/<deals>/`` (written there first when missing)."""
    log_dir = tmp / "logs"
    if fixtures is None:
        write_fast(log_dir, deals, deck)
        return log_dir
    code = hashlib.sha256(b"".join(p.read_bytes() for p in sorted((ROOT / "controller").rglob("*.py"))))
    kept = fixtures / f"{deals}-{code.hexdigest()[:12]}"
    if not kept.is_dir():
        write_fast(kept.with_suffix(".partial"), deals, deck)
        kept.with_suffix(".partial").rename(kept)
    shutil.copytree(kept, log_dir)
    return log_dir


def start_service(cfg: Path, log_dir: Path, deck_path: Path, sock_path: str, err: Path,
                  stdin=None) -> tuple[float, subprocess.Popen]:
    """Start ``preftable run``; return seconds to READY=1 and the process (a replay of
    10,000 deals without the journal takes a while: no short timeout here).  ``stdin``: a
    terminal there makes its Enter key the table's confirm (the fault soak presses it)."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    server.settimeout(600)
    env = dict(os.environ, NOTIFY_SOCKET=sock_path)
    start = time.perf_counter()
    with open(err, "ab") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config", str(cfg),
                                 "--log-dir", str(log_dir), "--deck", str(deck_path)],
                                cwd=ROOT, env=env, stdin=stdin, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        while "READY=1" not in server.recv(4096).decode():
            pass
        return time.perf_counter() - start, proc
    finally:
        server.close()
        os.unlink(sock_path)


def measure(log_dir: Path, folder: Path, cfg: Path, deck_path: Path, tmp: Path, runs: int,
            journal: bool) -> tuple[float, float, float]:
    """Median seconds to ready, median bare import, the largest VmHWM (MB) over ``runs`` starts."""
    saved = (folder / "checkpoints.jsonl").read_bytes()
    ready, bare, hwm = [], [], []
    for i in range(runs):
        if journal:
            (folder / "checkpoints.jsonl").write_bytes(saved)
        else:
            (folder / "checkpoints.jsonl").unlink(missing_ok=True)
        bare.append(bare_import())
        seconds, proc = start_service(cfg, log_dir, deck_path, str(tmp / f"notify-{journal}-{i}"),
                                      tmp / "service.err")
        hwm.append(vm_hwm_mb(proc.pid)[0])
        proc.terminate()
        proc.wait(30)
        ready.append(seconds)
    (folder / "checkpoints.jsonl").write_bytes(saved)
    return statistics.median(ready), statistics.median(bare), max(hwm)


def main() -> None:
    for package in ("controller", "hw", "firmware_bridge"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--journal", choices=("both", "with", "without"), default="both",
                    help="measure with the journal, without it, or both (default)")
    ap.add_argument("--fixtures", type=Path, default=None,
                    help="keep the written sessions in this directory and reuse them")
    args = ap.parse_args()
    from firmware_bridge.emulator import HubEmulator

    deck = make_deck(5)
    rows = []
    for deals in args.deals:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            log_dir = fixture(args.fixtures, tmp, deals, deck)
            folder = next(p for p in log_dir.iterdir() if p.is_dir())
            size = (folder / "events.jsonl").stat().st_size
            deck_path = tmp / "deck.toml"
            deck_path.write_text(deck.to_toml())
            emu = HubEmulator(readers=4)
            port = emu.open_pty()
            cfg = tmp / "table.toml"
            cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{port}"\n[display]\nkind = "hub"\n')
            try:
                for journal in {"both": (True, False), "with": (True,), "without": (False,)}[args.journal]:
                    r, b, h = measure(log_dir, folder, cfg, deck_path, tmp, args.runs, journal)
                    rows.append((deals, size, journal, r, b, h))
            finally:
                emu.close()
    print(f"{'deals':>6} {'events.jsonl':>13} {'journal':>8} {'ready ms':>9} {'bare ms':>8} "
          f"{'ratio':>6} {'VmHWM MB':>9}")
    for deals, size, journal, r, b, h in rows:
        print(f"{deals:>6} {size / 1e6:>10.1f} MB {'yes' if journal else 'no':>8} {r * 1000:>9.1f} "
              f"{b * 1000:>8.1f} {r / b:>5.2f}x {h:>9.1f}")
    print(f"(median of {args.runs} starts each; targets at 10,000 deals with the journal: "
          "ratio <= 3x, VmHWM <= 40 MB)")


if __name__ == "__main__":
    main()
