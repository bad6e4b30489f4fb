"""Mistakes as the table keeps them: one entry per distinct problem, gone when the deal ends,
each saying what to do."""

from __future__ import annotations

from controller.app.textview import mistake_advice
from controller.core.config import GameConfig
from controller.core.events import button, placed, removed
from controller.core.tracker import DealTracker


def _start(tracker: DealTracker) -> float:
    """Deal 1 (dealer seat1, prikup leads): the prikup card, seat2 follows."""
    tracker.feed(placed(1.0, "prikup", card="7s"))
    tracker.feed(placed(2.0, "seat2", card="8s"))
    return 3.0


def test_the_same_card_relaid_is_one_entry_with_what_to_do():
    tracker = DealTracker(GameConfig())
    t = _start(tracker)
    for _ in range(9):                      # seat1 lays its 9 out of turn, again and again
        tracker.feed(placed(t, "seat1", card="9s"))
        tracker.feed(removed(t + 0.1, "seat1", card="9s"))
        t += 0.2
    assert len(tracker.alerts) == 1
    [alert] = tracker.alerts
    assert mistake_advice(alert, {}) == "seat1: lift the 9\u2660, it is seat3's turn"
    tracker.feed(placed(t, "seat1", card="10s"))        # another card: another problem
    assert len(tracker.alerts) == 2


def test_a_deals_mistakes_end_with_it():
    tracker = DealTracker(GameConfig())
    t = _start(tracker)
    tracker.feed(placed(t, "seat1", card="9s"))         # out of turn, left lying
    assert tracker.alerts
    tracker.feed(button(t + 1, "new_deal"))             # the deal ends (abandoned)
    assert tracker.alerts == []


def test_every_kind_says_what_to_do():
    names = {"seat1": "Anna", "seat2": "Boris"}
    texts = {
        "same_card": {"type": "same_card", "zone": "seat1", "card": "Qh"},
        "unknown_tag": {"type": "unknown_tag", "zone": "seat2", "uid": "DEADBEEF"},
        "table_not_clear": {"type": "table_not_clear", "zone": "seat1", "card": "7d"},
        "revoke": {"type": "revoke", "zone": "seat2", "card": "7d", "suit": "h"},
        "not_in_play": {"type": "not_in_play", "zone": "seat1", "card": "Ac"},
        "invalid_control": {"type": "invalid_control", "zone": "seat1", "line_event": "bid", "bid": "6s"},
    }
    said = {k: mistake_advice(a, names, turn="seat2") for k, a in texts.items()}
    assert said["same_card"] == "Anna: lift the Q\u2665, it was already played in this deal"
    assert said["unknown_tag"].startswith("Boris: lift that tag")
    assert "take every card of the last deal off" in said["table_not_clear"]
    assert "did not follow hearts" in said["revoke"]
    assert said["not_in_play"].startswith("Anna: lift the A\u2663")
    assert said["invalid_control"] == "Anna: bid 6s is not allowed now; it is Boris's call - enter it again"
    assert not any("not allowed now at" in text for text in said.values())
