"""A tiny DSL for writing table-event streams in tests: lay cards, take them back, press buttons."""

from __future__ import annotations

import functools

from controller.core.config import GameConfig, Rules, Table
from controller.core.events import BID, BUTTON, CONTRACT, PLACED, REMOVED, WHIST, WHIST_MODE, TableEvent, control
from controller.core.cards import parse_card
from controller.core.tracker import DealTracker


def config(players: int = 3, first_dealer: str = "seat1", **rules) -> GameConfig:
    if "progression" in rules:
        rules["progression"] = tuple(rules["progression"])
    return GameConfig(Table(players=players, first_dealer=first_dealer), Rules(**rules))


class Script:
    """Builds events with increasing ``t`` and feeds them to a tracker as it goes."""

    def __init__(self, cfg: GameConfig | None = None, deck=None):
        self.cfg = cfg or config()
        self.tracker = DealTracker(self.cfg, deck)
        self.events: list[TableEvent] = []
        self.signals = []
        self.t = 0.0

    def _feed(self, event: TableEvent) -> list:
        self.events.append(event)
        out = self.tracker.feed(event)
        self.signals.extend(out)
        return out

    def _next_t(self) -> float:
        self.t = round(self.t + 0.25, 3)
        return self.t

    def lay(self, zone: str, card: str) -> list:
        return self._feed(TableEvent(self._next_t(), PLACED, zone, card=parse_card(card)))

    def lift(self, zone: str, card: str) -> list:
        return self._feed(TableEvent(self._next_t(), REMOVED, zone, card=parse_card(card)))

    def lay_uid(self, zone: str, uid: str) -> list:
        return self._feed(TableEvent(self._next_t(), PLACED, zone, uid=uid))

    def press(self, name: str) -> list:
        return self._feed(TableEvent(self._next_t(), BUTTON, button=name))

    def bid(self, seat: str, bid: str) -> list:
        return self._feed(control(self._next_t(), BID, bid, seat))

    def bids(self, *calls: str) -> list:
        """``"seat2:6s"`` calls in order."""
        out = []
        for call in calls:
            seat, bid = call.split(":")
            out += self.bid(seat, bid)
        return out

    def contract(self, seat: str, game: str) -> list:
        return self._feed(control(self._next_t(), CONTRACT, game, seat))

    def whist(self, seat: str, call: str) -> list:
        return self._feed(control(self._next_t(), WHIST, call, seat))

    def whists(self, *calls: str) -> list:
        out = []
        for call in calls:
            seat, value = call.split(":")
            out += self.whist(seat, value)
        return out

    def mode(self, mode: str) -> list:
        return self._feed(control(self._next_t(), WHIST_MODE, mode))

    def trick(self, *plays: str, clear: bool = True) -> list:
        """Lay ``"zone:card"`` plays in order; then lift them all (unless clear=False)."""
        out = []
        for play in plays:
            zone, card = play.split(":")
            out += self.lay(zone, card)
        if clear:
            for play in plays:
                zone, card = play.split(":")
                self.lift(zone, card)
        return out

    def deal(self, tricks) -> None:
        for plays in tricks:
            self.trick(*plays)

    def kinds(self, kind: str) -> list:
        return [s.data for s in self.signals if s.kind == kind]

    def mistakes(self, kind: str | None = None) -> list:
        return [s for s in self.signals if s.kind == "mistake" and (kind is None or s.data["type"] == kind)]

    @property
    def summary(self) -> dict:
        return self.tracker.summary()


# A legal 3-player dealer_leads deal, dealer seat1 (first hand seat2), worked by hand:
# winners seat3, seat1 (the prikup Ah: the dealer's), seat1, seat3, seat2, seat1, seat3, seat2, seat3, seat2
DEAL_A = [
    ("prikup:7s", "seat2:8s", "seat3:As", "seat1:9s"),
    ("prikup:Ah", "seat2:7h", "seat3:8h", "seat1:9h"),
    ("seat2:10s", "seat3:Js", "seat1:Qs"),
    ("seat1:7c", "seat2:8c", "seat3:9c"),
    ("seat3:7d", "seat1:8d", "seat2:9d"),
    ("seat2:10c", "seat3:Jc", "seat1:Qc"),
    ("seat1:10d", "seat2:Jd", "seat3:Qd"),
    ("seat3:10h", "seat1:Jh", "seat2:Qh"),
    ("seat2:Kc", "seat3:Ac", "seat1:Ks"),
    ("seat3:Kd", "seat1:Kh", "seat2:Ad"),
]
DEAL_A_WINNERS = ["seat3", "seat1", "seat1", "seat3", "seat2", "seat1", "seat3", "seat2", "seat3", "seat2"]
DEAL_A_TAKEN = {"seat1": 3, "seat2": 3, "seat3": 4}


def event_lines(tricks=DEAL_A) -> list[str]:
    """A table event file's lines (FORMATS.md) for these tricks: each trick's cards laid a
    second apart, then lifted."""
    import json

    lines, t = [], 0.0
    for trick in tricks:
        for play in trick:
            zone, card = play.split(":")
            t += 1
            lines.append(json.dumps({"t": t, "zone": zone, "event": "placed", "card": card}))
        for play in trick:
            zone, card = play.split(":")
            t += 0.1
            lines.append(json.dumps({"t": t, "zone": zone, "event": "removed", "card": card}))
    return lines


def rotate_deal(tricks, mapping: dict[str, str]):
    """DEAL_A with seats renamed (e.g. to deal it from another dealer)."""
    return [tuple(f"{mapping.get(p.split(':')[0], p.split(':')[0])}:{p.split(':')[1]}" for p in trick)
            for trick in tricks]


@functools.cache
def deal_a_analysis():
    """The double-dummy analysis of :data:`DEAL_A` played on :func:`config`'s table (about a CPU
    second of search), made once per test process for the tests that show or store it: the
    same events give the same summary entry, so the same analysis."""
    from controller.core.analysis import analyse_entry

    script = Script(config())
    script.deal(DEAL_A)
    return analyse_entry(script.tracker.records[0].entry, script.cfg.rules, 3)
