"""The deal tracker against RULES.md: play order, winners, options, mistakes and buttons."""

from fractions import Fraction

import pytest

from controller.core.deal import Deal, active_seats
from controller.core.scoring import score_deal
from controller.app.sim import make_deck
from table_script import DEAL_A, DEAL_A_TAKEN, DEAL_A_WINNERS, Script, config, rotate_deal


def test_worked_deal_dealer_leads():
    s = Script()
    s.deal(DEAL_A)
    (deal,) = s.summary["deals"]
    assert [t["winner"] for t in deal["tricks"]] == DEAL_A_WINNERS
    assert deal["taken"] == DEAL_A_TAKEN
    assert deal["complete"] is True and deal["revoke"] is None
    assert deal["tricks"][0] == {"leader": "prikup", "winner": "seat3",
                                 "cards": {"prikup": "7s", "seat2": "8s", "seat3": "As", "seat1": "9s"}}
    assert list(deal["tricks"][0]["cards"]) == ["prikup", "seat2", "seat3", "seat1"]
    assert deal["tricks"][2]["leader"] == "seat2"        # first hand leads trick 3, whoever won trick 2
    pulka = s.summary["pulka"]
    assert {p: v["gora"] for p, v in pulka.items()} == {"seat1": 3, "seat2": 3, "seat3": 4}
    assert all(v["pulya"] == 0 for v in pulka.values())


def test_second_prikup_lead_regardless_of_trick_one_winner():
    s = Script()
    s.trick(*DEAL_A[0])
    assert s.tracker.deal.expected == "prikup"
    s.trick(*DEAL_A[1])
    assert s.tracker.deal.expected == "seat2"


def test_progressive_series_same_dealer_then_rotation_and_penalty():
    s = Script(config(progression=[1, 2, 3]))
    for _ in range(4):
        dealer = s.tracker.next_deal_params()[0]
        first_hand = {"seat1": "seat2", "seat2": "seat3", "seat3": "seat1"}[dealer]
        # DEAL_A is written for dealer seat1; rename seats so it is played from this dealer
        shift = {"seat1": dealer, "seat2": first_hand,
                 "seat3": {"seat1": "seat3", "seat2": "seat1", "seat3": "seat2"}[dealer]}
        s.deal(rotate_deal(DEAL_A, shift))
    deals = s.summary["deals"]
    assert [(d["dealer"], d["price"]) for d in deals] == [("seat1", 1), ("seat1", 2), ("seat1", 3), ("seat2", 1)]
    # seat1 took 3 tricks in each of the first three deals (1+2+3)*3 = 18, +2 tricks x 3 penalty = 24
    assert s.summary["pulka"]["seat1"]["gora"] == 18 + 6 + 4   # deal 4: seat1 plays as "seat3" (4 tricks)


def test_sliding_series_rotates_at_first_price():
    s = Script(config(same_dealer=False))
    s.deal(DEAL_A)
    assert s.tracker.next_deal_params() == ("seat2", 0)
    s.deal(rotate_deal(DEAL_A, {"seat1": "seat2", "seat2": "seat3", "seat3": "seat1"}))
    assert [(d["dealer"], d["price"]) for d in s.summary["deals"]] == [("seat1", 1), ("seat2", 1)]


def _writes(rules_kw, taken, *, players=3, dealer="seat1", step=0, price=1, revoke=None):
    cfg = config(players=players, **rules_kw)
    seats = cfg.table.seats
    w = score_deal(cfg.rules, seats, active_seats(players, dealer), dealer, price, step,
                   {s: taken.get(s, 0) for s in seats}, revoke)
    return w


def test_gora_and_pulya_for_zero_tricks():
    w = _writes({}, {"seat1": 0, "seat2": 4, "seat3": 6}, price=2)
    assert w.gora == {"seat2": 8, "seat3": 12} and w.pulya == {"seat1": 2}


def test_subtract_minimum_amnesty():
    w = _writes({"subtract_minimum": True}, {"seat1": 3, "seat2": 5, "seat3": 2})
    assert w.gora == {"seat1": 1, "seat2": 3}
    # the zero-trick pulya reward is unchanged
    w = _writes({"subtract_minimum": True}, {"seat1": 0, "seat2": 5, "seat3": 5})
    assert w.pulya == {"seat1": 1} and w.gora == {"seat2": 5, "seat3": 5}


def test_subtract_minimum_sitting_out_dealer_writes_prikup_tricks_in_full():
    w = _writes({"subtract_minimum": True}, {"seat1": 2, "seat2": 3, "seat3": 2, "seat4": 3}, players=4)
    assert w.gora == {"seat1": 2, "seat2": 1, "seat4": 1}


def test_whists_scoring_one_winner_two_winners_and_tie():
    w = _writes({"scoring": "whists"}, {"seat1": 1, "seat2": 4, "seat3": 5}, price=2)
    assert w.whists == {("seat1", "seat2"): 32, ("seat1", "seat3"): 40} and not w.gora and not w.pulya
    w = _writes({"scoring": "whists", "whists_per_trick": 3}, {"seat1": 2, "seat2": 2, "seat3": 6}, price=1)
    assert w.whists == {("seat1", "seat3"): 9, ("seat2", "seat3"): 9}
    w = _writes({"scoring": "whists"}, {"seat1": 3, "seat2": 3, "seat3": 3, }, price=1)
    assert not w.whists
    w = _writes({"scoring": "whists"}, {"seat1": 1, "seat2": 1, "seat3": 7})
    assert w.whists[("seat1", "seat3")] == Fraction(14)


def test_whists_halves_kept_in_pulka():
    w = _writes({"scoring": "whists", "whists_per_trick": 1}, {"seat1": 0, "seat2": 0, "seat3": 9})
    assert w.whists == {("seat1", "seat3"): Fraction(9, 2), ("seat2", "seat3"): Fraction(9, 2)}


def test_last_step_penalty_tricks_points_and_short_series():
    w = _writes({}, {"seat1": 1, "seat2": 4, "seat3": 5}, step=2, price=3)
    assert w.gora["seat1"] == 3 + 6
    w = _writes({"progression": [1, 2, 4], "last_step_dealer_penalty_points": 10},
                {"seat1": 1, "seat2": 4, "seat3": 5}, step=2, price=4)
    assert w.gora["seat1"] == 4 + 10
    w = _writes({"progression": [1]}, {"seat1": 1, "seat2": 4, "seat3": 5}, step=0, price=1)
    assert w.gora["seat1"] == 1
    w = _writes({"same_dealer": False}, {"seat1": 1, "seat2": 4, "seat3": 5}, step=2, price=3)
    assert w.gora["seat1"] == 3
    # whatever the scoring mode
    w = _writes({"scoring": "whists"}, {"seat1": 1, "seat2": 4, "seat3": 5}, step=2, price=3)
    assert w.gora == {"seat1": 6}


def test_revoke_writes_ten_tricks_and_nothing_else_but_the_penalty():
    w = _writes({}, {"seat1": 0, "seat2": 4, "seat3": 6}, step=2, price=3, revoke="seat2")
    assert w.gora == {"seat1": 6, "seat2": 30} and not w.pulya and not w.whists


def test_closed_four_players_dealer_writes_pulya_unit():
    w = _writes({"prikup": "closed"}, {"seat2": 3, "seat3": 3, "seat4": 4}, players=4, price=2)
    assert w.pulya == {"seat1": 2}
    assert "seat1" not in w.gora


def test_closed_prikup_first_hand_leads_three_card_tricks():
    s = Script(config(prikup="closed"))
    s.lay("prikup", "7s")
    assert s.mistakes("out_of_turn")
    s.lift("prikup", "7s")
    tricks = [t for t in DEAL_A[2:]]
    s.deal(tricks)
    deal = s.tracker.deal
    assert deal is not None and len(deal.tricks) == 8 and deal.expected in ("seat2", "seat3", "seat1")
    assert s.summary["deals"][0]["tricks"][0]["leader"] == "seat2"


def test_suit_only_prikup_never_wins_and_unclaimed_trick():
    s = Script(config(prikup="suit_only"))
    s.trick("prikup:Ah", "seat2:7h", "seat3:8h", "seat1:9h")
    assert s.tracker.last_trick.winner == "seat1"
    s.trick("prikup:7s", "seat2:7c", "seat3:7d", "seat1:8c")
    assert s.tracker.last_trick.winner is None
    assert s.summary["deals"][0]["tricks"][1]["winner"] is None
    assert sum(s.summary["deals"][0]["taken"].values()) == 1


def test_dealer_leads_prikup_trick_goes_to_dealer_with_four_players():
    s = Script(config(players=4))
    assert active_seats(4, "seat1") == ("seat2", "seat3", "seat4")
    s.trick("prikup:Ah", "seat2:7h", "seat3:8h", "seat4:9h")
    assert s.tracker.last_trick.winner == "seat1"
    assert s.summary["deals"][0]["taken"] == {"seat1": 1, "seat2": 0, "seat3": 0, "seat4": 0}
    s.lay("seat1", "Ks")                       # the sitting-out dealer never plays
    assert s.mistakes("out_of_turn")


def test_out_of_turn_card_ignored_until_taken_back_even_when_turn_comes():
    s = Script()
    s.lay("prikup", "7s")
    s.lay("seat3", "As")                        # seat2 is to play
    assert s.mistakes("out_of_turn")[0].data["zone"] == "seat3"
    s.lay("seat2", "8s")
    assert s.tracker.deal.expected == "seat3"
    s.lay("seat1", "9s")
    assert len(s.mistakes("out_of_turn")) == 2
    assert s.tracker.deal.expected == "seat3"   # the lying As is still ignored
    s.lift("seat3", "As")
    s.lay("seat3", "As")
    assert s.tracker.deal.expected == "seat1"
    s.lift("seat1", "9s")
    s.lay("seat1", "9s")
    assert s.tracker.last_trick.winner == "seat3"


def test_flicker_in_open_trick_changes_nothing():
    s = Script()
    s.lay("prikup", "7s")
    s.lay("seat2", "8s")
    before = len(s.signals)
    s.lift("seat2", "8s")
    s.lay("seat2", "8s")
    assert len(s.signals) == before
    assert s.tracker.deal.expected == "seat3"


def test_relaying_a_card_of_a_closed_trick_is_same_card_twice():
    s = Script()
    s.trick(*DEAL_A[0], clear=False)
    s.lift("seat3", "As")
    s.lay("seat3", "As")
    assert s.mistakes("same_card")
    s.lay("seat2", "As")                        # moved / a copied tag
    assert len(s.mistakes("same_card")) == 2
    assert s.tracker.deal.expected == "prikup"


def test_next_leader_may_lay_before_the_closed_trick_is_cleared():
    s = Script()
    s.trick(*DEAL_A[0], clear=False)
    s.trick(*DEAL_A[1], clear=False)
    s.trick(*DEAL_A[2], clear=False)
    assert not s.mistakes()
    assert len(s.tracker.deal.tricks) == 3


def test_unknown_tag_and_uid_without_deck():
    s = Script()
    s.lay_uid("seat2", "04AABBCCDDEEFF")
    s.lay_uid("seat2", "04AABBCCDDEEFF")        # repeated read: one signal
    assert len(s.mistakes("unknown_tag")) == 1
    deck = make_deck(3)
    uid = deck.uid_for(__import__("controller.core.cards", fromlist=["parse_card"]).parse_card("7s"))
    s2 = Script(deck=deck)
    s2.lay_uid("prikup", uid.lower())
    assert s2.tracker.deal.plays[0][1].__str__() == "7s"


def test_revoke_signalled_when_proven_and_first_revoke_charged():
    s = Script()
    s.trick("prikup:7s", "seat2:8h", "seat3:As", "seat1:9s")    # seat2 fails spades (play 1)
    s.trick("prikup:Ah", "seat2:7h", "seat3:8c", "seat1:9h")    # seat3 fails hearts (play 6)
    out = s.trick("seat2:10s", "seat3:10h", "seat1:Qs")        # seat2 proves his revoke, then seat3 his
    revokes = [x for x in out if x.kind == "mistake" and x.data["type"] == "revoke"]
    assert [r.data["zone"] for r in revokes] == ["seat2", "seat3"]
    assert s.tracker.deal.charged_revoke == "seat2"


def test_revoke_deal_scores_offender_only():
    s = Script()
    tricks = list(DEAL_A)
    tricks[0] = ("prikup:7s", "seat2:8h", "seat3:As", "seat1:9s")
    tricks[1] = ("prikup:Ah", "seat2:7h", "seat3:8s", "seat1:9h")   # seat3's 8s: seat3 followed before
    tricks[7] = ("seat3:10h", "seat1:Jh", "seat2:Qh")
    s.deal(tricks)
    (deal,) = s.summary["deals"]
    assert deal["revoke"] == "seat2" and deal["complete"]
    assert {p: v["gora"] for p, v in s.summary["pulka"].items()} == {"seat1": 0, "seat2": 10, "seat3": 0}


def test_undo_takes_back_last_card_which_stays_ignored():
    s = Script()
    s.lay("prikup", "7s")
    s.lay("seat2", "8s")
    s.press("undo")
    assert s.tracker.deal.expected == "seat2"
    s.lay("seat2", "9s")                        # plays again with another card
    assert s.tracker.deal.expected == "seat3"
    s.press("undo")
    s.lift("seat2", "9s")
    s.lift("seat2", "8s")
    s.lay("seat2", "8s")                        # 8s was ignored while lying; laid again it is accepted
    assert s.tracker.deal.plays[-1][1].__str__() == "8s"


def test_undo_still_lying_card_is_ignored():
    s = Script()
    s.lay("prikup", "7s")
    s.lay("seat2", "8s")
    s.press("undo")
    s.lay("seat3", "As")
    assert s.mistakes("out_of_turn")


def test_undo_reopens_the_deal_just_finished_and_withdraws_its_score():
    s = Script()
    s.deal(DEAL_A[:-1])
    s.trick(*DEAL_A[-1], clear=False)
    assert s.summary["pulka"]["seat3"]["gora"] == 4
    s.press("undo")
    assert s.summary["pulka"]["seat3"]["gora"] == 0
    assert s.tracker.deal is not None and s.tracker.deal.expected == "seat2"
    s.lift("seat2", "Ad")
    s.lay("seat2", "Ad")
    assert s.summary["deals"][0]["complete"] and s.summary["pulka"]["seat2"]["gora"] == 3


def test_undo_of_the_only_card_and_of_a_trick_last_card():
    s = Script()
    s.lay("prikup", "7s")
    s.press("undo")
    assert s.tracker.deal is None and s.summary["deals"] == []
    s.lift("prikup", "7s")
    s.trick(*DEAL_A[0], clear=False)
    s.press("undo")                              # reopens trick 1
    assert s.tracker.deal.expected == "seat1" and not s.tracker.deal.tricks


def test_new_deal_abandons_incomplete_same_dealer_same_price():
    s = Script()
    s.deal(DEAL_A)
    s.trick(*DEAL_A[0])
    s.press("new_deal")
    deals = s.summary["deals"]
    assert deals[1]["complete"] is False and len(deals[1]["tricks"]) == 1
    assert s.summary["pulka"]["seat3"]["gora"] == 4
    assert s.tracker.next_deal_params() == ("seat1", 1)
    s.deal(DEAL_A)
    assert [(d["dealer"], d["price"], d["complete"]) for d in s.summary["deals"]] == \
        [("seat1", 1, True), ("seat1", 2, False), ("seat1", 2, True)]


def test_table_must_be_clear_before_the_next_deal():
    s = Script()
    s.deal(DEAL_A[:-1])
    s.trick(*DEAL_A[-1], clear=False)
    s.lay("prikup", "Qc")
    assert s.mistakes("table_not_clear")
    for play in DEAL_A[-1]:
        s.lift(*play.split(":"))
    s.lay("prikup", "Jd")                       # Qc still lies there, ignored: table not clear
    assert len(s.mistakes("table_not_clear")) == 2
    s.lift("prikup", "Qc")
    s.lift("prikup", "Jd")
    s.lay("prikup", "Jd")
    assert s.tracker.deal is not None and s.tracker.deal.price == 2


def test_events_ending_mid_deal_give_incomplete_deal_and_no_score():
    s = Script()
    s.trick(*DEAL_A[0])
    s.lay("prikup", "Ah")
    (deal,) = s.summary["deals"]
    assert deal["complete"] is False and len(deal["tricks"]) == 1
    assert deal["taken"] == {"seat1": 0, "seat2": 0, "seat3": 1}
    assert all(v["gora"] == 0 and v["pulya"] == 0 for v in s.summary["pulka"].values())


def test_confirm_clears_alerts():
    s = Script()
    s.lay("seat2", "7s")
    assert s.tracker.alerts
    s.press("confirm")
    assert not s.tracker.alerts


@pytest.mark.parametrize("prikup,cards", [("dealer_leads", 32), ("suit_only", 32), ("closed", 30)])
def test_deal_order_covers_all_cards(prikup, cards):
    d = Deal(1, "seat2", 1, 0, 4, config(players=4, prikup=prikup).rules)
    seen = 0
    deck = iter(__import__("controller.core.cards", fromlist=["DECK"]).DECK)
    while not d.finished:
        d.play(d.expected, next(deck))
        seen += 1
    assert seen == cards and "seat2" not in [z for t in d.tricks for z, _ in t.cards]


# A legal 4-player deal, dealer seat1 sitting out, first hand seat2, worked by hand.
DEAL_4P = [
    ("prikup:Ah", "seat2:7h", "seat3:8h", "seat4:9h"),     # the prikup card wins: the dealer's trick
    ("prikup:7s", "seat2:8s", "seat3:As", "seat4:9s"),
    ("seat2:10s", "seat3:Js", "seat4:Qs"),
    ("seat4:7c", "seat2:8c", "seat3:9c"),
    ("seat3:7d", "seat4:8d", "seat2:9d"),
    ("seat2:10c", "seat3:Jc", "seat4:Qc"),
    ("seat4:10d", "seat2:Jd", "seat3:Qd"),
    ("seat3:10h", "seat4:Jh", "seat2:Qh"),
    ("seat2:Kc", "seat3:Ac", "seat4:Ks"),
    ("seat3:Kd", "seat4:Kh", "seat2:Ad"),
]


def test_worked_four_player_deal():
    s = Script(config(players=4))
    s.deal(DEAL_4P)
    (deal,) = s.summary["deals"]
    assert [t["winner"] for t in deal["tricks"]] == ["seat1", "seat3", "seat4", "seat3", "seat2",
                                                      "seat4", "seat3", "seat2", "seat3", "seat2"]
    assert deal["taken"] == {"seat1": 1, "seat2": 3, "seat3": 4, "seat4": 2}
    assert sum(len(t["cards"]) for t in deal["tricks"]) == 32
    assert {p: (v["gora"], v["pulya"]) for p, v in s.summary["pulka"].items()} == \
        {"seat1": (1, 0), "seat2": (3, 0), "seat3": (4, 0), "seat4": (2, 0)}
    assert set(s.summary["pulka"]["seat1"]["whists"]) == {"seat2", "seat3", "seat4"}
    assert s.tracker.next_deal_params() == ("seat1", 1)


def test_worked_deal_in_whists_scoring_halves_between_two_winners():
    s = Script(config(scoring="whists"))
    s.deal(DEAL_A)                                   # taken 3/3/4: seat1 and seat2 win
    pulka = s.summary["pulka"]
    assert pulka["seat1"]["whists"] == {"seat2": 0, "seat3": 8}
    assert pulka["seat2"]["whists"] == {"seat1": 0, "seat3": 8}
    assert all(v["gora"] == 0 and v["pulya"] == 0 for v in pulka.values())
    assert s.summary["settlement"]["balance"] == {"seat1": 8.0, "seat2": 8.0, "seat3": -16.0}
