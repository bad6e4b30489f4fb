"""The hub backend and the tracker together when the hub sends no ``edge_ms`` (PROTOCOL.md
"Keeping the host's view true"): missed cards come back in reader order, marked as guessed;
the table plays them in turn, shows ``order_guessed`` and counts the trick only on ``confirm``.

The firmware-backed emulator runs on a real pty with a hand-moved hub clock (exact hub
times whatever the machine's load); the events reach a real :class:`DealTracker`.
"""

from __future__ import annotations

import queue
import time

from controller.app.backends.hub import HubConfig, HubSource
from controller.app.sim import make_deck
from controller.core.cards import parse_card
from controller.core.events import TableEvent
from controller.core.tracker import DealTracker
from firmware_bridge.emulator import HubEmulator

from table_script import DEAL_A, config

READER = {"seat1": 0, "seat2": 1, "seat3": 2, "prikup": 3}


def test_cards_found_without_edge_ms_are_marked_played_in_turn_and_held_for_confirm():
    game = config()
    deck = make_deck(3)
    emu = HubEmulator(readers=4, realtime=False, edge_ms=False)
    port = emu.open_pty()
    events: queue.Queue[TableEvent] = queue.Queue()
    src = HubSource(game, HubConfig(port=port), time.monotonic)
    src.link.hb_timeout = 600           # the hub clock moves only when the test says
    src.start(events.put)
    try:
        assert src.link.wait_ready(10)
        trick = DEAL_A[0]               # prikup:7s, seat2:8s, seat3:As, seat1:9s, laid in that order
        emu.drop_next(3, verbs=["SEEN"])
        emu.corrupt_next(1, verbs=["SEEN"])
        emu.drop_next(1, verbs=["STATE"])
        for play in trick:
            zone, card = play.split(":")
            emu.place(READER[zone], deck.uid_for(parse_card(card)))
            emu.advance(150)
        emu.advance(1000)               # the next STATE reveals the gap
        got = [events.get(timeout=10) for _ in trick]
    finally:
        src.stop()
        emu.close()
    # reader order, every one marked: the link could not know the order
    assert [e.zone for e in got] == ["seat1", "seat2", "seat3", "prikup"]
    assert all(e.guessed and e.event == "placed" for e in got)
    assert src.link.counters["orders_guessed"] == 1

    tracker = DealTracker(game, deck)
    signals = [s for e in got for s in tracker.feed(e)]
    assert [s.data["zone"] for s in signals if s.kind == "play"] == [p.split(":")[0] for p in trick]
    assert {s.data.get("type") for s in signals if s.kind == "mistake"} == {"order_guessed"}
    assert "trick" not in [s.kind for s in signals]
    counted = tracker.feed(TableEvent(got[-1].t + 1, "button", button="confirm"))
    assert [s.kind for s in counted] == ["confirm", "trick"]
    assert counted[1].data["winner"] == "seat3" and not tracker.alerts
