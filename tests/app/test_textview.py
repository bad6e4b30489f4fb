"""`replay`'s text view says what each deal was (FORMATS-contracts.md's deal fields)."""

from __future__ import annotations

import json

from controller.app.sim import BiddingSimulator, make_deck
from controller.app.textview import deal_kind_text, summary_text
from controller.core.config import GameConfig, Rules, Table
from controller.core.tracker import DealTracker


def test_every_deal_kind_is_named_in_the_text_and_a_raspasovka_only_view_is_unchanged():
    game = GameConfig(Table(), Rules(bidding=True, pulya_target=10))
    deck = make_deck(1, token_sets=3)
    tracker = DealTracker(game, deck)
    tracker.feed_all(BiddingSimulator(game, seed=3, deck=deck).deals(40))
    summary = tracker.summary()
    text = summary_text(summary)
    rows = text.splitlines()[2:2 + len(summary["deals"])]
    kinds = {d["kind"] for d in summary["deals"]}
    assert {"raspasovka", "contract", "misere", "unplayed"} <= kinds
    for deal, row in zip(summary["deals"], rows):
        assert row.split()[0] == str(deal["number"])
        if deal["kind"] == "raspasovka":
            assert "raspasovka" in row
        elif deal["kind"] == "unplayed":
            assert f"{deal['declarer']} {deal['game']}: unplayed, {deal['outcome'].replace('_', ' ')}" in row
        else:
            assert f"{deal['declarer']} {deal['game']} {deal['outcome']}" in row
            for w in deal["whisters"]:
                assert w in row.split("(whist", 1)[1]
    assert "pulya target: 10" in text
    raspasovka_only = {k: v for k, v in json.loads(json.dumps(summary)).items()
                       if k not in ("pulya_target", "finished_after_deal")}
    for d in raspasovka_only["deals"]:
        del d["kind"]
    assert "raspasovka" not in summary_text(raspasovka_only) and "pulya target" not in summary_text(raspasovka_only)


def test_help_is_written_after_the_deal():
    deal = {"kind": "contract", "declarer": "seat1", "game": "6s", "outcome": "made", "whisters": ["seat2"],
            "whist_mode": "closed", "help": [{"from": "seat1", "to": "seat2", "points": 3},
                                               {"from": "seat1", "to": None, "points": 1}]}
    assert deal_kind_text(deal, {"seat1": "Ann", "seat2": "Bob"}) == \
        "Ann 6s made (whist Bob, closed); help Ann -> Bob 3; help Ann -> own gora 1"


def test_a_deal_stopped_before_its_contract_line_says_so():
    deal = {"kind": "contract", "declarer": "seat2", "game": None, "outcome": None, "whisters": [],
            "whist_mode": None, "help": []}
    assert deal_kind_text(deal, {}) == "seat2 won the auction, no contract line"
