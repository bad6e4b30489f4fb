"""Checkpoints with contract deals (controller/store/checkpoints.py through the game log):
a session cut anywhere -- in the auction, the contract, the whisting or the play -- resumes
from the journal to the same signals and summary; and a raspasovka-only log from before
contract deals replays byte for byte to the summary and derived lines it had."""

import json
import random
from pathlib import Path

import pytest

from contract_games import MixedGame
from controller.core.config import load_game_config
from controller.core.events import TableEvent, read_events
from controller.core.tracker import ENTRY_DEFAULTS, DealTracker
from controller.store import checkpoints
from controller.store.gamelog import SessionLog
from controller.store.replay import replay_file
from resume_check import cut_and_resume
from table_script import DEAL_A, Script, config

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("seed", range(8))
def test_resume_in_every_phase_equals_uninterrupted(tmp_path, seed):
    rng = random.Random(seed)
    game = config(players=3 + seed % 2, bidding=True, pulya_target=12 if seed % 3 == 0 else None)
    events = list(MixedGame(game, seed, noise=seed % 2 == 1).deals(5))
    # undo right after some lines, and a misdeal
    for i in sorted(rng.sample(range(1, len(events)), 4), reverse=True):
        events.insert(i, TableEvent(events[i - 1].t, "button", button=rng.choice(["undo", "undo", "confirm"])))
    events.insert(len(events) // 2, TableEvent(events[len(events) // 2 - 1].t, "button", button="new_deal"))

    cut = rng.randrange(len(events))
    r = cut_and_resume(tmp_path, game, events, cut)
    assert r.replayed == cut
    assert r.state_at_resume == "idle" if not r.in_deal_at_resume else r.state_at_resume != "idle"
    assert r.got == r.expected
    assert r.tracker.summary() == r.whole.summary()


def test_a_checkpoint_round_trips_and_undo_reopens_the_deal_after_resume():
    game = config(bidding=True)
    s = Script(game)
    s.bids("seat2:8d", "seat3:pass", "seat1:pass")
    s.contract("seat2", "8d")
    s.whists("seat3:pass", "seat1:pass")
    encoded = json.loads(json.dumps(checkpoints.encode(s.tracker.checkpoint())))
    tracker = checkpoints.restore(game, None, [], {**encoded, "events": len(s.events)})
    assert tracker.summary() == s.summary and tracker.events_seen == len(s.events)
    from controller.core.events import button
    tracker.feed(button(99, "undo"))
    assert tracker.state == "whisting" and tracker.summary()["pulka"]["seat2"]["pulya"] == 0


def test_a_journal_from_before_contract_deals_still_resumes(tmp_path):
    """Old journal lines carry the raspasovka deal's cards as "plays" and no "lines"/"kind"."""
    game = config()
    s = Script(game)
    s.deal(DEAL_A)
    encoded = checkpoints.encode(s.tracker.checkpoint())
    rec = encoded["record"]
    rec["plays"] = [[z, c] for kind, z, c in rec.pop("lines")]
    del rec["kind"]
    del encoded["events_seen"], encoded["finished_after"]
    tracker = checkpoints.restore(game, None, [], {**encoded, "events": len(s.events)})
    assert tracker.summary() == s.summary
    assert tracker.records[-1].deal is not None and tracker.records[-1].plays == 32


def test_old_raspasovka_log_replays_byte_for_byte(tmp_path):
    """controller/examples/game.jsonl and a log the existing tests build (both from before this
    change): the summary JSON keeps FORMATS.md's fields in their order, the derived lines a
    replay writes are exactly those the log holds."""
    example = ROOT / "controller" / "examples" / "game.jsonl"
    cfg = load_game_config(ROOT / "controller" / "examples" / "config.toml")
    tracker = replay_file(example, cfg)
    summary = tracker.summary()
    # the second edition: every field present with every value of rules.bidding
    assert list(summary) == ["deals", "pulka", "pulya_target", "finished_after_deal", "settlement"]
    assert all(list(d) == list(ENTRY_DEFAULTS) and d["kind"] == "raspasovka" for d in summary["deals"])
    # the same log written by this tracker (derived lines included), replayed: identical lines
    session = SessionLog.create(tmp_path, cfg, None)
    live = DealTracker(cfg)
    for event in read_events(example.read_text().splitlines(), live.zones):
        session.append(event, live.feed(event), live.checkpoint() if live.deal is None and live.records else None)
    session.close()
    written = session.events_path.read_text().splitlines()
    again = DealTracker(cfg)
    rebuilt = []
    for event in read_events(written, again.zones):
        rebuilt.append(json.dumps(event.to_dict(), ensure_ascii=False, separators=(", ", ": ")))
        rebuilt += [json.dumps(s.to_dict(), ensure_ascii=False, separators=(", ", ": ")) for s in again.feed(event)]
    assert rebuilt == written
    assert json.dumps(again.summary()) == json.dumps(summary)


BEFORE = json.loads((Path(__file__).parent / "data" / "raspasovka_before_contracts.json").read_text())


def test_raspasovka_summary_and_derived_lines_are_those_of_before():
    """tests/core/data/raspasovka_before_contracts.json was written by the tracker of commit
    b4c5d7e (before contract deals): controller/examples/game.jsonl's summary, and a scripted
    session with a mistake, undo, new_deal, an unknown tag and confirm -- its table events, the
    derived lines and the summary.  Today's tracker gives the same bytes."""
    cfg = load_game_config(ROOT / "controller" / "examples" / "config.toml")
    summary = replay_file(ROOT / "controller" / "examples" / "game.jsonl", cfg).summary()
    assert_grown_only(summary, json.loads(BEFORE["example_summary"]))
    for bidding in ("auto", False):
        tracker = DealTracker(config(bidding=bidding))
        lines = []
        for event in read_events(BEFORE["script_events"], tracker.zones):
            lines += [s.to_dict() for s in tracker.feed(event)]
        before = [json.loads(line) for line in BEFORE["script_lines"]]
        assert len(lines) == len(before)
        for line, old in zip(lines, before):
            if "complete" in old:       # a deal's result line: the deal entry's fields, now all of them
                assert {k: line[k] for k in old if k != "kind"} == {k: v for k, v in old.items() if k != "kind"}
                assert line["kind"] == "raspasovka" and set(ENTRY_DEFAULTS) - {"number", "tricks"} <= set(line)
            else:
                assert line == old
        assert_grown_only(tracker.summary(), json.loads(BEFORE["script_summary"]))


def assert_grown_only(summary: dict, before: dict) -> None:
    """The summary of before the second edition, with the fields it adds and nothing else changed:
    every deal entry has every field, in order, and the top level pulya_target and
    finished_after_deal (FORMATS-contracts.md "fields always present")."""
    assert list(summary) == ["deals", "pulka", "pulya_target", "finished_after_deal", "settlement"]
    assert summary["pulya_target"] is None and summary["finished_after_deal"] is None
    assert {k: summary[k] for k in before if k != "deals"} == {k: v for k, v in before.items() if k != "deals"}
    assert len(summary["deals"]) == len(before["deals"])
    for entry, old in zip(summary["deals"], before["deals"]):
        assert list(entry) == list(ENTRY_DEFAULTS)
        assert {k: entry[k] for k in old} == old
        assert entry["kind"] == "raspasovka" and entry["auction"] == [] and entry["claimed"] is None
        assert entry["outcome"] is None and entry["declarer"] is None and entry["help"] == []
        assert (entry["written"] is None) == (not entry["complete"])


@pytest.mark.parametrize("seed", range(4))
def test_a_lost_journal_rebuilt_in_light_steps_equals_uninterrupted(tmp_path, seed, monkeypatch):
    """The rebuild restores its tracker from the journal every few deals (memory
    flat in the log's length): cut in any phase, the table plays on as the uninterrupted one."""
    from controller.store import repair

    monkeypatch.setattr(repair, "LIGHTEN_EVERY", 2)
    rng = random.Random(seed)
    game = config(players=3 + seed % 2, bidding=True, pulya_target=12 if seed % 2 == 0 else None)
    events = list(MixedGame(game, seed, noise=seed % 2 == 1).deals(9))
    for i in sorted(rng.sample(range(1, len(events)), 4), reverse=True):
        events.insert(i, TableEvent(events[i - 1].t, "button", button="confirm"))
    cut = rng.randrange(len(events) * 2 // 3, len(events))
    r = cut_and_resume(tmp_path, game, events, cut, lose_journal=True)
    assert r.replayed == cut
    items, _ = r.tracker.records.frozen()
    assert any(isinstance(item, int) for item in items)     # restored mid-rebuild: on disk
    assert len(r.tracker.records) == len(r.whole.records) == 9
    assert r.got == r.expected
    assert r.tracker.summary() == r.whole.summary()
