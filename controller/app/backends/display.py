"""Output ``display``: the 20x4 score board (``[display]``).

    [display]
    kind = "terminal"            # terminal | serial (20x4 LCD backpack) | hub (the hub's TEXT rows) | none
    port = "/dev/ttyUSB0"        # kind = "serial"
    baudrate = 9600

Each kind is one entry of :data:`KINDS`: the function that builds its output
(``hub`` is drawn by the hub backend's own output, on its link).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Mapping

from ...core.config import check_choice, check_int, check_known_keys, check_str
from ...core.errors import ConfigError

SECTION = "display"


@dataclass(frozen=True)
class DisplayConfig:
    kind: str = "terminal"
    port: str | None = None
    baudrate: int = 9600


def _terminal(config: DisplayConfig, ctx) -> list:
    from ..screen import TerminalBoard       # the board, the reader link's state, log lines above it

    return [TerminalBoard(ctx.stream or sys.stdout, link=ctx.link, names=ctx.settings.game.table.names)]


def _serial(config: DisplayConfig, ctx) -> list:
    from hw.display import SerialDisplay

    from ..outputs import DisplayOutput
    return [DisplayOutput(SerialDisplay(config.port, baudrate=config.baudrate))]


def _elsewhere(config: DisplayConfig, ctx) -> list:
    return []


# display kind -> its output builder
KINDS: dict[str, Callable[[DisplayConfig, object], list]] = {
    "terminal": _terminal,
    "serial": _serial,
    "hub": _elsewhere,        # the hub backend's output draws the rows on the hub's display
    "none": _elsewhere,
}


def parse(raw: Mapping, game) -> DisplayConfig:
    check_known_keys(raw, SECTION, ("kind", "port", "baudrate"))
    kw = {"kind": check_choice(raw.get("kind", "terminal"), "display.kind", tuple(KINDS))}
    if "port" in raw:
        kw["port"] = check_str(raw["port"], "display.port")
    if kw["kind"] == "serial" and not kw.get("port"):
        raise ConfigError('display.port: kind "serial" needs a port', "display.port")
    if "baudrate" in raw:
        kw["baudrate"] = check_int(raw["baudrate"], "display.baudrate", 300, 4_000_000)
    return DisplayConfig(**kw)


def check(settings) -> None:
    if settings.section(SECTION).kind == "hub" and settings.backend != "hub":
        raise ConfigError('display.kind: "hub" needs readers.backend = "hub"', "display.kind")


def outputs(config: DisplayConfig, ctx) -> list:
    return KINDS[config.kind](config, ctx)


def doctor(config: DisplayConfig, doc, settings) -> None:
    if config.kind == "serial":
        doc.check_port(config.port, "serial display",
                       "check the display's USB cable and display.port (ls /dev/serial/by-id/)")
