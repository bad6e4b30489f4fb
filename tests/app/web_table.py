"""A live table for the web tests and the web bench: the emulated hub on a real pty, the real
host link, the service loop on its thread, the hub's LEDs (inline) and the web output (threaded)
on the bus, and Debian's Chromium driven by Playwright (never a downloaded browser).

Not a test module: ``tests/app/test_web.py`` and ``bench/bench_web.py`` import it.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

from controller.app.backends.display import DisplayConfig
from controller.app.backends.hub import HubConfig, HubSource
from controller.app.outputs import HubOutputs
from controller.app.service import TableService
from controller.app.settings import Settings
from controller.app.sim import make_deck
from controller.app.web import WebConfig, for_service
from controller.core.config import GameConfig, Rules, Table
from firmware_bridge.codec import FrameError, decode_line
from firmware_bridge.emulator import HubEmulator

CHROMIUM = "/usr/bin/chromium"
#: where the web tests leave their screenshots for the people reviewing the pages, when that folder exists
SCREENS = Path(os.environ.get("PREFTABLE_SCREENS", "/work/wt/screens"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class RecordingHub(HubEmulator):
    """The emulated hub, noting when each SEEN frame goes out (the start of "card laid -> page")."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.seen_at: dict[str, float] = {}          # uid -> time.time() of its SEEN frame
        self.seen = threading.Condition()

    def _output(self, data: bytes) -> None:
        super()._output(data)       # the firmware's frame, written to the pty (faults applied)
        try:
            frame = decode_line(data)
        except FrameError:
            return
        if frame.verb == "SEEN":
            with self.seen:
                self.seen_at[frame.fields[1]] = time.time()
                self.seen.notify_all()

    def wait_seen(self, uid: str, timeout: float) -> float | None:
        with self.seen:
            self.seen.wait_for(lambda: uid in self.seen_at, timeout)
            return self.seen_at.get(uid)


class LiveTable:
    """One running table (see the module docstring); ``close()`` stops it all."""

    def __init__(self, log_dir: Path, *, names: dict | None = None, players: int = 3, pin: str = "4321",
                 web: bool = True, wrap_link=None, rules: Rules | None = None):
        self.game = GameConfig(Table(players=players, names=names or {}), rules or Rules())
        self.seats = self.game.table.seats
        self.zones = tuple(self.seats) + ("prikup",)
        self.deck = make_deck(7)
        self.uid = {str(card): uid for uid, card in self.deck.cards.items()}
        self.hub = RecordingHub(readers=len(self.zones), absent_ms=300, poll_ms=20)
        path = self.hub.open_pty()
        settings = Settings(game=self.game, backend="hub", sections={
            "hub": HubConfig(port=path, zones=self.zones), "display": DisplayConfig("none")})
        self.log_dir = Path(log_dir)
        self.service = TableService(settings, self.deck, self.log_dir)
        self.session = self.service.open_session(new=True)
        self.source = HubSource(self.game, settings.section("hub"), self.service.clock)
        self.pin = pin
        self.web = for_service(self.service, WebConfig(port=0, pin=pin)) if web else None
        link = wrap_link(self.source.link) if wrap_link else self.source.link    # the bench stamps commands
        self.service.outputs = [HubOutputs(link, self.seats, display=True)]
        if self.web is not None:
            self.service.outputs.append(self.web)
        self.thread = threading.Thread(target=self.service.run, args=(self.source,), name="table loop",
                                       daemon=True)
        self.thread.start()
        if not self.source.link.wait_ready(20):
            self.close()
            raise RuntimeError("the emulated hub did not answer")

    @property
    def url(self) -> str:
        return self.web.server.url

    def reader(self, zone: str) -> int:
        return self.zones.index(zone)

    def lay(self, zone: str, card: str) -> str:
        uid = self.uid[card]
        self.hub.place(self.reader(zone), uid)
        return uid

    def lift(self, zone: str) -> None:
        self.hub.remove(self.reader(zone))

    def events_text(self) -> str:
        return (self.session.folder / "events.jsonl").read_text(encoding="utf-8")

    def close(self) -> None:
        self.service.stop()
        self.thread.join(15)
        self.hub.close()


def browser_context(tmp_path_factory):
    """The tests' browser (the session-scoped ``chromium`` fixture of ``tests/conftest.py``):
    Debian's Chromium, headless, driven by Playwright, closed after the last test."""
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        context = launch_browser(playwright, str(tmp_path_factory.mktemp("chromium-profile")))
        try:
            yield context
        finally:
            context.close()


def launch_browser(playwright, user_data_dir: str | None = None):
    """Debian's Chromium, headless, with a fresh profile (a persistent context on a new folder)."""
    folder = user_data_dir or tempfile.mkdtemp(prefix="preftable-chromium-")
    return playwright.chromium.launch_persistent_context(folder, executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                         headless=True)


def shot(page, name: str) -> None:
    """The whole page as ``SCREENS/NAME.png`` if that folder exists: a picture for a reviewer's
    eyes, which no test reads, so it is not drawn when nobody asked for it."""
    if SCREENS.is_dir():
        page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)


def wait_live(page, timeout_ms: float = 15000) -> None:
    """Until the page's event stream is open (its status line says so)."""
    page.wait_for_function("() => document.getElementById('live-status').textContent === 'live'",
                           timeout=timeout_ms)
