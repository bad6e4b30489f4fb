"""The analysis of a replayed game log, for ``preftable analyse`` and ``replay --analyse``.

After a replay (a session folder's ``events.jsonl`` with its own config and deck, as
``replay`` does), each deal is analysed (``controller.core.analysis``,
docs/analysis.md): what best play would have made, and the tricks each card cost.
A session folder's ``analysis.jsonl`` (written by the table) is used for the deals it
already holds.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.analysis import DealAnalysis, analyse_deals, tracker_deals
from ..core.errors import LogError

#: deals after which a long analysis says how far it is (on a terminal)
PROGRESS_FROM = 20


def events_and_folder(target: str) -> tuple[str, Path | None]:
    """The events file named by ``target`` (an events file, ``-``, or a session folder)
    and the session folder whose ``analysis.jsonl`` may hold analyses made before."""
    from ..store.gamelog import EVENTS

    if target == "-":
        return target, None
    path = Path(target)
    if path.is_dir():
        if not (path / EVENTS).is_file():
            raise LogError(f"{path}: not a session folder (no {EVENTS})")
        return str(path / EVENTS), path
    return target, path.parent if path.name == EVENTS else None


def analyse_tracker(tracker, config, folder: Path | None = None) -> list[DealAnalysis]:
    """Every deal of a replayed tracker, analysed (or read from ``folder``'s analysis.jsonl)."""
    from ..store.analyses import AnalysisFile

    known = AnalysisFile(folder).cached if folder is not None and (folder / "analysis.jsonl").is_file() else None
    deals = list(tracker_deals(tracker))
    progress = None
    if sys.stderr.isatty() and len(deals) >= PROGRESS_FROM:
        def progress(done: int) -> None:
            sys.stderr.write(f"\ranalysing: {done:,} of {len(deals):,} deals")
            sys.stderr.flush()
    results = analyse_deals(deals, config.rules, config.table.players, known, progress)
    if progress is not None:
        sys.stderr.write("\n")
    return results


def analysis_text(results: list[DealAnalysis], summary: dict) -> str:
    """One line per deal for people."""
    entries = {d.get("number"): d for d in summary.get("deals", [])}
    out = []
    for result in results:
        entry = entries.get(result.number, {})
        what = result.kind or "deal"
        if entry.get("game") and entry["game"] != what:
            what += f" {entry['game']}"
        if entry.get("declarer"):
            what += f" by {entry['declarer']}"
        out.append(f"deal {result.number} ({what}): {result.line()}\n")
    return "".join(out)


def add_replay_analyses(summary: dict, results: list[DealAnalysis]) -> dict:
    """``replay --json --analyse``: each deal entry gains its analysis under ``"analysis"``."""
    by_number = {r.number: r.to_dict() for r in results}
    for entry in summary["deals"]:
        entry["analysis"] = by_number.get(entry.get("number"))
    return summary
