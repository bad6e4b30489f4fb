"""The table service: readers -> tracker -> LEDs, display, game log.

One loop thread owns the tracker: sources put table events on a queue, the
loop feeds them to the tracker, appends them with their derived lines to the
game log, renders the new state on every output, polls the buttons, ticks the
LED patterns and pings systemd's watchdog.  A crash loses nothing that was
logged: :meth:`TableService.open_session` resumes the newest unfinished
session exactly where its last whole line left it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from ..core.deck import Deck
from ..core.events import TableEvent
from ..store.files import LogDirLock
from ..store.gamelog import SessionLog, SessionUnreadable
from .sdnotify import Notifier
from .settings import Settings
from .outputs import Output
from .sources import EventSource, SessionClock
from ..core.tracker import DealTracker, Signal
from ..core.view import Indications, indications

log = logging.getLogger(__name__)

MISTAKE_BEEP_MS = 300
NEW_PULKA = "new_pulka"


class TableService:
    """Wires one source, the tracker, the outputs and the game log together."""

    def __init__(self, settings: Settings, deck: Deck | None, log_dir: Path, *,
                 outputs: Sequence[Output] = (), buttons=None, notifier: Notifier | None = None,
                 on_signals: Callable[[TableEvent, list[Signal]], None] | None = None,
                 on_finished: Callable[[dict, Path], None] | None = None):
        self.settings = settings
        self.deck = deck
        self.log_dir = log_dir
        self.outputs = list(outputs)
        self.buttons = buttons
        if buttons is not None:
            from hw.indicators import to_event
            self._button_event = to_event
        self.notifier = notifier or Notifier()
        self.on_signals = on_signals
        self.on_finished = on_finished
        self.queue: queue.Queue = queue.Queue()
        self.stop_event = threading.Event()
        self.session: SessionLog | None = None
        self._lock: LogDirLock | None = None
        self.tracker: DealTracker | None = None
        self.replayed = 0
        self.last_t = 0.0
        self.clock = SessionClock()
        self.indications: Indications | None = None

    # --- sessions ----------------------------------------------------------------

    def open_session(self, new: bool = False) -> SessionLog:
        """Resume the newest unfinished session (unless ``new``), else start one."""
        if self._lock is None:      # one service per log dir (issue 10): refused, not interleaved
            self._lock = LogDirLock(self.log_dir).acquire()
        session = None if new else SessionLog.newest_unfinished(self.log_dir)
        if session is not None:
            try:
                game = session.game_config()
                deck = session.deck() or self.deck
                self.tracker, self.replayed, self.last_t = session.resume(game, deck)
            except SessionUnreadable as exc:    # set aside, so a restart does not fail forever
                session.set_aside(str(exc))
                session = None
        if session is not None:
            if game != self.settings.game:
                log.warning("%s: resuming with the rules the session started with, not the config's",
                            session.folder)
            log.warning("resumed %s after %d table events", session.folder, self.replayed)
        else:
            session = SessionLog.create(self.log_dir, self.settings.game, self.deck)
            self.tracker = DealTracker(self.settings.game, self.deck)
            self.replayed, self.last_t = 0, 0.0
        self.session = session
        self.clock = SessionClock(self.last_t)
        return session

    def new_pulka(self) -> None:
        """Finish the session (its summary.json) and start a new one."""
        if self.session is not None:
            summary = self.tracker.summary()
            path = self.session.finish(summary)
            log.info("pulka closed: %s", path)
            if self.on_finished is not None:
                self.on_finished(summary, path)
        self.open_session(new=True)
        self._render(beep_ms=0)

    # --- the loop ----------------------------------------------------------------

    def sink(self, event: TableEvent) -> None:
        """Called by sources from their threads."""
        self.queue.put(event)

    def handle(self, event: TableEvent) -> list[Signal]:
        if event.t < self.last_t:
            event = replace(event, t=self.last_t)
        self.last_t = event.t
        signals = self.tracker.feed(event)
        ended = any(s.kind == "deal" for s in signals)
        self.session.append(event, signals, self.tracker.checkpoint() if ended else None)
        if self.on_signals is not None:
            self.on_signals(event, signals)
        beep = MISTAKE_BEEP_MS if any(s.kind == "mistake" for s in signals) else 0
        self._render(beep)
        return signals

    def _render(self, beep_ms: int) -> None:
        ind = indications(self.tracker, self.settings.game.table.names, beep_ms)
        self.indications = ind
        now = time.monotonic()
        for out in self.outputs:
            out.show(ind, now)

    def _poll_buttons(self, now: float) -> None:
        to_event = self._button_event
        for press in self.buttons.poll(now):
            if press.held and press.name == "new_deal":
                self.queue.put(NEW_PULKA)
                continue
            event = to_event(press)
            if event is not None:
                self.queue.put(replace(event, t=self.clock()))

    def run(self, source: EventSource, *, tick_s: float = 0.02, until: Callable[[], bool] | None = None) -> None:
        """Run until :meth:`stop` (or ``until()`` is true), then flush and close."""
        if self.session is None:
            self.open_session()
        source.start(self.sink)
        self._render(0)
        self.notifier.ready(f"session {self.session.folder.name}")
        try:
            while not self.stop_event.is_set():
                try:
                    item = self.queue.get(timeout=tick_s)
                except queue.Empty:
                    item = None
                while item is not None:
                    if item == NEW_PULKA:
                        self.new_pulka()
                    else:
                        self.handle(item)
                    try:
                        item = self.queue.get_nowait()
                    except queue.Empty:
                        item = None
                now = time.monotonic()
                if self.buttons is not None:
                    self._poll_buttons(now)
                for out in self.outputs:
                    out.tick(now)
                self.notifier.ping(now)
                if until is not None and until():
                    break
        finally:
            self.notifier.stopping()
            source.stop()
            self.session.close()
            if self._lock is not None:
                self._lock.release()
                self._lock = None
            for out in self.outputs:
                out.close()
            if self.buttons is not None:
                self.buttons.close()

    def stop(self) -> None:
        self.stop_event.set()
