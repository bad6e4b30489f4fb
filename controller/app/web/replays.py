"""Past sessions' pulkas for the page, replayed in a process of their own.

``GET /sessions/<name>/pulka`` of an unfinished session replays its whole log
through the deal tracker: CPU-bound work that, inside the table's process,
would hold the GIL against the table loop and the hub link (a looping client
made every card late and the link miss its heartbeats).  So the replay, and
the rendering of the pulka it gives, run in :class:`ReplayPool`: a
:class:`concurrent.futures.ProcessPoolExecutor` of :data:`WORKERS` process
(started by a fork server, at a lower priority), never in the table's process.

- **Bounded**: at most :data:`PENDING` pulkas being made or waiting; beyond
  that the page answers 503 with ``Retry-After`` (:class:`PoolBusy`).  The
  same session asked by several clients at once is made once.  A pulka
  taking longer than :data:`REPLAY_S` is given up (503).
- **Cached** by what the session's files are: the ``events.jsonl`` and
  ``summary.json`` (device, inode, size, modification time), the newest
  :data:`CACHED` pulkas; a session still being played changes its log and is
  made again, a finished one never.

Contract: README "The live table page" (``/sessions``), FORMATS.md "Game log".
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

log = logging.getLogger(__name__)

WORKERS = 1                 # a replay at a time: the table keeps the other core
PENDING = 4                 # pulkas being made or waiting, at most (beyond: 503)
CACHED = 32
REPLAY_S = 60.0
NICE = 10                   # the workers' priority below the table's
SUMMARY_BYTES = 8 << 20     # a summary.json larger than this is not the table's


class PoolBusy(Exception):
    """Too many pulkas being made: the client is to come back later."""


class ReplayFailed(Exception):
    """The session cannot be read (its message says why, in one line)."""


def _lower_priority() -> None:
    try:
        os.nice(NICE)
    except OSError:
        pass


def session_pulka_html(folder: str, names_from_config: bool) -> tuple[bool, str]:
    """In a worker: the session's pulka as HTML sections (``(True, html)``), or
    ``(False, why)`` when it cannot be read.  Finished sessions read their ``summary.json``,
    the others are replayed from their log."""
    from ...core.errors import PreftableError
    from ...store.analyses import AnalysisFile
    from ...store.files import read_bounded
    from ...store.gamelog import SUMMARY, SessionLog
    from .. import report

    path = Path(folder)
    try:
        session = SessionLog(path)
        game = session.game_config()
        try:
            summary = json.loads(read_bounded(path / SUMMARY, SUMMARY_BYTES, folder=True))
        except FileNotFoundError:   # not finished (or still being played): the pulka so far
            tracker, _ = session.replay(game)
            summary = tracker.report_summary()
        names = dict(game.table.names) if names_from_config else {}
        return True, report.pulka_sections(summary, names, rules=game.rules, analysis=AnalysisFile(path).lines())
    except (PreftableError, OSError, ValueError, RecursionError) as exc:
        return False, getattr(exc, "strerror", None) or str(exc)


def _identity(folder: Path) -> tuple:
    """What the pulka depends on: the log's, the summary's and the analysis' identity and size."""
    from ...store.analyses import ANALYSIS
    from ...store.gamelog import EVENTS, SUMMARY

    marks = []
    for name in (EVENTS, SUMMARY, ANALYSIS):
        try:
            st = os.lstat(folder / name)
            marks.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            marks.append(None)
    return (str(folder), *marks)


class ReplayPool:
    """The page's replays of past sessions: bounded, cached, in their own process."""

    def __init__(self, *, workers: int = WORKERS, pending: int = PENDING, cached: int = CACHED,
                 timeout_s: float = REPLAY_S):
        self.workers, self.pending, self.cached, self.timeout_s = workers, pending, cached, timeout_s
        self._executor: ProcessPoolExecutor | None = None
        self._cache: OrderedDict[tuple, str] = OrderedDict()
        self._making: dict[tuple, asyncio.Future] = {}
        self.counters = {"made": 0, "hits": 0, "busy": 0}

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # a fork server, not fork: the table's process has threads (a fork of it could hold
            # a lock forever); the server starts clean and forks the workers
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__])
            self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context,
                                                 initializer=_lower_priority)
        return self._executor

    async def pulka_html(self, folder: Path, names_from_config: bool) -> str:
        """The pulka's HTML sections; :class:`PoolBusy` or :class:`ReplayFailed` when not."""
        key = (*_identity(folder), names_from_config)
        html = self._cache.get(key)
        if html is not None:
            self._cache.move_to_end(key)
            self.counters["hits"] += 1
            return html
        making = self._making.get(key)
        if making is None:
            if len(self._making) >= self.pending:
                self.counters["busy"] += 1
                raise PoolBusy(f"{len(self._making)} pulkas are being made")
            loop = asyncio.get_running_loop()
            making = asyncio.ensure_future(loop.run_in_executor(self._pool(), session_pulka_html,
                                                                str(folder), names_from_config))
            self._making[key] = making
            making.add_done_callback(lambda _: self._making.pop(key, None))
        try:
            ok, text = await asyncio.wait_for(asyncio.shield(making), self.timeout_s)
        except TimeoutError:
            raise PoolBusy(f"the pulka took over {self.timeout_s:g} s") from None
        if not ok:
            raise ReplayFailed(text)
        self.counters["made"] += 1
        self._cache[key] = text
        while len(self._cache) > self.cached:
            self._cache.popitem(last=False)
        return text

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


__all__ = ["ReplayPool", "PoolBusy", "ReplayFailed", "session_pulka_html"]
