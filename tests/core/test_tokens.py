"""Bidding tokens: the control line a token makes in each phase, and the tracker reading them
(controller.core.tokens, the tracker reading them)."""

import pytest

from controller.core.cards import DECK
from controller.core.config import GameConfig, Rules
from controller.core.deck import Deck
from controller.core.errors import EventError
from controller.core.events import BID, CONTRACT, WHIST, WHIST_MODE, TableEvent, control, placed, removed
from controller.core.tracker import DealTracker as TokenTracker
from controller.core.tokens import TOKENS, control_line_for, parse_token, phase_of


@pytest.mark.parametrize("token,phase,event,seat,call", [
    ("pass", "idle", BID, "seat2", "pass"),
    ("pass", "auction", BID, "seat2", "pass"),
    ("pass", "whisting", WHIST, "seat2", "pass"),
    ("pass", "contract", WHIST, "seat2", "pass"),
    ("7h", "idle", BID, "seat2", "7h"),
    ("7h", "auction", BID, "seat2", "7h"),
    ("7h", "contract", CONTRACT, "seat2", "7h"),
    ("8n", "whisting", CONTRACT, "seat2", "8n"),
    ("misere", "auction", BID, "seat2", "misere"),
    ("misere", "play", CONTRACT, "seat2", "misere"),
    ("whist", "whisting", WHIST, "seat3", "whist"),
    ("whist", "auction", WHIST, "seat3", "whist"),
    ("half", "whisting", WHIST, "seat1", "half"),
    ("open", "play", WHIST_MODE, None, "open"),
    ("closed", "whisting", WHIST_MODE, None, "closed"),
])
def test_token_becomes_the_control_line_of_its_phase(token, phase, event, seat, call):
    line = control_line_for(token, seat or "seat3", phase, t=4.5)
    assert (line.event, line.seat, line.call, line.t) == (event, seat, call, 4.5)
    # the line is the one a typed control line of FORMATS-contracts.md gives
    assert line == control(4.5, event, call, seat)


def test_token_on_the_prikup_zone_makes_no_line():
    assert control_line_for("pass", "prikup", "auction") is None
    assert control_line_for("whist", None, "whisting") is None


def test_token_words():
    assert len(TOKENS) == len(set(TOKENS)) == 1 + 25 + 1 + 2 + 2
    assert parse_token("MISÈRE") == "misere" and parse_token(" 10N ") == "10n"
    for bad in ("11s", "maybe", "", 7, None, "5h"):
        with pytest.raises(EventError, match="unknown bidding token"):
            parse_token(bad)


def test_phase_of():
    assert phase_of(None) == "idle"


# --- the tracker reading tokens -------------------------------------------------------------

SEATS = ("seat1", "seat2", "seat3")


def token_deck():
    """The 32 cards and one token set per seat: UID 'B<seat><word index>'."""
    cards = {f"C{i:02X}": card for i, card in enumerate(DECK)}
    bids = {f"B{s}{i:02X}": word for s in range(1, 4) for i, word in enumerate(TOKENS)}
    return Deck(cards, bids)


DECK_T = token_deck()


def uid(seat: str, word: str) -> str:
    """The token of ``word`` in ``seat``'s set (the prikup zone borrows seat1's)."""
    return f"B{seat[-1] if seat.startswith('seat') else 1}{TOKENS.index(word):02X}"


class Table:
    def __init__(self, **rules):
        self.tracker = TokenTracker(GameConfig(rules=Rules(bidding=True, **rules)), DECK_T)
        self.t = 0.0

    def lay(self, seat, word, lift=True):
        self.t += 1
        out = self.tracker.feed(placed(self.t, seat, uid=uid(seat, word)))
        if lift:
            self.t += 1
            assert self.tracker.feed(removed(self.t, seat, uid=uid(seat, word))) == []
        return out


def kinds(signals):
    return [s.kind for s in signals]


def test_tokens_play_an_auction_contract_and_whisting():
    table = Table()                     # dealer seat1: seat2 first hand, then seat3, seat1
    assert kinds(table.lay("seat2", "6s")) == ["deal_start", "bid"]
    assert kinds(table.lay("seat3", "pass")) == ["bid"]
    out = table.lay("seat1", "pass")
    assert kinds(out) == ["bid", "auction"] and out[-1].data["declarer"] == "seat2"
    out = table.lay("seat2", "7h")      # the first game token after the auction: the contract line
    assert kinds(out) == ["contract"] and out[0].data["game"] == "7h"
    out = table.lay("seat2", "8h")      # a second one is refused, signalled
    assert kinds(out) == ["mistake"] and out[0].data["mistake"] == "invalid_control"
    assert kinds(table.lay("seat3", "pass")) == ["whist"]       # pass now means a whist pass
    out = table.lay("seat1", "whist")
    assert kinds(out) == ["whist", "whisting"] and out[-1].data["whisters"] == ["seat1"]
    assert kinds(table.lay("seat3", "open")) == ["whist_mode"]
    deal = table.tracker.deal
    assert deal.bidding.game == "7h" and deal.whisters == ["seat1"] and deal.whist_mode == "open"


def test_a_token_out_of_turn_is_an_invalid_control_line():
    table = Table()
    out = table.lay("seat3", "6s")
    assert kinds(out) == ["mistake"] and out[0].data["mistake"] == "invalid_control"
    assert table.tracker.deal is None


def test_a_token_read_twice_without_a_lift_is_one_call():
    table = Table()
    assert kinds(table.lay("seat2", "6s", lift=False)) == ["deal_start", "bid"]
    table.t += 1
    assert table.tracker.feed(placed(table.t, "seat2", uid=uid("seat2", "6s"))) == []
    table.t += 1
    assert table.tracker.feed(removed(table.t, "seat2", uid=uid("seat2", "6s"))) == []
    assert len(table.tracker.deal.bidding.auction.calls) == 1


def test_a_token_on_the_prikup_zone_does_nothing():
    table = Table()
    assert table.lay("prikup", "pass") == []
    assert table.tracker.deal is None and not table.tracker.alerts


def test_tokens_with_bidding_off_are_invalid_control_lines():
    tracker = TokenTracker(GameConfig(rules=Rules(bidding=False)), DECK_T)
    out = tracker.feed(placed(1.0, "seat2", uid=uid("seat2", "6s")))
    assert kinds(out) == ["mistake"] and out[0].data["mistake"] == "invalid_control"


def test_a_tokens_log_replays_to_the_same_lines():
    """The raw placed lines carry the tokens; feeding them again gives the same signals."""
    table = Table()
    events, signals = [], []
    plan = [("seat2", "misere"), ("seat3", "pass"), ("seat1", "pass"), ("seat2", "misere"),
            ("seat3", "closed")]
    for seat, word in plan:
        for kind in ("placed", "removed"):
            table.t += 1
            ev = TableEvent(table.t, kind, seat, uid=uid(seat, word))
            events.append(ev)
            signals += [s.to_dict() for s in table.tracker.feed(ev)]
    assert table.tracker.deal.whist_mode == "closed"
    again = TokenTracker(table.tracker.config, DECK_T)
    assert [s.to_dict() for s in again.feed_all(events)] == signals
