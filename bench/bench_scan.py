"""Modelled time of one scan of the table's readers: the Pi's 5 readers and the Pico hub's 6-reader round.

Everything runs on the emulated chips of ``hw.rc522_chip``: the time is the
emulation's clock (SPI bytes at the SPI clock, RF frames at 106 kbit/s, frame
delay times, the chip timer) plus a fixed cost per SPI transfer -- the Python
call, the ioctl, the chip-select -- at 60 us (``hw.rc522_chip.PI_XFER_OVERHEAD_S``,
an assumption: see there) and at 100 us.  No real time is measured, so the
figures are the same on every machine.

Side by side in one run: the reader code as it is now and as it was at
``--before`` (a git revision; default: the one before the scan was cut), loaded
from git into its own module, over the same emulated chips.

- Pi: ``hw.scanner.Scanner`` over 5 ``hw.rc522.Reader`` at SPI 1 MHz (the
  config's default ``spi.speed_hz``) -- "before" polls them in turn, "now"
  side by side (one chip's air time filled with the others' SPI work); "known"
  is the steady state (the same tags scan after scan, periodic full scans for
  stacked cards included), "new" puts fresh tags on every reader before every
  scan, as if none had been read (the scanner's test also swaps them).
- Pico: the hub firmware's ``rc522.Rc522`` driving 6 chips through the
  MicroPython fake ``machine.SPI`` at 4 MHz (``main.PINS``), one poll round.

Targets at 60 us a transfer: Pi empty <= 8 ms, 5 known cards <= 12 ms, 5 new
cards <= 18 ms; Pico round (6 known cards) <= 25 ms.

Run: ``.venv/bin/python bench/bench_scan.py [--before REV] [--scans N]``
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import statistics
import subprocess
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from firmware_bridge.mpfake.machine import Board  # noqa: E402
from hw.rc522 import FakeBackend  # noqa: E402
from hw.rc522_chip import PI_XFER_OVERHEAD_S, EmulatedMFRC522, FakeSpidev, VirtualClock, VirtualTag  # noqa: E402
from hw.scanner import Scanner  # noqa: E402

BEFORE = "2b7cc0b"
WIRING = [(0, 0, 25), (0, 1, 24), (1, 0, 23), (1, 1, 22), (1, 2, 27)]
ZONES = ["seat1", "seat2", "seat3", "seat4", "prikup"]
UIDS7 = [f"04A2B11C6F5E8{i}" for i in range(6)]
UIDS4 = [f"3A5F1C7{i}" for i in range(6)]
PICO_CS = (17, 20, 21, 22, 26, 27)
TARGETS = {("pi", "empty"): 8, ("pi", "5 known 7-byte"): 12, ("pi", "5 new 7-byte"): 18,
           ("pico", "6 known 7-byte"): 25}


def load_before(rev: str, path: str, name: str) -> types.ModuleType | None:
    """``path`` as it was at ``rev``, as module ``name`` (its package's relative imports work)."""
    try:
        source = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    package = name.rpartition(".")[0]
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[name] = module
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


# ------------------------------------------------------------------------------------------ the Pi
def pi_scan(reader_module, overhead_s: float, uids: list[str], new: bool, scans: int):
    """(mean ms, max ms, transfers per scan) of ``scans`` scans of 5 readers."""
    backend = FakeBackend(FakeSpidev(xfer_overhead_s=overhead_s))
    chips = [backend.add_chip(bus, dev) for bus, dev, _ in WIRING]
    readers = reader_module.open_readers(WIRING, spd=1_000_000, backend=backend)
    scanner = Scanner(list(zip(ZONES, readers)), clock=backend.clock)

    def lay():
        for chip, uid in zip(chips, uids):
            chip.field.clear()
            chip.field.put(VirtualTag(uid))

    try:
        scanner.scan_once()
        lay()
        for _ in range(3):
            scanner.scan_once()                       # steady state: the tags are known
        times, transfers = [], []
        for _ in range(scans):
            if new:
                lay()
                for reader in readers:
                    reader._last = None               # (as if each tag had never been read)
            start, count = backend.clock(), backend.spi.transfers
            scanner.scan_once()
            times.append((backend.clock() - start) * 1e3)
            transfers.append(backend.spi.transfers - count)
        return statistics.mean(times), max(times), round(statistics.mean(transfers))
    finally:
        for reader in readers:
            reader.close()


# ------------------------------------------------------------------------------------------ the Pico
class CostlyChip:
    """An emulated chip behind the Pico's SPI whose every transfer also costs ``overhead_s``
    (the MicroPython calls around ``write_readinto`` and the chip-select)."""

    def __init__(self, chip: EmulatedMFRC522, overhead_s: float):
        self.chip, self.clock, self.overhead_s = chip, chip.clock, overhead_s
        self.transfers = 0

    def transfer(self, data: bytes, hz: float | None = None) -> bytes:
        self.transfers += 1
        self.clock.advance(self.overhead_s)
        return self.chip.transfer(data, hz=hz)


def pico_round(rc522_module, overhead_s: float, uids: list[str], scans: int):
    """(mean ms, max ms, transfers per round) of the hub firmware's poll over 6 readers."""
    board = Board(realtime=False)
    clock = VirtualClock()
    machine = board.modules()["machine"]
    spi = machine.SPI(0, baudrate=4_000_000)
    devices, readers = [], []
    for i, cs in enumerate(PICO_CS):
        device = CostlyChip(EmulatedMFRC522(clock, name=f"reader{i}"), overhead_s)
        board.attach_spi(cs, device)
        devices.append(device)
        readers.append(rc522_module.Rc522(spi, machine.Pin(cs, machine.Pin.OUT, value=1)))
    for reader in readers:
        reader.init()
    for device, uid in zip(devices, uids):
        device.chip.field.put(VirtualTag(uid))

    def one_round():
        for reader in readers:                       # as Hub._scan: alive(), then read_uid()
            if reader.alive():
                reader.read_uid()

    for _ in range(3):
        one_round()
    times, transfers = [], []
    for _ in range(scans):
        start, count = clock(), sum(d.transfers for d in devices)
        one_round()
        times.append((clock() - start) * 1e3)
        transfers.append(sum(d.transfers for d in devices) - count)
    return statistics.mean(times), max(times), round(statistics.mean(transfers))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=BEFORE, help=f"git revision to compare with (default {BEFORE})")
    parser.add_argument("--scans", type=int, default=24, help="scans measured per cell (default 24)")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)

    import firmware_bridge.firmware.rc522 as fw_now
    import hw.rc522 as pi_now
    pi_before = load_before(args.before, "hw/rc522.py", "hw._rc522_before")
    fw_before = load_before(args.before, "firmware_bridge/firmware/rc522.py", "firmware_bridge.firmware._rc522_before")
    impls = [("now", pi_now, fw_now)]
    if pi_before is not None and fw_before is not None:
        impls.insert(0, (f"before ({args.before})", pi_before, fw_before))
    else:
        print(f"(no git revision {args.before}: the reader code as it is now only)")

    pi_cases = [("empty", [], False), ("5 known 7-byte", UIDS7[:5], False),
                ("5 known 4-byte", UIDS4[:5], False), ("5 new 7-byte", UIDS7[:5], True)]
    pico_cases = [("6 empty", []), ("6 known 7-byte", UIDS7), ("6 known 4-byte", UIDS4)]
    print("Modelled time of one scan, mean (max) over %d scans, and SPI transfers per scan; "
          "RF at 106 kbit/s, 1 ms chip timer" % args.scans)
    for overhead_s in (PI_XFER_OVERHEAD_S, 100e-6):
        us = overhead_s * 1e6
        print()
        print(f"--- {us:.0f} us per SPI transfer ---")
        head = f"{'Pi, 5 readers, SPI 1 MHz':28}" + "".join(f"{name:>26}" for name, _, _ in pi_cases)
        print(head)
        for label, pi_module, _ in impls:
            cells = [pi_scan(pi_module, overhead_s, uids, new, args.scans) for _, uids, new in pi_cases]
            print(f"{label:28}" + "".join(f"{m:7.2f} ({w:6.2f}) ms {x:4d} x" for m, w, x in cells))
            if label == "now":
                for (name, _, _), (mean, worst, _) in zip(pi_cases, cells):
                    target = TARGETS.get(("pi", name))
                    if target is not None and overhead_s == PI_XFER_OVERHEAD_S:
                        print(f"    target {name} <= {target} ms: {'met' if worst <= target else 'MISSED'} "
                              f"(max {worst:.2f} ms)")
        head = f"{'Pico, 6 readers, SPI 4 MHz':28}" + "".join(f"{name:>26}" for name, _ in pico_cases)
        print(head)
        for label, _, fw_module in impls:
            cells = [pico_round(fw_module, overhead_s, uids, args.scans) for _, uids in pico_cases]
            print(f"{label:28}" + "".join(f"{m:7.2f} ({w:6.2f}) ms {x:4d} x" for m, w, x in cells))
            if label == "now" and overhead_s == PI_XFER_OVERHEAD_S:
                for (name, _), (mean, worst, _) in zip(pico_cases, cells):
                    target = TARGETS.get(("pico", name))
                    if target is not None:
                        print(f"    target {name} round <= {target} ms: {'met' if worst <= target else 'MISSED'} "
                              f"(max {worst:.2f} ms)")


if __name__ == "__main__":
    main()
