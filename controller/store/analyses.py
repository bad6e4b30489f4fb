"""A session's ``analysis.jsonl``: the double-dummy analysis of each deal, one line a deal.

The format (docs/analysis.md, in the style of FORMATS.md's game log: JSON Lines,
appended, a torn last line dropped on reading)::

    {"deal": 3, "key": "9f2c4e0a1b7d3c55", "version": 1, "line": "best play: 7 for the declarer (played 6); ...",
     "analysis": {"number": 3, "kind": "contract", ...}}

``analysis`` is the deal's object of ``preftable analyse --json``, ``line`` its line for
people (the table page's history shows it); ``key`` is a digest of
what the analysis depends on (the deal's kind, game, declarer and every card of its
tricks), so a deal reopened by ``undo`` and finished otherwise is analysed again, and
``version`` that of :data:`~controller.core.analysis.ANALYSIS_VERSION`.  The newest line
of a deal wins.  Lines are written with the game log's safe helpers
(:mod:`controller.store.files`: no symlink followed, mode 0640), so a restart reads
what was done and does not redo it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from ..core.analysis import ANALYSIS_VERSION, DealAnalysis, analysis_from_dict
from .files import open_append, open_read

log = logging.getLogger(__name__)

ANALYSIS = "analysis.jsonl"
_KEYED = ("number", "dealer", "kind", "game", "declarer", "tricks", "complete", "claimed", "revoke")


def deal_key(entry: dict) -> str:
    """A digest of what a deal's analysis depends on (its summary entry's play)."""
    data = json.dumps([entry.get(name) for name in _KEYED], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(data.encode("ascii")).hexdigest()[:16]


class AnalysisFile:
    """The ``analysis.jsonl`` of one session folder."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / ANALYSIS
        self._known: dict[int, tuple[str, dict]] | None = None

    def _raw_lines(self) -> list[bytes]:
        """The file's lines as bytes (a missing file has none; one that cannot be read is
        logged and has none)."""
        try:
            with open_read(self.path) as fh:
                return fh.read().split(b"\n")
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.warning("%s: cannot read: %s", self.path, exc.strerror or exc)
            return []

    def read(self) -> dict[int, tuple[str, dict]]:
        """deal number -> (key, analysis object) of the lines on disk; a bad or torn line
        is skipped (a missing file is no line)."""
        known: dict[int, tuple[str, dict]] = {}
        for number, raw in enumerate(self._raw_lines(), 1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                deal, key, analysis = line["deal"], line["key"], line["analysis"]
                if line.get("version") != ANALYSIS_VERSION or not isinstance(analysis, dict):
                    continue
                analysis_from_dict(analysis)        # it must read back
            except (ValueError, KeyError, TypeError) as exc:
                log.info("%s:%d: skipped (%s)", self.path, number, exc)
                continue
            known[deal] = (key, analysis)
        return known

    def lines(self) -> dict[int, str]:
        """deal number -> its line for people ("best play: ..."), from the file as it is now."""
        out: dict[int, str] = {}
        for raw in self._raw_lines():
            try:
                line = json.loads(raw)
                out[int(line["deal"])] = str(line["line"])
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def known(self) -> dict[int, tuple[str, dict]]:
        if self._known is None:
            self._known = self.read()
        return self._known

    def cached(self, entry: dict) -> DealAnalysis | None:
        """The stored analysis of this deal as it now is, or None."""
        found = self.known().get(entry.get("number"))
        if found is None or found[0] != deal_key(entry):
            return None
        return analysis_from_dict(found[1], entry.get("taken") or {})

    def append(self, entry: dict, analysis: DealAnalysis) -> None:
        """Write one deal's line (appended and flushed; the file is made 0640 if missing)."""
        key = deal_key(entry)
        obj = analysis.to_dict()
        line = {"deal": analysis.number, "key": key, "version": ANALYSIS_VERSION, "line": analysis.line(),
                "analysis": obj}
        with open_append(self.path) as fh:
            fh.write((json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
        self.known()[analysis.number] = (key, obj)


class AnalysisLines:
    """The analysis lines of the session an output follows, read again only when its
    ``analysis.jsonl`` changed size: the table's outputs ask at every snapshot, and the
    file grows by one line a deal, off the table loop."""

    def __init__(self) -> None:
        self._seen: tuple[Path | None, int, dict[int, str]] = (None, -1, {})

    def _size(self, folder: Path) -> int:
        try:
            return (Path(folder) / ANALYSIS).stat().st_size
        except OSError:
            return -1

    def changed(self, folder: Path) -> bool:
        """Whether the file is not what the last :meth:`of` read (a new line, a new session)."""
        return self._seen[:2] != (Path(folder), self._size(folder))

    def of(self, folder: Path) -> dict[int, str]:
        """deal number -> line for people, of the session in ``folder`` (none without the file)."""
        folder = Path(folder)
        size = self._size(folder)
        if self._seen[:2] != (folder, size):
            self._seen = (folder, size, AnalysisFile(folder).lines() if size >= 0 else {})
        return self._seen[2]

    def last(self, folder: Path) -> dict | None:
        """The line of the session's last analysed deal, ``{"deal": n, "line": text}``, or None."""
        lines = self.of(folder)
        if not lines:
            return None
        deal = max(lines)
        return {"deal": deal, "line": lines[deal]}
