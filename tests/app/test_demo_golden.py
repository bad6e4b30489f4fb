"""The demo's summary for a fixed seed is a golden file: the whole path -- simulated players,
emulated hub on a pty, host link, tracker, game log -- gives the same pulka every run.

Run at the demo's highest speed on a virtual clock: the players' pauses pass at once and the
emulated hub's firmware runs on the same time, so the whole path runs as fast as the code does,
in the order a real-time run has (``preftable demo``'s own test runs it on real time).  After a
deliberate change of the summary (a field added by a contract), regenerate it with
``PREFTABLE_UPDATE_GOLDEN=1`` and review the diff."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from controller.app.demo import run_demo
from controller.app.options import MAX_SPEED
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig

GOLDEN = Path(__file__).parent / "data" / "demo_seed13_summary.json"


def test_the_demo_summary_for_seed_13_is_the_golden_one(tmp_path):
    result = run_demo(deals=2, speed=MAX_SPEED, seed=13, log_dir=tmp_path, game=GameConfig(), stream=io.StringIO(),
                      entry="page", clock=VirtualClock())
    got = json.dumps(result["summary"], indent=1, sort_keys=True)
    if os.environ.get("PREFTABLE_UPDATE_GOLDEN"):
        GOLDEN.write_text(got, encoding="utf-8")
    assert json.loads(got) == json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert result["recorded"]["complete"] == 2
    # the demo's default game is the whole game as a group with a phone enters it: seed 13's two
    # deals are contracts entered by their result line, the first ended by a claim
    deals = result["summary"]["deals"]
    assert [d["kind"] for d in deals] == ["contract", "contract"] and deals[0]["claimed"] is not None
