"""``replay`` of files that are not what it expects: empty or garbage (one line, exit 2), a log
copied out of its session folder (a hint to pass --deck), a deck.toml beside a file that is
not a session's events.jsonl (named, not taken silently)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import cli

from controller.app.sim import Noise, TableSimulator, make_deck
from controller.core.config import GameConfig

def replay(*args: str) -> subprocess.CompletedProcess:
    """``preftable replay ARGS`` called in this process: its status, stdout and stderr."""
    return cli(["replay", *args])


def test_an_empty_file_is_one_line_and_status_2(tmp_path):
    empty = tmp_path / "game.jsonl"
    empty.write_text("", encoding="utf-8")
    run = replay(str(empty))
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "no table events" in run.stderr
    assert run.stdout == ""


def test_a_file_of_garbage_is_one_line_and_status_2(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("".join(f"line {i} of something else\n" for i in range(50)), encoding="utf-8")
    run = replay(str(junk))
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "none of its 50 lines" in run.stderr and "Traceback" not in run.stderr


def _uid_events(tmp_path: Path) -> tuple[Path, Path]:
    """A deal's table events with tag UIDs (as a real table logs them), and the deck they need."""
    deck = make_deck(5)
    sim = TableSimulator(GameConfig(), seed=5, deck=deck, noise=Noise())
    lines = [event.to_json() for event in sim.deals(1)]
    events = tmp_path / "copied.jsonl"
    events.write_text("\n".join(lines) + "\n", encoding="utf-8")
    deck_path = tmp_path / "deck.toml"
    deck_path.write_text("[cards]\n" + "".join(f'"{uid}" = "{card}"\n' for uid, card in deck.cards.items()),
                         encoding="utf-8")
    return events, deck_path


def test_a_log_out_of_its_folder_gets_a_hint_to_pass_the_deck_and_a_deck_beside_it_is_named(tmp_path):
    events, deck_path = _uid_events(tmp_path)
    run = replay(str(events), "--json")
    assert run.returncode == 0
    assert f"pass --deck {deck_path} to use them" in run.stderr            # named, not taken
    assert "unknown tag 32" in run.stderr and "--deck deck.toml" in run.stderr
    assert json.loads(run.stdout)["deals"] == []                           # nothing was taken silently
    given = replay(str(events), "--deck", str(deck_path), "--json")
    assert given.returncode == 0 and len(json.loads(given.stdout)["deals"]) == 1
    assert "not used" not in given.stderr


def test_a_sessions_events_jsonl_uses_its_folders_files_and_says_so(tmp_path):
    events, deck_path = _uid_events(tmp_path)
    session = tmp_path / "2026-12-01T20-00-00Z"
    session.mkdir()
    (session / "events.jsonl").write_text(events.read_text(encoding="utf-8"), encoding="utf-8")
    (session / "deck.toml").write_text(deck_path.read_text(encoding="utf-8"), encoding="utf-8")
    run = replay(str(session / "events.jsonl"), "--json")
    assert run.returncode == 0 and "the session's own deck.toml" in run.stderr
    assert len(json.loads(run.stdout)["deals"]) == 1
