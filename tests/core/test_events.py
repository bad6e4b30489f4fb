"""Table-event lines: valid forms, and every kind of invalid line reported with its number."""

import json

from controller.core.events import read_events, placed, button

ZONES = ("seat1", "seat2", "seat3", "prikup")


def run(lines):
    errors = []
    events = list(read_events(lines, ZONES, lambda n, m: errors.append((n, m))))
    return events, errors


def test_valid_forms_and_round_trip():
    lines = ['{"t": 1, "zone": "seat2", "event": "placed", "uid": "04a2b11c6f5e80"}',
             '{"t": 1.5, "zone": "prikup", "event": "placed", "card": "Qh"}',
             '{"t": 2, "event": "button", "button": "undo"}',
             '', '{"t": 2, "kind": "trick", "winner": "seat1"}']
    events, errors = run(lines)
    assert not errors and len(events) == 3
    assert events[0].uid == "04A2B11C6F5E80"
    assert json.loads(events[1].to_json()) == {"t": 1.5, "zone": "prikup", "event": "placed", "card": "Qh"}
    assert json.loads(events[2].to_json()) == {"t": 2.0, "event": "button", "button": "undo"}


def test_invalid_lines_reported_with_line_numbers_and_skipped():
    lines = [
        'not json',                                                           # 1
        '[1, 2]',                                                             # 2
        '{"zone": "seat1", "event": "placed", "card": "7s"}',                  # 3 no t
        '{"t": 1, "zone": "seat4", "event": "placed", "card": "7s"}',          # 4 zone not at 3-player table
        '{"t": 1, "zone": "seat1", "event": "dropped", "card": "7s"}',         # 5
        '{"t": 1, "zone": "seat1", "event": "placed"}',                        # 6 neither
        '{"t": 1, "zone": "seat1", "event": "placed", "card": "7s", "uid": "04"}',  # 7 both
        '{"t": 1, "zone": "seat1", "event": "placed", "card": "6s"}',          # 8 bad card
        '{"t": 5, "zone": "seat1", "event": "placed", "card": "7s"}',          # 9 ok
        '{"t": 4, "zone": "seat1", "event": "removed", "card": "7s"}',         # 10 back in time
        '{"t": 6, "event": "button", "button": "reset"}',                      # 11
        '{"t": 6, "event": "button", "button": "undo", "zone": "seat1"}',      # 12
        '{"t": "6", "zone": "seat1", "event": "removed", "card": "7s"}',       # 13
        '{"t": 6, "zone": "seat1", "event": "removed", "uid": "XYZ"}',         # 14
        '{"t": 7, "zone": "seat1", "event": "removed", "card": "7s"}',         # 15 ok
    ]
    events, errors = run(lines)
    assert [e.t for e in events] == [5.0, 7.0]
    assert [n for n, _ in errors] == [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]


def test_any_hex_uid_is_a_uid():
    events, errors = run(['{"t": 1, "zone": "seat1", "event": "placed", "uid": "abc"}'])
    assert not errors and events[0].uid == "ABC"


def test_null_fields_count_as_absent():
    events, errors = run(['{"t": 1, "event": "button", "button": "confirm", "zone": null}',
                          '{"t": 2, "zone": "seat1", "event": "placed", "card": "7s", "uid": null}'])
    assert not errors and [e.event for e in events] == ["button", "placed"]


def test_constructors():
    assert placed(1, "seat1", card="T\u2665").to_dict()["card"] == "10h"
    assert button(3, "confirm").button == "confirm"


def test_control_lines_of_the_contract_game():
    lines = ['{"t": 1, "event": "bid", "seat": "seat2", "bid": "7H"}',
             '{"t": 2, "event": "bid", "seat": "seat3", "bid": "Misère"}',
             '{"t": 3, "event": "bid", "seat": "seat1", "bid": "PASS"}',
             '{"t": 4, "event": "contract", "seat": "seat2", "game": "10N"}',
             '{"t": 5, "event": "whist", "seat": "seat3", "call": "half"}',
             '{"t": 6, "event": "whist_mode", "mode": "open", "seat": "anyone"}']
    events, errors = run(lines)
    assert not errors
    assert [(e.event, e.seat, e.call) for e in events] == [
        ("bid", "seat2", "7h"), ("bid", "seat3", "misere"), ("bid", "seat1", "pass"),
        ("contract", "seat2", "10n"), ("whist", "seat3", "half"), ("whist_mode", None, "open")]
    assert [json.loads(e.to_json()) for e in events][0] == {"t": 1.0, "event": "bid", "seat": "seat2", "bid": "7h"}
    assert json.loads(events[5].to_json()) == {"t": 6.0, "event": "whist_mode", "mode": "open"}


def test_invalid_control_lines_are_reported_and_skipped():
    lines = ['{"t": 1, "event": "bid", "seat": "seat2", "bid": "11s"}',        # 1 no such bid
             '{"t": 1, "event": "bid", "seat": "seat4", "bid": "6s"}',         # 2 no seat4 at 3 players
             '{"t": 1, "event": "bid", "bid": "6s"}',                          # 3 no seat
             '{"t": 1, "event": "contract", "seat": "seat2", "game": "pass"}', # 4 pass is no game
             '{"t": 1, "event": "whist", "seat": "seat2", "call": "maybe"}',   # 5
             '{"t": 1, "event": "whist_mode", "mode": "dark"}',                # 6
             '{"t": 1, "event": "bid", "seat": "seat2", "bid": "6s", "zone": "seat2"}',   # 7 no zone
             '{"t": 1, "event": "whist", "seat": "seat2", "call": "Whist"}',   # 8 calls are as written
             '{"t": 2, "event": "bid", "seat": "seat2", "bid": "6s"}',         # 9 ok
             '{"t": 1.5, "event": "bid", "seat": "seat3", "bid": "pass"}']     # 10 back in time
    events, errors = run(lines)
    assert [n for n, _ in errors] == [1, 2, 3, 4, 5, 6, 7, 8, 10] and len(events) == 1
    assert "seat1, seat2, seat3" in dict(errors)[2]
    four = list(read_events(['{"t": 1, "event": "bid", "seat": "seat4", "bid": "6s"}'],
                            ZONES[:3] + ("seat4", "prikup")))
    assert four[0].seat == "seat4"
