"""Where what the table shows goes: a display, the Pi's LEDs and buzzer, or the hub's.

Each output renders an :class:`~controller.view.Indications` and sends only
what changed.  Hardware modules are imported only when such an output is built.
"""

from __future__ import annotations

import logging
import sys
from typing import Protocol, Sequence

from ..core.cards import SUIT_SYMBOLS
from ..core.view import ERROR, OFF, TURN, WINNER, Indications

log = logging.getLogger(__name__)

# Hub LED colours by mode (PROTOCOL.md LED <index> <RRGGBB>); seatN is LED index N-1.
HUB_COLOURS = {OFF: "000000", TURN: "00C000", WINNER: "0040FF", ERROR: "FF0000"}
_ASCII_SUITS = {symbol: suit for suit, symbol in SUIT_SYMBOLS.items()}


def ascii_text(text: str) -> str:
    """Display text as printable ASCII for the hub (suit symbols become ``s c d h``)."""
    out = []
    for ch in text:
        ch = _ASCII_SUITS.get(ch, ch)
        out.append(ch if " " <= ch <= "~" and ch not in "$*" else "?")
    return "".join(out)


class Output(Protocol):
    def show(self, ind: Indications, now: float) -> None: ...
    def tick(self, now: float) -> None: ...
    def close(self) -> None: ...


class DisplayOutput:
    """A 20x4 display (``hw.display.SerialDisplay`` or ``TerminalDisplay``)."""

    def __init__(self, display):
        self.display = display
        self._lines: tuple[str, ...] | None = None

    def show(self, ind: Indications, now: float) -> None:
        if ind.lines != self._lines:
            self._lines = ind.lines
            self.display.show(list(ind.lines))

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        self.display.close()


class GpioOutputs:
    """Seat LEDs and buzzer on the Pi's GPIO pins."""

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


class HubOutputs:
    """The hub's indicator LEDs, display rows and buzzer, through the host link."""

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

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        pass


def build_outputs(settings, link=None, factory=None, stream=None):
    """The outputs the settings ask for (display, GPIO LEDs and buzzer, the hub's)."""
    outputs = []
    if settings.display == "terminal":
        from .screen import TerminalBoard       # the board, the hub link's state, log lines above it
        outputs.append(TerminalBoard(stream or sys.stdout, link=link,
                                     port=settings.hub_port if link is not None else None,
                                     names=settings.game.table.names))
    elif settings.display == "serial":
        from hw.display import SerialDisplay
        outputs.append(DisplayOutput(SerialDisplay(settings.display_port, baudrate=settings.display_baudrate)))
    if link is not None:
        outputs.append(HubOutputs(link, settings.game.table.seats, display=settings.display == "hub"))
    if factory is not None and (settings.gpio_leds or settings.gpio_buzzer is not None):
        outputs.append(GpioOutputs(factory, dict(settings.gpio_leds), settings.gpio_buzzer))
    return outputs
