"""A frozen picture of the table after one event: the one thing outputs read.

The service builds a :class:`TableSnapshot` on its loop thread after every
table event and publishes it on the bus; the LEDs, displays, the terminal
view, the web page and the club feed render it on their own threads, so
nothing but the loop ever touches the live tracker.  Everything in it is
immutable or a fresh JSON-ready value: what ``/api/state`` serves; the club
feed's ``state`` message carries a bounded subset of it (the table now, not the
session's history: ``controller.app.mqtt.board_state``).  The field names follow FORMATS.md
(the trick, deal-entry and pulka objects are its summary's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Sequence

from .lazy import LazySequence
from .scoring import settlement_object
from .view import Indications, indications

NO_LINK: Mapping[str, str] = MappingProxyType({"state": "none", "detail": ""})
# the game log's writes: "full" while they fail (a full disk), "waiting" the bytes kept in memory
NO_STORAGE: Mapping = MappingProxyType({"full": False, "waiting": 0})
DISK_FULL = "DISK FULL: log kept"       # the display's last row while the log cannot be written


@dataclass(frozen=True)
class TableSnapshot:
    """The table at one moment (see the module docstring)."""

    seq: int                                  # table events handled in this session
    session: str                              # the session folder's name, "" if none
    players: int
    seats: tuple[str, ...]
    names: Mapping[str, str]
    phase: str                                # "idle" between deals, "play" during one; in a deal
                                              # with an auction also "auction", "contract",
                                              # "whisting", and "claim" (a claim waits for confirm)
    deal: Mapping | None                      # the deal in progress (JSON-ready), None between deals
    on_table: Mapping[str, tuple[str, ...]]   # zone -> cards lying there now, every zone present
    last_trick: Mapping | None                # FORMATS.md trick object of the last closed trick
    alerts: tuple[Mapping, ...]               # mistakes awaiting `confirm`
    pulka: Mapping                            # FORMATS.md summary "pulka"
    settlement: Mapping                       # {"convention", "balance"}
    deals: Sequence[Mapping]                  # ended deals, FORMATS.md summary entries, oldest first
    next_deal: Mapping                        # {"dealer", "price"} of the deal to come
    leftover: bool = False                    # cards of the finished deal still lie on the table
    link: Mapping = field(default_factory=lambda: NO_LINK)   # {"state": none|waiting|connected, "detail"}
    indications: Indications = field(default_factory=Indications)   # the 20x4 board, LEDs, beep
    storage: Mapping = field(default_factory=lambda: NO_STORAGE)   # {"full", "waiting"}: the log's writes

    @property
    def display(self) -> tuple[str, ...]:
        return self.indications.lines

    @property
    def leds(self) -> Mapping[str, str]:
        return self.indications.leds

    @property
    def beep_ms(self) -> int:
        return self.indications.beep_ms

    def to_dict(self) -> dict:
        """JSON-ready (``/api/state``; README "The table's state as JSON")."""
        return {
            "seq": self.seq, "session": self.session, "players": self.players,
            "seats": list(self.seats), "names": dict(self.names), "phase": self.phase,
            "deal": self.deal, "on_table": {z: list(c) for z, c in self.on_table.items()},
            "last_trick": self.last_trick, "alerts": [dict(a) for a in self.alerts],
            "pulka": self.pulka, "settlement": self.settlement, "deals": list(self.deals),
            "next_deal": dict(self.next_deal), "leftover": self.leftover,
            "link": dict(self.link),
            "display": list(self.display), "leds": dict(self.leds), "beep_ms": self.beep_ms,
            "storage": dict(self.storage),
        }


def contract_view(deal, phase: str) -> dict:
    """The contract phase of a deal with an auction (JSON-ready): whose call it is in the
    auction or the whisting, the bid to beat, the declarer's game and its trumps, the
    whisters, their mode, the tricks the contract needs (FORMATS-contracts.md names), and
    the claim on record (``{"tricks", "state"}``, state ``waiting`` until `confirm`) or None."""
    from .bidding import level, trump_of
    from .contract_scoring import obligation
    b = deal.bidding
    top = b.auction.highest
    turn = None
    if phase == "auction":
        turn = b.auction.turn
    elif phase == "contract":
        turn = b.declarer
    elif phase == "whisting":
        turn = b.whisting.turn
    game = b.game
    return {"kind": deal.kind_name, "phase": phase, "turn": turn,
            "auction": [{"seat": s, "bid": v} for s, v in b.auction.calls],
            "bid_to_beat": {"seat": top[0], "bid": top[1]} if top else None,
            "declarer": b.declarer, "game": game, "value": deal.value,
            "trump": trump_of(game) if game else None,
            "whist_calls": [{"seat": s, "call": c} for s, c in b.whisting.calls] if b.whisting else [],
            "whisters": list(deal.whisters), "whist_mode": deal.whist_mode,
            "needs": ({"declarer": level(game), "whisters": obligation(game, deal.rules)}
                      if game and game != "misere" else None),
            "claim": ({"tricks": dict(deal.claim), "state": "confirmed" if deal.claim_confirmed else "waiting"}
                      if deal.claim is not None else None)}


class DealHistory(LazySequence):
    """The ended deals of a session as FORMATS.md summary entries, oldest first; immutable.

    A resumed session's older deals are still journal lines: they are decoded only when
    an output reads them (the web page's history), never at every event, so a
    10,000-deal session costs the loop nothing.  Decoding is pure and caches nothing
    shared, so any thread may read."""

    def __init__(self, items: tuple = (), decode=None, cache: dict | None = None):
        super().__init__(items)
        self._decode = decode
        self._cache = cache if cache is not None else {}   # index -> decoded entry, shared by the
                                                            # builder's histories (an entry never changes)

    def _item(self, index: int):
        item = self._items[index]
        if hasattr(item, "entry"):
            return item.entry
        entry = self._cache.get(index)
        if entry is None:
            entry = self._cache[index] = self._decode(item).entry
        return entry

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"DealHistory({len(self)} deals)"


class SnapshotBuilder:
    """Builds snapshots of one session's tracker, reusing what did not change.

    The ended deals and the settlement change only when a deal ends or is taken
    back, so they are rebuilt only when the number of records changes: an event
    costs the same at deal 1 and at deal 1,000.
    """

    def __init__(self, session: str = ""):
        self.session = session
        self._records = -1
        self._deals: DealHistory = DealHistory()
        self._decoded: dict[int, Mapping] = {}
        self._pulka: Mapping = {}
        self._settlement: Mapping = {}

    def build(self, tracker, *, seq: int, link: Mapping = NO_LINK, beep_ms: int = 0,
              notice: str = "", storage: Mapping | None = None) -> TableSnapshot:
        config = tracker.config
        names = config.table.names
        count = len(tracker.records)
        if count != self._records:
            self._records = count
            for index in [i for i in self._decoded if i >= count]:   # an undo took deals back
                del self._decoded[index]
            self._deals = DealHistory(*tracker.records.frozen(), cache=self._decoded)
            self._pulka = tracker.pulka.to_dict()
            self._settlement = settlement_object(self._pulka, tracker.rules)
        deal = tracker.deal
        deal_view = None
        if deal is not None:
            deal_view = {"number": deal.number, "dealer": deal.dealer, "price": deal.price,
                         "trick": min(len(deal.tricks) + 1, deal.total_tricks),
                         "expected": deal.expected,
                         "current": [[zone, str(card)] for zone, card in deal.current],
                         "taken": deal.taken, "tricks": [t.to_dict() for t in deal.tricks]}
            if deal.bidding is not None:
                deal_view.update(contract_view(deal, tracker.phase))
        on_table: dict[str, list[str]] = {zone: [] for zone in tracker.zones}
        for zone, card in tracker.present:
            on_table.setdefault(zone, []).append(str(card))
        dealer, step = tracker.next_deal_params()
        last = tracker.last_trick
        return TableSnapshot(
            seq=seq, session=self.session, players=tracker.players, seats=config.table.seats,
            names=MappingProxyType(dict(names)), phase=tracker.phase,
            deal=deal_view, on_table=MappingProxyType({z: tuple(sorted(c)) for z, c in on_table.items()}),
            last_trick=last.to_dict() if last is not None else None,
            alerts=tuple(MappingProxyType(dict(a)) for a in tracker.alerts),
            pulka=self._pulka, settlement=self._settlement, deals=self._deals,
            next_deal=MappingProxyType({"dealer": dealer, "price": tracker.rules.progression[step]}),
            leftover=bool(tracker.leftover),
            link=MappingProxyType(dict(link)),
            storage=MappingProxyType(dict(storage or NO_STORAGE)),
            indications=indications(tracker, names, beep_ms, notice,
                                    alarm=DISK_FULL if storage and storage.get("full") else ""))
