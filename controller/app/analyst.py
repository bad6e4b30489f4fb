"""The table's analyst: each ended deal analysed double dummy, off the table loop.

A threaded bus subscriber (:mod:`controller.app.bus`): it reads the ended deals of each
snapshot, hands each deal not analysed yet to one child process (the search is CPU
work: in a thread it would hold the interpreter lock the table loop needs), and appends
each result to the session's ``analysis.jsonl`` (:mod:`controller.store.analyses`), so
a restart does not redo it.  The loop never waits for it: a deal is handed over and
collected later, and the child is ended when the subscriber closes.  docs/analysis.md
says what is computed.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from ..core.analysis import analyse_entry
from ..core.config import Rules
from ..store.analyses import AnalysisFile, deal_key

log = logging.getLogger(__name__)


def _child_start() -> None:
    """The first thing the analysis child runs.  It dies with the table: a SIGKILLed table
    (a power cut of the process, the soak's kill) must not leave a child blocked for ever on
    the table's queue, holding memory on a 1 GB Pi.  The watch is multiprocessing's own
    sentinel of the parent process (readable once the parent is gone); prctl's parent-death
    signal would not do, as it follows the thread that started the child, and the bus thread
    that does ends before the table.  Ctrl-C at the terminal reaches the whole process group:
    it is the table's to handle (it closes the analyst, which finishes the deal in hand), so
    the child ignores it instead of printing a KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    table = multiprocessing.parent_process()
    if table is not None:
        threading.Thread(target=_end_with, args=(table.sentinel,), name="analysis-child-watch",
                         daemon=True).start()


def _end_with(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(0)                 # the table is gone: nobody to write the result for


class Analyst:
    """Analyses the deals of one table's sessions as they end."""

    name = "analysis"

    def __init__(self, rules: Rules, players: int):
        self.rules, self.players = rules, players
        self._pool: ProcessPoolExecutor | None = None
        self._folder: Path | None = None
        self._file: AnalysisFile | None = None
        self._running: dict[tuple[int, str], tuple[dict, Future]] = {}
        self._done: set[tuple[int, str]] = set()
        self._seen = 0                          # ended deals looked at (the last may change: undo)

    def receive(self, item) -> None:
        folder = item.session_dir
        if folder is None:
            return
        if folder != self._folder:              # a new pulka: its own file
            self._folder, self._file = folder, AnalysisFile(folder)
            self._done = {(n, key) for n, (key, _) in self._file.known().items()}
            self._seen = 0
        deals = item.snapshot.deals
        start = max(0, min(self._seen, len(deals)) - 1)
        self._seen = len(deals)
        for index in range(start, len(deals)):
            entry = deals[index]            # an ended deal that is not complete was abandoned
            key = (entry["number"], deal_key(entry))
            if key in self._done or key in self._running:
                continue
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_child_start)
            self._running[key] = (dict(entry), self._pool.submit(analyse_entry, entry, self.rules, self.players,
                                                                   not entry.get("complete")))

    def tick(self, now: float) -> None:
        for key, (entry, future) in list(self._running.items()):
            if not future.done():
                continue
            del self._running[key]
            if future.cancelled():          # never started (the table stopped): a restart does it
                continue
            self._done.add(key)
            try:
                result = future.result()
            except Exception as exc:        # noqa: BLE001 - a failed analysis must not stop the table
                log.error("deal %d: analysis failed (%s: %s)", key[0], type(exc).__name__, exc)
                continue
            self._file.append(entry, result)

    def wait(self) -> None:
        """Collect every deal handed over (for tests and a clean stop)."""
        for _, future in list(self._running.values()):
            future.exception()
        self.tick(0.0)

    def close(self) -> None:
        if self._pool is not None:
            # the deal being analysed is finished and written (the table's last deal, often);
            # those not started are left for the next start
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self.tick(0.0)
