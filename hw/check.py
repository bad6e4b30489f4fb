"""``preftable doctor --live``: a real table checked by hand, step by step (docs/hardware-test.md).

:class:`LiveCheck` drives the readers and pins it is given and says, one
:class:`Finding` at a time, what it saw and -- for every failure -- what that
means on the bench.  A reader backend hands its readers over opened, as
:class:`LiveReaders` (the readers, their clock, how each one says it answers);
an RC522's answer is its VersionReg (:func:`rc522_identity`).  The steps, in order:

1. every reader's answer: an RC522's VersionReg (a clone's value is fine;
   0x00/0xFF is not) and whether its configuration reads back;
2. polls per second of each empty reader, and the time one SPI transfer costs
   (:func:`measure_transfer_cost`: VersionReg read back to back, timed with the
   backend's clock -- the figure the emulation's ``PI_XFER_OVERHEAD_S`` stands for);
3. a card laid on each reader in turn: its UID, its length, how long until it
   counts as placed, and that no other reader sees it (two readers on one bus,
   neighbouring antennas);
4. a second card laid on top of the first (stacked cards);
5. that a 7-byte tag (NTAG, Ultralight) was among the cards;
6. removal: the time from lifting the cards to ``removed`` (``absent_ms``);
7. each seat LED lit in turn, the buzzer, each button pressed in turn.

Time and waiting come from the readers' driver (``now``/``sleep``: the SPI backend's), so the same
steps run on a Pi in real time and in the tests on the emulated chips in
modelled time.  ``prompt(text)`` tells the person at the table what to do next
(the tests' fake person lays the tags there); each step waits for what it asked
for up to ``step_s`` seconds.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from controller.core.errors import HardwareError
from controller.core.findings import FAIL, OK, WARN, Finding

from . import rc522_regs as regs
from .scanner import PresenceTracker

log = logging.getLogger(__name__)

RATE_S = 1.0                   # how long each empty reader is polled for its rate
COST_READS = 200               # VersionReg reads timed for the cost of one SPI transfer
MIN_POLLS_PER_S = 50           # below this a table feels sluggish (a scan of 5 readers > 100 ms)


MEANINGS = {
    0x00: "MISO reads low: the reader has no 3.3 V, its RST is held low, or MISO is not wired",
    0xFF: "MISO floats high: the reader is unplugged, or wired to another chip-select (CE) than spi.readers says",
    "stuck": "writes do not reach the chip: check MOSI and SCK, and the 3.3 V supply under load",
    "slow": "polls are slow: lower-quality SPI wiring forced a low spi.speed_hz, or the Pi is busy",
    "unseen": "no tag read: the card is off the antenna, the antenna is detuned (metal under the table), "
              "or the card is not ISO 14443A",
    "crosstalk": "two readers read one card: their antennas are too close or too strong; move them apart",
    "stack": "the second card was not read: it lies outside the field, or the reader's anticollision fails",
    "seven": "no 7-byte UID seen: lay an NTAG/Ultralight card to check the cascade (decks usually use them)",
    "removal": "removal took much longer than absent_ms: the card was still read now and then (flicker) "
               "or the reader is slow",
    "button": "no press seen: check the button's wiring to GND and its GPIO (pull-up on), or the pin number",
}


def measure_transfer_cost(reader, now: Callable[[], float], reads: int = COST_READS) -> float:
    """Seconds one SPI transfer costs on ``reader``'s bus: ``reads`` VersionReg reads (one 2-byte
    ``xfer2`` each) back to back, timed with ``now`` -- the Python call, the ioctl, chip-select
    and the 16 bits on the wire together."""
    start = now()
    for _ in range(reads):
        reader.version()
    return (now() - start) / reads


def rc522_identity(reader) -> tuple[str, str, str | None]:
    """An RC522's answer: its VersionReg, and whether its configuration reads back
    (level, what was seen, what a failure means)."""
    try:
        version = reader.version()
    except (OSError, HardwareError) as exc:
        return FAIL, f"SPI fails: {exc}", MEANINGS[0xFF]
    if not regs.chip_answers(version):
        return FAIL, f"VersionReg {regs.version_name(version)}", MEANINGS[version]
    if not getattr(reader, "configured", True):
        return FAIL, f"VersionReg {regs.version_name(version)}, but its configuration does not read back", \
            MEANINGS["stuck"]
    return OK, f"VersionReg {regs.version_name(version)}", None


class RealTime:
    """The clock of a check with no readers of its own (the LEDs and buttons): real time."""

    @staticmethod
    def now() -> float:
        return time.monotonic()

    @staticmethod
    def sleep(seconds: float) -> None:
        time.sleep(seconds)


@dataclass
class LiveReaders:
    """A reader backend's readers, opened for the check: ``(zone, reader)`` pairs (each with
    ``name``, ``read_uids()`` and ``close()``), the ``clock`` they run on (``now``/``sleep``),
    their ``absent_ms``, and how a reader says it answers (``identify``) and what one
    transfer costs (``cost``; None: not measured)."""

    readers: Sequence[tuple[str, object]] = ()
    clock: object = field(default_factory=RealTime)
    absent_ms: float = 300
    identify: Callable[[object], tuple[str, str, str | None]] = rc522_identity
    cost: Callable[[object, Callable[[], float]], float] | None = measure_transfer_cost

    def close(self) -> None:
        for _, reader in self.readers:
            reader.close()


class LiveCheck:
    """Checks ``readers`` (``(zone, reader)`` pairs, :class:`hw.rc522.Reader`-like) on ``backend``.

    ``leds``: zone -> output pin; ``buzzer``: an output pin; ``buttons``: name -> input pin
    (:class:`hw.pins.OutputPin` / :class:`hw.pins.InputPin`).  ``identify`` and ``cost``:
    as :class:`LiveReaders` has them (an RC522's by default).
    """

    def __init__(self, readers: Sequence[tuple[str, object]], backend, *, absent_ms: float = 300,
                 leds: Mapping[str, object] | None = None, buzzer: object | None = None,
                 buttons: Mapping[str, object] | None = None,
                 prompt: Callable[[str], None] = lambda text: None,
                 emit: Callable[[Finding], None] = lambda line: None, step_s: float = 30.0,
                 identify: Callable[[object], tuple[str, str, str | None]] = rc522_identity,
                 cost: Callable[[object, Callable[[], float]], float] | None = measure_transfer_cost):
        self.readers = list(readers)
        self.backend = backend
        self.identify = identify
        self.cost = cost
        self.absent_ms = absent_ms
        self.leds = dict(leds or {})
        self.buzzer = buzzer
        self.buttons = dict(buttons or {})
        self.prompt = prompt
        self.emit = emit
        self.step_s = step_s
        self.lines: list[Finding] = []
        self.uid_lengths: set[int] = set()

    def add(self, level: str, text: str, meaning: str | None = None) -> Finding:
        line = Finding(level, text, meaning=meaning)
        self.lines.append(line)
        log.debug("%s", line.render())
        self.emit(line)
        return line

    @property
    def failed(self) -> bool:
        return any(line.level == FAIL for line in self.lines)

    def run(self) -> list[Finding]:
        working = self.check_versions()
        if working:
            self.check_rates(working)
            laid = self.check_each_tag(working)
            if laid:
                self.check_stacked(laid)
                self.check_seven_byte()
                self.check_removal(laid)
        self.check_leds()
        self.check_buttons()
        return self.lines

    # ----- readers ---------------------------------------------------------------------------------
    def check_versions(self) -> list[tuple[str, object]]:
        working = []
        for zone, reader in self.readers:
            level, text, meaning = self.identify(reader)
            self.add(level, f"{zone} ({reader.name}): {text}", meaning)
            if level == OK:
                working.append((zone, reader))
        return working

    def check_rates(self, readers) -> None:
        for zone, reader in readers:
            start = self.backend.now()
            polls = 0
            while self.backend.now() - start < RATE_S:
                reader.read_uids()
                polls += 1
            rate = polls / (self.backend.now() - start)
            text = f"{zone}: {rate:.0f} empty polls per second"
            if self.cost is not None:
                text += f", {self.cost(reader, self.backend.now) * 1e6:.0f} us per SPI transfer"
            self.add(OK if rate >= MIN_POLLS_PER_S else WARN, text, MEANINGS["slow"])

    def _poll(self, readers) -> dict[str, list[str]]:
        return {zone: reader.read_uids() for zone, reader in readers}

    def _wait(self, readers, done: Callable[[dict[str, list[str]]], bool]) -> dict[str, list[str]] | None:
        start = self.backend.now()
        while self.backend.now() - start < self.step_s:
            seen = self._poll(readers)
            if done(seen):
                return seen
            self.backend.sleep(0.005)
        return None

    def check_each_tag(self, readers) -> list[tuple[str, object, str]]:
        laid = []
        for zone, reader in readers:
            self.prompt(f"lay one card on {zone} (leave the cards already laid where they are)")
            start = self.backend.now()
            tracker = PresenceTracker([z for z, _ in readers], self.absent_ms)
            index = [z for z, _ in readers].index(zone)
            placed_uid: list[str] = []
            sightings: dict[str, set[str]] = {}     # uid -> zones that read it meanwhile

            def done(seen, tracker=tracker):
                for z, uids in seen.items():
                    for u in uids:
                        sightings.setdefault(u, set()).add(z)
                for i, (z, _) in enumerate(readers):
                    for event in tracker.observe(i, seen[z] or None, self.backend.now()):
                        if event.event == "placed" and i == index:
                            placed_uid.append(event.uid)
                return bool(placed_uid)

            seen = self._wait(readers, done)
            if seen is None:
                shared = sorted(u for u, zones in sightings.items() if zone in zones and len(zones) > 1)
                if shared:
                    others = sorted(sightings[shared[0]] - {zone})
                    self.add(FAIL, f"{zone}: card {shared[0]} also read by {', '.join(others)}: never placed",
                             MEANINGS["crosstalk"])
                else:
                    self.add(FAIL, f"{zone}: no card placed within {self.step_s:g} s", MEANINGS["unseen"])
                continue
            uid = placed_uid[0]
            self.uid_lengths.add(len(uid) // 2)
            self.add(OK, f"{zone}: card {uid} ({len(uid) // 2}-byte UID) placed after "
                         f"{(self.backend.now() - start) * 1e3:.0f} ms")
            others = [z for z, uids in seen.items() if z != zone and uid in uids]
            if others:
                self.add(FAIL, f"{zone}: card {uid} also read by {', '.join(others)}", MEANINGS["crosstalk"])
            laid.append((zone, reader, uid))
        buses: dict[int, list[str]] = {}
        for zone, reader in readers:
            bus = getattr(reader, "bus", None)          # readers on SPI buses (an RC522's)
            if bus is not None:
                buses.setdefault(bus, []).append(zone)
        for bus, zones in sorted(buses.items()):
            if len(zones) > 1:
                good = [z for z, _, _ in laid if z in zones]
                level = OK if len(good) == len(zones) else FAIL
                self.add(level, f"SPI bus {bus}: {len(good)} of {len(zones)} readers ({', '.join(zones)}) read "
                                "their own card", MEANINGS["unseen"])
        return laid

    def check_stacked(self, laid) -> None:
        zone, reader, first = laid[0]
        self.prompt(f"lay a second card on top of the card on {zone}")
        seen = self._wait([(zone, reader)], lambda s: len(s[zone]) >= 2)
        if seen is None:
            self.add(FAIL, f"{zone}: a second card on {first} was not read within {self.step_s:g} s",
                     MEANINGS["stack"])
            return
        for uid in seen[zone]:
            self.uid_lengths.add(len(uid) // 2)
        self.add(OK, f"{zone}: stacked cards read: {', '.join(seen[zone])}")

    def check_seven_byte(self) -> None:
        if 7 in self.uid_lengths:
            self.add(OK, "a 7-byte UID was read completely (cascade level 2)")
        else:
            self.add(WARN, "no 7-byte UID among the cards laid", MEANINGS["seven"])

    def check_removal(self, laid) -> None:
        readers = [(zone, reader) for zone, reader, _ in laid]
        tracker = PresenceTracker([z for z, _ in readers], self.absent_ms)
        for _ in range(2):                          # the cards lying there count as placed
            for i, (zone, reader) in enumerate(readers):
                tracker.observe(i, reader.read_uids() or None, self.backend.now())
        self.prompt("lift every card off the table")
        start = self.backend.now()
        gone: dict[str, float] = {}

        def done(seen):
            for i, (zone, _) in enumerate(readers):
                for event in tracker.observe(i, seen[zone] or None, self.backend.now()):
                    if event.event == "removed":
                        gone.setdefault(zone, self.backend.now() - start)
            return not any(tracker.present().values())

        if self._wait(readers, done) is None:
            left = [z for z, uids in tracker.present().items() if uids]
            self.add(FAIL, f"cards still read on {', '.join(left)} after {self.step_s:g} s", MEANINGS["removal"])
            return
        for zone, took in sorted(gone.items()):
            level = OK if took <= 2 * self.absent_ms / 1000 + 0.2 else WARN
            self.add(level, f"{zone}: removed {took * 1e3:.0f} ms after the lift began "
                            f"(absent_ms {self.absent_ms:g})", MEANINGS["removal"])

    # ----- pins ------------------------------------------------------------------------------------
    def check_leds(self) -> None:
        for zone, pin in self.leds.items():
            self.prompt(f"watch the {zone} LED (GPIO{pin.pin}): it lights for 1 s")
            pin.set(True)
            self.backend.sleep(1.0)
            pin.set(False)
            self.add(OK, f"{zone} LED on GPIO{pin.pin} driven high for 1 s (did it light? if not: its "
                         "resistor, polarity, or the pin number)")
        if self.buzzer is not None:
            self.prompt(f"listen: the buzzer (GPIO{self.buzzer.pin}) sounds for 0.3 s")
            self.buzzer.set(True)
            self.backend.sleep(0.3)
            self.buzzer.set(False)
            self.add(OK, f"buzzer on GPIO{self.buzzer.pin} driven for 0.3 s (silent? an active buzzer "
                         "needs its polarity, a passive one a transistor)")

    def check_buttons(self) -> None:
        for name, pin in self.buttons.items():
            self.prompt(f"press and release the {name} button (GPIO{pin.pin})")
            start = self.backend.now()
            pressed = None                          # when the press was first seen
            while self.backend.now() - start < self.step_s:
                if pin.is_active:
                    pressed = self.backend.now() if pressed is None else pressed
                    if self.backend.now() - pressed >= 1.0:
                        break                       # held: enough to know it works
                elif pressed is not None:
                    break
                self.backend.sleep(0.01)
            pressed = pressed is not None
            if pressed:
                self.add(OK, f"button {name} on GPIO{pin.pin}: pressed and released")
            else:
                self.add(FAIL, f"button {name} on GPIO{pin.pin}: no press within {self.step_s:g} s",
                         MEANINGS["button"])


__all__ = ["LiveCheck", "LiveReaders", "RealTime", "Finding", "MEANINGS", "OK", "WARN", "FAIL",
           "measure_transfer_cost", "rc522_identity"]
