"""RULES-contracts.md and FORMATS-contracts.md sentence by sentence, where the worked examples and
tests/core/test_contract_tracker.py leave a sentence untested: each test quotes the sentence it
holds the tracker to (the same cases through the CLI: tests/app/test_contract_cli_audit.py)."""

from __future__ import annotations

import pytest

from contract_games import find_play
from controller.core.config import GameConfig, Rules, Table, game_config_from_dict
from table_script import DEAL_A, Script, config
from test_ref_contract import expect

import tomllib


def bidding(**rules) -> Script:
    return Script(config(bidding=True, **rules))


def refused(s: Script) -> list[str]:
    return [m.data["message"] for m in s.mistakes("invalid_control")]


def deals(s: Script) -> list:
    return s.summary["deals"]


def lay_trick(s: Script, trick) -> None:
    s.trick(*(f"{zone}:{card}" for zone, card in trick))


# --- config ------------------------------------------------------------------------------

def test_every_contract_key_survives_the_sessions_config_toml():
    # FORMATS.md: `config.toml`: "the rules and seats the session ran with" -- with every new key
    rules = Rules(bidding=True, pulya_target=17, ten_whisted=False, half_whist=False,
                  consolation_to_dealer=False, second_whist_responsible=False,
                  whist_responsibility="full", convention="leningrad")
    cfg = GameConfig(Table(players=4), rules)
    assert game_config_from_dict(tomllib.loads(cfg.to_toml())) == cfg
    plain = GameConfig()
    # bidding is always written: a session's config.toml without it is the first edition's (false)
    assert 'bidding = "auto"' in plain.to_toml() and game_config_from_dict(tomllib.loads(plain.to_toml())) == plain


def test_whist_responsibility_defaults_with_the_convention():
    # "| `whist_responsibility` | `"full"`; `"half"` when `convention = "leningrad"` |"
    assert Rules().responsibility == "full"
    assert Rules(convention="leningrad").responsibility == "half"
    assert Rules(convention="leningrad", whist_responsibility="full").responsibility == "full"
    assert Rules(whist_responsibility="half").responsibility == "half"


# --- the auction --------------------------------------------------------------------------

def test_two_passes_then_the_third_passes_too_is_a_raspasovka():
    # "The auction ends when all three have passed (a raspasovka)"; "Two passes before the third
    # player's first call do not end it: he still calls."
    s = bidding()
    s.bids("seat2:pass", "seat3:pass")
    assert s.tracker.state == "auction" and deals(s)[0]["kind"] is None
    s.bids("seat1:pass")
    assert s.kinds("auction") == [{"deal": 1, "result": "raspasovka", "declarer": None, "bid": None}]
    s.deal(DEAL_A)
    assert deals(s)[0]["complete"] and deals(s)[0]["kind"] == "raspasovka"


def test_misere_cannot_be_held_and_a_misere_bidder_cannot_bid_a_game():
    # holding: "it equals the highest bid, not misère"; "Not by a player who has bid misère";
    # "`misere`: only ... while the highest bid is below misère".
    s = bidding()
    s.bids("seat2:misere", "seat3:pass")
    s.bid("seat1", "misere")                               # equal to misère: neither higher nor a hold
    assert len(refused(s)) == 1
    s.bids("seat1:9s")
    s.bid("seat2", "9c")                                   # the misère bidder may only pass
    assert len(refused(s)) == 2
    s.bids("seat2:pass")
    assert s.kinds("auction")[0] == {"deal": 1, "result": "contract", "declarer": "seat1", "bid": "9s"}


def test_the_senior_holds_again_and_again_and_jumps_are_allowed():
    # "or it holds («здесь»): it equals the highest bid ... and the caller is senior"; "Jumps are
    # allowed."
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:6c", "seat2:6c", "seat1:7s", "seat2:7s", "seat1:9h", "seat2:9h",
           "seat1:pass")
    assert not refused(s)
    assert s.kinds("auction")[0] == {"deal": 1, "result": "contract", "declarer": "seat2", "bid": "9h"}
    s.contract("seat2", "9s")                              # below the winning bid 9h
    s.contract("seat2", "9h")
    assert refused(s) == ["9s is below the winning bid 9h"] and deals(s)[0]["game"] == "9h"


# --- whisting ------------------------------------------------------------------------------

def after_contract(game="7s", **rules) -> Script:
    s = bidding(**rules)
    s.bids(f"seat2:{game}", "seat3:pass", "seat1:pass")
    s.contract("seat2", game)
    return s


def test_after_pass_half_only_the_first_defender_speaks_and_not_half():
    # "| pass, half | the first defender speaks again |"; "Any other whist line — out of turn, `half`
    # by the first defender ... — is invalid."
    s = after_contract()
    s.whists("seat3:pass", "seat1:half")
    s.whist("seat1", "whist")                              # the half-whister again: out of turn
    s.whist("seat3", "half")
    assert len(refused(s)) == 2 and s.tracker.state == "whisting"
    s.whist("seat3", "whist")
    deal = deals(s)[0]
    assert deal["whisters"] == ["seat3"] and deal["whist_mode"] == "closed"
    assert s.kinds("whisting") == [{"deal": 1, "whisters": ["seat3"], "result": "play"}]


def test_a_whist_mode_line_before_the_whisting_decides_is_invalid():
    # "With one whister, a `whist_mode` line ... says how the defence plays"; before the whisting
    # decides there is no whister yet, and after an unplayed ending no deal awaits it.
    s = after_contract()
    s.whist("seat3", "pass")
    s.mode("open")
    assert len(refused(s)) == 1
    s.whists("seat1:pass")                                 # both pass: written, no play
    s.mode("open")
    assert len(refused(s)) == 2 and deals(s)[0]["whist_mode"] is None


def test_the_last_valid_whist_mode_counts_until_the_first_trick_closes_in_a_misere():
    # "In a misère deal the line is valid too, default `open` ... It is valid until the first trick
    # closes; the last valid one counts."
    played = find_play(["seat2", "seat3", "seat1"], "misere", "seat2", {"seat2": 0, "seat3": 5, "seat1": 5})
    s = bidding()
    s.bids("seat2:misere", "seat3:pass", "seat1:pass")
    assert deals(s)[0]["whist_mode"] == "open"
    s.mode("closed")
    first = played.tricks[0]
    for zone, card in first[:2]:
        s.lay(zone, str(card))
    s.mode("open")                                         # trick 1 still open: valid
    s.mode("closed")
    s.lay(first[2][0], str(first[2][1]))
    s.mode("open")                                         # trick 1 closed: invalid
    assert refused(s) == ["the first trick has closed"] and deals(s)[0]["whist_mode"] == "closed"
    for trick in played.tricks[1:]:
        lay_trick(s, trick)
    deal = deals(s)[0]
    assert (deal["outcome"], deal["whist_mode"], deal["whisters"], deal["whist_calls"]) == ("made", "closed", [], [])
    assert deal["written"] == expect(pulya={"seat2": 10})


# --- the prikup zone -------------------------------------------------------------------------

def test_the_prikup_zone_is_silent_in_a_misere_and_plays_in_a_raspasovka_after_the_auction():
    # "a card on the prikup zone is never a play in such a deal, and its lines change nothing and
    # signal nothing"; an all-pass auction: "everything of RULES.md applies (prikup leads ...)".
    s = bidding()
    s.bids("seat2:misere", "seat3:pass", "seat1:pass")
    s.lay("prikup", "7s")
    s.lift("prikup", "7s")
    s.lay("prikup", "8s")
    assert not s.mistakes() and s.tracker.deal.plays == []
    s.press("new_deal")
    s.lift("prikup", "8s")
    s.bids("seat2:pass", "seat3:pass", "seat1:pass")
    assert (deals(s)[1]["dealer"], deals(s)[1]["price"]) == ("seat1", 1)     # abandoned: same dealer, price
    s.lay("prikup", "7s")                                  # the dealer turns up prikup card 1: a play
    assert [str(c) for _, c in s.tracker.deal.plays] == ["7s"] and not s.mistakes()


# --- undo and new_deal -------------------------------------------------------------------------

def test_undo_reopens_a_ten_not_whisted_and_new_deal_in_a_misere_play():
    # "`undo` takes back the last accepted line ... of the deal just finished until the next deal's
    # first accepted line"; "`new_deal` abandons the deal in progress at any phase".
    s = bidding(ten_whisted=False)
    s.bids("seat2:10n", "seat3:pass", "seat1:pass")
    s.contract("seat2", "10n")
    assert s.summary["pulka"]["seat2"]["pulya"] == 10 and s.tracker.state == "idle"
    s.press("undo")
    assert s.tracker.state == "contract" and s.summary["pulka"]["seat2"]["pulya"] == 0
    assert deals(s)[0]["complete"] is False and deals(s)[0]["game"] is None
    s.contract("seat2", "10n")
    assert deals(s)[0]["outcome"] == "ten_unwhisted"
    s.bids("seat3:misere", "seat1:pass", "seat2:pass")     # deal 2: seat2 deals, seat3 plays misère
    s.lay("seat3", "7h")
    s.press("new_deal")
    deal = deals(s)[1]
    assert (deal["kind"], deal["complete"], deal["written"], deal["game"]) == ("misere", False, None, "misere")
    s.press("undo")                                        # after new_deal: nothing
    assert len(deals(s)) == 2 and s.summary["pulka"]["seat2"]["pulya"] == 10
    s.lift("seat3", "7h")
    s.bid("seat3", "pass")
    assert (deals(s)[2]["dealer"], deals(s)[2]["price"]) == ("seat2", 1)


def test_undo_of_the_deal_that_closed_the_pulka_reopens_it():
    # "`finished_after_deal`: the number of the deal after which every pulya was closed, or `null`";
    # undo takes the deal out of the pulka again, help included.
    s = bidding(pulya_target=2)
    for declarer, order in (("seat2", ("seat2", "seat3", "seat1")), ("seat3", ("seat3", "seat1", "seat2")),
                            ("seat1", ("seat1", "seat2", "seat3"))):
        first, second, third = order
        s.bids(f"{first}:6s", f"{second}:pass", f"{third}:pass")
        s.contract(first, "6s")
        s.whists(f"{second}:pass", f"{third}:pass")
    assert s.summary["finished_after_deal"] == 3
    s.bids("seat2:7s", "seat3:pass", "seat1:pass")
    s.contract("seat2", "7s")
    s.whists("seat3:pass", "seat1:pass")                   # every pulya closed: off seat2's gora
    assert deals(s)[3]["help"] == [{"from": "seat2", "to": None, "points": 4}]
    assert s.summary["pulka"]["seat2"]["gora"] == -4
    s.press("undo")
    assert s.summary["pulka"]["seat2"] == {"gora": 0, "pulya": 2, "whists": {"seat1": 0, "seat3": 0}}
    assert s.summary["finished_after_deal"] == 3
    for _ in range(6):                                     # deal 4 gone (5), then deal 3's last pass
        s.press("undo")
    assert s.summary["finished_after_deal"] is None and len(deals(s)) == 3 and not deals(s)[2]["complete"]
    assert s.summary["pulka"]["seat1"]["pulya"] == 0


# --- the mistake lines ---------------------------------------------------------------------------

@pytest.mark.parametrize("line, message_part", [
    (lambda s: s.whist("seat3", "whist"), "no deal"),          # no deal awaits it
    (lambda s: s.mode("open"), "no deal"),
    (lambda s: s.contract("seat2", "6s"), "no deal"),
])
def test_a_control_line_when_no_deal_awaits_it(line, message_part):
    # "any control line when no deal awaits it. Signalled and ignored; nothing changes."
    s = bidding()
    line(s)
    (m,) = s.mistakes()
    d = m.to_dict()
    assert {k: d[k] for k in ("kind", "deal", "line", "mistake")} == \
        {"kind": "mistake", "deal": None, "line": 1, "mistake": "invalid_control"}
    assert message_part in d["message"] and deals(s) == [] and s.tracker.state == "idle"


def test_a_card_outside_play_is_a_not_in_play_mistake_line():
    # "`not_in_play` (a card laid before the auction decides, or during the contract or whisting)"
    s = bidding()
    s.bids("seat2:6s")
    s.lay("seat3", "9s")
    (m,) = s.mistakes()
    d = m.to_dict()
    assert (d["kind"], d["deal"], d["line"], d["mistake"]) == ("mistake", 1, 2, "not_in_play")
    assert d["message"]


def test_undo_reaches_back_deal_by_deal_also_after_a_resume(tmp_path):
    # "`undo` takes back the last accepted line ... of the deal just finished until the next deal's
    # first accepted line"; Readings fixed: "`undo` may reach back into the previous deal once the
    # current deal's only line was taken back" -- deal after deal, and a resumed session (FORMATS.md:
    # "the table is in the state it was in after the last whole line") the same.
    from controller.core.events import TableEvent
    from controller.core.tracker import DealTracker
    from controller.store.gamelog import SessionLog

    s = bidding()
    s.bids("seat2:8d", "seat3:pass", "seat1:pass")
    s.contract("seat2", "8d")
    s.whists("seat3:pass", "seat1:pass")                   # deal 1: seat2 pulya 6
    s.bids("seat3:6s", "seat1:pass", "seat2:pass")
    s.contract("seat3", "6s")
    s.whists("seat1:pass", "seat2:pass")                   # deal 2: seat3 pulya 2
    session = SessionLog.create(tmp_path, s.cfg, None)
    live = DealTracker(s.cfg)
    for e in s.events:
        signals = live.feed(e)
        session.append(e, signals, live.checkpoint() if any(x.kind == "deal" for x in signals) else None)
    session.close()
    resumed, _, _ = SessionLog.newest_unfinished(tmp_path).resume(s.cfg, None)
    undo = TableEvent(99.0, "button", button="undo")
    for tracker in (live, resumed):
        for _ in range(6):                                 # deal 2's six lines: deal 2 is gone
            tracker.feed(undo)
        assert len(tracker.summary()["deals"]) == 1 and tracker.summary()["pulka"]["seat3"]["pulya"] == 0
        (signal,) = tracker.feed(undo)                     # deal 1's last whist call
        assert signal.data == {"deal": 1, "undone": "whist", "seat": "seat1", "call": "pass"}
        assert tracker.state == "whisting" and tracker.summary()["pulka"]["seat2"]["pulya"] == 0
        assert not tracker.summary()["deals"][0]["complete"]
    assert resumed.summary() == live.summary()


def test_a_talon_card_seen_on_the_prikup_zone_is_played_later():
    # "The table does not track which cards are talon or discard, and no card is refused for having
    # been seen there — the declarer plays the talon cards he keeps."
    s = bidding()
    s.bids("seat2:6s", "seat3:pass", "seat1:pass")
    s.lay("prikup", "As")                                  # the talon turned up
    s.lay("prikup", "8s")
    s.lift("prikup", "As")                                 # lifted into the declarer's hand
    s.lift("prikup", "8s")
    s.contract("seat2", "6s")
    s.lay("prikup", "7d")                                  # the discard
    s.lay("prikup", "8d")
    s.whists("seat3:whist", "seat1:whist")
    s.lay("seat2", "As")
    assert not s.mistakes() and [(z, str(c)) for z, c in s.tracker.deal.plays] == [("seat2", "As")]
