"""The replay's output stays byte for byte what it was before the speed work.

Two committed sessions (tests/core/data/perf/, made by make_sessions.py: a noisy
mixed contract game and a noisy raspasovka, with edge lines spliced in) are
replayed through ``controller.store.replay.replay_file``; the summary JSON, every
skipped line's number and message, and every signal with its line number are
compared with golden files written by the code before the fast paths existed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from controller.core.config import GameConfig, Rules, Table
from controller.store.replay import replay_file

DATA = Path(__file__).resolve().parent / "data" / "perf"
CONFIGS = {"mixed": GameConfig(Table(), Rules(bidding=True)), "raspasovka": GameConfig()}


def replay_outputs(name: str, tmp_path: Path) -> dict:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(gzip.decompress((DATA / f"{name}.jsonl.gz").read_bytes()))
    errors, signals = [], []
    tracker = replay_file(path, CONFIGS[name], on_error=lambda n, m: errors.append([n, m]),
                          on_signals=lambda n, s: signals.extend([n, x.to_dict()] for x in s))
    stream = json.dumps(signals, ensure_ascii=False).encode()
    return {"summary": json.dumps(tracker.summary(), ensure_ascii=False, indent=2),
            "errors": errors, "signals": len(signals),
            "signals_sha256": hashlib.sha256(stream).hexdigest()}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_replay_matches_golden(name, tmp_path):
    golden = json.loads((DATA / f"{name}.golden.json").read_text(encoding="utf-8"))
    got = replay_outputs(name, tmp_path)
    assert got["errors"] == golden["errors"]
    assert got["summary"] == golden["summary"]
    assert got["signals"] == golden["signals"]
    assert got["signals_sha256"] == golden["signals_sha256"]


def test_golden_sessions_exercise_the_edges():
    """The golden files are not vacuous: lines skipped for many reasons, and deals played."""
    mixed = json.loads((DATA / "mixed.golden.json").read_text(encoding="utf-8"))
    messages = {m.split(":")[0].split(" (")[0] for _, m in mixed["errors"]}
    assert {"not valid JSON", "not UTF-8 text"} <= messages and len(messages) >= 8
    assert len(json.loads(mixed["summary"])["deals"]) >= 10
