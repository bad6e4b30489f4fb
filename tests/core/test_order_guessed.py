"""A card whose order the hub link could not know (PROTOCOL.md "Keeping the host's view true").

The link marks such an event (``"guessed": true``, an added field of the table
event line); the tracker plays it but signals ``order_guessed`` and keeps the
alert until ``confirm``, so the table never guesses silently.  The display
shows the web page's PIN before the first deal.
"""

from __future__ import annotations

from controller.core.cards import parse_card
from controller.core.events import TableEvent, event_from_dict, read_events
from controller.core.tracker import DealTracker
from controller.core.view import indications

from table_script import DEAL_A, config


def test_a_guessed_card_is_played_and_awaits_confirm():
    tracker = DealTracker(config())
    zone, card = DEAL_A[0][0].split(":")
    line = TableEvent(1.0, "placed", zone, card=parse_card(card),
                      guessed=True).to_dict()
    assert line["guessed"] is True
    event = event_from_dict(line, tracker.zones)
    signals = tracker.feed(event)
    kinds = [(s.kind, s.data.get("type")) for s in signals]
    assert ("play", None) in kinds and ("mistake", "order_guessed") in kinds
    assert tracker.alerts and tracker.alerts[-1]["type"] == "order_guessed"
    assert "order?" in indications(tracker).lines[-1]
    tracker.feed(TableEvent(2.0, "button", button="confirm"))
    assert not tracker.alerts


def test_an_unguessed_line_is_written_as_before_and_a_bad_flag_is_an_invalid_line():
    plain = TableEvent(1.0, "placed", "seat1", uid="04A2")
    assert "guessed" not in plain.to_dict()
    errors = []
    lines = ['{"t": 1, "zone": "seat1", "event": "placed", "uid": "04A2", "guessed": "yes"}']
    assert list(read_events(lines, ("seat1", "seat2", "seat3", "prikup"), lambda n, m: errors.append(m))) == []
    assert errors and "guessed" in errors[0]


def test_the_notice_shows_before_the_first_deal_only():
    tracker = DealTracker(config())
    assert indications(tracker, notice="web PIN 123456").lines[-1] == "web PIN 123456"
    for plays in DEAL_A:
        for play in plays:
            zone, card = play.split(":")
            tracker.feed(TableEvent(1.0, "placed", zone,
                                    card=parse_card(card)))
    assert tracker.records
    assert indications(tracker, notice="web PIN 123456").lines[-1] != "web PIN 123456"


# --- the wait for `confirm` (PROTOCOL.md: "waits for confirm before it counts the trick") ---

def _guessed(t: float, play: str) -> TableEvent:
    zone, card = play.split(":")
    return TableEvent(t, "placed", zone, card=parse_card(card), guessed=True)


def _in_reader_order(tracker: DealTracker, trick) -> list[str]:
    """How the link applies missed cards with no edge_ms: reader order, not play order."""
    return sorted(trick, key=lambda play: tracker.zones.index(play.split(":")[0]))


def test_a_trick_found_in_reader_order_is_played_in_turn_and_counted_on_confirm():
    clean = DealTracker(config())
    for trick in DEAL_A:
        for i, play in enumerate(trick):
            zone, card = play.split(":")
            clean.feed(TableEvent(float(i), "placed", zone, card=parse_card(card)))
    tracker = DealTracker(config())
    t = 0.0
    for number, trick in enumerate(DEAL_A, 1):
        laid = []
        for play in _in_reader_order(tracker, trick):
            t += 1
            laid += tracker.feed(_guessed(t, play))
        kinds = [s.kind for s in laid]
        # every card of the trick is played, in turn, and no card is a mistake but the guess
        assert [s.data["zone"] for s in laid if s.kind == "play"] == [p.split(":")[0] for p in trick]
        assert {s.data["type"] for s in laid if s.kind == "mistake"} == {"order_guessed"}
        assert "trick" not in kinds and "deal" not in kinds          # not counted yet
        assert tracker.state == "held"
        t += 1
        counted = tracker.feed(TableEvent(t, "button", button="confirm"))
        tricks = [s for s in counted if s.kind == "trick"]
        assert len(tricks) == 1 and tricks[0].data["number"] == number
        assert tracker.alerts == []
    assert tracker.summary() == clean.summary()


def test_cards_laid_while_a_guessed_trick_waits_are_taken_after_confirm():
    tracker = DealTracker(config())
    first, second = DEAL_A[0], DEAL_A[1]
    t = 0.0
    for play in first:
        t += 1
        tracker.feed(_guessed(t, play))
    assert tracker.state == "held"
    # trick 2 begins before anyone pressed confirm: its cards wait (the table already says so)
    for play in second[:2]:
        zone, card = play.split(":")
        t += 1
        assert tracker.feed(TableEvent(t, "placed", zone, card=parse_card(card))) == []
    early = tracker.feed(TableEvent(t + 0.5, "placed", "seat1", card=parse_card("9h")))
    assert early == []                              # seat1 before seat3: it waits too
    counted = tracker.feed(TableEvent(t + 1, "button", button="confirm"))
    assert [(s.kind, s.data.get("zone")) for s in counted] == [
        ("confirm", None), ("trick", None), ("play", "prikup"), ("play", "seat2"), ("mistake", "seat1")]
    assert counted[-1].data["type"] == "out_of_turn"    # taken by the usual rules after the wait


def test_a_card_out_of_turn_while_a_guessed_trick_waits_is_refused_after_confirm():
    tracker = DealTracker(config())
    for i, play in enumerate(DEAL_A[0]):
        tracker.feed(_guessed(float(i), play))
    assert tracker.feed(TableEvent(10.0, "placed", "seat1", card=parse_card("7c"))) == []
    again = tracker.feed(TableEvent(10.5, "placed", "seat1", card=parse_card("8d")))
    assert [s.data.get("type") for s in again] == ["order_guessed"]          # a second card on seat1
    counted = tracker.feed(TableEvent(11.0, "button", button="confirm"))
    assert [s.kind for s in counted] == ["confirm", "trick", "mistake"]
    assert counted[-1].data["type"] == "out_of_turn" and counted[-1].data["zone"] == "seat1"


def test_undo_while_a_guessed_trick_waits_reopens_it_and_new_deal_drops_it():
    tracker = DealTracker(config())
    t = 0.0
    for play in DEAL_A[0]:
        t += 1
        tracker.feed(_guessed(t, play))
    undone = tracker.feed(TableEvent(10.0, "button", button="undo"))
    assert [s.kind for s in undone] == ["undo"] and tracker.state == "play"
    assert len(tracker.deal.tricks) == 0 and len(tracker.deal.current) == 3
    abandoned = tracker.feed(TableEvent(11.0, "button", button="new_deal"))
    assert [s.kind for s in abandoned][:1] == ["abandon"] and tracker.held is None
    assert not tracker.parked and tracker.state == "idle"
