"""``demo --bidding``: whole games through the emulated hub, the calls made with bidding tokens
laid on the players' own readers.  Synchronised on the table's events
(controller.app.demo_players.PacedPlayers), never on sleeps, and on a virtual clock: the players'
pauses pass at once, the emulated hub's firmware runs on the same time."""

import io
import json

from controller.app.demo import demo_deck, demo_simulator, run_demo
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig, Rules
from controller.core.deck import load_deck
from controller.core.events import read_events
from controller.core.tracker import DealTracker as TokenTracker

GAME = GameConfig(rules=Rules(bidding=True))
SEED, DEALS = 18, 4         # a seed whose four deals are a contract, a misère, a raspasovka and an unplayed deal


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def test_demo_bidding_through_the_emulated_hub(tmp_path):
    out = io.StringIO()
    result = run_demo(deals=DEALS, speed=8, seed=SEED, log_dir=tmp_path, game=GAME, stream=out,
                      clock=VirtualClock())
    summary = result["summary"]
    kinds = {d["kind"] for d in summary["deals"]}
    assert {"contract", "misere", "raspasovka", "unplayed"} <= kinds
    assert all(d["complete"] for d in summary["deals"]) and len(summary["deals"]) == DEALS
    for d in summary["deals"]:
        assert d["auction"], "every deal begins with its auction"
        if d["kind"] in ("contract", "misere"):
            assert len(d["tricks"]) == 10 and d["outcome"] in ("made", "failed") and d["declarer"]
        if d["kind"] == "unplayed":
            assert d["tricks"] == [] and d["outcome"] in ("passed", "half_whist", "ten_unwhisted")
    # the summary adds up: every deal's `written` sums to the pulka
    for seat, entry in summary["pulka"].items():
        assert entry["gora"] == sum(d["written"][seat]["gora"] for d in summary["deals"])
        assert entry["pulya"] == sum(d["written"][seat]["pulya"] for d in summary["deals"])
        for other, whists in entry["whists"].items():
            assert whists == sum(d["written"][seat]["whists"][other] for d in summary["deals"])
    assert abs(sum(summary["settlement"]["balance"].values())) <= 0.02     # each balance rounded to 0.01

    # the same players fed straight to the tracker: the hub changed nothing
    deck = demo_deck(GAME, SEED)
    direct = TokenTracker(GAME, deck)
    direct.feed_all(demo_simulator(GAME, SEED, deck, 8).deals(DEALS))
    assert json.loads(json.dumps(direct.summary())) == summary

    # the calls came from tokens: the log's table events are raw tag lines, its derived lines the calls
    folder = result["session"]
    lines = (folder / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines if '"kind"' not in line]
    assert {e["event"] for e in events} <= {"placed", "removed"}
    assert any(json.loads(line).get("kind") == "bid" for line in lines)
    session_deck = load_deck(folder / "deck.toml")
    assert session_deck == deck and len(session_deck.bids) == 3 * 31

    # the log replays exactly, every derived line, to its summary
    tracker = TokenTracker(GAME, session_deck)
    again = []
    for ev in read_events(lines, tracker.zones):
        again.append(dumps(ev.to_dict()))
        again += [dumps(s.to_dict()) for s in tracker.feed(ev)]
    assert again == lines
    assert json.loads(json.dumps(tracker.summary())) == json.loads((folder / "summary.json").read_text())
    text = out.getvalue()
    assert f"deal {DEALS}/{DEALS}" in text and "misere" in text


def test_the_default_demo_players_are_unchanged():
    """The raspasovka players of the default demo lay exactly the events they laid before
    ``--bidding`` was added (a digest of 8 seeds x 3 configs, taken before the change)."""
    import hashlib

    from controller.app.sim import Noise, TableSimulator, make_deck
    from controller.core.config import Table

    digest = hashlib.sha256()
    for seed in range(8):
        for game in (GameConfig(), GameConfig(Table(players=4)), GameConfig(rules=Rules(prikup="closed"))):
            # (the second: the demo's players as they were configured then, at --speed 4)
            for sim in (TableSimulator(game, seed=seed, noise=Noise.demo()),
                        TableSimulator(game, seed=seed, deck=make_deck(seed), noise=Noise.demo(), step_s=0.2,
                                       gather_s=2.4, min_gap_s=0.32)):
                for ev in sim.deals(5):
                    digest.update(ev.to_json().encode())
    digest.update(make_deck(3).to_toml().encode())
    assert digest.hexdigest() == "e4a2a243774cd8035f4ddd7cfc491bc7474cfd13e8109a4fc8c80b0c19e5e664"
