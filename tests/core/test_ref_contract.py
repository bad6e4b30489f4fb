"""RULES-contracts.md's worked examples 1-15, each played through the tracker from a real
card sequence (found by a seeded search in ``contract_games``) and replayed through the CLI
(``python -m controller replay FILE --json``), with their variants."""

import json
from pathlib import Path

import pytest

from conftest import cli
from contract_games import active_after, find_play
from table_script import Script, config


def expect(players=3, gora=None, pulya=None, whists=None):
    """A full ``written`` object: every seat, zeros included."""
    seats = [f"seat{i}" for i in range(1, players + 1)]
    gora, pulya, whists = gora or {}, pulya or {}, whists or {}
    return {p: {"gora": gora.get(p, 0), "pulya": pulya.get(p, 0),
                "whists": {q: whists.get((p, q), 0) for q in seats if q != p}} for p in seats}


def play_cards(s: Script, played) -> None:
    for trick in played.tricks:
        s.trick(*(f"{zone}:{card}" for zone, card in trick))


def contract_deal(s: Script, bids, game, whists, taken=None, mode=None, revoke=None, check=None,
                  declarer="seat2", dealer="seat1"):
    """Bids, the contract line, the whist calls, and (when ``taken``) a real play."""
    s.bids(*bids)
    if game is not None:
        s.contract(declarer, game)
    s.whists(*whists)
    if mode is not None:
        s.mode(mode)
    if taken is not None:
        played = find_play(active_after(dealer, s.cfg.table.players),
                           game or "misere", declarer, taken, revoke, check)
        play_cards(s, played)
        return played
    return None


def replayed(s: Script, tmp_path: Path) -> dict:
    """The summary ``preftable replay --json`` prints for the script's events and config."""
    events = tmp_path / "table-events.jsonl"          # a plain events file, not a session folder
    events.write_text("".join(e.to_json() + "\n" for e in s.events))
    cfg = tmp_path / "rules.toml"
    cfg.write_text(s.cfg.to_toml())
    res = cli(["replay", events, "--config", cfg, "--json"])
    assert res.returncode == 0 and "skipped" not in res.stderr, res.stderr     # every line valid
    return json.loads(res.stdout)


def check_replay(s: Script, tmp_path: Path) -> None:
    assert replayed(s, tmp_path) == json.loads(json.dumps(s.summary))


def last_deal(s: Script) -> dict:
    return s.summary["deals"][-1]


# --- 1-3: played contracts ---------------------------------------------------------

def test_ex1_six_spades_two_whisters_made(tmp_path):
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:6s", "seat3:pass", "seat1:pass"], "6s", ["seat3:whist", "seat1:whist"],
                  {"seat2": 6, "seat3": 2, "seat1": 2})
    deal = last_deal(s)
    assert deal["kind"] == "contract" and deal["outcome"] == "made" and deal["complete"]
    assert deal["whisters"] == ["seat3", "seat1"] and deal["whist_mode"] == "closed"
    assert deal["written"] == expect(pulya={"seat2": 2}, whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4})
    assert deal["taken"] == {"seat1": 2, "seat2": 6, "seat3": 2} and len(deal["tricks"]) == 10
    assert all(t["leader"].startswith("seat") for t in deal["tricks"])
    assert deal["tricks"][0]["leader"] == "seat2"           # first hand leads trick 1
    check_replay(s, tmp_path)


@pytest.mark.parametrize("convention, gora, w3, w1", [("sochi", 8, 20, 16), ("leningrad", 16, 40, 32)])
def test_ex2_seven_hearts_down_two(tmp_path, convention, gora, w3, w1):
    s = Script(config(bidding=True, convention=convention))
    contract_deal(s, ["seat2:7h", "seat3:pass", "seat1:pass"], "7h", ["seat3:whist", "seat1:whist"],
                  {"seat2": 5, "seat3": 3, "seat1": 2})
    deal = last_deal(s)
    assert deal["outcome"] == "failed"
    assert deal["written"] == expect(gora={"seat2": gora}, whists={("seat3", "seat2"): w3, ("seat1", "seat2"): w1})
    assert s.summary["pulka"]["seat3"]["whists"]["seat2"] == w3
    check_replay(s, tmp_path)


@pytest.mark.parametrize("rules, whists, gora", [({}, 4, 4), ({"whist_responsibility": "half"}, 4, 2),
                                                 ({"convention": "leningrad"}, 8, 4)])
def test_ex3_one_whister_closed(tmp_path, rules, whists, gora):
    s = Script(config(bidding=True, **rules))
    contract_deal(s, ["seat2:6c", "seat3:pass", "seat1:pass"], "6c", ["seat3:pass", "seat1:whist"],
                  {"seat2": 8, "seat3": 1, "seat1": 1})
    deal = last_deal(s)
    assert deal["whisters"] == ["seat1"] and deal["whist_mode"] == "closed"
    assert deal["whist_calls"] == [{"seat": "seat3", "call": "pass"}, {"seat": "seat1", "call": "whist"}]
    assert deal["written"] == expect(pulya={"seat2": 2}, gora={"seat1": gora}, whists={("seat1", "seat2"): whists})
    check_replay(s, tmp_path)


# --- 4-5: written without play -------------------------------------------------------

def test_ex4_both_pass(tmp_path):
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:8d", "seat3:pass", "seat1:pass"], "8d", ["seat3:pass", "seat1:pass"])
    deal = last_deal(s)
    assert deal["kind"] == "unplayed" and deal["outcome"] == "passed" and deal["complete"]
    assert deal["tricks"] == [] and deal["whisters"] == [] and deal["whist_mode"] is None
    assert deal["written"] == expect(pulya={"seat2": 6})
    assert s.kinds("whisting")[-1] == {"deal": 1, "whisters": [], "result": "passed"}
    assert s.tracker.deal is None
    check_replay(s, tmp_path)


def test_ex5_half_whist(tmp_path):
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:7s", "seat3:pass", "seat1:pass"], "7s", ["seat3:pass", "seat1:half", "seat3:pass"])
    deal = last_deal(s)
    assert deal["kind"] == "unplayed" and deal["outcome"] == "half_whist"
    assert deal["written"] == expect(pulya={"seat2": 4}, whists={("seat1", "seat2"): 4})
    check_replay(s, tmp_path)


def test_ex5_variant_the_passer_takes_the_whist_back(tmp_path):
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:7s", "seat3:pass", "seat1:pass"], "7s", ["seat3:pass", "seat1:half", "seat3:whist"],
                  {"seat2": 7, "seat3": 2, "seat1": 1})
    deal = last_deal(s)
    assert deal["whisters"] == ["seat3"] and deal["outcome"] == "made"
    assert deal["written"] == expect(pulya={"seat2": 4}, whists={("seat3", "seat2"): 12})
    assert s.kinds("whisting")[-1]["whisters"] == ["seat3"]
    check_replay(s, tmp_path)


# --- 6-9 ----------------------------------------------------------------------------

@pytest.mark.parametrize("convention, tricks, written", [
    ("sochi", 0, {"pulya": {"seat2": 10}}), ("sochi", 2, {"gora": {"seat2": 20}}),
    ("leningrad", 2, {"gora": {"seat2": 40}})])
def test_ex6_misere(tmp_path, convention, tricks, written):
    s = Script(config(bidding=True, convention=convention))
    s.bids("seat2:misere", "seat3:pass", "seat1:pass")
    deal = last_deal(s)
    assert deal["kind"] == "misere" and deal["game"] == "misere" and deal["value"] == 10
    assert deal["whist_mode"] == "open"
    assert s.kinds("auction") == [{"deal": 1, "result": "misere", "declarer": "seat2", "bid": "misere"}]
    assert not s.mistakes()
    s.contract("seat2", "misere")                             # accepted until the first card, changes nothing
    assert not s.mistakes()
    rest = 10 - tricks
    played = find_play(["seat2", "seat3", "seat1"], "misere", "seat2",
                       {"seat2": tricks, "seat3": rest // 2, "seat1": rest - rest // 2})
    play_cards(s, played)
    deal = last_deal(s)
    assert deal["outcome"] == ("made" if tricks == 0 else "failed")
    assert deal["written"] == expect(**written)
    s2 = Script(config(bidding=True))
    s2.bids("seat2:misere", "seat3:pass", "seat1:pass")
    s2.whist("seat3", "whist")                                # whisting a misère
    s2.contract("seat2", "6s")
    assert [m.data["mistake"] for m in s2.mistakes()] == ["invalid_control", "invalid_control"]
    check_replay(s, tmp_path)


def test_ex7_ten_no_trumps_one_whister(tmp_path):
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:10n", "seat3:pass", "seat1:pass"], "10n", ["seat3:whist", "seat1:pass"],
                  {"seat2": 10, "seat3": 0, "seat1": 0})
    assert last_deal(s)["written"] == expect(pulya={"seat2": 10}, gora={"seat3": 10})
    check_replay(s, tmp_path)


def test_ex7_variant_ten_not_whisted(tmp_path):
    s = Script(config(bidding=True, ten_whisted=False))
    s.bids("seat2:10n", "seat3:pass", "seat1:pass")
    s.contract("seat2", "10n")
    deal = last_deal(s)
    assert deal["kind"] == "unplayed" and deal["outcome"] == "ten_unwhisted" and deal["complete"]
    assert deal["written"] == expect(pulya={"seat2": 10})
    assert s.kinds("whisting") == [{"deal": 1, "whisters": [], "result": "ten_unwhisted"}]
    s.whist("seat3", "whist")                                 # the deal is over: no deal awaits it
    assert s.mistakes()[-1].data["mistake"] == "invalid_control"
    check_replay(s, tmp_path)


@pytest.mark.parametrize("second_responsible, gora", [(True, {"seat1": 6}), (False, {"seat3": 6, "seat1": 6})])
def test_ex8_eight_spades_whisters_take_nothing(tmp_path, second_responsible, gora):
    s = Script(config(bidding=True, second_whist_responsible=second_responsible))
    contract_deal(s, ["seat2:8s", "seat3:pass", "seat1:pass"], "8s", ["seat3:whist", "seat1:whist"],
                  {"seat2": 10, "seat3": 0, "seat1": 0})
    assert last_deal(s)["written"] == expect(pulya={"seat2": 6}, gora=gora)
    check_replay(s, tmp_path)


@pytest.mark.parametrize("taken, w3", [((8, 2, 0), 4), ((7, 3, 0), 6)])
def test_ex9_one_whister_short_of_two(tmp_path, taken, w3):
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:6s", "seat3:pass", "seat1:pass"], "6s", ["seat3:whist", "seat1:whist"],
                  dict(zip(["seat2", "seat3", "seat1"], taken)))
    assert last_deal(s)["written"] == expect(pulya={"seat2": 2}, gora={"seat1": 4}, whists={("seat3", "seat2"): w3})
    check_replay(s, tmp_path)


# --- 10-11: revokes -------------------------------------------------------------------

def test_ex10_defender_revokes_and_wins_the_trick(tmp_path):
    s = Script(config(bidding=True))
    played = contract_deal(s, ["seat2:6h", "seat3:pass", "seat1:pass"], "6h", ["seat3:whist", "seat1:whist"],
                           {"seat2": 5, "seat3": 3, "seat1": 2}, revoke=(3, "seat3", "trump"),
                           check=lambda p: p.winners[3] == "seat3")
    deal = last_deal(s)
    assert deal["revoke"] == "seat3" and deal["revoke_trick"] == 4
    assert deal["taken"] == {"seat1": 2, "seat2": 5, "seat3": 3}       # as played
    assert deal["outcome"] == "made"
    assert deal["written"] == expect(pulya={"seat2": 2}, gora={"seat3": 2},
                                     whists={("seat3", "seat2"): 4, ("seat1", "seat2"): 4})
    revokes = s.mistakes("revoke")
    assert len(revokes) == 1 and revokes[0].data["zone"] == "seat3"
    # signalled the moment it is proven: when seat3 plays the led suit of trick 4 again
    led = played.tricks[3][0][1].suit
    proof = next(i for i, t in enumerate(played.tricks) if i > 3 and any(z == "seat3" and c.suit == led for z, c in t))
    assert revokes[0].data["card"] in {str(c) for z, c in played.tricks[proof] if z == "seat3"}
    check_replay(s, tmp_path)


@pytest.mark.parametrize("gets, w3, w1", [("seat3", 16, 8), ("seat1", 12, 12)])
def test_ex11_declarer_revokes_and_wins_the_trick(tmp_path, gets, w3, w1):
    def check(p):
        trick = p.tricks[2]
        led = trick[0][1].suit
        best = max((c.rank, z) for z, c in trick if z != "seat2" and c.suit == led)[1]
        return p.winners[2] == "seat2" and best == gets
    s = Script(config(bidding=True))
    contract_deal(s, ["seat2:7c", "seat3:pass", "seat1:pass"], "7c", ["seat3:whist", "seat1:whist"],
                  {"seat2": 7, "seat3": 2, "seat1": 1}, revoke=(2, "seat2", "trump"), check=check)
    deal = last_deal(s)
    assert deal["revoke"] == "seat2" and deal["revoke_trick"] == 3 and deal["outcome"] == "failed"
    assert deal["written"] == expect(gora={"seat2": 4}, whists={("seat3", "seat2"): w3, ("seat1", "seat2"): w1})
    check_replay(s, tmp_path)


# --- 12: four players ------------------------------------------------------------------

@pytest.mark.parametrize("to_dealer, w1", [(True, 4), (False, 0)])
def test_ex12_four_players_consolation_to_the_dealer(tmp_path, to_dealer, w1):
    s = Script(config(players=4, bidding=True, consolation_to_dealer=to_dealer))
    contract_deal(s, ["seat2:pass", "seat3:7c", "seat4:pass"], "7c", ["seat4:whist", "seat2:whist"],
                  {"seat3": 6, "seat4": 2, "seat2": 2}, declarer="seat3")
    deal = last_deal(s)
    assert deal["taken"]["seat1"] == 0 and deal["outcome"] == "failed"
    assert deal["written"] == expect(4, gora={"seat3": 4}, whists={("seat4", "seat3"): 12, ("seat2", "seat3"): 12,
                                                                    ("seat1", "seat3"): w1})
    check_replay(s, tmp_path)


# --- 13-15: the pulya target, help, the series -----------------------------------------

def both_pass(s: Script, bids, declarer, game, defenders):
    s.bids(*bids)
    s.contract(declarer, game)
    s.whists(f"{defenders[0]}:pass", f"{defenders[1]}:pass")


def test_ex13_help(tmp_path):
    s = Script(config(bidding=True, pulya_target=10))
    both_pass(s, ["seat2:8s", "seat3:pass", "seat1:pass"], "seat2", "8s", ["seat3", "seat1"])
    both_pass(s, ["seat3:6s", "seat1:pass", "seat2:pass"], "seat3", "6s", ["seat1", "seat2"])
    both_pass(s, ["seat1:pass", "seat2:8d", "seat3:pass"], "seat2", "8d", ["seat3", "seat1"])
    deals = s.summary["deals"]
    assert [d["dealer"] for d in deals] == ["seat1", "seat2", "seat3"]
    assert deals[2]["help"] == [{"from": "seat2", "to": "seat3", "points": 2}]
    assert deals[2]["written"] == expect(pulya={"seat2": 4, "seat3": 2}, whists={("seat2", "seat3"): 20})
    pulka = s.summary["pulka"]
    assert (pulka["seat2"]["pulya"], pulka["seat3"]["pulya"], pulka["seat1"]["pulya"]) == (10, 4, 0)
    assert s.summary["pulya_target"] == 10 and s.summary["finished_after_deal"] is None
    check_replay(s, tmp_path)


@pytest.mark.parametrize("convention, gora", [("sochi", -4), ("leningrad", -8)])
def test_ex14_the_pulka_finishes(tmp_path, convention, gora):
    s = Script(config(bidding=True, pulya_target=2, convention=convention))
    both_pass(s, ["seat2:6s", "seat3:pass", "seat1:pass"], "seat2", "6s", ["seat3", "seat1"])
    both_pass(s, ["seat3:6s", "seat1:pass", "seat2:pass"], "seat3", "6s", ["seat1", "seat2"])
    both_pass(s, ["seat1:6s", "seat2:pass", "seat3:pass"], "seat1", "6s", ["seat2", "seat3"])
    assert s.summary["finished_after_deal"] == 3
    both_pass(s, ["seat2:7s", "seat3:pass", "seat1:pass"], "seat2", "7s", ["seat3", "seat1"])
    deal = last_deal(s)
    assert deal["help"] == [{"from": "seat2", "to": None, "points": 4}]
    assert deal["written"] == expect(gora={"seat2": gora})
    assert s.summary["finished_after_deal"] == 3
    check_replay(s, tmp_path)


def test_ex15_closed_prikup_series(tmp_path):
    s = Script(config(bidding=True, prikup="closed"))
    s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    play_cards(s, find_play(["seat2", "seat3", "seat1"], "6n", None, {"seat2": 4, "seat3": 3, "seat1": 3}))
    both_pass(s, ["seat2:6s", "seat3:pass", "seat1:pass"], "seat2", "6s", ["seat3", "seat1"])
    s.bids("seat3:pass", "seat1:pass", "seat2:pass")
    play_cards(s, find_play(["seat3", "seat1", "seat2"], "6n", None, {"seat2": 4, "seat3": 3, "seat1": 3}))
    deals = s.summary["deals"]
    assert [(d["dealer"], d["price"], d["kind"]) for d in deals] == [
        ("seat1", 1, "raspasovka"), ("seat1", 2, "unplayed"), ("seat2", 1, "raspasovka")]
    assert all(d["complete"] for d in deals)
    assert deals[0]["auction"] == [{"seat": "seat2", "bid": "pass"}, {"seat": "seat3", "bid": "pass"},
                                   {"seat": "seat1", "bid": "pass"}]
    assert deals[0]["written"] == expect(gora={"seat2": 4, "seat3": 3, "seat1": 3})
    assert deals[0]["outcome"] is None and deals[0]["declarer"] is None
    assert s.kinds("auction")[0] == {"deal": 1, "result": "raspasovka", "declarer": None, "bid": None}
    check_replay(s, tmp_path)
