"""The web output: a bus subscriber that feeds the live table page (issue 13).

It runs as a threaded subscriber (BUS.md): its ``receive`` is called on its own
thread with each published item, turns the frozen snapshot into JSON-ready
data there and hands it to the web server's loop (:class:`WebServer`, on a
thread of its own).  The table loop only ever appends to the bus mailbox, so
the web server can be slow, fail or be absent without delaying an event, a
LED or a log line.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ...core.config import Rules
from .config import WebConfig
from .pages import Pages
from .pin import PinGate
from .server import WebServer

log = logging.getLogger(__name__)


class WebOutput:
    """Subscriber ``web``: every snapshot to the page's viewers."""

    name = "web"
    inline = False

    def __init__(self, server: WebServer):
        self.server = server

    def receive(self, item) -> None:
        self.server.publish(item.snapshot.to_dict())

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        self.server.stop()


def start_web(config: WebConfig, *, submit, log_dir: Path, zones: tuple[str, ...],
              rules: Rules | None = None) -> WebOutput:
    """Start the web server (its thread, its loop) and return the output to subscribe.

    Raises :class:`~controller.app.web.server.WebError` when it cannot listen.
    """
    gate = PinGate.for_table(Path(log_dir), config.pin)
    pages = Pages(rules=rules, names_from_config=config.names_from_config)
    server = WebServer(host=config.host, port=config.port, pages=pages, gate=gate, zones=tuple(zones),
                       submit=submit, log_dir=Path(log_dir))
    server.start()
    return WebOutput(server)


def for_service(service, config: WebConfig) -> WebOutput:
    """The web output of a :class:`~controller.app.service.TableService`: its log dir, zones and rules,
    control lines entered with ``service.submit``."""
    return start_web(config, submit=service.submit, log_dir=Path(service.log_dir),
                     zones=tuple(service.settings.zones), rules=service.settings.game.rules)


__all__ = ["WebOutput", "start_web", "for_service"]
