"""A card whose order the hub link could not know (PROTOCOL.md "Keeping the host's view true").

The link marks such an event (``"guessed": true``, an added field of the table
event line); the tracker plays it but signals ``order_guessed`` and keeps the
alert until ``confirm``, so the table never guesses silently.  The display
shows the web page's PIN before the first deal (issue 13).
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
