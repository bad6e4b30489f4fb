"""The web output: a bus subscriber that feeds the live table page.

It runs as a threaded subscriber (:mod:`controller.app.bus`): its ``receive`` is called on its own
thread with each published item, turns the frozen snapshot into JSON-ready
data there and hands it to the web server's loop (:class:`WebServer`, on a
thread of its own).  The table loop only ever appends to the bus mailbox, so
the web server can be slow, fail or be absent without delaying an event, a
LED or a log line.

The server (and aiohttp, Jinja2 with it: most of a second to import on a Pi)
starts at the first published item, which the service sends after telling
systemd it is ready, so the page never slows the table's start.  ``demo``
starts it at once to print its URL.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

from ...core.config import Rules
from ...core.events import TableEvent
from ...store.analyses import AnalysisLines
from .config import WebConfig, WebError

log = logging.getLogger(__name__)


class WebOutput:
    """Subscriber ``web``: every snapshot to the page's viewers."""

    name = "web"
    inline = False

    def __init__(self, config: WebConfig, *, submit: Callable[[TableEvent], None], log_dir: Path,
                 zones: tuple[str, ...], rules: Rules | None = None,
                 notice: Callable[[str], None] | None = None, table=None, announce: bool = True,
                 registrar=None):
        self.config = config
        self.submit = submit
        self.notice = notice            # shows the address and PIN on the table's display
        self.table = table              # closes the pulka and names the players (the service)
        self.announce = announce        # preftable.local on the LAN (when listening beyond loopback)
        self.registrar = registrar
        self.announcer = None
        self.join = None
        self.log_dir = Path(log_dir)
        self.zones = tuple(zones)
        self.rules = rules
        self.server = None
        self.failed: str | None = None
        self._analysis_lines = AnalysisLines()
        self._published: tuple = ({}, None)             # the last state published, its session folder

    def start(self):
        """Start the web server (its thread, its loop); raises :class:`WebError` when it cannot listen."""
        from .pages import Pages
        from .pin import PinGate
        from .server import WebServer

        gate = PinGate.for_table(self.log_dir, self.config.pin)
        pages = Pages(rules=self.rules, names_from_config=self.config.names_from_config)
        from .join import Announcer, display_rows, join_info, lan_addresses

        server = WebServer(host=self.config.host, port=self.config.port, pages=pages, gate=gate,
                           zones=self.zones, submit=self.submit, log_dir=self.log_dir)
        server.table = self.table
        self.server = server.start()
        port = server.bound[1]
        wide = self.config.host not in ("127.0.0.1", "::1", "localhost")
        addresses = lan_addresses() if wide and self.config.host in ("0.0.0.0", "::") else []
        if self.announce and addresses:
            self.announcer = Announcer(port, addresses, registrar=self.registrar)
        announced = self.announcer is not None and self.announcer.start()
        self.join = server.join = join_info(self.config, gate.pin, port=port, announced=announced,
                                            addresses=addresses)
        if self.notice is not None:
            self.notice("\n".join(display_rows(self.join)))
        log.info("web: the table page is at %s (PIN from %s)", server.url,
                 "the config" if self.config.pin else self.log_dir / "web-pin")
        return self.server

    def receive(self, item) -> None:
        if self.server is None:
            if self.failed is not None:
                return
            try:
                self.start()
            except WebError as exc:
                self.failed = str(exc)
                log.error("%s; the table goes on without its page", exc)
                return
        state = item.snapshot.to_dict()
        if item.session_dir is not None:
            state["analysis"] = self._analysis(Path(item.session_dir))
        self._published = (state, item.session_dir)
        self.server.publish(state)

    def _analysis(self, folder: Path) -> dict[str, str]:
        """The session's analysis lines by deal number (docs/analysis.md), read again only
        when its analysis.jsonl grew."""
        return {str(n): line for n, line in self._analysis_lines.of(folder).items()}

    def tick(self, now: float) -> None:
        # a deal's analysis is written after its last event: shown when written, not at the next card
        state, folder = self._published
        if self.server is None or folder is None:
            return
        lines = self._analysis(Path(folder))
        if lines != state.get("analysis"):
            self._published = (dict(state, analysis=lines), folder)
            self.server.publish(self._published[0])

    def close(self) -> None:
        if self.announcer is not None:
            self.announcer.close()
        if self.server is not None:
            self.server.stop()


def start_web(config: WebConfig, *, submit, log_dir: Path, zones: tuple[str, ...],
              rules: Rules | None = None) -> WebOutput:
    """A web output whose server is already listening (raises :class:`WebError` if it cannot)."""
    output = WebOutput(config, submit=submit, log_dir=log_dir, zones=zones, rules=rules)
    output.start()
    return output


def for_service(service, config: WebConfig, *, start: bool = True) -> WebOutput:
    """The web output of a :class:`~controller.app.service.TableService`: its log dir, zones and
    rules, control lines entered with ``service.submit``; listening at once unless ``start`` is false."""
    output = WebOutput(config, submit=service.submit, log_dir=Path(service.log_dir),
                       zones=tuple(service.settings.zones), rules=service.settings.game.rules,
                       notice=service.set_notice, table=service)
    if start:
        output.start()
    return output


__all__ = ["WebOutput", "start_web", "for_service"]
