"""The demo's players lay again a card the table took back, as a person would: lifted long
enough for the hub to report it gone, then laid (controller.app.demo_players.play_in_order).

Laid back at once it is a flicker the hub hides (``absent_ms``): the table never sees it go,
ignores it as the card still lying there, and every card after it is out of turn.  The
players are driven by a follower that says the card was taken back just before the next
move, the moment the race in a live demo gave it; a real host link on the pty hears the hub."""

from __future__ import annotations

import threading

from controller.app.demo_players import TableTime, emulator_uid, play_in_order
from controller.core.cards import parse_card
from controller.core.clock import VirtualClock
from controller.core.events import PLACED, REMOVED, TableEvent
from firmware_bridge.link import HubLink

from conftest import wait_until

ZONES = ("seat1", "seat2")
A, B = emulator_uid(parse_card("Ah")), emulator_uid(parse_card("9c"))


class TakesBackTheFirstCard:
    """A follower whose table took back seat1's card once it was handled, told before the
    players' next move; the hub's reports stand for the table hearing each card."""

    def __init__(self, emulator, pace: TableTime):
        self.emulator, self.pace = emulator, pace
        self.asked = 0

    def handled(self, zone: str, uid: str) -> int:
        return 0

    def wait_handled(self, zone: str, uid: str, before: int) -> None:
        reader = ZONES.index(zone)
        assert self.pace.wait(lambda: self.emulator.reported()[reader] == uid, 30), f"the hub never reported {uid}"

    def undone(self) -> list[tuple[str, str]]:
        self.asked += 1
        return [("seat1", A)] if self.asked == 2 else []

    def refused(self, zone: str, uid: str) -> bool:
        return False


def test_a_card_taken_back_is_lifted_until_the_hub_reports_it_gone_then_laid_again():
    pace = TableTime(VirtualClock(10.0))
    emulator = pace.emulated_hub(readers=2)
    heard: list[TableEvent] = []
    link = HubLink(emulator.open_pty(), ZONES, heard.append)
    link.start()
    try:
        wait_until(emulator.host_hello.is_set, "the link's HELLO")
        moves = [TableEvent(t=0.0, event=PLACED, zone="seat1", uid=A),
                 TableEvent(t=0.1, event=PLACED, zone="seat2", uid=B)]
        play_in_order(emulator, moves, ZONES, 1.0, threading.Event(), TakesBackTheFirstCard(emulator, pace), pace)
        # the hub reports in order: once the last card is heard, so is everything before it
        wait_until(lambda: any(e.zone == "seat2" for e in heard), "seat2's card heard by the host")
    finally:
        link.stop()
        emulator.close()
    assert [(e.event, e.zone, e.uid) for e in heard] == [
        (PLACED, "seat1", A), (REMOVED, "seat1", A), (PLACED, "seat1", A), (PLACED, "seat2", B)]
