"""Resume with the second edition's lines: a session of result lines, claims, confirms and
undos, cut anywhere and resumed from its game log and checkpoint journal, plays on as the
uninterrupted one -- also an ``undo`` right after the restart that reopens a confirmed claim
(the journal keeps the claim and its confirm among the deal's lines)."""

from __future__ import annotations

import pytest

from controller.core.events import TableEvent
from resume_check import cut_and_resume
from second_edition_script import Edition2, config, played_deal, rest_of
from table_script import DEAL_A

GAME = config()


def session() -> tuple[list[TableEvent], dict[str, int]]:
    """The events of a four-deal "auto" session, and the number of events after some moments."""
    s = Edition2(GAME)
    marks: dict[str, int] = {}
    s.deal(DEAL_A)                                              # 1: raspasovka, seat1 deals
    marks["raspasovka"] = len(s.events)
    s.result("seat2", "6s")                                     # 2: seat1 deals again (price 2)
    s.whists("seat3:whist", "seat1:pass")
    s.mode("open")
    played = played_deal(11, "6s")
    s.tricks(played, 0, 3)
    s.claim(**rest_of(played, 3))
    marks["claim waits"] = len(s.events)
    s.press("confirm")
    marks["claim confirmed"] = len(s.events)
    s.press("undo")                                             # waits again
    marks["waits again"] = len(s.events)
    s.press("confirm")
    misere = played_deal(12, "misere", declarer="seat3", dealer="seat2")
    s.result("seat3", "misere")                                 # 3: seat2 deals
    marks["misere result"] = len(s.events)
    s.tricks(misere, 0, 2)
    s.claim(**rest_of(misere, 2))
    s.press("undo")                                             # withdrawn
    marks["withdrawn"] = len(s.events)
    s.tricks(misere, 2, 4)
    s.claim(**rest_of(misere, 4))
    s.press("confirm")
    marks["misere claimed"] = len(s.events)
    s.result("seat1", "7d")                                     # 4: seat3 deals
    s.whists("seat2:pass", "seat3:pass")                        # both pass: unplayed
    s.press("undo")                                             # reopened: whisting again
    s.whists("seat3:whist")
    marks["whisting again"] = len(s.events)
    s.whists()
    assert [d["kind"] for d in s.summary["deals"]] == ["raspasovka", "contract", "misere", "contract"]
    return s.events, marks


EVENTS, MARKS = session()


@pytest.mark.parametrize("mark", sorted(MARKS))
def test_cut_at_each_moment_and_resumed_equals_uninterrupted(tmp_path, mark):
    r = cut_and_resume(tmp_path, GAME, EVENTS, MARKS[mark])
    assert r.replayed == MARKS[mark]
    assert r.got == r.expected
    assert r.tracker.summary() == r.whole.summary()


@pytest.mark.parametrize("cut", [5, 40, 70, 75, 77, 90, 100, 120])
def test_a_lost_journal_is_rebuilt_with_the_claims_and_results(tmp_path, cut):
    r = cut_and_resume(tmp_path, GAME, EVENTS, min(cut, len(EVENTS) - 1), lose_journal=True)
    assert r.got == r.expected and r.tracker.summary() == r.whole.summary()


def test_undo_after_a_restart_makes_a_confirmed_claim_wait_again(tmp_path):
    cut = MARKS["claim confirmed"]
    assert EVENTS[cut].button == "undo"
    r = cut_and_resume(tmp_path, GAME, EVENTS[:cut + 1], cut)
    assert r.state_at_resume == "idle" and r.journal_written and r.deal_before_cut
    assert r.tracker.state == "claim" and r.tracker.deal.claim is not None
    assert r.got == r.expected
    assert r.got[-1]["kind"] == "claim" and r.got[-1]["state"] == "waiting"


def test_a_restart_while_a_claim_waits_keeps_it_waiting(tmp_path):
    cut = MARKS["claim waits"]
    r = cut_and_resume(tmp_path, GAME, EVENTS[:cut], cut)
    assert r.state_at_resume == "claim" and r.in_deal_at_resume
    assert r.tracker.summary() == r.whole.summary()


@pytest.mark.parametrize("cut", [60, 95, 130])
def test_a_rebuild_restored_from_the_journal_every_deal_keeps_claims_and_results(tmp_path, cut, monkeypatch):
    """The rebuild of a lost journal restores its tracker from the journal line it has just
    written (every deal here): the records' lines keep the claims, confirms and result lines."""
    from controller.store import repair
    monkeypatch.setattr(repair, "LIGHTEN_EVERY", 1)
    r = cut_and_resume(tmp_path, GAME, EVENTS, min(cut, len(EVENTS) - 1), lose_journal=True)
    assert r.got == r.expected and r.tracker.summary() == r.whole.summary()
    undo = TableEvent(EVENTS[-1].t, "button", button="undo")
    assert [s.to_dict() for s in r.tracker.feed(undo)] == [s.to_dict() for s in r.whole.feed(undo)]


def test_undos_after_a_restart_reach_back_into_an_earlier_deals_confirmed_claim(tmp_path):
    """Deal 4's three lines taken back, the next undo reopens deal 3 (a record read back from
    the journal) and takes back its confirm: its claim waits again."""
    undo = [TableEvent(EVENTS[-1].t, "button", button="undo")] * 4
    r = cut_and_resume(tmp_path, GAME, EVENTS + undo, len(EVENTS))
    assert r.got == r.expected
    assert r.tracker.state == "claim" and r.tracker.deal.number == 3
    assert r.got[-1]["kind"] == "claim" and r.got[-1]["state"] == "waiting"


def test_a_journal_entry_from_before_the_contract_fields_is_completed_on_resume():
    """A raspasovka entry kept by an older version (FORMATS.md's fields alone) reads back with
    every field, its written block from its exact writes."""
    from controller.store import checkpoints
    s = Edition2(config(bidding=False))
    s.deal(DEAL_A)
    encoded = checkpoints.encode(s.tracker.checkpoint())
    old = ("number", "dealer", "price", "tricks", "taken", "revoke", "complete")
    encoded["record"]["entry"] = {k: encoded["record"]["entry"][k] for k in old}
    tracker = checkpoints.restore(config(bidding=False), None, [], {**encoded, "events": len(s.events)})
    assert tracker.summary() == s.summary
    assert list(tracker.summary()["deals"][0]) == list(s.entry)
