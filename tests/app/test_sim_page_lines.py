"""The simulated players as a group with a phone plays (``entry="page"``): the auction's result
in one line, whists from the page, and claims -- exactly FORMATS-contracts.md's second-edition
lines; the token players are unchanged."""

from __future__ import annotations

import re

from controller.app.sim import BiddingSimulator, Noise, PageLine, make_deck
from controller.core.config import GameConfig, Rules
from controller.core.events import GAMES, PLACED, REMOVED

GAME = GameConfig(rules=Rules(bidding=True))


def _lines(seed: int, deals: int = 12):
    deck = make_deck(seed)
    sim = BiddingSimulator(GAME, seed=seed, deck=deck, noise=Noise(), entry="page", claims=0.8)
    return list(sim.deals(deals)), sim, deck


def test_page_players_enter_results_and_claims_as_the_contract_says():
    events, sim, deck = _lines(3)
    page = [e.to_dict() for e in events if isinstance(e, PageLine)]
    results = [line for line in page if line["event"] == "result"]
    claims = [line for line in page if line["event"] == "claim"]
    assert results and claims and not [line for line in page if line["event"] in ("bid", "contract")]
    for line in results:
        assert set(line) == {"t", "event", "seat", "game"}
        assert line["game"] in GAMES + ("misere",) and re.fullmatch(r"seat[123]", line["seat"])
    for i, line in enumerate(page):
        if line["event"] == "claim":
            assert set(line) == {"t", "event", "tricks"}
            tricks = line["tricks"]
            assert sorted(tricks) == ["seat1", "seat2", "seat3"]
            assert all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in tricks.values())
            assert page[i + 1] == {"t": page[i + 1]["t"], "event": "button", "button": "confirm"}
    times = [e.t for e in events]
    assert times == sorted(times)                                    # t never decreases
    # every deal's first line is its result, or (all passed) a card: no card before a result
    assert all(e.event in (PLACED, REMOVED) or isinstance(e, PageLine) for e in events)


def test_a_claim_splits_the_tricks_left_after_the_tricks_played():
    events, _, deck = _lines(5, deals=20)
    played = 0                   # seat-zone cards of the deal since its result line
    for e in events:
        if isinstance(e, PageLine) and e.event == "result":
            played = 0
        elif not isinstance(e, PageLine) and e.event == PLACED and e.zone != "prikup" \
                and deck.card_for(e.uid) is not None:
            played += 1
        elif isinstance(e, PageLine) and e.event == "claim":
            assert sum(e.line["tricks"].values()) == 10 - played // 3 and played % 3 == 0


def test_the_token_players_are_unchanged_by_the_page_mode():
    deck = make_deck(9, token_sets=3)
    a = [e for e in BiddingSimulator(GAME, seed=9, deck=deck, noise=Noise.demo()).deals(4)]
    b = [e for e in BiddingSimulator(GAME, seed=9, deck=deck, noise=Noise.demo(), entry="tokens").deals(4)]
    assert a == b and not any(isinstance(e, PageLine) for e in a)
