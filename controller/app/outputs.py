"""Where what the table shows goes: a display, the Pi's LEDs and buzzer, or the hub's.

Each output is a bus subscriber (:mod:`controller.app.bus`): it renders the
:class:`~controller.core.view.Indications` of each published snapshot and
sends only what changed.  The LED outputs are *inline* (on the table loop's
thread, as fast as the loop: a card's LED must not wait for a queue); a
display is threaded, since a 9600-baud LCD takes ~80 ms to redraw.
Enrolment, which has no table, calls :meth:`show` directly.  Hardware modules
are imported only when such an output is built.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol, Sequence

from ..core.cards import ascii_text
from ..core.view import ERROR, OFF, TURN, WINNER, Indications

log = logging.getLogger(__name__)

# Hub LED colours by mode (PROTOCOL.md LED <index> <RRGGBB>); seatN is LED index N-1.
HUB_COLOURS = {OFF: "000000", TURN: "00C000", WINNER: "0040FF", ERROR: "FF0000"}

class Output(Protocol):
    name: str
    inline: bool

    def receive(self, item) -> None: ...
    def show(self, ind: Indications, now: float) -> None: ...
    def tick(self, now: float) -> None: ...
    def close(self) -> None: ...


class IndicationOutput:
    """An output that renders what the table shows (LEDs, display rows, beep)."""

    name = "output"
    inline = False

    def receive(self, item) -> None:
        """A bus item: render its snapshot's indications."""
        self.show(item.snapshot.indications, time.monotonic())

    def show(self, ind: Indications, now: float) -> None:
        raise NotImplementedError

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        pass


class DisplayOutput(IndicationOutput):
    """A 20x4 display (``hw.display.SerialDisplay`` or ``TerminalDisplay``)."""

    name = "display"

    def __init__(self, display):
        self.display = display
        self._lines: tuple[str, ...] | None = None

    def show(self, ind: Indications, now: float) -> None:
        if ind.lines != self._lines:
            self._lines = ind.lines
            self.display.show(list(ind.lines))

    def close(self) -> None:
        self.display.close()


class GpioOutputs(IndicationOutput):
    """Seat LEDs and buzzer on the Pi's GPIO pins."""

    name = "gpio"
    inline = True

    def __init__(self, factory, leds: dict[str, int], buzzer: int | None):
        from hw.indicators import Buzzer, SeatLeds

        self.leds = SeatLeds(factory, leds) if leds else None
        self.buzzer = Buzzer(factory, buzzer) if buzzer is not None else None

    def show(self, ind: Indications, now: float) -> None:
        if self.leds is not None:
            self.leds.show(ind.leds, now)
        if self.buzzer is not None and ind.beep_ms:
            self.buzzer.beep(ind.beep_ms, now)

    def tick(self, now: float) -> None:
        if self.leds is not None:
            self.leds.tick(now)
        if self.buzzer is not None:
            self.buzzer.tick(now)

    def close(self) -> None:
        for device in (self.leds, self.buzzer):
            if device is not None:
                device.close()


class HubOutputs(IndicationOutput):
    """The hub's indicator LEDs, display rows and buzzer, through the host link."""

    name = "hub"
    inline = True

    def __init__(self, link, seats: Sequence[str], display: bool = True):
        self.link = link
        self.index = {seat: i for i, seat in enumerate(seats)}
        self.display = display
        self._leds: dict[str, str] = {}
        self._rows: dict[int, str] = {}

    def show(self, ind: Indications, now: float) -> None:
        if not self.link.ready:
            return
        for zone, mode in ind.leds.items():
            if zone in self.index and self._leds.get(zone) != mode:
                self._leds[zone] = mode
                self.link.set_led(self.index[zone], HUB_COLOURS[mode])
        if self.display:
            for row, text in enumerate(ind.lines):
                text = ascii_text(text)
                if self._rows.get(row) != text:
                    self._rows[row] = text
                    self.link.text(row, text)
        if ind.beep_ms:
            self.link.beep(ind.beep_ms)
