"""``preftable analyse`` and ``replay --analyse``: the JSON shape, the session folder, bad inputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from table_script import DEAL_A, event_lines

import conftest

from controller.core.config import GameConfig, Rules, Table
from controller.store.analyses import ANALYSIS, deal_key

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "core"))       # the mixed games of contract_games.py
from contract_games import MixedGame  # noqa: E402


def cli(*args):
    """``preftable ARGS`` called in this process: its exit status, stdout and stderr (log lines included)."""
    return conftest.cli(args)


def contract_session(folder: Path) -> Path:
    """A session folder (events.jsonl, config.toml) of two deals: a raspasovka and a contract."""
    cfg = GameConfig(Table(), Rules(bidding=True))
    folder.mkdir()
    events = list(MixedGame(cfg, seed=5).deals(2))
    (folder / "events.jsonl").write_text("".join(e.to_json() + "\n" for e in events))
    (folder / "config.toml").write_text(cfg.to_toml())
    return folder


def check_shape(doc: dict) -> None:
    assert list(doc) == ["deals"]
    for deal in doc["deals"]:
        assert list(deal) == ["number", "kind", "analysed", "reason", "dd", "cards"]
        if not deal["analysed"]:
            assert isinstance(deal["reason"], str) and deal["dd"] is None and deal["cards"] == []
            continue
        assert deal["reason"] is None
        if deal["kind"] == "raspasovka":
            assert list(deal["dd"]) == ["guaranteed"] and len(deal["dd"]["guaranteed"]) == 3
        else:
            assert list(deal["dd"]) == ["declarer", "declarer_tricks"]
        assert len(deal["cards"]) == 30
        for card in deal["cards"]:
            assert list(card) == ["trick", "seat", "card", "loss"]
            assert 1 <= card["trick"] <= 10 and card["loss"] >= 0


def test_analyse_session_folder_json(tmp_path):
    folder = contract_session(tmp_path / "s")
    res = cli("analyse", folder, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    check_shape(doc)
    assert [d["kind"] for d in doc["deals"]] == ["raspasovka", "contract"]
    assert all(d["analysed"] for d in doc["deals"])
    assert "the session's own config.toml" in res.stderr
    # replay --json --analyse carries the same objects, deal by deal
    res = cli("replay", folder / "events.jsonl", "--json", "--analyse")
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert [d["analysis"] for d in summary["deals"]] == doc["deals"]


def test_analyse_reads_the_sessions_analysis_file(tmp_path):
    """A deal already in analysis.jsonl is not analysed again (its stored line is used)."""
    folder = contract_session(tmp_path / "s")
    first = json.loads(cli("analyse", folder, "--json").stdout)
    entry = json.loads(cli("replay", folder / "events.jsonl", "--json").stdout)["deals"][1]
    marked = dict(first["deals"][1], cards=[dict(c) for c in first["deals"][1]["cards"]])
    marked["cards"][0]["loss"] = 7          # a mark only a stored line can carry
    line = {"deal": 2, "key": deal_key(entry), "version": 1, "analysis": marked}
    (folder / ANALYSIS).write_text(json.dumps(line) + "\n")
    again = json.loads(cli("analyse", folder, "--json").stdout)
    assert again["deals"][1]["cards"][0]["loss"] == 7
    assert again["deals"][0] == first["deals"][0]


def test_analyse_text_and_not_analysed(tmp_path):
    lines = event_lines(DEAL_A)
    for line in event_lines(DEAL_A[:2]):      # a second deal the events stop in
        event = json.loads(line)
        lines.append(json.dumps(dict(event, t=event["t"] + 1000)))
    path = tmp_path / "game.jsonl"
    path.write_text("\n".join(lines) + "\n")
    res = cli("analyse", path)
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert out[0].startswith("deal 1 (raspasovka): best play: seat2 sure of ")
    assert out[1].startswith("deal 2 (raspasovka): not analysed: stopped before its 10th trick")
    doc = json.loads(cli("analyse", path, "--json").stdout)
    check_shape(doc)
    assert [d["analysed"] for d in doc["deals"]] == [True, False]


def test_bad_inputs_one_line_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    bad_config = tmp_path / "bad.toml"
    bad_config.write_text("[rules]\nprikup = 'nowhere'\n")
    events = tmp_path / "game.jsonl"
    events.write_text("\n".join(event_lines(DEAL_A)) + "\n")
    for args in (["analyse", tmp_path / "missing.jsonl"], ["analyse", tmp_path / "empty"],
                 ["analyse", events, "--config", bad_config], ["analyse", events, "--deck", tmp_path / "no.toml"],
                 ["analyse"]):
        res = cli(*args)
        assert res.returncode == 2, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr, res.stderr
