"""The table service: readers -> table events -> tracker -> game log, then the bus.

One loop thread owns the tracker: sources put table events on a queue, the
loop feeds them to the tracker, appends them with their derived lines to the
game log, and publishes ``(event, signals, snapshot)`` on the bus
(:mod:`controller.app.bus`) to every output -- LEDs, displays, the terminal
view, the web page, the club feed.  It also polls the buttons, ticks the
inline outputs' LED patterns and pings systemd's watchdog.  Nothing but this
thread touches the tracker: outputs read the frozen snapshot.  A crash loses
nothing that was logged: :meth:`TableService.open_session` resumes the newest
unfinished session exactly where its last whole line left it.  Time is the
``clock`` the service is given (``time.monotonic``): the session clock that stamps
button presses and page controls counts on it, and the loop's ticks (buttons, LED
patterns, the watchdog) read it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..core.deck import Deck
from ..core.errors import LogError
from ..core.events import TableEvent
from ..core.snapshot import NO_LINK, SnapshotBuilder, TableSnapshot
from ..core.tracker import DealTracker, Signal
from ..store.files import LogDirLock, write_atomic
from ..store.gamelog import CONFIG, SessionLog, SessionUnreadable
from .bus import Bus, Published
from .outputs import Output
from .sdnotify import Notifier
from .settings import Settings
from .sources import EventSource, SessionClock

log = logging.getLogger(__name__)

MISTAKE_BEEP_MS = 300
FULL_DISK_WAIT_S = 8.0           # stopped while the log cannot be written: wait this long for space
                                 # (under the unit's TimeoutStopSec=15 and WatchdogSec=10)
RETRY_WRITE_S = 1.0              # lines kept in memory (a full disk) are tried again this often
NEW_PULKA = "new_pulka"          # queue items that are not table events
_LINK = "link"
_NOTICE = "notice"
_NAMES = "names"
MAX_NAME = 20                    # a player's name, in characters (the page's field; the display shows 5)


class TableService:
    """Wires one source, the tracker, the outputs and the game log together."""

    def __init__(self, settings: Settings, deck: Deck | None, log_dir: Path, *,
                 outputs: Sequence[Output] = (), buttons=None, notifier: Notifier | None = None,
                 on_finished: Callable[[dict, Path], None] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.deck = deck
        self.log_dir = log_dir
        self.outputs = list(outputs)   # subscribed to the bus when run() starts
        self.bus = Bus()
        self.buttons = buttons
        if buttons is not None:
            from hw.indicators import to_event
            self._button_event = to_event
        self.notifier = notifier or Notifier()
        self.on_finished = on_finished
        self._monotonic = clock
        self.queue: queue.Queue = queue.Queue()
        self.stop_event = threading.Event()
        self.session: SessionLog | None = None
        self._lock: LogDirLock | None = None
        self.tracker: DealTracker | None = None
        self.replayed = 0
        self.last_t = 0.0
        self.clock = SessionClock(monotonic=clock)
        self.seq = 0
        self.link: dict = dict(NO_LINK)
        self.notice = ""               # a line the display shows before the first deal (the web PIN)
        self.snapshot: TableSnapshot | None = None
        self._snapshots = SnapshotBuilder()
        self.full_disk_wait_s = FULL_DISK_WAIT_S
        self._retry_at = 0.0

    # --- sessions ----------------------------------------------------------------

    def take_lock(self) -> None:
        """The log dir's lock, before anything is read or written there: one service per log
        dir, refused (one line) rather than interleaved, and a refused start writes nothing
        (``run --new`` closes the previous pulka only once it holds the lock)."""
        if self._lock is None:
            self._lock = LogDirLock(self.log_dir).acquire()

    def open_session(self, new: bool = False) -> SessionLog:
        """Resume the newest unfinished session (unless ``new``), else start one."""
        self.take_lock()
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
            if replace(game, table=replace(game.table, names={})) != \
                    replace(self.settings.game, table=replace(self.settings.game.table, names={})):
                log.warning("%s: resuming with the rules the session started with, not the config's",
                            session.folder)
            log.warning("resumed %s after %d table events", session.folder, self.replayed)
        else:
            session = SessionLog.create(self.log_dir, self.settings.game, self.deck)
            self.tracker = DealTracker(self.settings.game, self.deck)
            self.replayed, self.last_t = 0, 0.0
        self.session = session
        self.clock = SessionClock(self.last_t, self._monotonic)
        self.seq = self.replayed
        self._snapshots = SnapshotBuilder(session.folder.name)
        return session

    def new_pulka(self) -> None:
        """Finish the session (its summary.json) and start a new one."""
        if self.session is not None:
            summary = self.tracker.summary()
            try:
                path = self.session.finish(summary)
            except LogError as exc:         # a full disk: the pulka stays open, the game goes on
                log.error("the pulka is not closed: %s", exc)
                self._publish(None, [])
                return
            log.info("pulka closed: %s", path)
            if self.on_finished is not None:
                self.on_finished(summary, path)
        self.open_session(new=True)
        self._publish(None, [])

    # --- the loop ----------------------------------------------------------------

    def sink(self, event: TableEvent) -> None:
        """Called by sources from their threads."""
        self.queue.put(event)

    def submit(self, event: TableEvent) -> None:
        """A control line from outside the readers (a web page): thread-safe, stamped with
        the session clock like a button press."""
        self.queue.put(event._replace(t=self.clock()))

    def set_notice(self, text: str) -> None:
        """A line for the table's display before the session's first deal, from any thread
        (the web page's PIN, so the players can read it)."""
        self.queue.put((_NOTICE, text, ""))

    def close_pulka(self) -> None:
        """Close the pulka (its summary.json) and start a new one, from any thread: what the
        held ``new_deal`` button does (the page's "Close the pulka" comes here too)."""
        self.queue.put(NEW_PULKA)

    def set_names(self, names: Mapping[str, str]) -> None:
        """Name the players, from any thread (the page): seat -> name, an empty name gives the
        seat its seat name back.  Saved in the session's config.toml, so a resume, a replay,
        the pulka report and the next pulka keep them; every output shows them at once."""
        seats = self.settings.game.table.seats
        unknown = [seat for seat in names if seat not in seats]
        if unknown:
            raise ValueError(f"no seat {unknown[0]!r} at this table ({', '.join(seats)})")
        clean = {seat: " ".join(str(name).split())[:MAX_NAME] for seat, name in names.items()}
        self.queue.put((_NAMES, clean, ""))

    def _rename(self, names: Mapping[str, str]) -> None:
        merged = {**self.tracker.config.table.names, **names}
        merged = {seat: name for seat, name in merged.items() if name}
        named = lambda game: replace(game, table=replace(game.table, names=merged))
        self.settings = replace(self.settings, game=named(self.settings.game))
        self.tracker.config = named(self.tracker.config)
        if self.session is not None:
            write_atomic(self.session.folder / CONFIG, self.tracker.config.to_toml().encode("utf-8"))
        log.info("players named: %s", ", ".join(f"{s} {n}" for s, n in merged.items()) or "none")
        self._publish(None, [])

    def set_link(self, state: str, detail: str = "") -> None:
        """The reader link's state (``none``/``waiting``/``connected``), from any thread;
        the loop publishes it."""
        self.queue.put((_LINK, state, detail))

    def handle(self, event: TableEvent) -> list[Signal]:
        if event.t < self.last_t:
            event = event._replace(t=self.last_t)
        self.last_t = event.t
        signals = self.tracker.feed(event)
        ended = any(s.kind == "deal" for s in signals)
        self.session.append(event, signals, self.tracker.checkpoint() if ended else None)
        self.seq += 1
        self._publish(event, signals)
        return signals

    def _publish(self, event: TableEvent | None, signals: list[Signal]) -> None:
        beep = MISTAKE_BEEP_MS if any(s.kind == "mistake" for s in signals) else 0
        session = self.session
        storage = {"full": session is not None and session.failing is not None,
                   "waiting": session.waiting if session is not None else 0}
        snapshot = self._snapshots.build(self.tracker, seq=self.seq, link=self.link, beep_ms=beep,
                                         notice=self.notice, storage=storage)
        self.snapshot = snapshot
        self.bus.publish(Published(event, tuple(signals), snapshot,
                                   self.session.folder if self.session is not None else None))

    def _poll_buttons(self, now: float) -> None:
        to_event = self._button_event
        for press in self.buttons.poll(now):
            if press.held and press.name == "new_deal":
                self.queue.put(NEW_PULKA)
                continue
            event = to_event(press)
            if event is not None:
                self.queue.put(event._replace(t=self.clock()))

    def run(self, source: EventSource, *, tick_s: float = 0.02, until: Callable[[], bool] | None = None) -> None:
        """Run until :meth:`stop` (or ``until()`` is true), then flush and close."""
        if self.session is None:
            self.open_session()
        for out in self.outputs:
            self.bus.subscribe(out, inline=getattr(out, "inline", False))
        source.start(self.sink)
        self.notifier.ready(f"session {self.session.folder.name}")
        self._publish(None, [])        # after READY: the first snapshot reads every ended deal
        try:
            while not self.stop_event.is_set():
                try:
                    item = self.queue.get(timeout=tick_s)
                except queue.Empty:
                    item = None
                while item is not None:
                    if item == NEW_PULKA:
                        self.new_pulka()
                    elif isinstance(item, tuple) and item[0] == _LINK:
                        self.link = {"state": item[1], "detail": item[2]}
                        self._publish(None, [])
                    elif isinstance(item, tuple) and item[0] == _NAMES:
                        self._rename(item[1])
                    elif isinstance(item, tuple) and item[0] == _NOTICE:
                        self.notice = item[1]
                        self._publish(None, [])
                    else:
                        self.handle(item)
                    try:
                        item = self.queue.get_nowait()
                    except queue.Empty:
                        item = None
                now = self._monotonic()
                if self.session.waiting and now >= self._retry_at:     # space may be back
                    self._retry_at = now + RETRY_WRITE_S
                    if self.session.retry():
                        self._publish(None, [])
                if self.buttons is not None:
                    self._poll_buttons(now)
                self.bus.tick(now)
                self.notifier.ping(now)
                if until is not None and until():
                    break
        finally:
            self.notifier.stopping()
            try:
                # the outputs draw what they still hold while the readers' link is up (a view
                # drawn after the link stopped showed "waiting for hub" at the end)
                self.bus.close()
            finally:
                source.stop()
                self.session.close(wait_s=self.full_disk_wait_s)
                if self._lock is not None:
                    self._lock.release()
                    self._lock = None
                if self.buttons is not None:
                    self.buttons.close()

    def stop(self) -> None:
        self.stop_event.set()
