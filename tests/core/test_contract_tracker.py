"""The tracker with ``rules.bidding``: the auction, the contract line, whisting, cards outside
play, the prikup zone, whist_mode, revokes in contracts, undo and new_deal in every phase, the
series, and the derived lines (RULES-contracts.md, FORMATS-contracts.md)."""

import pytest

from contract_games import find_play
from table_script import Script, config
from test_ref_contract import expect, play_cards


def bidding(**rules) -> Script:
    return Script(config(bidding=True, **rules))


def invalid(s: Script) -> list:
    return [m.data for m in s.mistakes("invalid_control")]


def deals(s: Script) -> list:
    return s.summary["deals"]


# --- the auction -------------------------------------------------------------------

def test_the_first_bid_is_the_first_hands_and_starts_the_deal():
    s = bidding()
    s.bid("seat3", "6s")
    assert deals(s) == [] and len(invalid(s)) == 1 and s.tracker.state == "idle"
    s.bid("seat2", "6s")
    assert s.tracker.state == "auction" and deals(s)[0]["kind"] is None
    assert deals(s)[0]["auction"] == [{"seat": "seat2", "bid": "6s"}]
    assert s.kinds("deal_start") == [{"deal": 1, "dealer": "seat1", "price": 1}]


def test_a_bid_on_a_table_not_clear_and_a_card_before_the_auction():
    s = bidding()
    s.lay("seat2", "7s")                                   # a clear table, no bid yet: outside play
    assert [m.data["type"] for m in s.mistakes()] == ["not_in_play"]
    s.bid("seat2", "6s")                                   # the card still lies there
    assert s.mistakes()[-1].data["type"] == "table_not_clear" and deals(s) == []
    s.lift("seat2", "7s")
    s.bid("seat2", "6s")
    assert len(deals(s)) == 1
    s.lay("prikup", "8s")                                  # in the auction the prikup zone is signalled too
    s.lay("seat3", "9s")
    assert [m.data["type"] for m in s.mistakes()][-2:] == ["not_in_play", "not_in_play"]
    assert deals(s)[0]["tricks"] == []


def test_calls_go_clockwise_among_those_who_have_not_passed():
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:6c")
    s.bid("seat3", "7s")                                   # a pass is final
    assert len(invalid(s)) == 1
    s.bids("seat2:7s", "seat1:pass")                       # seat2 jumps; seat1 passes: seat2 declares
    assert s.kinds("auction") == [{"deal": 1, "result": "contract", "declarer": "seat2", "bid": "7s"}]
    assert s.tracker.state == "contract"


def test_holding_the_bid_by_the_senior_of_the_last_two():
    s = bidding()
    s.bids("seat2:6s", "seat3:6c", "seat1:pass", "seat2:6c", "seat3:pass")   # FORMATS-contracts.md example
    assert not invalid(s)
    assert s.kinds("auction")[0]["declarer"] == "seat2" and s.kinds("auction")[0]["bid"] == "6c"
    s2 = bidding()
    s2.bids("seat2:6s", "seat3:6s")                        # three still bid: no holding
    s2.bids("seat3:pass", "seat1:6s")                      # seat1 is junior to seat2: no holding
    assert len(invalid(s2)) == 2


def test_misere_only_as_a_first_call_and_below_nine():
    s = bidding()
    s.bids("seat2:6s", "seat3:misere", "seat1:pass")
    assert not invalid(s)
    s.bid("seat2", "misere")                               # not his first call
    s.bid("seat2", "9s")
    s.bid("seat3", "9c")                                   # a misère bidder may only pass
    assert len(invalid(s)) == 2
    s.bid("seat3", "pass")
    assert s.kinds("auction")[0] == {"deal": 1, "result": "contract", "declarer": "seat2", "bid": "9s"}
    s2 = bidding()
    s2.bids("seat2:9s", "seat3:misere")
    assert len(invalid(s2)) == 1


def test_two_passes_before_the_third_call_do_not_end_the_auction():
    s = bidding()
    s.bids("seat2:pass", "seat3:pass")
    assert s.tracker.state == "auction"
    s.bid("seat1", "6d")
    assert s.kinds("auction")[0]["declarer"] == "seat1" and s.tracker.state == "contract"


def test_all_pass_is_a_raspasovka_played_as_rules_md():
    from table_script import DEAL_A, DEAL_A_TAKEN
    s = bidding()
    s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    assert s.kinds("auction") == [{"deal": 1, "result": "raspasovka", "declarer": None, "bid": None}]
    s.deal(DEAL_A)                                          # the dealer turns up the prikup: plays
    deal = deals(s)[0]
    assert deal["kind"] == "raspasovka" and deal["complete"] and deal["taken"] == DEAL_A_TAKEN
    assert deal["outcome"] is None and deal["whist_mode"] is None and deal["value"] is None
    plain = Script(config())
    plain.deal(DEAL_A)
    assert s.summary["pulka"] == plain.summary["pulka"]
    assert not s.mistakes()


# --- the contract line and whisting ---------------------------------------------------

def test_the_contract_line():
    s = bidding()
    s.bids("seat2:6h", "seat3:pass", "seat1:pass")
    s.contract("seat3", "7h")                              # not the declarer's
    s.contract("seat2", "6s")                              # below the winning bid
    s.contract("seat2", "misere")                          # misère after a game auction
    s.whist("seat3", "whist")                              # no whisting before the contract
    assert len(invalid(s)) == 4 and deals(s)[0]["game"] is None and deals(s)[0]["kind"] == "contract"
    s.contract("seat2", "7n")                              # higher is fine
    s.contract("seat2", "8n")                              # a second contract line
    assert len(invalid(s)) == 5
    assert deals(s)[0]["game"] == "7n" and deals(s)[0]["value"] == 4 and s.tracker.state == "whisting"
    assert s.kinds("contract") == [{"deal": 1, "seat": "seat2", "game": "7n"}]


@pytest.mark.parametrize("calls, bad", [
    (["seat3:half"], 1),                                   # half by the first defender
    (["seat3:whist", "seat1:half"], 1),                    # half after a whist
    (["seat1:whist"], 1),                                  # out of turn
    (["seat3:pass", "seat1:half", "seat1:pass"], 1),       # the first defender speaks after a half
])
def test_invalid_whist_calls(calls, bad):
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6s")
    s.whists(*calls)
    assert len(invalid(s)) == bad


@pytest.mark.parametrize("game, rules", [("8s", {}), ("6s", {"half_whist": False})])
def test_half_only_on_six_and_seven_and_when_played(game, rules):
    s = bidding(**rules)
    s.bids(f"seat2:{game}", "seat3:pass", "seat1:pass")
    s.contract("seat2", game)
    s.whists("seat3:pass", "seat1:half")
    assert len(invalid(s)) == 1 and s.tracker.state == "whisting"


def test_whisting_lines_and_their_derived_line():
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6s")
    s.whists("seat3:whist", "seat1:pass")
    assert s.kinds("whisting") == [{"deal": 1, "whisters": ["seat3"], "result": "play"}]
    deal = deals(s)[0]
    assert deal["whisters"] == ["seat3"] and deal["whist_mode"] == "closed"
    assert s.tracker.state == "play" and s.tracker.deal.expected == "seat2"


# --- cards in a contract deal ------------------------------------------------------------

def test_cards_outside_play_and_the_silent_prikup_zone():
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.lay("prikup", "Ah")                                  # the talon turned up: nothing
    s.lay("prikup", "Kh")
    assert not s.mistakes()
    s.lay("seat2", "7c")                                   # before the contract: outside play
    s.contract("seat2", "6s")
    s.lay("seat3", "8c")                                   # during whisting
    assert [m.data["type"] for m in s.mistakes()] == ["not_in_play", "not_in_play"]
    s.lift("prikup", "Ah")
    s.lay("prikup", "Ah")                                  # flicker of the discard: nothing
    s.whists("seat3:whist", "seat1:whist")
    s.lay("prikup", "Qh")                                  # in play: never a play, no signal
    assert len(s.mistakes()) == 2
    s.lift("seat2", "7c")
    s.lay("seat2", "7c")                                   # now a play
    assert s.tracker.deal.plays == [("seat2", s.tracker.deal.plays[0][1])] and s.tracker.state == "play"


def test_the_prikup_cards_keep_the_next_deal_from_starting():
    s = bidding()
    s.bids("seat2:8d", "seat3:pass", "seat1:pass")
    s.lay("prikup", "Ah")
    s.contract("seat2", "8d")
    s.whists("seat3:pass", "seat1:pass")
    s.bid("seat3", "6s")                                   # deal 2's first hand, but the discard lies there
    assert s.mistakes()[-1].data["type"] == "table_not_clear" and len(deals(s)) == 1
    s.lift("prikup", "Ah")
    s.bid("seat3", "6s")
    assert len(deals(s)) == 2 and deals(s)[1]["dealer"] == "seat2"


def test_a_sitting_out_dealer_lays_no_card():
    s = Script(config(players=4, bidding=True))
    s.bids("seat2:6s", "seat3:pass")
    s.bid("seat1", "pass")                                 # the sitting-out dealer never bids
    assert invalid(s)[-1]["zone"] == "seat1"
    s.bids("seat4:pass")
    s.contract("seat2", "6s")
    s.whists("seat3:whist", "seat4:whist")
    s.lay("seat1", "As")
    assert s.mistakes()[-1].data["type"] == "out_of_turn"


def test_follow_suit_else_trump_else_any_and_trumps_win():
    s = bidding()
    s.bids("seat2:6h", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6h")
    s.whists("seat3:whist", "seat1:whist")
    s.trick("seat2:As", "seat3:7h", "seat1:Ks")            # seat3 trumps the ace
    assert s.tracker.last_trick.winner == "seat3" and s.tracker.deal.expected == "seat3"
    s.trick("seat3:7d", "seat1:Ad", "seat2:8c")            # no trump in it: the highest diamond
    assert s.tracker.last_trick.winner == "seat1"
    assert not s.mistakes()


# --- whist_mode -------------------------------------------------------------------------

def test_whist_mode_with_one_whister_until_the_first_trick_closes():
    s = bidding()
    s.mode("open")                                         # no deal awaits it
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.mode("open")                                         # the auction: not yet
    s.contract("seat2", "6s")
    s.whists("seat3:pass", "seat1:whist")
    s.mode("open")
    s.mode("closed")
    s.mode("open")                                         # the last valid one counts
    assert len(invalid(s)) == 2 and deals(s)[0]["whist_mode"] == "open"
    s.trick("seat2:As", "seat3:7s", "seat1:8s")
    s.mode("closed")
    assert len(invalid(s)) == 3 and deals(s)[0]["whist_mode"] == "open"


def test_whist_mode_invalid_with_two_whisters_and_in_a_raspasovka_valid_in_a_misere():
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6s")
    s.whists("seat3:whist", "seat1:whist")
    s.mode("open")
    assert len(invalid(s)) == 1 and deals(s)[0]["whist_mode"] == "closed"
    r = bidding()
    r.bids("seat2:pass", "seat3:pass", "seat1:pass")
    r.mode("open")
    assert len(invalid(r)) == 1
    m = bidding()
    m.bids("seat2:misere", "seat3:pass", "seat1:pass")
    assert deals(m)[0]["whist_mode"] == "open"
    m.mode("closed")
    assert not invalid(m) and deals(m)[0]["whist_mode"] == "closed"


# --- revokes ---------------------------------------------------------------------------

def test_failing_to_trump_is_proven_by_a_later_trump():
    s = bidding()
    s.bids("seat2:6h", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6h")
    s.whists("seat3:whist", "seat1:whist")
    s.trick("seat2:As", "seat3:7c", "seat1:8s")            # seat3 shows no spade and does not trump
    assert not s.mistakes()
    s.trick("seat1:7d", "seat2:8d", "seat3:7h")            # seat3 lays a trump: he had one in trick 1
    (revoke,) = s.mistakes("revoke")
    assert revoke.data["zone"] == "seat3" and revoke.data["suit"] == "h"
    assert deals(s)[0]["revoke"] == "seat3" and deals(s)[0]["revoke_trick"] == 1


@pytest.mark.parametrize("mode, charged", [("open", "seat1"), ("closed", "seat3")])
def test_a_passers_revoke_in_open_play_is_the_whisters(mode, charged):
    s = bidding()
    s.bids("seat2:6h", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6h")
    s.whists("seat3:pass", "seat1:whist")
    s.mode(mode)
    s.trick("seat2:As", "seat3:7c", "seat1:8s")            # the passer's zone fails to follow
    s.trick("seat2:Ks", "seat3:7s", "seat1:9s")            # and plays a spade: proven
    assert s.mistakes("revoke")[0].data["zone"] == "seat3"
    assert deals(s)[0]["revoke"] == charged


def test_only_the_first_revoke_in_play_order_counts():
    s = bidding()
    s.bids("seat2:6n", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6n")
    s.whists("seat3:whist", "seat1:whist")
    s.trick("seat2:As", "seat3:Ks", "seat1:7c")            # seat1 fails spades first
    s.trick("seat2:Ac", "seat3:7d", "seat1:8c")            # seat3 fails clubs
    s.trick("seat2:Ah", "seat3:9c", "seat1:7h")            # seat3 proves his: a club
    assert deals(s)[0]["revoke"] == "seat3"
    s.trick("seat2:Kh", "seat3:8h", "seat1:8s")            # seat1 proves his, which came first
    assert deals(s)[0]["revoke"] == "seat1" and deals(s)[0]["revoke_trick"] == 1
    # seat3 also failed hearts in trick 3 and proved it in trick 4: every proof is signalled
    assert [(m.data["zone"], m.data["suit"]) for m in s.mistakes("revoke")] == [
        ("seat3", "c"), ("seat3", "h"), ("seat1", "s")]


# --- undo and new_deal -------------------------------------------------------------------

def test_undo_takes_back_control_lines_and_reaches_into_the_deal_just_finished():
    s = bidding()
    s.bids("seat2:8d", "seat3:pass", "seat1:pass")
    s.contract("seat2", "8d")
    s.whists("seat3:pass", "seat1:pass")
    assert s.summary["pulka"]["seat2"]["pulya"] == 6 and s.tracker.state == "idle"
    s.bid("seat3", "6s")                                   # deal 2's first line
    s.press("undo")                                        # takes it back: deal 2 is gone
    assert len(deals(s)) == 1 and s.tracker.state == "idle"
    s.press("undo")                                        # now deal 1's last whist call
    assert len(deals(s)) == 1 and not deals(s)[0]["complete"] and s.tracker.state == "whisting"
    assert s.summary["pulka"]["seat2"]["pulya"] == 0
    assert s.kinds("undo")[-1] == {"deal": 1, "undone": "whist", "seat": "seat1", "call": "pass"}
    s.whist("seat1", "whist")                              # seat1 whists instead
    assert s.tracker.state == "play" and deals(s)[0]["whisters"] == ["seat1"]
    for _ in range(3):
        s.press("undo")                                    # whist, whist, contract
    assert s.tracker.state == "contract"
    s.press("undo")                                        # the deciding pass: the auction again
    assert s.tracker.state == "auction" and deals(s)[0]["kind"] is None
    s.press("undo")
    s.press("undo")
    assert s.tracker.state == "idle" and deals(s) == []
    s.press("undo")                                        # nothing left
    assert deals(s) == []


def test_undo_of_a_card_in_a_contract_and_of_the_last_trick():
    s = bidding()
    played = find_play(["seat2", "seat3", "seat1"], "6s", "seat2", {"seat2": 6, "seat3": 2, "seat1": 2})
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "6s")
    s.whists("seat3:whist", "seat1:whist")
    play_cards(s, played)
    before = s.summary
    assert deals(s)[0]["complete"]
    s.press("undo")
    assert not deals(s)[0]["complete"] and s.tracker.state == "play"
    assert s.summary["pulka"]["seat2"]["pulya"] == 0
    zone, card = played.tricks[-1][-1]
    s.lay(zone, str(card))
    assert s.summary == before


@pytest.mark.parametrize("lines", [["seat2:6s"], ["seat2:6s", "seat3:pass", "seat1:pass"],
                                   ["seat2:6s", "seat3:pass", "seat1:pass", "contract"],
                                   ["seat2:6s", "seat3:pass", "seat1:pass", "contract", "whist"]])
def test_new_deal_in_any_phase(lines):
    s = bidding()
    for line in lines:
        if line == "contract":
            s.contract("seat2", "6s")
        elif line == "whist":
            s.whists("seat3:whist", "seat1:whist")
            s.lay("seat2", "As")
        else:
            s.bids(line)
    s.press("new_deal")
    deal = deals(s)[0]
    assert not deal["complete"] and deal["written"] is None and s.tracker.state == "idle"
    s.press("undo")                                        # after new_deal: nothing
    assert len(deals(s)) == 1 and s.tracker.state == "idle"
    s.lift("seat2", "As")
    s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    assert (deals(s)[1]["dealer"], deals(s)[1]["price"]) == ("seat1", 1)
    assert s.summary["pulka"] == Script(config()).summary["pulka"]


# --- the series ---------------------------------------------------------------------------

def test_a_contract_ends_a_raspasovka_series():
    from table_script import DEAL_A
    s = bidding()
    s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    s.deal(DEAL_A)
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")        # the same dealer at price 2
    s.contract("seat2", "6s")
    s.whists("seat3:pass", "seat1:pass")
    s.bids("seat3:pass", "seat1:pass", "seat2:pass")       # the next seat deals, price 1
    assert [(d["dealer"], d["price"], d["kind"]) for d in deals(s)] == [
        ("seat1", 1, "raspasovka"), ("seat1", 2, "unplayed"), ("seat2", 1, "raspasovka")]


# --- bidding off, and the lines themselves ---------------------------------------------------

def test_without_bidding_every_control_line_is_invalid():
    from table_script import DEAL_A
    s = Script(config(bidding=False))
    s.bid("seat2", "6s")
    s.contract("seat2", "6s")
    s.whist("seat3", "whist")
    s.mode("open")
    got = invalid(s)
    assert len(got) == 4 and all(m["deal"] is None and m["message"] for m in got)
    assert [m["line"] for m in got] == [1, 2, 3, 4]
    s.deal(DEAL_A)
    # every field of a deal entry, also with bidding off (FORMATS-contracts.md, second edition)
    assert deals(s)[0]["complete"] and list(deals(s)[0]) == [
        "number", "dealer", "price", "kind", "auction", "declarer", "game", "value", "whist_calls",
        "whisters", "whist_mode", "outcome", "tricks", "taken", "claimed", "revoke", "revoke_trick",
        "complete", "written", "help"]


def test_mistake_lines_say_their_deal_line_and_message():
    s = bidding()
    s.bid("seat2", "6s")
    s.bid("seat2", "7s")
    (m,) = s.mistakes()
    d = m.to_dict()
    assert d["kind"] == "mistake" and d["mistake"] == "invalid_control" and d["deal"] == 1 and d["line"] == 2
    assert "seat3" in d["message"]


def test_the_deal_line_carries_the_deal_entry():
    s = bidding()
    s.bids("seat2:7s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "7s")
    s.whists("seat3:pass", "seat1:half", "seat3:pass")
    (line,) = s.kinds("deal")
    entry = deals(s)[0]
    assert line["deal"] == 1
    for key in ("kind", "declarer", "game", "value", "outcome", "written", "help", "auction", "whist_calls",
                "revoke_trick", "complete"):
        assert line[key] == entry[key], key
    assert line["written"] == expect(pulya={"seat2": 4}, whists={("seat1", "seat2"): 4})
