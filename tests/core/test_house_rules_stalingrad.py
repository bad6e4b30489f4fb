"""Stalingrad (``rules.stalingrad``, docs/RULES-variants.md): a 6♠ is whisted by both
defenders.  From the contracts' side (RULES-contracts.md "Whisting", "Mistakes at the
table"): under it any other whist call on a 6♠ is an invalid control line, signalled and
ignored; the deal waits for the whist; a 6♠ whisted by both is scored as any other."""

import pytest

from controller.core.config import parse_rules
from table_script import Script, config
from test_ref_contract import contract_deal, expect, last_deal

STALINGRAD = (("stalingrad", True),)


def bidding(house=STALINGRAD) -> Script:
    return Script(config(bidding=True, house=house))


def invalid(s: Script) -> list:
    return [m.data for m in s.mistakes("invalid_control")]


def six_spades(s: Script, game="6s") -> None:
    s.bids(f"seat2:{game}", "seat3:pass", "seat1:pass")
    s.contract("seat2", game)


WHIST3 = {"seat": "seat3", "call": "whist"}


@pytest.mark.parametrize("calls, bad, accepted", [
    (["seat3:pass"], 1, []),
    (["seat3:half"], 1, []),
    (["seat3:whist", "seat1:pass"], 1, [WHIST3]),
    (["seat3:pass", "seat1:half"], 2, []),                 # the pass ignored, seat3 still to speak
])
def test_under_stalingrad_a_pass_or_half_on_six_spades_is_an_invalid_control_line(calls, bad, accepted):
    s = bidding()
    six_spades(s)
    s.whists(*calls)
    assert len(invalid(s)) == bad and s.tracker.state == "whisting"
    assert "rules.stalingrad" in invalid(s)[0]["message"]
    deal = last_deal(s)
    assert deal["whist_calls"] == accepted
    assert deal["whisters"] == [] and deal["outcome"] is None and not deal["complete"]


def test_the_ignored_call_changes_nothing_the_whists_decide():
    s = bidding()
    six_spades(s)
    s.whists("seat3:pass", "seat3:whist", "seat1:pass", "seat1:whist")
    assert len(invalid(s)) == 2
    assert s.kinds("whisting") == [{"deal": 1, "whisters": ["seat3", "seat1"], "result": "play"}]
    assert s.tracker.state == "play" and last_deal(s)["whist_mode"] == "closed"
    s.mode("open")                                         # two whisters: always closed
    assert len(invalid(s)) == 3


@pytest.mark.parametrize("house, game", [(STALINGRAD, "6c"), (STALINGRAD, "7s"), ((), "6s")])
def test_any_other_game_or_without_stalingrad_the_calls_are_free(house, game):
    s = bidding(house)
    six_spades(s, game)
    s.whists("seat3:pass", "seat1:pass")                   # both pass: written as made
    assert not invalid(s) and s.tracker.state == "idle"
    assert last_deal(s)["outcome"] == "passed"


@pytest.mark.parametrize("taken, written", [
    # made: each whister his own tricks, 2 × 2 (RULES-contracts.md example 1)
    ({"seat2": 6, "seat3": 2, "seat1": 2},
     expect(pulya={"seat2": 2}, whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4})),
    # made, the defence one short of its 4: seat1, 0 of his 2, pays his two missing tricks
    ({"seat2": 7, "seat3": 3, "seat1": 0},
     expect(pulya={"seat2": 2}, gora={"seat1": 4}, whists={("seat3", "seat2"): 6})),
    # failed by one: remiz 2, each whister his tricks and the consolation 2
    ({"seat2": 5, "seat3": 3, "seat1": 2},
     expect(gora={"seat2": 2}, whists={("seat3", "seat2"): 6 + 2, ("seat1", "seat2"): 4 + 2})),
])
def test_six_spades_whisted_by_both_is_scored_as_any_two_whisters(taken, written):
    results = []
    for house in (STALINGRAD, ()):
        s = bidding(house)
        contract_deal(s, ["seat2:6s", "seat3:pass", "seat1:pass"], "6s",
                      ["seat3:whist", "seat1:whist"], taken)
        results.append(last_deal(s)["written"])
        assert not invalid(s)
    assert results == [written, written]


def test_the_key_its_words_and_a_preset_beside_it():
    rules = parse_rules({"stalingrad": True}, 3)
    assert rules.house == STALINGRAD and rules.book.whist_required("6s")
    assert not rules.book.whist_required("6c") and not parse_rules({}, 3).book.whist_required("6s")
    assert "Stalingrad: a 6♠ is whisted by both defenders" in rules.book.words
    assert parse_rules({"preset": "leningrad", "stalingrad": True}, 4).book.whist_required("6s")
