"""Contract scoring and the pulya target (RULES-contracts.md "What a deal writes", "Revokes in
contract and misère deals", "Pulya target and help; the pulka's end", worked examples 1-15,
"Readings fixed"), called directly with the trick counts the examples give.

Also ported: the worked cases of the open-source score programs RULES-contracts.md cites
(kozlov, Gusev, PrefAndroid), each with its file and test name; where a program disagrees with
RULES-contracts.md the test follows RULES-contracts.md and says so.  The tracker-level runs of the
same examples belong to the contracts side (test_ref_contract.py).
"""

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from controller.core.config import Rules
from controller.core.contract_scoring import (GAMES, MISERE, ContractDeal, ContractRevoke, game_level,
                                              game_value, obligation, score_contract)
from controller.core.scoring import Pulka, Writes, pulya_order, score_deal, settle

S3 = ("seat1", "seat2", "seat3")
S4 = ("seat1", "seat2", "seat3", "seat4")


def active_after(seats, dealer):
    order = pulya_order(seats, dealer)
    return order if len(seats) == 3 else order[:3]


def deal(game, declarer="seat2", whisters=(), taken=None, ending="played", dealer="seat1", seats=S3,
         revoke=None, half_whister=None):
    """A ContractDeal as the tracker would build it; ``taken`` maps seats to tricks."""
    active = active_after(seats, dealer)
    i = active.index(declarer)
    defenders = (active[(i + 1) % 3], active[(i + 2) % 3])
    return ContractDeal(game=game, declarer=declarer, ending=ending, defenders=defenders,
                        whisters=tuple(whisters), half_whister=half_whister, dealer=dealer, seats=seats,
                        taken=dict(taken or {}), revoke=revoke)


def tricks(declarer_first, seats=S3, dealer="seat1"):
    """Tricks in the examples' order: the active seats from the first hand (seat2, seat3, seat1)."""
    return dict(zip(active_after(seats, dealer), declarer_first))


def expect(seats=S3, gora=None, pulya=None, whists=None):
    """The ``written`` object of exactly these entries, zeros everywhere else."""
    return Writes(dict(gora or {}), dict(pulya or {}), dict(whists or {})).per_seat(seats)


def score(rules, d):
    writes, outcome = score_contract(rules, d)
    return writes.per_seat(d.seats), outcome


SOCHI = Rules()
LENINGRAD = Rules(convention="leningrad")


# --- P and O ----------------------------------------------------------------------------------

def test_game_value_and_obligation_follow_the_table():
    for game in GAMES:
        level = game_level(game)
        assert game_value(game) == {6: 2, 7: 4, 8: 6, 9: 8, 10: 10}[level]
        assert obligation(game, SOCHI) == {6: 4, 7: 2, 8: 1, 9: 1, 10: 1}[level]
    assert game_value(MISERE) == 10 and obligation(MISERE, SOCHI) == 0
    assert obligation("10h", Rules(ten_whisted=False)) == 0
    assert [game_value(g) for g in ("6s", "7n", "8d", "9c", "10h")] == [2, 4, 6, 8, 10]
    for bad in ("11s", "5h", "6x", "pass", ""):
        with pytest.raises(ValueError):
            game_value(bad)


def test_unknown_ending_is_refused():
    with pytest.raises(ValueError):
        score_contract(SOCHI, deal("6s", ending="maybe"))


# --- the worked examples (RULES-contracts.md) -------------------------------------------------

def test_ex1_six_made_two_whisters_write_their_tricks():
    d = deal("6s", whisters=("seat3", "seat1"), taken=tricks((6, 2, 2)))
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2},
                                      whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4}), "made")


def test_ex2_seven_down_two_consolation_from_both_and_leningrad_doubles():
    d = deal("7h", whisters=("seat3", "seat1"), taken=tricks((5, 3, 2)))
    assert score(SOCHI, d) == (expect(gora={"seat2": 8},
                                      whists={("seat3", "seat2"): 20, ("seat1", "seat2"): 16}), "failed")
    assert score(LENINGRAD, d) == (expect(gora={"seat2": 16},
                                          whists={("seat3", "seat2"): 40, ("seat1", "seat2"): 32}), "failed")


def test_ex3_one_whister_writes_the_defence_and_his_remiz():
    # seat3 passed but his card won a trick: it counts for the whister (Readings fixed)
    d = deal("6c", whisters=("seat1",), taken=tricks((8, 1, 1)))
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2}, gora={"seat1": 4},
                                      whists={("seat1", "seat2"): 4}), "made")
    assert score(Rules(whist_responsibility="half"), d)[0] == expect(
        pulya={"seat2": 2}, gora={"seat1": 2}, whists={("seat1", "seat2"): 4})
    # Leningrad: whists doubled; its default responsibility is half, so the gora stays 4
    assert score(LENINGRAD, d)[0] == expect(pulya={"seat2": 2}, gora={"seat1": 4},
                                            whists={("seat1", "seat2"): 8})
    assert score(Rules(convention="leningrad", whist_responsibility="full"), d)[0] == expect(
        pulya={"seat2": 2}, gora={"seat1": 8}, whists={("seat1", "seat2"): 8})


def test_ex4_both_pass_writes_the_game_only():
    d = deal("8d", ending="passed")
    assert score(SOCHI, d) == (expect(pulya={"seat2": 6}), "passed")
    assert score(LENINGRAD, d) == (expect(pulya={"seat2": 6}), "passed")


def test_ex5_half_whist_and_the_first_defender_whisting_back():
    d = deal("7s", ending="half_whist", half_whister="seat1")
    assert score(SOCHI, d) == (expect(pulya={"seat2": 4}, whists={("seat1", "seat2"): 4}), "half_whist")
    assert score(LENINGRAD, d)[0] == expect(pulya={"seat2": 4}, whists={("seat1", "seat2"): 8})
    back = deal("7s", whisters=("seat3",), taken=tricks((7, 2, 1)))
    assert score(SOCHI, back) == (expect(pulya={"seat2": 4}, whists={("seat3", "seat2"): 12}), "made")


def test_ex6_misere():
    clean = deal(MISERE, taken=tricks((0, 6, 4)))
    assert score(SOCHI, clean) == (expect(pulya={"seat2": 10}), "made")
    caught = deal(MISERE, taken=tricks((2, 4, 4)))
    assert score(SOCHI, caught) == (expect(gora={"seat2": 20}), "failed")
    assert score(LENINGRAD, caught) == (expect(gora={"seat2": 40}), "failed")
    assert score(LENINGRAD, clean)[0] == expect(pulya={"seat2": 10})


def test_ex7_ten_whisted_and_unwhisted():
    d = deal("10n", whisters=("seat3",), taken=tricks((10, 0, 0)))
    assert score(SOCHI, d) == (expect(pulya={"seat2": 10}, gora={"seat3": 10}), "made")
    unwhisted = deal("10n", ending="ten_unwhisted")
    assert score(Rules(ten_whisted=False), unwhisted) == (expect(pulya={"seat2": 10}), "ten_unwhisted")


def test_ex8_eight_second_whist_responsible():
    d = deal("8s", whisters=("seat3", "seat1"), taken=tricks((10, 0, 0)))
    assert score(SOCHI, d) == (expect(pulya={"seat2": 6}, gora={"seat1": 6}), "made")
    assert score(Rules(second_whist_responsible=False), d)[0] == expect(
        pulya={"seat2": 6}, gora={"seat3": 6, "seat1": 6})
    assert score(Rules(whist_responsibility="half"), d)[0] == expect(pulya={"seat2": 6}, gora={"seat1": 3})


def test_ex9_six_two_whisters_one_short():
    for counts, seat3_whists in (((8, 2, 0), 4), ((7, 3, 0), 6)):
        d = deal("6s", whisters=("seat3", "seat1"), taken=tricks(counts))
        assert score(SOCHI, d) == (expect(pulya={"seat2": 2}, gora={"seat1": 4},
                                          whists={("seat3", "seat2"): seat3_whists}), "made")


def test_ex10_defender_revoke_trick_goes_to_the_declarer():
    revoke = ContractRevoke(offender="seat3", charged="seat3", by_declarer=False,
                            trick_winner="seat3", highest_defender=None)
    d = deal("6h", whisters=("seat3", "seat1"), taken=tricks((5, 3, 2)), revoke=revoke)
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2}, gora={"seat3": 2},
                                      whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4}), "made")
    # whist_responsibility does not halve the penalty for the mistake (Readings fixed)
    assert score(Rules(whist_responsibility="half"), d)[0] == score(SOCHI, d)[0]
    assert score(LENINGRAD, d)[0] == expect(pulya={"seat2": 2}, gora={"seat3": 4},
                                            whists={("seat3", "seat2"): 8, ("seat1", "seat2"): 8})


@pytest.mark.parametrize("highest, seat3_whists, seat1_whists", [("seat3", 16, 8), ("seat1", 12, 12)])
def test_ex11_declarer_revoke_trick_goes_to_the_highest_defender(highest, seat3_whists, seat1_whists):
    revoke = ContractRevoke(offender="seat2", charged="seat2", by_declarer=True,
                            trick_winner="seat2", highest_defender=highest)
    d = deal("7c", whisters=("seat3", "seat1"), taken=tricks((7, 2, 1)), revoke=revoke)
    assert score(SOCHI, d) == (expect(gora={"seat2": 4}, whists={("seat3", "seat2"): seat3_whists,
                                                                 ("seat1", "seat2"): seat1_whists}), "failed")


def test_ex12_four_players_the_sitting_out_dealer_writes_consolation():
    d = deal("7c", declarer="seat3", whisters=("seat4", "seat2"), seats=S4,
             taken={"seat3": 6, "seat4": 2, "seat2": 2, "seat1": 0})
    assert d.defenders == ("seat4", "seat2")
    assert score(SOCHI, d) == (expect(S4, gora={"seat3": 4}, whists={
        ("seat4", "seat3"): 12, ("seat2", "seat3"): 12, ("seat1", "seat3"): 4}), "failed")
    assert score(Rules(consolation_to_dealer=False), d)[0] == expect(S4, gora={"seat3": 4}, whists={
        ("seat4", "seat3"): 12, ("seat2", "seat3"): 12})
    # with three players the option changes nothing: the dealer is a defender
    three = deal("7c", whisters=("seat3", "seat1"), taken=tricks((6, 2, 2)))
    assert score(Rules(consolation_to_dealer=False), three) == score(SOCHI, three)


def series(rules, deals, seats=S3):
    """Write (dealer, writes) pairs into a fresh pulka; return the pulka and every DealWritten."""
    pulka = Pulka(seats)
    return pulka, [pulka.write_deal(rules, writes, pulya_order(seats, dealer)) for dealer, writes in deals]


def passed(game, declarer, dealer, rules):
    return dealer, score_contract(rules, deal(game, declarer=declarer, dealer=dealer, ending="passed"))[0]


def test_ex13_the_closed_pulya_helps_the_highest_open_one():
    rules = Rules(pulya_target=10)
    pulka, done = series(rules, [passed("8s", "seat2", "seat1", rules), passed("6s", "seat3", "seat2", rules),
                                 passed("8d", "seat2", "seat3", rules)])
    assert [d.help_list() for d in done] == [[], [], [{"from": "seat2", "to": "seat3", "points": 2}]]
    assert done[2].written(S3) == expect(pulya={"seat2": 4, "seat3": 2}, whists={("seat2", "seat3"): 20})
    assert pulka.to_dict() == expect(pulya={"seat2": 10, "seat3": 4}, whists={("seat2", "seat3"): 20})
    assert not pulka.finished(rules)


@pytest.mark.parametrize("convention, gora", [("sochi", -4), ("leningrad", -8)])
def test_ex14_the_pulka_finishes_and_later_points_come_off_the_gora(convention, gora):
    rules = Rules(pulya_target=2, convention=convention)
    pulka = Pulka(S3)
    finished = []
    for declarer, dealer in (("seat2", "seat1"), ("seat3", "seat2"), ("seat1", "seat3")):
        done = pulka.write_deal(rules, passed("6s", declarer, dealer, rules)[1], pulya_order(S3, dealer))
        assert done.finished == pulka.finished(rules)
        finished.append(done.finished)
    assert finished == [False, False, True]
    last = pulka.write_deal(rules, passed("7s", "seat2", "seat1", rules)[1], pulya_order(S3, "seat1"))
    assert last.help_list() == [{"from": "seat2", "to": None, "points": 4}]
    assert last.written(S3) == expect(gora={"seat2": gora})
    assert last.finished and pulka.finished(rules) and pulka.pulya == {s: 2 for s in S3}


def test_ex15_an_unplayed_deal_in_a_raspasovka_series_writes_only_its_game():
    # closed prikup, 3 players: the deal at price 2 is a contract: P, no price, no dealer penalty
    rules = Rules(prikup="closed")
    first = score_deal(rules, S3, S3, "seat1", 1, 0, {"seat1": 4, "seat2": 3, "seat3": 3}, None)
    second = score_contract(rules, deal("6s", ending="passed"))[0]
    third = score_deal(rules, S3, S3, "seat2", 1, 0, {"seat1": 0, "seat2": 6, "seat3": 4}, None)
    pulka, done = series(rules, [("seat1", first), ("seat1", second), ("seat2", third)])
    assert done[1].written(S3) == expect(pulya={"seat2": 2})
    assert pulka.to_dict() == expect(gora={"seat1": 4, "seat2": 3 + 6, "seat3": 3 + 4},
                                     pulya={"seat2": 2, "seat1": 1})


# --- "Readings fixed" ------------------------------------------------------------------------

def test_two_whisters_own_shortfall_costs_nothing_when_the_defence_made_its_obligation():
    d = deal("6s", whisters=("seat3", "seat1"), taken=tricks((6, 4, 0)))
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": 2}, whists={("seat3", "seat2"): 8})
    d7 = deal("7s", whisters=("seat3", "seat1"), taken=tricks((8, 2, 0)))
    assert score(SOCHI, d7)[0] == expect(pulya={"seat2": 4}, whists={("seat3", "seat2"): 8})
    d7short = deal("7s", whisters=("seat3", "seat1"), taken=tricks((9, 1, 0)))
    assert score(SOCHI, d7short)[0] == expect(pulya={"seat2": 4}, gora={"seat1": 4},
                                              whists={("seat3", "seat2"): 4})


def test_declarer_revoke_moves_the_trick_even_when_the_defence_won_it():
    revoke = ContractRevoke("seat2", "seat2", True, trick_winner="seat3", highest_defender="seat1")
    d = deal("6s", whisters=("seat3", "seat1"), taken=tricks((6, 3, 1)), revoke=revoke)
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2},
                                      whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4}), "made")


def test_declarer_revoke_takes_the_whisters_remiz_on_his_own_gora():
    revoke = ContractRevoke("seat2", "seat2", True, trick_winner="seat2", highest_defender="seat3")
    d = deal("6s", whisters=("seat3", "seat1"), taken=tricks((8, 1, 1)), revoke=revoke)
    # 7/2/1 after the move: the defence is short of 4 and seat1 (1 < 2) owes one trick's remiz
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2}, gora={"seat2": 2},
                                      whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 2}), "made")
    one = deal("8s", whisters=("seat3",), taken=tricks((10, 0, 0)),
               revoke=ContractRevoke("seat2", "seat2", True, "seat2", "seat1"))
    # 9/0/1: the defence made its one trick, nobody owes a remiz
    assert score(SOCHI, one) == (expect(pulya={"seat2": 6}, whists={("seat3", "seat2"): 6}), "made")


def test_defender_revoke_charges_the_adjusted_whisters_remiz_to_the_charged_seat():
    revoke = ContractRevoke("seat3", "seat3", False, trick_winner="seat3", highest_defender=None)
    d = deal("7s", whisters=("seat3", "seat1"), taken=tricks((8, 2, 0)), revoke=revoke)
    # 9/1/0 after the move: seat1 took none (< 1), but seat3 writes that remiz with his own
    assert score(SOCHI, d) == (expect(pulya={"seat2": 4}, gora={"seat3": 4 + 4},
                                      whists={("seat3", "seat2"): 4}), "made")
    assert score(Rules(whist_responsibility="half"), d)[0] == expect(
        pulya={"seat2": 4}, gora={"seat3": 4 + 2}, whists={("seat3", "seat2"): 4})


def test_defender_revoke_writes_the_game_as_made_whatever_the_declarer_took():
    revoke = ContractRevoke("seat1", "seat1", False, trick_winner="seat3", highest_defender=None)
    d = deal("6s", whisters=("seat3", "seat1"), taken=tricks((4, 4, 2)), revoke=revoke)
    # 5/3/2: no consolation, no remiz on the declarer
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2}, gora={"seat1": 2},
                                      whists={("seat3", "seat2"): 6, ("seat1", "seat2"): 4}), "made")
    # a trick the declarer won himself stays his
    own = d._replace(revoke=replace(revoke, trick_winner="seat2"))
    assert score(SOCHI, own)[0] == expect(pulya={"seat2": 2}, gora={"seat1": 2},
                                          whists={("seat3", "seat2"): 8, ("seat1", "seat2"): 4})


def test_a_passer_revoking_in_closed_play_is_charged_like_a_whister():
    revoke = ContractRevoke("seat3", "seat3", False, trick_winner="seat3", highest_defender=None)
    d = deal("6s", whisters=("seat1",), taken=tricks((5, 3, 2)), revoke=revoke)
    assert score(SOCHI, d) == (expect(pulya={"seat2": 2}, gora={"seat3": 2},
                                      whists={("seat1", "seat2"): 8}), "made")
    # open play: the passer's zone revoked, the whister is charged (the tracker says who)
    open_play = d._replace(revoke=replace(revoke, charged="seat1"))
    assert score(SOCHI, open_play)[0] == expect(pulya={"seat2": 2}, gora={"seat1": 2},
                                                whists={("seat1", "seat2"): 8})


def test_misere_revokes():
    by_defender = ContractRevoke("seat3", "seat3", False, trick_winner="seat2", highest_defender=None)
    d = deal(MISERE, taken=tricks((3, 4, 3)), revoke=by_defender)
    assert score(SOCHI, d) == (expect(pulya={"seat2": 10}, gora={"seat3": 10}), "made")
    assert score(LENINGRAD, d) == (expect(pulya={"seat2": 10}, gora={"seat3": 20}), "made")
    by_declarer = ContractRevoke("seat2", "seat2", True, trick_winner="seat3", highest_defender="seat3")
    caught = deal(MISERE, taken=tricks((0, 6, 4)), revoke=by_declarer)
    assert score(SOCHI, caught) == (expect(gora={"seat2": 10}), "failed")
    own = deal(MISERE, taken=tricks((1, 5, 4)), revoke=replace(by_declarer, trick_winner="seat2"))
    assert score(SOCHI, own) == (expect(gora={"seat2": 10}), "failed")


def test_a_deal_that_writes_nothing_is_written_as_all_zeros():
    zeros = expect()
    assert all(v["gora"] == 0 and v["pulya"] == 0 and set(v["whists"].values()) == {0}
               for v in zeros.values())
    for rules in (SOCHI, Rules(pulya_target=5)):
        done = Pulka(S3).write_deal(rules, Writes(), pulya_order(S3, "seat1"))
        assert done.written(S3) == zeros and done.help_list() == []


def test_the_closed_prikup_dealer_unit_is_a_pulya_entry_written_last():
    # four players, closed prikup: seat2 took no trick (+2), the sitting-out dealer seat1 writes
    # the price (2).  Entries go seat2, seat3, seat4, seat1: seat2 is already at 2 when seat1's
    # overflow looks for the highest open pulya.
    rules = Rules(prikup="closed", pulya_target=3)
    writes = score_deal(rules, S4, ("seat2", "seat3", "seat4"), "seat1", 2, 1,
                        {"seat1": 0, "seat2": 0, "seat3": 5, "seat4": 5}, None)
    assert writes.pulya == {"seat2": 2, "seat1": 2}
    pulka = Pulka(S4)
    pulka.pulya.update(seat1=Fraction(2), seat3=Fraction(1))
    done = pulka.write_deal(rules, writes, pulya_order(S4, "seat1"))
    assert pulya_order(S4, "seat1") == ("seat2", "seat3", "seat4", "seat1")
    assert done.help_list() == [{"from": "seat1", "to": "seat2", "points": 1}]
    assert pulka.pulya == {"seat1": 3, "seat2": 3, "seat3": 1, "seat4": 0}
    assert done.written(S4)["seat1"]["whists"]["seat2"] == 10


# --- help in detail --------------------------------------------------------------------------

def preloaded(pulya, seats=S3):
    pulka = Pulka(seats)
    pulka.pulya.update({s: Fraction(v) for s, v in pulya.items()})
    return pulka


def pulya_entry(seat, points):
    w = Writes()
    w.add_pulya(seat, points)
    return w


def test_help_tie_goes_to_the_first_clockwise_from_the_helper():
    pulka = preloaded({"seat1": 3, "seat2": 5, "seat3": 3})
    done = pulka.write_deal(Rules(pulya_target=5), pulya_entry("seat2", 1), pulya_order(S3, "seat1"))
    assert done.help_list() == [{"from": "seat2", "to": "seat3", "points": 1}]
    pulka = preloaded({"seat1": 3, "seat2": 3, "seat3": 5})
    done = pulka.write_deal(Rules(pulya_target=5), pulya_entry("seat3", 1), pulya_order(S3, "seat1"))
    assert done.help_list() == [{"from": "seat3", "to": "seat1", "points": 1}]


def test_help_whists_are_doubled_in_leningrad():
    # PrefAndroid Calculation.addValue: the overdraft writes 10 whists a point, doubled in Leningrad
    pulka = preloaded({"seat2": 9, "seat3": 5})
    done = pulka.write_deal(Rules(pulya_target=10, convention="leningrad"), pulya_entry("seat2", 3),
                            pulya_order(S3, "seat1"))
    assert done.written(S3) == expect(pulya={"seat2": 1, "seat3": 2}, whists={("seat2", "seat3"): 40})


def test_raspasovka_zero_trick_rewards_go_through_help():
    rules = Rules(pulya_target=1)
    writes = score_deal(rules, S3, S3, "seat1", 2, 1, {"seat1": 0, "seat2": 0, "seat3": 10}, None)
    pulka = Pulka(S3)
    done = pulka.write_deal(rules, writes, pulya_order(S3, "seat1"))
    # seat2 first (first hand): 1 into his pulya, 1 helps seat3 (0) before seat1 (0, later clockwise)
    assert done.help_list() == [{"from": "seat2", "to": "seat3", "points": 1},
                                {"from": "seat1", "to": None, "points": 1}]
    assert pulka.pulya == {s: 1 for s in S3} and pulka.finished(rules)
    assert pulka.gora == {"seat1": -1, "seat2": 0, "seat3": 20}


def test_without_a_target_write_deal_is_add():
    writes = score_contract(SOCHI, deal("7h", whisters=("seat3", "seat1"), taken=tricks((5, 3, 2))))[0]
    a, b = Pulka(S3), Pulka(S3)
    a.add(writes)
    done = b.write_deal(SOCHI, writes, pulya_order(S3, "seat1"))
    assert done.writes is writes and done.help == [] and not done.finished and a.exact() == b.exact()
    assert not b.finished(SOCHI)
    big = Pulka(S3)
    big.pulya.update({s: Fraction(1000) for s in S3})
    assert not big.finished(SOCHI)           # no target: the pulka never finishes by itself


# --- kozlov: oleksandrkozlov/preferans server/tests/test_server.cpp, TEST_CASE("calculateDealScore")
# (de = declarer, w1 = first defender, w2 = second defender; here seat2, seat3, seat1)

@pytest.mark.parametrize("declarer_tricks", range(11))
def test_kozlov_declarer_declares_miser(declarer_tricks):
    d = deal(MISERE, taken=tricks((declarer_tricks, 10 - declarer_tricks, 0)))
    if declarer_tricks == 0:
        assert score(SOCHI, d)[0] == expect(pulya={"seat2": 10})
    else:
        assert score(SOCHI, d)[0] == expect(gora={"seat2": 10 * declarer_tricks})


@pytest.mark.parametrize("game, counts, w1, w2, pool", [
    ("6s", (6, 2, 2), 4, 4, 2), ("7s", (7, 1, 2), 4, 8, 4), ("8s", (8, 1, 1), 6, 6, 6), ("9s", (9, 1, 0), 8, 0, 8)])
def test_kozlov_everyone_fulfilled_what_declared(game, counts, w1, w2, pool):
    d = deal(game, whisters=("seat3", "seat1"), taken=tricks(counts))
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": pool}, whists={("seat3", "seat2"): w1,
                                                                       ("seat1", "seat2"): w2})


@pytest.mark.parametrize("game", ["6s", "7s", "8s", "9s", "10s"])
def test_kozlov_declarer_did_not_fulfill_what_declared(game):
    level, value = game_level(game), game_value(game)
    d = deal(game, whisters=("seat3", "seat1"), taken=tricks((5, 3, 2)))
    down = level - 5
    assert score(SOCHI, d)[0] == expect(gora={"seat2": down * value}, whists={
        ("seat3", "seat2"): 3 * value + down * value, ("seat1", "seat2"): 2 * value + down * value})


@pytest.mark.parametrize("game, dump", [("6s", 8), ("7s", 8), ("8s", 6), ("9s", 8), ("10s", 10)])
def test_kozlov_one_whister_did_not_fulfill_what_declared(game, dump):
    d = deal(game, whisters=("seat3",), taken=tricks((10, 0, 0)))
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": game_value(game)}, gora={"seat3": dump})


@pytest.mark.parametrize("game, dump", [("6s", 4), ("7s", 4), ("8s", 6), ("9s", 8), ("10s", 10)])
def test_kozlov_both_whisters_did_not_fulfill_what_declared(game, dump):
    # kozlov has both whisters write on 8-10: that is second_whist_responsible = false.  The
    # default (seed 003, "второй вист ответственный") puts it on the second defender alone.
    d = deal(game, whisters=("seat3", "seat1"), taken=tricks((10, 0, 0)))
    both = Rules(second_whist_responsible=False)
    assert score(both, d)[0] == expect(pulya={"seat2": game_value(game)}, gora={"seat3": dump, "seat1": dump})
    if game_level(game) >= 8:
        assert score(SOCHI, d)[0] == expect(pulya={"seat2": game_value(game)}, gora={"seat1": dump})
    else:
        assert score(SOCHI, d)[0] == score(both, d)[0]


# --- Gusev: DmytroGusev/preferans Tests/PreferansEngineTests/* (north = declarer = seat2,
# east = first defender = seat3, south = second defender = seat1)

def test_gusev_made_contract_credits_pool_and_each_whisters_own_tricks():
    # ScoringCalculationTests.testMadeContractCreditsPoolAndEachWhistersOwnTricks
    d = deal("6c", whisters=("seat3", "seat1"), taken=tricks((6, 2, 2)))
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": 2}, whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4})


def test_gusev_failed_declarer_pays_mountain_and_each_defender_consolation():
    # ScoringCalculationTests.testFailedDeclarerPaysMountainAndEachDefenderConsolationWhists
    d = deal("7h", whisters=("seat3", "seat1"), taken=tricks((5, 3, 2)))
    assert score(SOCHI, d)[0] == expect(gora={"seat2": 8}, whists={("seat3", "seat2"): 20, ("seat1", "seat2"): 16})


def test_gusev_single_greedy_whister_scores_all_defender_tricks_and_own_responsibility():
    # ScoringCalculationTests.testSingleGreedyWhisterScoresAllDefenderTricksAndOwnResponsibility
    d = deal("6d", whisters=("seat3",), taken=tricks((7, 1, 2)))
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": 2}, gora={"seat3": 2}, whists={("seat3", "seat2"): 6})


def test_gusev_odd_one_trick_responsibility_falls_on_second_whister():
    # ScoringCalculationTests.testOddOneTrickResponsibilityFallsOnSecondWhister
    d = deal("8s", whisters=("seat3", "seat1"), taken=tricks((10, 0, 0)))
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": 6}, gora={"seat1": 6})


@pytest.mark.parametrize("declarer_tricks", [3, 10])
def test_gusev_failed_misere_charges_ten_mountain_per_declarer_trick(declarer_tricks):
    # ScoringVariantTests.testFailedMisereChargesTenMountainPerDeclarerTrick (3 tricks: 30) and
    # testMisereDeclarerForcedToTakeEveryTrickMountainsOneHundred (10 tricks: 100)
    d = deal(MISERE, taken=tricks((declarer_tricks, 10 - declarer_tricks, 0)))
    assert score(SOCHI, d) == (expect(gora={"seat2": 10 * declarer_tricks}), "failed")


def test_gusev_half_whist_scores():
    # PreferansEngineTests.testHalfWhistRequiresFirstDefenderSecondChanceAndScores: 6c, pool 2,
    # the half-whister writes 4
    d = deal("6c", ending="half_whist", half_whister="seat1")
    assert score(SOCHI, d)[0] == expect(pulya={"seat2": 2}, whists={("seat1", "seat2"): 4})


def test_gusev_leningrad_failed_six_with_one_whister():
    # PreferansEngineTests.testLeningradScoringDoublesContractAndSplitsGentlemanWhist: 6c, one
    # whister, 4/4/2.  Gusev agrees on the mountain (8) but splits the whists "gentleman" style
    # (16 each) and doubles the pool value; RULES-contracts.md writes the «жлобский» vist (the
    # whister writes all the defence's tricks) and keeps P: whister 6·2·2 + 8 = 32, passer 8.
    d = deal("6c", whisters=("seat3",), taken=tricks((4, 4, 2)))
    assert score(LENINGRAD, d)[0] == expect(gora={"seat2": 8}, whists={("seat3", "seat2"): 32,
                                                                       ("seat1", "seat2"): 8})


def test_gusev_two_whisters_short_on_six_write_per_missing_trick():
    # Gusev ScoringEngine.applyWhistResponsibility charges a whister below his half-share one
    # fixed unit; RULES-contracts.md (seed 003, example 9) charges (O/2 - his tricks) × P.
    d = deal("6s", whisters=("seat3", "seat1"), taken=tricks((7, 3, 0)))
    assert score(SOCHI, d)[0]["seat1"]["gora"] == 4


def test_gusev_surplus_pool_aids_highest_open_player_and_writes_whists():
    # PulkaClosingTests.testSurplusPoolAidsHighestOpenPlayerAndWritesWhists (its pool target 33
    # is the sum for three players: 11 each)
    pulka = preloaded({"seat1": 10, "seat2": 7, "seat3": 3})
    done = pulka.write_deal(Rules(pulya_target=11), pulya_entry("seat1", 4), pulya_order(S3, "seat3"))
    assert pulka.pulya == {"seat1": 11, "seat2": 10, "seat3": 3}
    assert done.written(S3) == expect(pulya={"seat1": 1, "seat2": 3}, whists={("seat1", "seat2"): 30})


def test_gusev_surplus_pool_cascades_then_reduces_mountain_when_everyone_is_closed():
    # PulkaClosingTests.testSurplusPoolCascadesAcrossPlayersThenReducesMountainWhenEveryoneIsClosed
    pulka = preloaded({"seat1": 10, "seat2": 10, "seat3": 8})
    done = pulka.write_deal(Rules(pulya_target=11), pulya_entry("seat1", 6), pulya_order(S3, "seat3"))
    assert pulka.pulya == {s: 11 for s in S3} and pulka.gora["seat1"] == -1
    assert done.written(S3) == expect(gora={"seat1": -1}, pulya={"seat1": 1, "seat2": 1, "seat3": 3},
                                      whists={("seat1", "seat2"): 10, ("seat1", "seat3"): 30})
    assert done.help_list() == [{"from": "seat1", "to": "seat2", "points": 1},
                                {"from": "seat1", "to": "seat3", "points": 3},
                                {"from": "seat1", "to": None, "points": 1}]


def test_gusev_engine_deal_applies_pulka_closing():
    # PulkaClosingTests.testEngineDealAppliesPulkaClosingToDealResultAndMatchSummary: all at 10
    # of 11, north's 7c both pass (+4): one point each to east and south, one off the gora
    rules = Rules(pulya_target=11)
    pulka = preloaded({s: 10 for s in S3})
    writes = score_contract(rules, deal("7c", declarer="seat1", dealer="seat3", ending="passed"))[0]
    done = pulka.write_deal(rules, writes, pulya_order(S3, "seat3"))
    assert done.written(S3) == expect(gora={"seat1": -1}, pulya={s: 1 for s in S3},
                                      whists={("seat1", "seat2"): 10, ("seat1", "seat3"): 10})
    assert pulka.finished(rules)


# --- PrefAndroid: SmaginStepan/PrefAndroid app/src/main/java/com/an0obIs/pref/model/Calculation.kt
# (writeGame, addValue; it has no test file, so its arithmetic is ported as cases)

@pytest.mark.parametrize("game", ["6s", "7s"])
def test_prefandroid_half_whist_writes_four(game):
    # writeGame, GameType.Normal, "Пишем полвиста": 4 whists on 6 and on 7
    d = deal(game, ending="half_whist", half_whister="seat3")
    assert score(SOCHI, d)[0]["seat3"]["whists"]["seat2"] == 4


@pytest.mark.parametrize("responsibility, mulct", [("full", 2), ("half", 1)])
def test_prefandroid_single_whister_greedy_and_responsibility(responsibility, mulct):
    # "Один вистующий": gameValue × vistSum whists, mulct × (sumVistNeeded - vistSum) on the gora,
    # mulct halved under VistType.HalfResponsibility
    d = deal("6s", whisters=("seat1",), taken=tricks((7, 2, 1)))
    assert score(Rules(whist_responsibility=responsibility), d)[0] == expect(
        pulya={"seat2": 2}, gora={"seat1": mulct * 1}, whists={("seat1", "seat2"): 6})


def test_prefandroid_failed_game_with_prikup_consolation():
    # "Два виста" on a failed game, 4 players, rules.prikupConsolation: the dealer writes left ×
    # consolation too; Leningrad (ScoreType.Leningrad) doubles gora and whists in addValue
    d = deal("8h", declarer="seat2", dealer="seat4", whisters=("seat3", "seat1"), seats=S4,
             taken={"seat2": 6, "seat3": 2, "seat1": 2, "seat4": 0})
    assert score(SOCHI, d)[0] == expect(S4, gora={"seat2": 12}, whists={
        ("seat3", "seat2"): 2 * 6 + 12, ("seat1", "seat2"): 2 * 6 + 12, ("seat4", "seat2"): 12})
    assert score(LENINGRAD, d)[0] == expect(S4, gora={"seat2": 24}, whists={
        ("seat3", "seat2"): 48, ("seat1", "seat2"): 48, ("seat4", "seat2"): 24})


def test_prefandroid_help_reaches_the_four_player_dealer_too():
    # PrefAndroid's addValue skips the current dealer when looking for a pulya to help; RULES-
    # contracts.md helps "the other player whose pulya is highest below T", the dealer included.
    pulka = preloaded({"seat1": 4, "seat2": 5, "seat3": 1, "seat4": 1}, S4)
    done = pulka.write_deal(Rules(pulya_target=5), pulya_entry("seat2", 1), pulya_order(S4, "seat1"))
    assert done.help_list() == [{"from": "seat2", "to": "seat1", "points": 1}]


# --- properties ------------------------------------------------------------------------------

RULE_VARIANTS = st.builds(
    Rules, convention=st.sampled_from(["sochi", "leningrad"]),
    whist_responsibility=st.sampled_from([None, "full", "half"]),
    ten_whisted=st.booleans(), consolation_to_dealer=st.booleans(), second_whist_responsible=st.booleans(),
    pulya_target=st.one_of(st.none(), st.integers(1, 40)), prikup=st.sampled_from(["dealer_leads", "closed"]),
    scoring=st.just("gora"), subtract_minimum=st.booleans())


@st.composite
def split_ten(draw, seats):
    """Ten tricks over the given seats."""
    cuts = sorted(draw(st.lists(st.integers(0, 10), min_size=len(seats) - 1, max_size=len(seats) - 1)))
    bounds = [0] + cuts + [10]
    return {s: bounds[i + 1] - bounds[i] for i, s in enumerate(seats)}


@st.composite
def any_deal(draw, rules, seats, dealer):
    """One finished deal's writes: a raspasovka (score_deal) or a contract (score_contract)."""
    active = active_after(seats, dealer)
    if draw(st.integers(0, 3)) == 0:
        taken = dict.fromkeys(seats, 0)
        taken.update(draw(split_ten(active)))
        price = draw(st.sampled_from([1, 2, 3]))
        return score_deal(rules, seats, active, dealer, price, draw(st.integers(0, 2)), taken, None)
    declarer = draw(st.sampled_from(active))
    game = draw(st.sampled_from(GAMES + (MISERE,)))
    i = active.index(declarer)
    defenders = (active[(i + 1) % 3], active[(i + 2) % 3])
    ending, whisters, half = "played", (), None
    if game != MISERE:
        level = game_level(game)
        choices = ["played", "passed"] + (["half_whist"] if level <= 7 else [])
        if level == 10 and not rules.ten_whisted:
            choices = ["ten_unwhisted"]
        ending = draw(st.sampled_from(choices))
        if ending == "played":
            whisters = draw(st.sampled_from([defenders, defenders[:1], defenders[1:]]))
        half = defenders[1] if ending == "half_whist" else None
    taken = dict.fromkeys(seats, 0)
    if ending == "played":
        taken.update(draw(split_ten(active)))
    revoke = None
    if ending == "played" and draw(st.booleans()):
        offender = draw(st.sampled_from(active))
        winners = [s for s in active if taken[s] > 0]
        revoke = ContractRevoke(offender, offender, offender == declarer, draw(st.sampled_from(winners)),
                                draw(st.sampled_from(defenders)))
    d = ContractDeal(game, declarer, ending, defenders, whisters, half, dealer, seats, taken, revoke)
    return score_contract(rules, d)[0]


@st.composite
def pulka_series(draw):
    rules = draw(RULE_VARIANTS)
    seats = draw(st.sampled_from([S3, S4]))
    deals = []
    for n in range(draw(st.integers(1, 25))):
        dealer = seats[n % len(seats)]
        deals.append((dealer, draw(any_deal(rules, seats, dealer))))
    return rules, seats, deals


def exact_sum(objects, seats):
    total = {p: {"gora": Fraction(0), "pulya": Fraction(0), "whists": {q: Fraction(0) for q in seats if q != p}}
             for p in seats}
    for obj in objects:
        for p in seats:
            total[p]["gora"] += Fraction(obj[p]["gora"])
            total[p]["pulya"] += Fraction(obj[p]["pulya"])
            for q, v in obj[p]["whists"].items():
                total[p]["whists"][q] += Fraction(v)
    return total


@settings(max_examples=200, deadline=None)
@given(pulka_series())
def test_properties_of_a_pulka_of_random_deals(case):
    rules, seats, deals = case
    pulka = Pulka(seats)
    written = []
    target = rules.pulya_target
    for dealer, writes in deals:
        before = pulka.exact()
        done = pulka.write_deal(rules, writes, pulya_order(seats, dealer))
        written.append(done.written(seats))
        if target is not None:
            assert all(v <= target for v in pulka.pulya.values())       # no pulya ever exceeds T
            # every pulya point is kept, helps someone, or comes off the helper's gora
            entered = sum(writes.pulya.values(), Fraction(0))
            assert sum(done.writes.pulya.values(), Fraction(0)) + sum(
                h.points for h in done.help if h.to is None) == entered
        else:
            assert done.help == []
        # the exact differences take the deal out again (undo)
        probe = Pulka.from_exact(seats, pulka.exact())
        probe.add(done.writes, sign=-1)
        assert probe.exact() == before
    # the written objects of a series add up to the pulka
    total = exact_sum(written, seats)
    assert total == {p: {"gora": pulka.gora[p], "pulya": pulka.pulya[p], "whists": pulka.whists[p]}
                     for p in seats}
    balance = settle(pulka.to_dict(), rules.convention)
    assert sum(balance.values()) == 0
    if target is not None and pulka.finished(rules):
        assert set(pulka.pulya.values()) == {target}


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_contract_entries_are_whole(data):
    # FORMATS-contracts.md: whist_responsibility = "half" keeps all contract entries whole
    rules = data.draw(RULE_VARIANTS)
    seats = data.draw(st.sampled_from([S3, S4]))
    writes = data.draw(any_deal(replace(rules, pulya_target=None), seats, seats[0]))
    values = list(writes.gora.values()) + list(writes.pulya.values()) + list(writes.whists.values())
    assert all(Fraction(v).denominator == 1 for v in values)
