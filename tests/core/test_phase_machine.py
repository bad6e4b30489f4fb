"""The phase machine (controller.core.phases) is the one truth of a deal's phase: its state is
what the table shows, every control line is judged by its guards, ``held`` is only its state,
and ``undo`` is a transition it declares (RULES-contracts.md, PROTOCOL.md "guessed order")."""

import pytest

from controller.core.cards import parse_card
from controller.core.events import BID, CLAIM, CONTRACT, RESULT, WHIST, WHIST_MODE, TableEvent
from controller.core.phases import ALLOWED, IN_PHASE, LINES, REFUSED, STATES, TRANSITIONS
from controller.core.snapshot import SnapshotBuilder
from controller.core.tracker import DealTracker
from table_script import Script, config


def bidding() -> Script:
    return Script(config(bidding=True))


def shown(s: Script) -> str:
    return SnapshotBuilder().build(s.tracker, seq=len(s.events)).phase


def invalid(s: Script) -> list:
    return [m.data["message"] for m in s.mistakes("invalid_control")]


def test_the_deal_has_no_phase_of_its_own_the_machine_has():
    s = bidding()
    s.bid("seat2", "6h")
    assert not hasattr(s.tracker.deal, "phase") and not hasattr(s.tracker.deal, "_phase_now")
    assert s.tracker.state == "auction" == shown(s)


def test_the_machines_state_is_the_phase_the_table_shows_through_a_contract_deal():
    s = bidding()
    seen = [(s.tracker.state, shown(s))]
    for step in (lambda: s.bids("seat2:6h", "seat3:pass", "seat1:pass"),
                 lambda: s.contract("seat2", "6h"),
                 lambda: s.whist("seat3", "whist"),
                 lambda: s.whist("seat1", "pass")):
        step()
        seen.append((s.tracker.state, shown(s)))
    assert seen == [("idle", "idle"), ("contract", "contract"), ("whisting", "whisting"),
                    ("whisting", "whisting"), ("play", "play")]


def test_no_move_but_the_declared_ones():
    tracker = DealTracker(config(bidding=True))
    assert not any(name.startswith("to_") for name in tracker.machine.events)     # auto_transitions=False
    assert tracker.machine.has_queue                                                # queued=True
    assert "rewind" not in tracker.machine.events


def test_every_line_in_every_state_is_allowed_or_refused_with_its_reason():
    for line in LINES:
        for state in STATES:
            allowed = state in ALLOWED[line]
            assert allowed != ((line, state) in REFUSED), (line, state)


def test_every_line_that_is_a_trigger_is_judged_first_by_its_guard_a_condition_of_the_machine():
    firsts = {}
    for t in TRANSITIONS:
        if t["trigger"] in LINES:
            firsts.setdefault((t["trigger"], t["source"]), t)
    assert set(firsts) == {(line, state) for line in LINES for state in ALLOWED[line]} - set(IN_PHASE)
    for (line, state), first in firsts.items():
        assert first["dest"] is None and first["after"] == "refuse" and first["unless"].endswith("_valid")
    # a call inside its phase is judged by the auction's or the whisting's own check, and
    # moves the machine only when it decides the phase
    assert IN_PHASE == {(BID, "auction"): "bid_valid", (WHIST, "whisting"): "whist_valid"}
    ends = {t["trigger"]: t["source"] for t in TRANSITIONS if t["trigger"].endswith("_ends")}
    assert ends == {"auction_ends": "auction", "whisting_ends": "whisting"}


class Strict(DealTracker):
    """A tracker whose whist guard refuses every call: the machine asks its guard."""

    def whist_valid(self, kind, seat, value) -> bool:
        return self._valid("refused by the guard")


def test_the_machine_consults_its_guards():
    s = Script(config(bidding=True))
    s.tracker = Strict(s.tracker.config)
    s.bids("seat2:6h", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6h")
    s.whist("seat3", "whist")
    assert s.tracker.state == "whisting" and invalid(s) == ["refused by the guard"]


@pytest.mark.parametrize("line, state, message", [
    (BID, "contract", "no auction now"), (CONTRACT, "auction", "the auction is not over"),
    (WHIST_MODE, "whisting", "the whisting is not decided"), (RESULT, "auction", "a result line only as a "
                                                                                  "deal's first line"),
])
def test_a_line_from_a_state_without_its_transition_is_refused_by_the_data(line, state, message):
    assert REFUSED[line, state] == message and state not in ALLOWED[line]


def test_a_whist_in_a_misere_deal_says_so():
    s = bidding()
    s.bids("seat2:misere", "seat3:pass", "seat1:pass")
    s.whist("seat3", "whist")
    assert s.tracker.state == "play" and invalid(s) == ["a misere is not whisted"]
    assert CLAIM in LINES and WHIST in LINES


def test_undo_is_a_declared_transition_from_every_state():
    undo = [t for t in TRANSITIONS if t["trigger"] == "undo"]
    assert len(undo) == 1 and set(undo[0]["source"]) == set(STATES) and undo[0]["dest"] == "idle"
    assert undo[0]["conditions"] == "can_take_back"


def test_undo_feeds_the_remaining_lines_to_the_machine_again():
    s = bidding()
    s.bids("seat2:6h", "seat3:pass", "seat1:pass")
    assert s.tracker.state == "contract"
    s.press("undo")                                        # the last pass taken back: the auction again
    assert s.tracker.state == "auction" == shown(s) and s.tracker.deal.bidding.auction.result is None
    s.bid("seat1", "pass")
    s.contract("seat2", "6h")
    s.whists("seat3:pass", "seat1:pass")                   # both pass: the deal ends, written
    assert s.tracker.state == "idle" and len(s.tracker.records) == 1
    s.press("undo")                                        # reaches back: the whisting again
    assert s.tracker.state == "whisting" and not s.tracker.records and s.tracker.deal.number == 1
    s.press("undo")
    s.press("undo")
    s.press("undo")
    s.press("undo")
    s.press("undo")                                        # the first bid: the deal is gone
    assert s.tracker.state == "idle" and s.tracker.deal is None
    assert s.press("undo") == []                           # nothing more to take back


def _guessed(t: float, zone: str, card: str) -> TableEvent:
    return TableEvent(t, "placed", zone=zone, card=parse_card(card), guessed=True)


def test_held_is_the_machines_state_only():
    tracker = DealTracker(config())
    for t, (zone, card) in enumerate([("prikup", "7s"), ("seat2", "8s"), ("seat3", "9s"), ("seat1", "10s")]):
        tracker.feed(_guessed(float(t), zone, card))
    assert tracker.state == "held" and tracker.held is tracker.deal.tricks[-1]
    assert SnapshotBuilder().build(tracker, seq=4).phase == "play"          # a held trick is in the play
    tracker.feed(TableEvent(5.0, "button", button="confirm"))
    assert tracker.state == "play" and tracker.held is None
