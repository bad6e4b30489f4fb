"""PrefAndroid's house rules beyond its Sochi and Leningrad entries, hand-worked as
docs/RULES-variants.md's examples: the consolation at 10 a trick (``consolation_price``),
its Rostov raspasovka in whists (``raspasovka_whists``), and the pulka ended by the
pulyas' sum (``pulka_end``); and the preset ``prefandroid-rostov``.  The program's own
output for random pulkas is replayed by tests/core/test_program_variants.py."""

import pytest

from controller.core.config import game_config_from_dict, parse_rules
from controller.core.contract_scoring import ContractDeal, score_contract
from controller.core.errors import ConfigError
from controller.core.house_rules import describe
from controller.core.scoring import Pulka, Writes, pulya_order, score_deal

S3 = ("seat1", "seat2", "seat3")
S4 = ("seat1", "seat2", "seat3", "seat4")
ROSTOV = {"scoring": "whists", "whists_per_trick": 5}


def rules(players=3, **keys):
    return parse_rules(keys, players)


def failed_six(r, whisters=("seat3",)):
    """seat2 6♠ down one (5 tricks); seat3 took 3, seat1 2; dealer seat1."""
    d = ContractDeal(game="6s", declarer="seat2", ending="played", defenders=("seat3", "seat1"),
                     whisters=tuple(whisters), half_whister=None, dealer="seat1", seats=S3,
                     taken={"seat2": 5, "seat3": 3, "seat1": 2})
    return score_contract(r, d)[0]


# --- consolation_price ---------------------------------------------------------------------

def test_the_consolation_is_ten_a_trick_whatever_the_game():
    table = failed_six(rules())
    assert table.whists == {("seat3", "seat2"): 5 * 2 + 2, ("seat1", "seat2"): 2}
    ten = failed_six(rules(consolation_price="ten"))
    assert ten.whists == {("seat3", "seat2"): 5 * 2 + 10, ("seat1", "seat2"): 10}
    assert ten.gora == table.gora == {"seat2": 2}              # the remiz is the game's
    both = failed_six(rules(convention="leningrad", consolation_price="ten"), ("seat3", "seat1"))
    assert both.whists == {("seat3", "seat2"): (3 * 2 + 10) * 2, ("seat1", "seat2"): (2 * 2 + 10) * 2}


def test_a_made_contract_writes_no_consolation_either_way():
    d = ContractDeal(game="6s", declarer="seat2", ending="played", defenders=("seat3", "seat1"),
                     whisters=("seat3",), half_whister=None, dealer="seat1", seats=S3,
                     taken={"seat2": 6, "seat3": 3, "seat1": 1})
    assert score_contract(rules(consolation_price="ten"), d)[0].to_dict() == score_contract(rules(), d)[0].to_dict()


# --- raspasovka_whists ----------------------------------------------------------------------

def rasp(r, taken, dealer="seat1", seats=S3, price=1):
    active = pulya_order(seats, dealer)[:3] if len(seats) == 4 else seats
    return score_deal(r, seats, tuple(active), dealer, price, 0, taken, None)


@pytest.mark.parametrize("taken, all_tricks, beyond", [
    # a single fewest: the table writes every trick of the others, PrefAndroid those beyond his
    ({"seat1": 2, "seat2": 3, "seat3": 5}, {("seat1", "seat2"): 15, ("seat1", "seat3"): 25},
     {("seat1", "seat2"): 5, ("seat1", "seat3"): 15}),
    # a tie for the fewest: the table's two winners share; PrefAndroid writes nothing
    ({"seat1": 2, "seat2": 2, "seat3": 6}, {("seat1", "seat3"): 15, ("seat2", "seat3"): 15}, {}),
])
def test_rostov_raspasovka_beyond_the_single_fewest(taken, all_tricks, beyond):
    assert rasp(rules(**ROSTOV), taken).whists == all_tricks
    w = rasp(rules(**ROSTOV, raspasovka_whists="beyond_fewest"), taken)
    assert w.whists == beyond and w.gora == {} and w.pulya == {}


def test_no_trick_writes_the_price_in_pulya_and_the_dealer_once_more():
    r = rules(**ROSTOV, raspasovka_whists="beyond_fewest")
    w = rasp(r, {"seat1": 0, "seat2": 4, "seat3": 6}, price=2)      # the dealer seat1 took none
    assert w.pulya == {"seat1": 4} and w.whists == {("seat1", "seat2"): 40, ("seat1", "seat3"): 60}
    w = rasp(r, {"seat1": 3, "seat2": 0, "seat3": 7})
    assert w.pulya == {"seat2": 1} and w.whists == {("seat2", "seat1"): 15, ("seat2", "seat3"): 35}
    assert rasp(rules(**ROSTOV), {"seat1": 3, "seat2": 0, "seat3": 7}).pulya == {}


def test_four_players_the_sitting_out_dealer_writes_no_whists_only_his_pulya():
    with pytest.raises(ConfigError, match='"whists" is valid only with 3 players'):
        rules(4, **ROSTOV)
    r = rules(4, **ROSTOV, raspasovka_whists="beyond_fewest")
    w = rasp(r, {"seat1": 0, "seat2": 2, "seat3": 3, "seat4": 5}, seats=S4)
    assert w.whists == {("seat2", "seat3"): 5, ("seat2", "seat4"): 15} and w.pulya == {"seat1": 1}
    w = rasp(r, {"seat1": 1, "seat2": 2, "seat3": 3, "seat4": 4}, seats=S4)
    assert w.pulya == {} and w.whists == {("seat2", "seat3"): 5, ("seat2", "seat4"): 10}


# --- pulka_end ------------------------------------------------------------------------------

def test_the_pulka_ends_by_the_pulyas_sum_and_nothing_closes():
    def deal(r):
        pulka = Pulka(S3)
        pulka.pulya.update({"seat1": 9, "seat2": 2, "seat3": 0})
        w = Writes()
        w.add_pulya("seat1", 6)                                    # seat1 makes an 8
        return pulka, pulka.write_deal(r, w, pulya_order(S3, "seat3"))
    pulka, each = deal(rules(pulya_target=10))
    assert pulka.pulya == {"seat1": 10, "seat2": 7, "seat3": 0} and not each.finished
    assert [(h.to, h.points) for h in each.help] == [("seat2", 5)] and each.writes.whists == {("seat1", "seat2"): 50}
    pulka, total = deal(rules(pulya_target=10, pulka_end="sum"))
    assert pulka.pulya == {"seat1": 15, "seat2": 2, "seat3": 0} and total.help == [] and total.finished
    assert total.writes.whists == {}
    pulka, short = deal(rules(pulya_target=20, pulka_end="sum"))
    assert not short.finished and not pulka.finished(rules(pulya_target=20, pulka_end="sum"))


def test_without_a_target_the_sum_changes_nothing():
    pulka = Pulka(S3)
    w = Writes()
    w.add_pulya("seat1", 30)
    assert not pulka.write_deal(rules(pulka_end="sum"), w).finished and pulka.pulya["seat1"] == 30


# --- the presets --------------------------------------------------------------------------------

def test_the_prefandroid_rostov_preset():
    r = rules(4, preset="prefandroid-rostov")
    assert (r.scoring, r.whists_per_trick, r.progression, r.responsibility) == ("whists", 5, (1, 1), "half")
    assert r.book.raspasovka_whists == "beyond_fewest" and r.book.consolation(4) == 10
    assert r.book.gentleman_whist and r.book.series_after_last == "stay"
    assert "a failed contract's consolation is 10 a trick, whatever the game" in describe(r)


def test_the_prefandroid_leningrad_preset_ends_by_the_sum():
    assert rules(preset="prefandroid-leningrad").book.pulka_end == "sum"
    assert rules(preset="prefandroid-leningrad", pulka_end="each").book.pulka_end == "each"
    assert rules(preset="prefandroid-rostov").book.pulka_end == "each"
    with pytest.raises(ConfigError, match="rules.pulka_end: must be one of each, sum, got 'all'"):
        rules(pulka_end="all")


# --- through the tracker ------------------------------------------------------------------------

def _passed_six(pulka_end):
    """A session of PrefAndroid's Leningrad with a target of 2: seat2's 6♠ passed by both
    defenders is written as made, pulya 2 (RULES-contracts.md "Whisting")."""
    from table_script import Script

    cfg = game_config_from_dict({"rules": {"preset": "prefandroid-leningrad", "pulya_target": 2,
                                           "bidding": True, "pulka_end": pulka_end}})
    s = Script(cfg)
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6s")
    s.whists("seat3:pass", "seat1:pass")
    return s.summary


def test_the_sessions_summary_ends_the_pulka_by_the_sum():
    total = _passed_six("sum")
    assert total["pulka"]["seat2"]["pulya"] == 2 and total["finished_after_deal"] == 1
    each = _passed_six("each")
    assert each["pulka"]["seat2"]["pulya"] == 2 and each["finished_after_deal"] is None


def test_a_prefandroid_rostov_raspasovka_through_the_tracker():
    from table_script import DEAL_A, DEAL_A_TAKEN, Script

    s = Script(game_config_from_dict({"rules": {"preset": "prefandroid-rostov"}}))
    s.deal(DEAL_A)                                      # tricks 3/3/4: a tie for the fewest
    assert s.tracker.records[-1].entry["taken"] == DEAL_A_TAKEN
    assert all(v == 0 for e in s.summary["pulka"].values() for v in e["whists"].values())
    table = Script(game_config_from_dict({"rules": {"preset": "rostov"}}))
    table.deal(DEAL_A)                                  # RULES.md: the two fewest share 4 × 4
    assert table.summary["pulka"]["seat1"]["whists"]["seat3"] == 8
    assert s.tracker.next_deal_params() == ("seat2", 1)  # the deal passes on; the series counts
