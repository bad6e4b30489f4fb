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
