"""Sessions played as the service plays them, and the checks every resumed log must pass.

``play`` appends events with their derived lines and checkpoints exactly as
:meth:`TableService.handle` does; ``consistent`` is FORMATS.md's promise about a
game log: replaying only its table-event lines reproduces every derived line,
and the resumed table is the replayed one.
"""

from __future__ import annotations

import json
from pathlib import Path

from controller.core.config import GameConfig
from controller.core.events import TableEvent, read_events
from controller.core.tracker import DealTracker
from controller.app.sim import Noise, TableSimulator
from controller.store.gamelog import SessionLog

ROOT = Path(__file__).resolve().parents[2]
GAME = GameConfig()


def events(deals: int, seed: int = 1, t0: float = 0.0) -> list[TableEvent]:
    sim = TableSimulator(GAME, seed=seed, noise=Noise.demo())
    out = list(sim.deals(deals))
    if t0:
        out = [TableEvent(e.t + t0, e.event, e.zone, e.uid, e.card, e.button) for e in out]
    return out


def play(session: SessionLog, tracker: DealTracker, stream) -> None:
    """Feed and log events as the service does (a checkpoint when a deal ends)."""
    for event in stream:
        signals = tracker.feed(event)
        ended = any(s.kind == "deal" for s in signals)
        session.append(event, signals, tracker.checkpoint() if ended else None)


def new_session(log_dir: Path, deals: int, seed: int = 1) -> tuple[SessionLog, DealTracker]:
    session = SessionLog.create(log_dir, GAME, None)
    tracker = DealTracker(GAME)
    play(session, tracker, events(deals, seed))
    session.close()
    return session, tracker


def reproduce(lines: list[str]) -> tuple[DealTracker, list[str]]:
    """The lines a replay of the table-event lines writes, and its tracker."""
    tracker = DealTracker(GAME)
    out = []
    for ev in read_events(lines, tracker.zones):
        out.append(json.dumps(ev.to_dict(), ensure_ascii=False, separators=(", ", ": ")))
        out += [json.dumps(s.to_dict(), ensure_ascii=False, separators=(", ", ": "))
                for s in tracker.feed(ev)]
    return tracker, out


def consistent(session: SessionLog, resumed: DealTracker) -> None:
    """FORMATS.md: every derived line reproduced, the table as a replay leaves it."""
    data = session.events_path.read_bytes()
    assert data == b"" or data.endswith(b"\n")
    lines = data.decode("utf-8").splitlines()
    replayed, out = reproduce(lines)
    assert out == lines
    assert resumed.summary() == replayed.summary()


def table_lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line and '"kind"' not in line)


def store_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name.startswith("controller.store") and r.levelname == "WARNING"]
