"""Benchmark of the host link over a real pty (prints figures, asserts nothing).

The hub is the shipping firmware (``firmware/hub.py``) run by the emulator.

1. Frames per second HubLink decodes from a pty: the firmware's polls are run
   ahead on its own clock and the SEEN/GONE frames they produce (a few HB/STATE
   among them) written as fast as the pty takes them; the link parses, checks
   and turns every edge into a table event.  Also the bare FrameParser on
   similar bytes, side by side.
2. Latency from the firmware's SEEN frame being written to HubLink emitting its
   table event: p50 and p99, with the emulator in its own process (like a real
   hub) and, side by side, in the host's process (sharing its GIL).

The bare-pty baseline is measured in the same run: on a loaded machine the
scheduler's own tail shows there, and the link's cost is the difference.

Targets: >= 20,000 frames/s, p99 <= 2 ms.
Run: .venv/bin/python bench/bench_link.py [--frames N] [--samples N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from firmware_bridge.codec import FrameParser, encode  # noqa: E402
from firmware_bridge.emulator import HubEmulator  # noqa: E402
from firmware_bridge.link import HubLink  # noqa: E402

ZONES = ["seat1", "seat2", "seat3", "prikup"]
UID = "04A2B11C6F5E80"


def throughput(frames: int) -> float:
    emu = HubEmulator(readers=4, poll_ms=50)
    path = emu.open_pty()
    done = threading.Event()
    count = 0

    def on_event(event):
        nonlocal count
        count += 1
        if count == frames:
            done.set()

    # the firmware's polls for the burst are run before it is written (the hub sends
    # nothing meanwhile): the link must not give up on the silence that takes
    link = HubLink(path, ZONES, on_event, hb_timeout=3600)
    link.start()
    try:
        if not link.wait_ready(5):
            raise SystemExit("link never got ready")
        before = link.counters["frames"]
        started: list[float] = []
        g0 = time.perf_counter()
        emu.burst(frames, readers=range(4), on_start=lambda: started.append(time.perf_counter()))
        t0 = started[0]
        print(f"  (the firmware's polls for {frames} edges ran in {t0 - g0:.1f} s, before the timing)")
        if not done.wait(60):
            raise SystemExit(f"only {count} of {frames} events arrived")
        elapsed = time.perf_counter() - t0
        got = link.counters["frames"] - before
        dropped = {k: v for k, v in link.counters.items() if k in ("garbage", "bad_crc", "gaps") and v}
        print(f"  link: {got} frames (+HB/STATE) -> {count} events in {elapsed:.3f} s"
              f"{'  drops: ' + str(dropped) if dropped else ''}")
        return frames / elapsed
    finally:
        link.stop()
        emu.close()


def parser_only(frames: int) -> float:
    data = b"".join(encode(i % 65536, "SEEN" if i % 2 == 0 else "GONE", 0, UID) for i in range(frames))
    parser = FrameParser()
    t0 = time.perf_counter()
    got = 0
    for i in range(0, len(data), 4096):
        got += len(parser.feed(data[i:i + 4096]))
    elapsed = time.perf_counter() - t0
    assert got == frames
    return frames / elapsed


def latency(samples: int) -> list[float]:
    emu = HubEmulator(readers=4, poll_ms=50, state_ms=10**6)
    path = emu.open_pty()
    arrived = threading.Event()
    stamps: list[float] = []

    def on_event(event):
        stamps.append(time.monotonic())
        arrived.set()

    link = HubLink(path, ZONES, on_event)
    link.start()
    out = []
    try:
        if not link.wait_ready(5):
            raise SystemExit("link never got ready")
        for i in range(samples):
            arrived.clear()
            sent = emu.flip(i % 4, UID if (i // 4) % 2 == 0 else None)
            if not arrived.wait(1):
                raise SystemExit(f"sample {i}: no event")
            out.append(stamps[-1] - sent)
            time.sleep(0.002)
    finally:
        link.stop()
        emu.close()
    return out


def _hub_process(conn, samples: int, gap: float) -> None:
    """Child process: a hub that flips a tag every ``gap`` s once the host is ready."""
    emu = HubEmulator(readers=4, poll_ms=50, state_ms=10**6)
    conn.send(emu.open_pty())
    conn.recv()                                    # the host is ready
    sent = []
    for i in range(samples):
        sent.append(emu.flip(i % 4, UID if (i // 4) % 2 == 0 else None))
        time.sleep(gap)
    conn.send(sent)
    conn.recv()
    emu.close()


def latency_two_processes(samples: int, gap: float = 0.003) -> list[float]:
    """Like :func:`latency` with the hub in its own process (as a real hub is):
    time.monotonic() is one system-wide clock, so the stamps compare."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_hub_process, args=(child, samples, gap), daemon=True)
    proc.start()
    stamps: list[float] = []
    link = HubLink(parent.recv(), ZONES, lambda event: stamps.append(time.monotonic()))
    link.start()
    try:
        if not link.wait_ready(5):
            raise SystemExit("link never got ready")
        parent.send("go")
        sent = parent.recv()
        deadline = time.monotonic() + 2
        while len(stamps) < samples and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        link.stop()
        parent.send("bye")
        proc.join(5)
    if len(stamps) != samples:
        raise SystemExit(f"{len(stamps)} events for {samples} SEEN/GONE frames")
    return [got - put for put, got in zip(sent, stamps)]


def raw_pty_latency(samples: int, gap: float = 0.003) -> list[float]:
    """Baseline: the same write -> wake-up over a bare pty between two processes,
    no pyserial, no parsing -- what the machine's scheduler alone costs."""
    import select
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    pid = os.fork()
    if pid == 0:                                   # child: the "hub"
        os.close(slave)
        for _ in range(samples):
            os.write(master, b"%.9f\n" % time.monotonic())
            time.sleep(gap)
        os._exit(0)
    os.close(master)
    out: list[float] = []
    buf = b""
    try:
        while len(out) < samples:
            select.select([slave], [], [])
            buf += os.read(slave, 4096)
            now = time.monotonic()
            *lines, buf = buf.split(b"\n")
            out += [now - float(line) for line in lines]
    finally:
        os.close(slave)
        os.waitpid(pid, 0)
    return out


def _report(label: str, lat: list[float]) -> None:
    lat = sorted(lat)
    p50 = statistics.median(lat) * 1000
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
    print(f"{label}: p50 {p50:.3f} ms  p99 {p99:.3f} ms  max {lat[-1] * 1000:.3f} ms  ({len(lat)} samples)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    print("hub link benchmark over a pty (targets: >= 20,000 frames/s, SEEN->event p99 <= 2 ms)")
    link_fps = throughput(args.frames)
    bare_fps = parser_only(args.frames)
    print(f"frames/s decoded by HubLink from a pty       : {link_fps:10,.0f}   (target >= 20,000)")
    print(f"frames/s FrameParser alone, in memory        : {bare_fps:10,.0f}   "
          f"(link/parser = {link_fps / bare_fps:.2f})")
    _report("baseline: bare pty write -> read (2 procs) ", raw_pty_latency(args.samples))
    _report("SEEN written -> event, hub in own process  ", latency_two_processes(args.samples))
    _report("SEEN written -> event, hub in same process ", latency(args.samples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
