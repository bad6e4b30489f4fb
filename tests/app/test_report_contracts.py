"""The pulka picture of contract deals: entries as players write them, from
the summary's ``written`` -- game values into the pulya, remiz on the gora, whists on each
opponent -- the pulya target, closed pulyas and help."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from controller.app.report import derive_history, render_html, render_svg, written_writes
from controller.app.sim import BiddingSimulator, Noise, make_deck
from controller.core.config import GameConfig, Rules
from controller.core.events import control
from controller.core.tracker import DealTracker as TokenTracker
from controller.core.tracker import DealTracker

NS = "{http://www.w3.org/2000/svg}"


def texts(svg: str, where: str = "") -> list[str]:
    root = ET.fromstring(svg)
    scope = root.find(f".//{NS}g[@id='{where}']") if where else root
    assert scope is not None, f"no group {where}"
    return ["".join(el.itertext()).strip() for el in scope.iter(f"{NS}text")]


def classed(svg: str, klass: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(el.itertext()).strip() for el in root.iter(f"{NS}text")
            if klass in (el.get("class") or "").split()]


def play_calls(tracker: DealTracker, calls) -> None:
    t = 0.0
    for event, seat, value in calls:
        t += 1
        tracker.feed(control(t, event, value, seat))


SEATS = ("seat1", "seat2", "seat3")


def both_pass(first_hand, declarer, game):
    """An auction won by ``declarer`` with ``game`` (the others pass), both defenders pass."""
    at = SEATS.index(first_hand)
    order = SEATS[at:] + SEATS[:at]
    calls = [("bid", s, game if s == declarer else "pass") for s in order]
    at = order.index(declarer)
    defenders = [order[(at + 1) % 3], order[(at + 2) % 3]]
    return calls + [("contract", declarer, game)] + [("whist", d, "pass") for d in defenders]


def example_13() -> DealTracker:
    """RULES-contracts.md worked example 13: pulya_target = 10; seat2 8♠, seat3 6♠, seat2 8♦,
    each with both defenders passing; deal 3 closes seat2's pulya and helps seat3 by 2."""
    tracker = DealTracker(GameConfig(rules=Rules(bidding=True, pulya_target=10)))
    play_calls(tracker, both_pass("seat2", "seat2", "8s") + both_pass("seat3", "seat3", "6s")
               + both_pass("seat1", "seat2", "8d"))
    return tracker


def test_example_13_written_into_the_pulka_with_help():
    tracker = example_13()
    summary = tracker.summary()
    assert [d["outcome"] for d in summary["deals"]] == ["passed"] * 3
    assert summary["deals"][2]["help"] == [{"from": "seat2", "to": "seat3", "points": 2}]
    history = derive_history(summary)
    assert history["seat2"]["pulya"] == [6, 10]          # 6, then 4 of the 6 (closed at the target)
    assert history["seat3"]["pulya"] == [2, 4]           # its 2, then 2 of help
    assert history["seat2"]["whists"]["seat3"] == [20]   # the helper writes 10 whists a point
    # the exact per-deal writes of the tracker tell the same story
    assert derive_history(tracker.report_summary()) == history
    svg = render_svg(summary)
    assert "6.10.\u2016" in texts(svg, "sector-seat2")  # the closed pulya, barred
    assert classed(svg, "pulya-closed") == ["6.10.\u2016"]
    assert "2.4" in texts(svg, "sector-seat3")
    assert "20" in texts(svg, "sector-seat2")
    assert classed(svg, "pulya-target") == ["pulya 10"]
    assert texts(svg, "help")[1:] == ["deal 3: seat2 \u2192 seat3 2 (20 whists)"]
    table = texts(svg, "history")
    assert {"game", "outcome", "8\u2660 seat2", "6\u2660 seat3", "8\u2666 seat2", "both pass"} <= set(table)


def test_a_failed_contract_writes_remiz_and_whists_by_opponent():
    """Worked example 2's entries (7♥ down two, both whist): gora 8 on the declarer, 20 and 16
    whists written on him by the defenders -- drawn from a hand-written summary's ``written``."""
    zero = {"gora": 0, "pulya": 0}
    written = {"seat1": {**zero, "whists": {"seat2": 16, "seat3": 0}},
               "seat2": {"gora": 8, "pulya": 0, "whists": {"seat1": 0, "seat3": 0}},
               "seat3": {**zero, "whists": {"seat1": 0, "seat2": 20}}}
    deal = {"number": 1, "dealer": "seat1", "price": 1, "kind": "contract", "declarer": "seat2",
            "game": "7h", "outcome": "failed", "tricks": [], "revoke": None, "complete": True,
            "taken": {"seat1": 2, "seat2": 5, "seat3": 3}, "written": written, "help": []}
    pulka = {s: {"gora": w["gora"], "pulya": w["pulya"], "whists": dict(w["whists"])} for s, w in written.items()}
    summary = {"deals": [deal], "pulka": pulka, "pulya_target": None, "finished_after_deal": None}
    assert written_writes(written) == {"gora": {"seat2": 8}, "pulya": {},
                                       "whists": [["seat1", "seat2", 16], ["seat3", "seat2", 20]]}
    svg = render_svg(summary, {"seat2": "Boris"})
    assert "8" in classed(svg, "gora") and "20" in texts(svg, "sector-seat3") and "16" in texts(svg, "sector-seat1")
    assert {"7\u2665 Boris", "failed"} <= set(texts(svg, "history"))
    assert not classed(svg, "pulya-target") and not classed(svg, "pulya-closed")
    page = render_html(summary)
    assert '<th scope="col">game</th>' in page and "7\u2665 seat2" in page


def test_a_simulated_game_of_every_kind_is_drawn():
    """Whole simulated games (contracts, misères, raspasovkas, unplayed deals) with a pulya
    target: the running sums drawn end at the pulka's figures, and the picture parses."""
    game = GameConfig(rules=Rules(bidding=True, pulya_target=12))
    deck = make_deck(4, token_sets=3)
    tracker = TokenTracker(game, deck)
    sim = BiddingSimulator(game, seed=4, deck=deck, noise=Noise.demo())
    tracker.feed_all(sim.deals(40))
    summary = tracker.summary()
    kinds = {d["kind"] for d in summary["deals"]}
    assert {"contract", "misere", "raspasovka", "unplayed"} <= kinds
    history = derive_history(summary)
    for seat, entry in summary["pulka"].items():
        for column in ("gora", "pulya"):
            sums = history[seat][column]
            assert (sums[-1] if sums else 0) == entry[column]
        for other, value in entry["whists"].items():
            sums = history[seat]["whists"][other]
            assert (sums[-1] if sums else 0) == value
    svg = render_svg(summary)
    ET.fromstring(svg)
    assert len(texts(svg, "history")) > 10 * len(summary["deals"])
    if summary["finished_after_deal"] is not None:
        assert any(f"finished after deal {summary['finished_after_deal']}" in t for t in texts(svg))
        assert len(classed(svg, "pulya-closed")) == 3
