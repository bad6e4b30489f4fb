"""Reader backend ``hub``: the table hub on a serial line (``[hub]``; PROTOCOL.md).

    [hub]
    port = "/dev/preftable-hub"  # a device, a pty path, or a pyserial URL (socket://host:port, loop://)
    zones = ["seat1", "seat2", "seat3", "prikup"]   # reader index -> zone ("" ignores a reader)
    baudrate = 115200
    absent_ms = 300              # sent to the hub with CFG when not 300

The link (firmware_bridge) exists from construction, so the hub's LEDs and
display rows can be outputs of the same run (built on the source: ``ctx.source``);
the port opens at ``start``.  A port given as a device path must exist before
``run`` or ``enroll`` opens anything, unless ``--wait`` (:func:`preflight`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Mapping

from ...core.cards import zone_names
from ...core.config import check_int, check_known_keys, check_str
from ...core.errors import ConfigError
from ...core.events import TableEvent
from ..sources import Sink
from . import ReaderSource

log = logging.getLogger(__name__)

SECTION = "hub"


@dataclass(frozen=True)
class HubConfig:
    port: str = "/dev/preftable-hub"
    zones: tuple[str | None, ...] = ()         # () : the table's zones in order
    baudrate: int = 115200
    absent_ms: int = 300

    def reader_zones(self, game) -> tuple[str | None, ...]:
        return self.zones or zone_names(game.table.players)


def parse(raw: Mapping, game) -> HubConfig:
    check_known_keys(raw, SECTION, ("port", "zones", "baudrate", "absent_ms"))
    zones = zone_names(game.table.players)
    kw = {}
    if "port" in raw:
        kw["port"] = check_str(raw["port"], "hub.port")
    hub_zones = raw.get("zones", list(zones))
    if not isinstance(hub_zones, list) or not hub_zones:
        raise ConfigError(f"hub.zones: must be a list of zones, reader 0 first, got {hub_zones!r}", "hub.zones")
    seen: set[str] = set()
    mapped: list[str | None] = []
    for i, z in enumerate(hub_zones):
        if z == "":
            mapped.append(None)
            continue
        if not isinstance(z, str) or z not in zones:
            raise ConfigError(f"hub.zones[{i}]: must be one of {', '.join(zones)}, got {z!r}", f"hub.zones[{i}]")
        if z in seen:
            raise ConfigError(f"hub.zones[{i}]: zone {z} given twice", "hub.zones")
        seen.add(z)
        mapped.append(z)
    kw["zones"] = tuple(mapped)
    if "baudrate" in raw:
        kw["baudrate"] = check_int(raw["baudrate"], "hub.baudrate", 300, 4_000_000)
    if "absent_ms" in raw:
        kw["absent_ms"] = check_int(raw["absent_ms"], "hub.absent_ms", 50, 5000)
    return HubConfig(**kw)


class HubSource(ReaderSource):
    """The table hub over its serial link (firmware_bridge).  The link exists from
    construction (so outputs can use it); the port is opened by :meth:`start`."""

    def __init__(self, game, config: HubConfig, clock: Callable[[], float],
                 on_status: Callable[[str], None] | None = None, url: str | None = None,
                 tracker=None):
        from firmware_bridge.link import HubLink

        self.absent_ms = config.absent_ms
        self.on_status = on_status
        self._sink: Sink | None = None
        self._guessed: set[str] = set()     # zones whose next edge came in a guessed order
        self.link = HubLink(url or config.port, config.reader_zones(game), self._forward, clock=clock,
                            on_status=self._status, baudrate=config.baudrate,
                            on_order_guessed=self._order_guessed,
                            picture=lying(tracker, config.reader_zones(game)))

    def _order_guessed(self, zones) -> None:
        """The link applied missed changes in reader order (no ``edge_ms`` told it): their events are
        marked, so the tracker shows it and waits for ``confirm`` (PROTOCOL.md)."""
        log.warning("hub: the order of the cards on %s was guessed (lost frames, and the hub could "
                    "not tell when they changed)", ", ".join(zones))
        self._guessed.update(zones)

    def _forward(self, event: TableEvent) -> None:
        if event.zone in self._guessed:
            self._guessed.discard(event.zone)
            event = event._replace(guessed=True)
        if self._sink is not None:
            self._sink(event)

    def _status(self, message: str) -> None:
        log.info("hub: %s", message)
        if self.on_status:
            self.on_status(message)

    def start(self, sink: Sink) -> None:
        self._sink = sink
        self.link.start()
        if self.absent_ms != 300:
            self.link.configure("absent_ms", self.absent_ms)

    def stop(self) -> None:
        self.link.stop()

    def lying(self, timeout: float) -> list[str] | None:
        """The zones a tag lies on as the hub's first STATE said (None: no STATE within ``timeout``)."""
        if not self.link.wait_ready(timeout):
            return None
        return [zone for zone, uid in zip(self.link.zones, self.link.picture()) if zone and uid]


def preflight(config: HubConfig, wait: bool) -> None:
    """A hub port given as a device path exists now (``--wait``: the link waits for it)."""
    if not wait:
        from ..linkstate import check_hub_port
        check_hub_port(config.port)


def lying(tracker, zones) -> list[str | None]:
    """The uid on each reader as a resumed game left it (``tracker.present``, and the
    tags that are not cards): the link's picture before its first STATE.  A restarted
    service then hears of a card lifted while it was down (else that card stayed on
    the table for ever and the next deal could not start: "table not clear"), and of
    no card that merely still lies there."""
    if tracker is None:
        return []
    uid_of = {card: uid for uid, card in tracker.deck.cards.items()} if tracker.deck is not None else {}
    by_zone = dict(tracker.unknown_present)
    by_zone.update((zone, uid_of[card]) for zone, card in tracker.present if card in uid_of)
    return [by_zone.get(zone) if zone else None for zone in zones]


def source(config: HubConfig, ctx) -> HubSource:
    from ..linkstate import check_serial_device
    check_serial_device(config.port)             # before the link would retry a non-tty for ever
    service = ctx.service

    def link_changed(message: str) -> None:
        # the snapshot's link state (the board, the live view, the web page): from the link's thread
        if service is not None:
            from ..screen import link_state
            service.set_link("connected" if src.link.ready else "waiting", link_state(src.link, config.port))

    src = HubSource(ctx.settings.game, config, ctx.clock, on_status=link_changed,
                    tracker=service.tracker if service is not None else None)
    if service is not None:
        service.set_link("waiting", f"waiting for hub on {config.port}")
    return src


def enroll_source(config: HubConfig, ctx, zone: str | None, known) -> HubSource:
    return source(config, ctx)


def outputs(config: HubConfig, ctx) -> list:
    """The hub's LEDs and buzzer on the run's hub link, and its display rows when
    ``[display] kind = "hub"``."""
    from ..outputs import HubOutputs
    shows_rows = ctx.settings.section("display").kind == "hub"
    return [HubOutputs(ctx.source.link, ctx.settings.game.table.seats, display=shows_rows)]


# --- doctor --------------------------------------------------------------------------

def doctor(config: HubConfig, doc, settings) -> None:
    if not doc.check_port(config.port, "hub port", "check the hub's USB cable and hub.port "
                                                   "(ls /dev/serial/by-id/; the udev rule for /dev/preftable-hub)"):
        return
    from ..linkstate import serial_device_problem
    problem = None if "://" in config.port else serial_device_problem(config.port)
    if problem is not None:
        from ..findings import FAIL
        doc.add(FAIL, f"hub port {config.port} {problem}",
                "set hub.port to the hub's serial device (/dev/preftable-hub, or one of ls /dev/serial/by-id/)")
        return
    if getattr(doc, "service_running", False):
        from ..findings import WARN
        doc.add(WARN, f"hub on {config.port}: not asked for its HELLO, the running service holds it",
                "sudo systemctl stop preftable, then preftable doctor again")
        return
    check_hello(config, doc, settings)


def check_hello(config: HubConfig, doc, settings) -> None:
    """Open the port and wait for the hub's HELLO: firmware, boot id, readers."""
    from firmware_bridge.link import HubLink

    from ..findings import FAIL, OK
    from ..textview import plural

    statuses: list[str] = []
    zones = config.reader_zones(settings.game)
    link = HubLink(config.port, zones, lambda event: None, on_status=statuses.append,
                   baudrate=config.baudrate, reopen_backoff=(0.2, 1.0))
    link.start()
    try:
        deadline = time.monotonic() + doc.host.hello_timeout
        while not link.wait_ready(0.02) and link.error is None and time.monotonic() < deadline:
            pass
        info, error = link.hub_info, link.error
    finally:
        link.stop()
    if error is not None:
        doc.add(FAIL, f"hub at {config.port}: {error}", "update the hub firmware or preftable "
                                                        "so both speak the same protocol")
        return
    if info is None:
        said = f" ({statuses[-1]})" if statuses else ""
        doc.add(FAIL, f"waiting for hub on {config.port}: no HELLO within {doc.host.hello_timeout:g} s{said}",
                f"check that the hub is powered and runs the preftable firmware, and hub.baudrate "
                f"({config.baudrate})")
        return
    # the words the board and the live view use for the link
    doc.add(OK, f"hub connected on {config.port}: firmware {info.fw_version}, {plural(info.readers, 'reader')}, "
                f"proto {info.proto}, boot {info.boot_id}")
    lacking = [f"{zone} (reader {i})" for i, zone in enumerate(zones) if zone and i >= info.readers]
    if lacking:
        doc.add(FAIL, f"hub has {plural(info.readers, 'reader')} but hub.zones maps {len(zones)}: no reader for "
                      + ", ".join(lacking),
                "connect the missing readers to the hub, or shorten hub.zones")
