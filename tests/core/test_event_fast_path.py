"""The event reader's fast path gives exactly what json.loads and event_from_dict give
(FORMATS.md "Table events"): the same event for every line it takes, and every line it
refuses goes to the slow path, which judges it the same way -- also when one file
repeats a line's tail (the fast path remembers tails) with a different ``t``."""

from __future__ import annotations

import json

from hypothesis import example, given, settings, strategies as st

from controller.core.errors import EventError
from controller.core.events import event_from_dict, read_events

ZONES = ("seat1", "seat2", "seat3", "prikup")

T_TEXTS = st.sampled_from(["0", "1", "1.5", "12.250", "01", "1e3", "-1", "1.", ".5", "0.0", "999999999999",
                           "1000000000000", "1000000000000.5", "9999999999999", "1" * 30, "2.00000000000000000001"])
# mostly what the table writes, with the near misses the fast path must send on
ZONE = st.one_of(st.sampled_from(ZONES), st.sampled_from(["seat4", "Seat1", "seat1 ", ""]))
EDGE = st.one_of(st.sampled_from(["placed", "removed"]), st.sampled_from(["Placed", "moved"]))
FIELD = st.one_of(st.sampled_from(["card", "uid"]), st.just("cards"))
VALUE = st.one_of(st.sampled_from(["7s", "10h", "As", "04A2B11C6F5E80", "04a2b1"]),
                  st.sampled_from(["Th", "10H", "xx", "7", "zz", "7\\u0073"]))


def slow(line: str):
    """What the slow path makes of a line: its event, or None when it refuses it."""
    try:
        return event_from_dict(json.loads(line), ZONES)
    except (ValueError, EventError):
        return None


@settings(max_examples=400, deadline=None)
@example(lines=[("1", "seat1", "placed", "uid", "04a2b1", False), ("2", "seat1", "placed", "uid", "04a2b1", False)])
@example(lines=[("1", "seat1", "placed", "card", "Th", False), ("1000000000000.5", "seat1", "removed", "card", "Th", False)])
@given(lines=st.lists(st.tuples(T_TEXTS, ZONE, EDGE, FIELD, VALUE, st.booleans()), min_size=1, max_size=6))
def test_fast_path_equals_slow_path(lines):
    texts = []
    for t, zone, edge, field, value, tight in lines:
        sep = ":" if tight else ": "        # json.dumps' own spacing, or not (slow path only)
        texts.append(f'{{"t"{sep}{t}, "zone"{sep}"{zone}", "event"{sep}"{edge}", "{field}"{sep}"{value}"}}')
    said: list[int] = []
    got = list(read_events(texts, ZONES, lambda n, m: said.append(n)))
    want, last_t = [], float("-inf")
    for number, text in enumerate(texts, start=1):
        event = slow(text)
        if event is not None and event.t >= last_t:
            last_t = event.t
            want.append(event)
    assert got == want
    assert len(said) == len(texts) - len(want)      # every other line reported
