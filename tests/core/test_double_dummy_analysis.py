"""The analysis of played deals: the costs add up (with both searches, the pure and the
compiled), and the deals that cannot be analysed say why."""

from __future__ import annotations

import json

import pytest
from contract_games import MixedGame
from table_script import DEAL_A, Script, config
from test_double_dummy import ENGINE_PARAMS

from controller.core.analysis import analyse_entry, analysis_from_dict
from controller.core.double_dummy import ENGINES
from controller.core.config import GameConfig, Rules, Table
from controller.core.tracker import DealTracker
from controller.store.analyses import ANALYSIS, AnalysisFile, deal_key


def played_deals(seed: int, count: int, players: int = 3, **rules) -> tuple[GameConfig, list[dict]]:
    cfg = GameConfig(Table(players=players), Rules(bidding=True, **rules))
    tracker = DealTracker(cfg)
    tracker.feed_all(MixedGame(cfg, seed=seed).deals(count))
    return cfg, tracker.summary()["deals"]


def check_running_sum(result) -> None:
    """The result as played is the value at the start moved by every card's cost, each in
    its side's direction (the side playing for the most loses by its card's cost, the other
    side gives that much away)."""
    for name, values in result.values.items():
        assert len(values) == len(result.maximises[name]) + 1
        moved = values[0]
        for j, maximises in enumerate(result.maximises[name]):
            step = values[j] - values[j + 1]
            assert (step >= 0) if maximises else (step <= 0)        # no card does better than best
            moved -= step
        assert moved == values[-1] == result.played[name]


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
@pytest.mark.parametrize("seed, players, prikup", [(21, 3, "dealer_leads"), (22, 4, "suit_only"),
                                                   (23, 3, "closed")])
def test_costs_add_up(seed, players, prikup, engine):
    cfg, deals = played_deals(seed, 4, players, prikup=prikup)
    if engine != ENGINES[-1]:
        # the search the table does not run (the pure one beside the compiled): node for node
        # the same search (test_double_dummy), so its first two deals stand for the rest
        deals = deals[:2]
    kinds = set()
    for entry in deals:
        result = analyse_entry(entry, cfg.rules, players, full=True, engine=engine)
        if not result.analysed:
            continue
        kinds.add(result.kind)
        check_running_sum(result)
        # each card's cost is its own side's step in its own game
        for j, card in enumerate(result.cards):
            name = card.seat if result.kind == "raspasovka" else result.declarer
            step = result.values[name][j] - result.values[name][j + 1]
            assert card.loss == (step if result.maximises[name][j] else -step) >= 0
        if result.kind != "raspasovka":
            declarer_cards = [c for c in result.cards if c.seat == result.declarer]
            others = [c for c in result.cards if c.seat != result.declarer]
            sign = 1 if result.kind == "contract" else -1
            assert (result.best[result.declarer] - sign * sum(c.loss for c in declarer_cards)
                    + sign * sum(c.loss for c in others)) == entry["taken"][result.declarer]
    assert kinds, "no deal was analysed"


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_a_raspasovka_as_written_in_table_script(engine):
    """DEAL_A (3 players, dealer seat1): every seat's guarantee and the line for people."""
    script = Script(config())
    script.deal(DEAL_A)
    entry = script.summary["deals"][0]
    result = analyse_entry(entry, script.cfg.rules, 3, full=True, engine=engine)
    assert result.analysed and result.kind == "raspasovka"
    assert set(result.best) == {"seat1", "seat2", "seat3"}
    assert result.played == entry["taken"]
    check_running_sum(result)
    assert len(result.cards) == 30 and [c.trick for c in result.cards[:3]] == [1, 1, 1]
    assert result.line().startswith("best play: seat2 sure of ")
    data = result.to_dict()
    assert set(data) == {"number", "kind", "analysed", "reason", "dd", "cards"}
    assert set(data["dd"]) == {"guaranteed"}
    assert analysis_from_dict(json.loads(json.dumps(data)), entry["taken"]).line() == result.line()


def test_not_analysed_reasons():
    script = Script(config())
    script.trick(*DEAL_A[0])
    script.press("new_deal")                      # deal 1 abandoned
    script.deal(DEAL_A[:3])                       # deal 2: the events stop after trick 3
    tracker = script.tracker
    record = tracker.records[0]
    abandoned = analyse_entry(record.entry, tracker.rules, 3, abandoned=record.abandoned)
    assert not abandoned.analysed and "abandoned" in abandoned.reason
    assert abandoned.to_dict()["dd"] is None and abandoned.to_dict()["cards"] == []
    from controller.core.tracker import deal_entry
    stopped = analyse_entry(deal_entry(tracker.deal), tracker.rules, 3)
    assert not stopped.analysed and stopped.reason.startswith("stopped")

    cfg, deals = played_deals(31, 12)
    unplayed = next(d for d in deals if d["kind"] == "unplayed")
    assert analyse_entry(unplayed, cfg.rules, 3).reason.startswith("not played")
    played = next(d for d in deals if d["kind"] == "contract")
    assert analyse_entry(played, cfg.rules, 3).analysed
    claimed = dict(played, claimed={"seat1": 1, "seat2": 0, "seat3": 0})   # FORMATS-contracts: claimed
    assert "claim" in analyse_entry(claimed, cfg.rules, 3).reason


def test_a_revoke_is_not_analysed():
    """A card the rules forbid (seat2 discards a club while holding the led spade, and
    proves it later): best play is not defined past it."""
    tricks = [list(t) for t in DEAL_A]
    # swap seat2's 8♠ (trick 1) and 8♣ (trick 4): seat2 discards a club to the spade lead
    tricks[0][1], tricks[3][1] = "seat2:8c", "seat2:8s"
    script = Script(config())
    script.deal(tricks)
    entry = script.summary["deals"][0]
    result = analyse_entry(entry, script.cfg.rules, 3)
    assert not result.analysed and "revoke" in result.reason


def test_another_config_is_caught():
    """Analysed with the wrong prikup mode, the tricks are not the rules' own."""
    script = Script(config())
    script.deal(DEAL_A)
    entry = script.summary["deals"][0]
    result = analyse_entry(entry, Rules(prikup="closed"), 3)
    assert not result.analysed and "another config" in result.reason


def test_analysis_file_round_trip(tmp_path):
    script = Script(config())
    script.deal(DEAL_A)
    entry = script.summary["deals"][0]
    result = analyse_entry(entry, script.cfg.rules, 3)
    store = AnalysisFile(tmp_path)
    assert store.cached(entry) is None
    store.append(entry, result)
    (tmp_path / ANALYSIS).open("ab").write(b'{"deal": 2, "key": "torn')        # a torn last line
    again = AnalysisFile(tmp_path).cached(entry)
    assert again is not None and again.to_dict() == result.to_dict() and again.line() == result.line()
    # the same deal finished otherwise (undo) has another key: made again
    other = dict(entry, tricks=entry["tricks"][:-1] + [entry["tricks"][0]])
    assert deal_key(other) != deal_key(entry) and AnalysisFile(tmp_path).cached(other) is None
    assert (tmp_path / ANALYSIS).stat().st_mode & 0o777 == 0o640
