"""RULES-contracts.md and FORMATS-contracts.md, "Second edition": ``bidding = "auto"``, the
result line, claims, and every summary field with every value of ``bidding`` -- each
sentence and each "Readings fixed (second edition)" bullet, through the tracker."""

from __future__ import annotations

import json

import pytest

from controller.core.config import GameConfig, Rules, game_config_from_dict
from controller.core.errors import ConfigError, EventError
from controller.core.events import CLAIM, RESULT, event_from_dict, read_events
from controller.core.tokens import TOKENS, control_line_for
from controller.core.tracker import ENTRY_DEFAULTS, DealTracker
from second_edition_script import Edition2, config, played_deal, rest_of
from table_script import DEAL_A, DEAL_A_TAKEN

SEATS3 = ("seat1", "seat2", "seat3")
ZONES3 = ("prikup",) + SEATS3


def kinds(signals) -> list[str]:
    return [s.kind for s in signals]


def mistake_types(signals) -> list[str]:
    return [s.data["type"] for s in signals if s.kind == "mistake"]


# --- rules.bidding: "auto" (the default), true, false ---------------------------------------

def test_auto_is_the_default():
    assert Rules().bidding == "auto"
    assert game_config_from_dict({}).rules.bidding == "auto"


@pytest.mark.parametrize("value", ["auto", True, False])
def test_bidding_accepts_auto_true_false(value):
    assert game_config_from_dict({"rules": {"bidding": value}}).rules.bidding == value


@pytest.mark.parametrize("value", ["yes", "AUTO", 1, 0, "true", [], {}])
def test_a_bad_bidding_value_is_one_clear_line_naming_the_key(value):
    with pytest.raises(ConfigError) as err:
        game_config_from_dict({"rules": {"bidding": value}})
    text = str(err.value)
    assert "\n" not in text and text.startswith("rules.bidding:") and '"auto", true or false' in text
    assert err.value.key == "rules.bidding"


@pytest.mark.parametrize("value", ["auto", True, False])
def test_a_sessions_config_toml_keeps_the_bidding_mode(value):
    import tomllib
    cfg = GameConfig(rules=Rules(bidding=value))
    assert game_config_from_dict(tomllib.loads(cfg.to_toml())).rules.bidding == value


def test_the_config_skeletons_say_their_bidding_mode_and_why():
    from pathlib import Path
    from controller.core.config import load_game_config
    root = Path(__file__).resolve().parents[2]
    for path in (root / "systemd" / "config.toml", root / "controller" / "examples" / "config.toml"):
        text = path.read_text()
        assert 'bidding = "auto"' in text and load_game_config(path).rules.bidding == "auto"
        before = text.split('bidding = "auto"')[0].splitlines()[-3:]
        assert all(line.startswith("#") for line in before)      # the reason, in comments above it


# --- "auto": a deal's first accepted line decides its course ---------------------------------

def test_auto_a_card_begins_a_raspasovka_as_with_false():
    s = Edition2(config())
    s.deal(DEAL_A)
    entry = s.entry
    assert entry["kind"] == "raspasovka" and entry["taken"] == DEAL_A_TAKEN and entry["complete"]
    assert entry["auction"] == [] and entry["outcome"] is None


@pytest.mark.parametrize("line", ["bid", "contract", "whist", "whist_mode", "result", "claim"])
def test_auto_every_contract_line_in_a_raspasovka_is_an_invalid_control_line(line):
    s = Edition2(config())
    s.trick(*DEAL_A[0])
    before = s.tracker.deal.lines[:]
    out = {"bid": lambda: s.bid("seat2", "6s"), "contract": lambda: s.contract("seat2", "6s"),
           "whist": lambda: s.whist("seat3", "whist"), "whist_mode": lambda: s.mode("open"),
           "result": lambda: s.result("seat2", "6s"),
           "claim": lambda: s.claim(seat1=3, seat2=3, seat3=2)}[line]()
    assert mistake_types(out) == ["invalid_control"] and out[0].data["line_event"] == line
    assert s.tracker.deal.lines == before and s.tracker.deal.kind_name == "raspasovka"
    s.deal(DEAL_A[1:])
    assert s.entry["taken"] == DEAL_A_TAKEN


def test_auto_a_bid_begins_the_auction_and_a_card_before_it_decides_is_not_in_play():
    s = Edition2(config())
    out = s.bid("seat2", "6s")
    assert kinds(out) == ["deal_start", "bid"] and s.tracker.state == "auction"
    out = s.lay("seat3", "7s")
    assert mistake_types(out) == ["not_in_play"] and out[0].data["deal"] == 1
    s.lift("seat3", "7s")
    s.bids("seat3:pass", "seat1:pass")
    assert s.tracker.state == "contract"
    assert s.entry["auction"] == [{"seat": "seat2", "bid": "6s"}, {"seat": "seat3", "bid": "pass"},
                                  {"seat": "seat1", "bid": "pass"}]


def test_auto_an_all_pass_auction_is_a_raspasovka_from_its_first_card():
    s = Edition2(config())
    s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    s.deal(DEAL_A)
    assert s.entry["kind"] == "raspasovka" and s.entry["taken"] == DEAL_A_TAKEN and len(s.entry["auction"]) == 3


def test_auto_a_first_bid_out_of_turn_or_on_an_unclear_table_begins_nothing():
    s = Edition2(config())
    out = s.bid("seat3", "6s")              # the first hand is seat2
    assert mistake_types(out) == ["invalid_control"] and s.tracker.deal is None
    s.lay("seat1", "Ah")                    # out of turn on a clear table: refused, lying
    out = s.bid("seat2", "6s")
    assert mistake_types(out) == ["table_not_clear"] and s.tracker.deal is None


def test_auto_deals_of_both_kinds_mix_and_the_series_follows_each_kind_as_with_true():
    """A raspasovka keeps the dealer and raises the price (same_dealer); a contract deal
    passes the deal on at the first price -- as the same series with bidding = true."""
    def series(bidding):
        s = Edition2(config(bidding=bidding))
        if bidding is True:
            s.bids("seat2:pass", "seat3:pass", "seat1:pass")
        s.deal(DEAL_A)                                          # deal 1: raspasovka, seat1, 1
        s.result("seat2", "8s")                                 # deal 2: seat1, price 2
        s.whists("seat3:pass", "seat1:pass")                    # both pass: unplayed
        s.bids("seat3:pass", "seat1:pass", "seat2:pass")        # deal 3: seat2 deals, price 1
        return [(d["dealer"], d["price"], d["kind"]) for d in s.summary["deals"]]
    assert series("auto") == series(True) == [("seat1", 1, "raspasovka"), ("seat1", 2, "unplayed"),
                                              ("seat2", 1, "raspasovka")]


def test_auto_a_log_without_contract_lines_replays_exactly_as_with_false():
    from controller.app.sim import Noise, TableSimulator
    events = list(TableSimulator(config(), seed=5, noise=Noise.demo()).deals(4))
    out = {}
    for bidding in ("auto", False):
        tracker = DealTracker(config(bidding=bidding))
        out[bidding] = ([s.to_dict() for e in events for s in tracker.feed(e)], tracker.summary())
    assert out["auto"] == out[False]
    assert len(out["auto"][1]["deals"]) == 4 and any(d["type"] for d in [
        s for s in out["auto"][0] if s["kind"] == "mistake"])


# --- readings fixed (second edition): cards that would begin a deal --------------------------

@pytest.mark.parametrize("bidding", ["auto", False])
def test_a_card_out_of_turn_on_a_clear_table_is_refused_and_begins_nothing(bidding):
    s = Edition2(config(bidding=bidding))
    out = s.lay("seat3", "As")              # the prikup leads the first trick (dealer_leads)
    assert mistake_types(out) == ["out_of_turn"] and s.tracker.deal is None
    assert "deal_start" not in kinds(out)


@pytest.mark.parametrize("bidding", ["auto", False])
def test_the_clear_table_check_counts_every_card_lying_anywhere(bidding):
    """A refused card still lying makes the table not clear for the lead card too."""
    s = Edition2(config(bidding=bidding))
    s.lay("seat3", "As")                    # refused (out of turn), still lying
    out = s.lay("prikup", "7s")
    assert mistake_types(out) == ["table_not_clear"] and s.tracker.deal is None
    s.lift("seat3", "As")
    s.lift("prikup", "7s")
    out = s.lay("prikup", "7s")
    assert kinds(out)[:2] == ["deal_start", "play"]


@pytest.mark.parametrize("bidding", ["auto", False])
def test_the_clear_table_check_counts_the_cards_zone_itself(bidding):
    """Both prikup cards of the finished deal still on the prikup zone: a card laid there,
    the zone that leads the next raspasovka, is not a play (only the card itself is
    excepted); once they are lifted it begins the deal."""
    s = Edition2(config(bidding=bidding))
    for number, trick in enumerate(DEAL_A):
        s.trick(*trick, clear=False)
        for play in trick:
            if not play.startswith("prikup"):
                s.lift(*play.split(":"))
    assert s.tracker.deal is None and s.entry["complete"]
    out = s.lay("prikup", "8h")
    assert mistake_types(out) == ["table_not_clear"]
    s.lift("prikup", "8h")
    s.lift("prikup", "7s")
    s.lift("prikup", "Ah")
    assert kinds(s.lay("prikup", "8h"))[:2] == ["deal_start", "play"]


def test_a_result_deals_discard_on_the_prikup_zone_keeps_the_table_unclear():
    s = Edition2(config())
    s.result("seat2", "8s")
    s.lay("prikup", "9h")                   # the discard, on the prikup zone: never a play
    s.lay("prikup", "9d")
    s.whists("seat3:pass", "seat1:pass")    # both pass: the deal is over, the discard lies
    assert s.entry["outcome"] == "passed"
    assert mistake_types(s.lay("prikup", "7s")) == ["table_not_clear"]
    assert mistake_types(s.bid("seat3", "6s")) == ["table_not_clear"]


@pytest.mark.parametrize("bidding, expected", [("auto", ["deal_start", "play"]), (True, ["mistake"])])
def test_after_a_finished_deal_a_lead_card_on_a_clear_table_begins_a_raspasovka_under_auto_only(
        bidding, expected):
    s = Edition2(config(bidding=bidding))
    s.result("seat2", "8s")
    s.whists("seat3:pass", "seat1:pass")
    out = s.lay("prikup", "8s")             # deal 2: seat2 deals, the prikup leads a raspasovka
    assert kinds(out)[:len(expected)] == expected
    if bidding is True:
        assert mistake_types(out) == ["not_in_play"] and s.tracker.deal is None
    else:
        assert s.tracker.deal.kind_name == "raspasovka" and s.tracker.deal.number == 2


# --- the result line: well formed, or not valid as a line ------------------------------------

def test_a_result_line_is_read_and_written_back_as_formats_contracts_shows_it():
    line = '{"t": 30.2, "event": "result", "seat": "seat2", "game": "8h"}'
    (event,) = read_events([line], ZONES3)
    assert (event.event, event.seat, event.call) == (RESULT, "seat2", "8h")
    assert event.to_json() == line


@pytest.mark.parametrize("game, code", [("8H", "8h"), ("Misère", "misere"), ("10n", "10n"), ("misere", "misere")])
def test_a_result_game_in_any_letter_case(game, code):
    assert event_from_dict({"t": 1, "event": "result", "seat": "seat3", "game": game}, ZONES3).call == code


@pytest.mark.parametrize("obj", [
    {"t": 1, "event": "result", "seat": "seat2"},
    {"t": 1, "event": "result", "seat": "seat2", "game": "pass"},
    {"t": 1, "event": "result", "seat": "seat2", "game": "11s"},
    {"t": 1, "event": "result", "seat": "seat2", "game": "5h"},
    {"t": 1, "event": "result", "seat": "seat4", "game": "6s"},
    {"t": 1, "event": "result", "game": "6s"},
    {"t": 1, "event": "result", "seat": "seat2", "game": 6},
    {"t": 1, "event": "result", "seat": "seat2", "game": "6s", "zone": "seat2"},
])
def test_a_malformed_result_line_is_not_valid_as_a_line(obj):
    with pytest.raises(EventError):
        event_from_dict(obj, ZONES3)
    errors = []
    assert list(read_events([json.dumps(obj)], ZONES3, lambda n, m: errors.append(n))) == [] and errors == [1]


# --- the result line in the tracker ----------------------------------------------------------

@pytest.mark.parametrize("bidding", ["auto", True])
def test_a_result_line_is_the_auction_and_the_contract_at_once(bidding):
    s = Edition2(config(bidding=bidding))
    out = s.result("seat2", "8h")
    assert kinds(out) == ["deal_start", "result", "auction"]
    assert out[2].data == {"deal": 1, "result": "contract", "declarer": "seat2", "bid": "8h"}
    assert s.tracker.state == "whisting" and s.tracker.phase == "whisting"
    entry = s.entry
    assert (entry["auction"], entry["declarer"], entry["game"], entry["value"]) == ([], "seat2", "8h", 6)
    assert entry["kind"] == "contract" and not entry["complete"]
    s.whists("seat3:whist", "seat1:pass")
    assert s.tracker.state == "play" and s.entry["whisters"] == ["seat3"]


@pytest.mark.parametrize("seat", ["seat1", "seat2", "seat3"])
def test_a_result_line_comes_from_any_active_seat_nobodys_turn(seat):
    s = Edition2(config())
    out = s.result(seat, "7c")
    assert "mistake" not in kinds(out) and s.entry["declarer"] == seat


def test_a_result_from_the_sitting_out_dealer_is_an_invalid_control_line():
    s = Edition2(config(players=4))         # seat1 deals and sits out
    out = s.result("seat1", "7c")
    assert mistake_types(out) == ["invalid_control"] and s.tracker.deal is None
    assert kinds(s.result("seat4", "7c"))[0] == "deal_start"


def test_a_result_line_with_bidding_off_is_an_invalid_control_line():
    s = Edition2(config(bidding=False))
    out = s.result("seat2", "7c")
    assert mistake_types(out) == ["invalid_control"] and s.tracker.deal is None


def test_a_result_line_on_a_table_that_is_not_clear_is_table_not_clear():
    s = Edition2(config())
    s.lay("seat1", "Ah")                    # refused, lying
    out = s.result("seat2", "7c")
    assert mistake_types(out) == ["table_not_clear"] and out[0].data["line_event"] == "result"
    assert s.tracker.deal is None


def test_once_a_deal_has_begun_a_result_line_is_an_invalid_control_line():
    s = Edition2(config())
    s.bid("seat2", "6s")
    assert mistake_types(s.result("seat2", "6s")) == ["invalid_control"]       # in the auction
    s.bids("seat3:pass", "seat1:pass")
    assert mistake_types(s.result("seat2", "6s")) == ["invalid_control"]       # contract phase
    s2 = Edition2(config())
    s2.result("seat2", "6s")
    assert mistake_types(s2.result("seat3", "7s")) == ["invalid_control"]      # whisting
    assert s2.entry["declarer"] == "seat2"


@pytest.mark.parametrize("game", ["8h", "misere"])
def test_after_a_result_line_a_contract_line_is_a_second_contract_line(game):
    s = Edition2(config())
    s.result("seat2", game)
    out = s.contract("seat2", game)
    assert mistake_types(out) == ["invalid_control"] and s.entry["game"] == game


def test_a_misere_result_plays_at_once_open_by_default():
    s = Edition2(config())
    out = s.result("seat3", "misere")
    assert out[2].data == {"deal": 1, "result": "misere", "declarer": "seat3", "bid": "misere"}
    assert s.tracker.state == "play" and s.tracker.deal.expected == "seat2"      # the first hand leads
    assert s.entry["kind"] == "misere" and s.entry["whist_mode"] == "open" and s.entry["value"] == 10
    played = played_deal(3, "misere", declarer="seat3")
    s.tricks(played, 0, 10)
    taken = played.taken["seat3"]
    seat3 = s.entry["written"]["seat3"]
    assert s.entry["outcome"] == ("made" if taken == 0 else "failed")
    assert seat3["pulya" if taken == 0 else "gora"] == (10 if taken == 0 else 10 * taken)


def test_a_misere_result_takes_a_whist_mode_line():
    s = Edition2(config())
    s.result("seat2", "misere")
    assert "mistake" not in kinds(s.mode("closed")) and s.entry["whist_mode"] == "closed"


def test_a_ten_result_with_ten_whisted_false_ends_the_deal_there():
    s = Edition2(config(ten_whisted=False))
    out = s.result("seat2", "10n")
    assert kinds(out) == ["deal_start", "result", "auction", "whisting", "deal"]
    assert out[3].data == {"deal": 1, "whisters": [], "result": "ten_unwhisted"}
    entry = s.entry
    assert (entry["kind"], entry["outcome"], entry["complete"]) == ("unplayed", "ten_unwhisted", True)
    assert entry["written"]["seat2"]["pulya"] == 10 and s.tracker.deal is None


def test_a_ten_result_is_whisted_by_default():
    s = Edition2(config())
    s.result("seat2", "10n")
    assert s.tracker.state == "whisting"


def test_undo_takes_a_result_line_back_and_the_deal_no_longer_exists():
    s = Edition2(config())
    s.result("seat2", "7h")
    out = s.press("undo")
    assert out[0].data == {"deal": 1, "undone": "result", "seat": "seat2", "game": "7h"}
    assert s.tracker.deal is None and s.tracker.state == "idle" and s.summary["deals"] == []
    s.deal(DEAL_A)                          # the next first line decides afresh: a card
    assert s.entry["kind"] == "raspasovka" and s.entry["number"] == 1


def test_undo_of_a_ten_unwhisted_result_reopens_nothing_but_takes_the_deal_back():
    s = Edition2(config(ten_whisted=False))
    s.result("seat2", "10s")
    assert s.tracker.pulka.pulya["seat2"] == 10 and s.entry["outcome"] == "ten_unwhisted"
    out = s.press("undo")
    assert out[0].data["undone"] == "result"
    assert s.summary["deals"] == [] and s.tracker.pulka.pulya["seat2"] == 0 and s.tracker.state == "idle"


def test_a_bidding_token_speaks_a_bid_never_a_result():
    phases = ("idle", "auction", "contract", "whisting", "play", "claim")
    assert all(control_line_for(token, "seat2", phase).event != RESULT
               for token in TOKENS for phase in phases)


# --- claims: well formed, or not valid as a line ---------------------------------------------

def test_a_claim_line_is_read_and_written_back_as_formats_contracts_shows_it():
    line = '{"t": 80.5, "event": "claim", "tricks": {"seat2": 3, "seat3": 1, "seat1": 0}}'
    (event,) = read_events([line], ZONES3)
    assert event.event == CLAIM and dict(event.call) == {"seat1": 0, "seat2": 3, "seat3": 1}
    assert json.loads(event.to_json()) == json.loads(line)


@pytest.mark.parametrize("tricks", [
    None, [], 3, "seat2", [["seat2", 3]],                     # missing or not an object
    {"prikup": 0, "seat2": 3}, {"seat4": 1}, {"Seat2": 1},   # a key that is not a seat of the table
    {"seat2": 2.0}, {"seat2": "2"}, {"seat2": True}, {"seat2": False},
    {"seat2": -1}, {"seat2": 11}, {"seat2": None}, {"seat2": [2]},
])
def test_a_malformed_claim_is_not_valid_as_a_line(tricks):
    obj = {"t": 1, "event": "claim"}
    if tricks is not None:
        obj["tricks"] = tricks
    with pytest.raises(EventError):
        event_from_dict(obj, ZONES3)
    errors = []
    assert list(read_events([json.dumps(obj)], ZONES3, lambda n, m: errors.append((n, m)))) == []
    assert [n for n, _ in errors] == [1] and "tricks" in errors[0][1]


def test_a_claim_naming_the_sitting_out_dealer_is_a_valid_line():
    zones = ("prikup", "seat1", "seat2", "seat3", "seat4")
    event = event_from_dict({"t": 1, "event": "claim", "tricks": {"seat1": 0, "seat2": 10}}, zones)
    assert dict(event.call) == {"seat1": 0, "seat2": 10}


# --- claims in the tracker -------------------------------------------------------------------

def whisted(s: Edition2, game="6s", calls=("seat3:whist", "seat1:whist")) -> None:
    s.result("seat2", game)
    s.whists(*calls)


def test_a_claim_between_tricks_waits_for_confirm_and_then_ends_the_deal():
    played = played_deal(1, "6s")
    s = Edition2(config())
    whisted(s)
    s.tricks(played, 0, 4)
    rest = rest_of(played, 4)
    out = s.claim(**rest)
    assert kinds(out) == ["claim"] and out[0].data == {"deal": 1, "tricks": rest, "state": "waiting"}
    assert s.tracker.state == "claim" and s.tracker.phase == "claim"
    assert s.entry["claimed"] is None and not s.entry["complete"]
    out = s.press("confirm")
    assert kinds(out) == ["confirm", "claim", "deal"]
    assert out[1].data == {"deal": 1, "tricks": rest, "state": "confirmed"}
    entry = s.entry
    assert entry["complete"] and entry["claimed"] == rest and len(entry["tricks"]) == 4
    assert entry["taken"] == {seat: sum(1 for w in played.winners[:4] if w == seat) for seat in SEATS3}
    assert list(entry).index("claimed") == list(entry).index("taken") + 1
    assert out[2].data["claimed"] == rest


def test_a_claimed_deal_is_written_as_the_same_deal_played_out():
    played = played_deal(2, "7h")
    whole = Edition2(config())
    whisted(whole, "7h")
    whole.tricks(played, 0, 10)
    s = Edition2(config())
    whisted(s, "7h")
    s.tricks(played, 0, 6)
    s.claim(**rest_of(played, 6))
    s.press("confirm")
    assert s.entry["written"] == whole.entry["written"] and s.entry["outcome"] == whole.entry["outcome"]
    assert s.summary["pulka"] == whole.summary["pulka"]


def test_a_claim_before_the_first_trick_is_valid():
    played = played_deal(4, "6c")
    s = Edition2(config())
    whisted(s, "6c")
    out = s.claim(**played.taken)
    assert kinds(out) == ["claim"]
    s.press("confirm")
    entry = s.entry
    assert entry["kind"] == "contract" and entry["tricks"] == [] and entry["claimed"] == played.taken
    assert entry["outcome"] in ("made", "failed")


def test_a_claim_after_the_tenth_trick_awaits_no_deal():
    played = played_deal(5, "6s")
    s = Edition2(config())
    whisted(s)
    s.tricks(played, 0, 10)
    out = s.claim(seat1=0, seat2=0, seat3=0)
    assert mistake_types(out) == ["invalid_control"] and out[0].data["deal"] is None


def test_a_claim_in_a_misere_counts_the_declarers_claimed_tricks():
    played = played_deal(6, "misere", declarer="seat2")
    whole = Edition2(config())
    whole.result("seat2", "misere")
    whole.tricks(played, 0, 10)
    s = Edition2(config())
    s.result("seat2", "misere")
    s.tricks(played, 0, 3)
    s.claim(**rest_of(played, 3))
    s.press("confirm")
    assert s.entry["written"] == whole.entry["written"] and s.entry["kind"] == "misere"


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_with_one_whister_the_passers_claimed_tricks_count_for_the_whister(mode):
    """seat3 whists, seat1 passes: tricks claimed for seat1 (the passer) are the whister's,
    as his played ones are -- the same as playing them out."""
    played = played_deal(7, "6d")
    rest = rest_of(played, 2)
    whole = Edition2(config())
    whisted(whole, "6d", ("seat3:whist", "seat1:pass"))
    whole.mode(mode)
    whole.tricks(played, 0, 10)
    s = Edition2(config())
    whisted(s, "6d", ("seat3:whist", "seat1:pass"))
    s.mode(mode)
    s.tricks(played, 0, 2)
    s.claim(**{**rest, "seat1": rest["seat1"] + rest["seat3"], "seat3": 0})    # all the defence's on the passer
    s.press("confirm")
    assert s.entry["written"] == whole.entry["written"]
    assert s.entry["whisters"] == ["seat3"] and s.entry["claimed"]["seat3"] == 0


@pytest.mark.parametrize("offender", ["seat3", "seat2"])
def test_a_revoke_on_record_stands_adjusted_on_taken_plus_claimed(offender):
    """A revoke (a defender's, the declarer's) proven in the tricks before the claim: charged
    as when the deal is played out (the revoke trick moves; a defender writes the remiz for
    the mistake and the declarer's game counts as made)."""
    for seed in range(300):
        played = played_deal(seed, "6h", revoke=(1, offender, "discard"))
        probe = Edition2(config())
        whisted(probe, "6h")
        proven_after = None
        for n in range(9):
            probe.tricks(played, n, n + 1)
            if probe.tracker.deal.first_revoke is not None:
                proven_after = n + 1
                break
        if proven_after is None:
            continue
        whole = Edition2(config())
        whisted(whole, "6h")
        whole.tricks(played, 0, 10)
        s = Edition2(config())
        whisted(s, "6h")
        s.tricks(played, 0, proven_after)
        s.claim(**rest_of(played, proven_after))
        s.press("confirm")
        assert whole.entry["revoke"] == s.entry["revoke"] == offender
        assert s.entry["revoke_trick"] == whole.entry["revoke_trick"] == 2
        assert s.entry["written"] == whole.entry["written"]
        assert s.entry["outcome"] == whole.entry["outcome"]
        if offender == "seat3":
            assert s.entry["outcome"] == "made" and s.entry["written"]["seat3"]["gora"] >= 2
        return
    raise AssertionError("no deal with a revoke proven before the tenth trick")


@pytest.mark.parametrize("bidding", ["auto", True])
def test_a_claim_in_a_raspasovka_is_an_invalid_control_line(bidding):
    s = Edition2(config(bidding=bidding))
    if bidding is True:
        s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    s.trick(*DEAL_A[0])
    out = s.claim(seat1=3, seat2=3, seat3=2)
    assert mistake_types(out) == ["invalid_control"] and s.tracker.deal.claim is None


def test_a_claim_with_bidding_off_is_an_invalid_control_line():
    s = Edition2(config(bidding=False))
    s.trick(*DEAL_A[0])
    assert mistake_types(s.claim(seat1=3, seat2=3, seat3=2)) == ["invalid_control"]


def test_a_claim_outside_play_is_an_invalid_control_line():
    s = Edition2(config())
    assert mistake_types(s.claim(seat1=3, seat2=3, seat3=4)) == ["invalid_control"]     # no deal
    s.bid("seat2", "6s")
    assert mistake_types(s.claim(seat1=3, seat2=3, seat3=4)) == ["invalid_control"]     # auction
    s.bids("seat3:pass", "seat1:pass")
    assert mistake_types(s.claim(seat1=3, seat2=3, seat3=4)) == ["invalid_control"]     # contract
    s.contract("seat2", "6s")
    assert mistake_types(s.claim(seat1=3, seat2=3, seat3=4)) == ["invalid_control"]     # whisting
    s.whists("seat3:whist", "seat1:whist")
    assert kinds(s.claim(seat1=3, seat2=3, seat3=4)) == ["claim"]                       # play


def test_a_claim_during_a_trick_is_an_invalid_control_line():
    played = played_deal(8, "6s")
    s = Edition2(config())
    whisted(s)
    zone, card = played.tricks[0][0]
    s.lay(zone, str(card))
    out = s.claim(**played.taken)
    assert mistake_types(out) == ["invalid_control"] and s.tracker.state == "play"


@pytest.mark.parametrize("tricks, why", [
    ({"seat2": 6, "seat3": 4}, "missing"),
    ({"seat1": 1, "seat2": 6, "seat3": 4}, "sum"),
    ({"seat1": 0, "seat2": 6, "seat3": 3}, "sum"),
])
def test_a_claim_with_a_missing_active_seat_or_the_wrong_sum_is_an_invalid_control_line(tricks, why):
    s = Edition2(config())
    whisted(s)
    out = s.claim(**tricks)
    assert mistake_types(out) == ["invalid_control"] and s.tracker.state == "play"
    assert out[0].data["tricks"] == tricks and out[0].data["message"]


def test_a_claim_naming_the_sitting_out_dealer_even_with_zero_is_an_invalid_control_line():
    s = Edition2(config(players=4))         # seat1 deals; seat2, seat3, seat4 play
    s.result("seat2", "6s")
    s.whists("seat3:whist", "seat4:whist")
    out = s.claim(seat1=0, seat2=6, seat3=2, seat4=2)
    assert mistake_types(out) == ["invalid_control"]
    assert kinds(s.claim(seat2=6, seat3=2, seat4=2)) == ["claim"]
    s.press("confirm")
    entry = s.entry
    assert entry["claimed"] == {"seat2": 6, "seat3": 2, "seat4": 2}       # the active seats only
    assert entry["written"]["seat1"]["whists"]["seat2"] == 0 and entry["outcome"] == "made"


def test_a_second_claim_while_one_waits_is_an_invalid_control_line():
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    out = s.claim(seat1=1, seat2=7, seat3=2)
    assert mistake_types(out) == ["invalid_control"] and dict(s.tracker.deal.claim)["seat2"] == 6


def test_undo_withdraws_a_waiting_claim():
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    out = s.press("undo")
    assert kinds(out) == ["undo", "claim"]
    assert out[0].data == {"deal": 1, "undone": "claim", "tricks": {"seat1": 2, "seat2": 6, "seat3": 2}}
    assert out[1].data == {"deal": 1, "tricks": {"seat1": 2, "seat2": 6, "seat3": 2}, "state": "withdrawn"}
    assert s.tracker.state == "play" and s.tracker.deal.claim is None
    assert kinds(s.claim(seat1=1, seat2=7, seat3=2)) == ["claim"]           # a new claim may come


def test_confirm_then_undo_makes_the_claim_wait_again_and_a_second_undo_withdraws_it():
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    s.press("confirm")
    assert s.entry["complete"] and s.tracker.pulka.pulya["seat2"] == 2
    out = s.press("undo")
    assert kinds(out) == ["undo", "claim"] and out[0].data == {"deal": 1, "undone": "confirm"}
    assert out[1].data["state"] == "waiting"
    assert s.tracker.state == "claim" and s.tracker.pulka.pulya["seat2"] == 0
    assert s.summary["deals"][-1]["claimed"] is None and not s.summary["deals"][-1]["complete"]
    out = s.press("undo")
    assert out[1].data["state"] == "withdrawn" and s.tracker.state == "play"
    s.claim(seat1=2, seat2=6, seat3=2)
    s.press("confirm")
    assert s.tracker.pulka.pulya["seat2"] == 2 and len(s.summary["deals"]) == 1


def test_confirm_with_no_claim_waiting_changes_nothing_and_is_no_line_of_the_deal():
    s = Edition2(config())
    whisted(s)
    lines = list(s.tracker.deal.lines)
    assert kinds(s.press("confirm")) == ["confirm"]
    assert s.tracker.deal.lines == lines
    out = s.press("undo")                   # takes back the last whist call, not the confirm
    assert out[0].data["undone"] == "whist" and s.tracker.state == "whisting"


def test_new_deal_abandons_a_deal_whose_claim_waits():
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    out = s.press("new_deal")
    assert "abandon" in kinds(out) and s.tracker.deal is None
    entry = s.entry
    assert not entry["complete"] and entry["claimed"] is None and entry["written"] is None
    s.result("seat2", "6s")                 # the same dealer and price again
    assert (s.entry["dealer"], s.entry["price"], s.entry["number"]) == ("seat1", 1, 2)


def test_a_card_laid_while_a_claim_waits_is_not_in_play_also_after_withdrawal():
    played = played_deal(9, "6s")
    s = Edition2(config())
    whisted(s)
    s.claim(**played.taken)
    zone, card = played.tricks[0][0]
    out = s.lay(zone, str(card))
    assert mistake_types(out) == ["not_in_play"]
    s.press("undo")                         # the claim is withdrawn; the card still lies
    assert s.tracker.state == "play" and s.tracker.deal.plays == []
    assert s.lay(zone, str(card)) == []     # read again while it lies: nothing
    s.lift(zone, str(card))
    out = s.lay(zone, str(card))            # taken back and laid again: a play
    assert kinds(out) == ["play"]


def test_a_prikup_card_while_a_claim_waits_signals_nothing():
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    assert s.lay("prikup", "7s") == []


def test_a_claim_still_waiting_when_the_events_end_leaves_the_deal_unfinished():
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    entry = s.entry
    assert entry["complete"] is False and entry["claimed"] is None and entry["written"] is None
    assert s.summary["pulka"]["seat2"]["pulya"] == 0


def test_control_lines_while_a_claim_waits_are_invalid():
    s = Edition2(config())
    s.result("seat2", "6s")
    s.whists("seat3:whist", "seat1:pass")
    s.claim(seat1=2, seat2=6, seat3=2)
    for out in (s.mode("open"), s.whist("seat3", "pass"), s.bid("seat2", "7s"), s.contract("seat2", "7s")):
        assert mistake_types(out) == ["invalid_control"]
    assert s.tracker.state == "claim"


def test_claimed_is_null_everywhere_else_with_every_value_of_bidding():
    for bidding in ("auto", True, False):
        s = Edition2(config(bidding=bidding))
        if bidding is True:
            s.bids("seat2:pass", "seat3:pass", "seat1:pass")
        s.deal(DEAL_A)
        assert s.entry["claimed"] is None


# --- every field of every deal entry with every value of bidding ------------------------------

@pytest.mark.parametrize("bidding", ["auto", True, False])
def test_every_deal_entry_field_and_the_top_level_fields_are_present(bidding):
    s = Edition2(config(bidding=bidding))
    if bidding is True:
        s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    s.deal(DEAL_A)
    if bidding is True:
        s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    s.trick(*DEAL_A[0])                     # deal 2 (the same dealer, price 2): unfinished
    summary = s.summary
    assert list(summary) == ["deals", "pulka", "pulya_target", "finished_after_deal", "settlement"]
    assert summary["pulya_target"] is None and summary["finished_after_deal"] is None
    done, open_ = summary["deals"]
    for entry in (done, open_):
        assert list(entry) == list(ENTRY_DEFAULTS)
        assert entry["kind"] == "raspasovka" and entry["outcome"] is None and entry["help"] == []
        assert entry["declarer"] is entry["game"] is entry["value"] is entry["whist_mode"] is None
        assert entry["whist_calls"] == [] and entry["whisters"] == [] and entry["claimed"] is None
    assert done["complete"] and done["written"]["seat3"]["gora"] == 4
    assert not open_["complete"] and open_["written"] is None
    assert (done["auction"] == []) == (bidding is not True)


def test_a_raspasovka_deal_line_carries_the_deal_entrys_fields():
    s = Edition2(config(bidding=False))
    s.deal(DEAL_A)
    (line,) = [sig.to_dict() for sig in s.signals if sig.kind == "deal"]
    entry = s.entry
    assert {k: v for k, v in line.items() if k not in ("t", "deal", "writes")} == \
        {k: v for k, v in entry.items() if k not in ("number", "tricks")}


def test_a_pulya_target_is_given_at_the_top_level_with_bidding_off():
    s = Edition2(config(bidding=False, pulya_target=20))
    s.deal(DEAL_A)
    assert s.summary["pulya_target"] == 20 and s.summary["finished_after_deal"] is None


# --- what the table shows while a claim waits ------------------------------------------------

def test_the_display_and_the_snapshot_show_a_waiting_claim():
    from controller.core.snapshot import SnapshotBuilder
    s = Edition2(config())
    whisted(s)
    s.claim(seat1=2, seat2=6, seat3=2)
    snap = SnapshotBuilder().build(s.tracker, seq=len(s.events))
    assert snap.phase == "claim"
    assert snap.deal["claim"] == {"tricks": {"seat1": 2, "seat2": 6, "seat3": 2}, "state": "waiting"}
    assert "CLAIM" in snap.display[0] and "confirm" in snap.display[3]
    s.press("undo")
    snap = SnapshotBuilder().build(s.tracker, seq=len(s.events))
    assert snap.phase == "play" and snap.deal["claim"] is None


# --- the CLI: a session of result lines and claims replays to the same summary ----------------

def test_the_cli_replays_result_lines_and_claims_and_reports_a_malformed_claim(tmp_path):
    """``preftable replay --json`` of the lines as the table writes them: the same summary
    as the tracker's; a claim line whose tricks are not whole numbers is reported with its
    line number and skipped (FORMATS.md: never stops a replay)."""
    from conftest import cli

    played = played_deal(13, "7s")
    s = Edition2(config())
    s.result("seat2", "7s")
    s.whists("seat3:whist", "seat1:whist")
    s.tricks(played, 0, 5)
    s.claim(**rest_of(played, 5))
    s.press("confirm")
    lines = [e.to_json() for e in s.events]
    bad = '{"t": %s, "event": "claim", "tricks": {"seat2": 2.0}}' % s.events[-1].t
    lines.insert(len(lines) - 1, bad)            # before the confirm
    events = tmp_path / "table-events.jsonl"
    events.write_text("\n".join(lines) + "\n")
    res = cli(["replay", events, "--json"])
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == json.loads(json.dumps(s.summary))
    assert f"{events}:{len(lines) - 1}: skipped: field 'tricks'" in res.stderr
