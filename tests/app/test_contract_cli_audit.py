"""RULES-contracts.md and FORMATS-contracts.md through the command line, as an outside check
drives them: ``python -m controller replay EVENTS --config CFG --json`` on hand-written event
files.  Each test names the sentence it holds the program to; they fill what the worked
examples (tests/core/test_ref_contract.py) leave out: every new config key refused on a bad
value, the control lines' forms, the 4-player auction, every summary field in every phase,
the series around contract deals, a defender's revoke, and ``bidding = false``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli as preftable_main


def cli(*args):
    return preftable_main(args)


class Events:
    """Table-event lines with increasing ``t``, written as a plain events file."""

    def __init__(self):
        self.lines: list[str] = []
        self.t = 0.0

    def _add(self, obj: dict) -> "Events":
        self.t = round(self.t + 0.5, 3)
        self.lines.append(json.dumps({"t": self.t, **obj}))
        return self

    def raw(self, text: str) -> "Events":
        self.lines.append(text)
        return self

    def bid(self, *calls: str) -> "Events":
        for call in calls:
            seat, bid = call.split(":")
            self._add({"event": "bid", "seat": seat, "bid": bid})
        return self

    def contract(self, seat: str, game: str) -> "Events":
        return self._add({"event": "contract", "seat": seat, "game": game})

    def whist(self, *calls: str) -> "Events":
        for call in calls:
            seat, value = call.split(":")
            self._add({"event": "whist", "seat": seat, "call": value})
        return self

    def mode(self, mode: str, **extra) -> "Events":
        return self._add({"event": "whist_mode", "mode": mode, **extra})

    def lay(self, zone: str, card: str) -> "Events":
        return self._add({"zone": zone, "event": "placed", "card": card})

    def lift(self, zone: str, card: str) -> "Events":
        return self._add({"zone": zone, "event": "removed", "card": card})

    def press(self, name: str) -> "Events":
        return self._add({"event": "button", "button": name})

    def tricks(self, tricks, mapping: dict[str, str] | None = None) -> "Events":
        mapping = mapping or {}
        for trick in tricks:
            plays = [(mapping.get(z, z), c) for z, c in (p.split(":") for p in trick)]
            for zone, card in plays:
                self.lay(zone, card)
            for zone, card in plays:
                self.lift(zone, card)
        return self

    def write(self, path: Path) -> Path:
        path.write_text("".join(line + "\n" for line in self.lines))
        return path


def replay(tmp_path: Path, events: Events, rules: str = "bidding = true", players: int = 3):
    """(exit status, summary or None, stderr lines) of a replay of ``events``."""
    cfg = tmp_path / "rules.toml"
    cfg.write_text(f"[table]\nplayers = {players}\n\n[rules]\n{rules}\n")
    res = cli("replay", events.write(tmp_path / "table-events.jsonl"), "--config", cfg, "--json")
    summary = json.loads(res.stdout) if res.returncode == 0 else None
    return res.returncode, summary, res.stderr.splitlines()


def written(players=3, gora=None, pulya=None, whists=None):
    seats = [f"seat{i}" for i in range(1, players + 1)]
    gora, pulya, whists = gora or {}, pulya or {}, whists or {}
    return {p: {"gora": gora.get(p, 0), "pulya": pulya.get(p, 0),
                "whists": {q: whists.get((p, q), 0) for q in seats if q != p}} for p in seats}


# A legal 6♠ deal, dealer seat1 (first hand seat2 leads trick 1), prikup 7d 8d.  Hands:
# seat2 As Ks Qs Js 10s Ac Kc Ah Kh Ad; seat3 9s 8s Qc Jc 10c Qh Jh 10h Kd Qd;
# seat1 7s 9c 8c 7c 9h 8h 7h Jd 10d 9d.  Every trick follows suit, else trumps, else any; the
# declarer takes all ten.
SIX_SPADES = [
    ("seat2:As", "seat3:8s", "seat1:7s"),
    ("seat2:Ks", "seat3:9s", "seat1:9c"),      # seat1 has no spade (trump) left: any card
    ("seat2:Ac", "seat3:10c", "seat1:7c"),
    ("seat2:Kc", "seat3:Jc", "seat1:8c"),
    ("seat2:Ah", "seat3:10h", "seat1:7h"),
    ("seat2:Kh", "seat3:Jh", "seat1:8h"),
    ("seat2:Ad", "seat3:Kd", "seat1:9d"),
    ("seat2:Qs", "seat3:Qc", "seat1:Jd"),      # both void in spades and without trumps
    ("seat2:Js", "seat3:Qh", "seat1:9h"),
    ("seat2:10s", "seat3:Qd", "seat1:10d"),
]
# The same deal with seat3 revoking in trick 3 (Qh on the club lead, holding clubs), proven in
# trick 4 when he plays Jc.
SIX_SPADES_REVOKE = [
    ("seat2:As", "seat3:8s", "seat1:7s"),
    ("seat2:Ks", "seat3:9s", "seat1:9c"),
    ("seat2:Ac", "seat3:Qh", "seat1:7c"),
    ("seat2:Kc", "seat3:Jc", "seat1:8c"),
    ("seat2:Ah", "seat3:10h", "seat1:7h"),
    ("seat2:Kh", "seat3:Jh", "seat1:8h"),
    ("seat2:Ad", "seat3:Kd", "seat1:9d"),
    ("seat2:Qs", "seat3:10c", "seat1:Jd"),
    ("seat2:Js", "seat3:Qc", "seat1:9h"),
    ("seat2:10s", "seat3:Qd", "seat1:10d"),
]


# --- FORMATS-contracts.md "Config file: new [rules] keys" ------------------------------

@pytest.mark.parametrize("line, key", [
    ('bidding = "yes"', "rules.bidding"),
    ("bidding = 1", "rules.bidding"),
    ("pulya_target = 0", "rules.pulya_target"),
    ("pulya_target = -5", "rules.pulya_target"),
    ("pulya_target = 20.0", "rules.pulya_target"),
    ("pulya_target = 2.5", "rules.pulya_target"),
    ('pulya_target = "20"', "rules.pulya_target"),
    ("pulya_target = true", "rules.pulya_target"),
    ('ten_whisted = "false"', "rules.ten_whisted"),
    ("half_whist = 0", "rules.half_whist"),
    ('consolation_to_dealer = "no"', "rules.consolation_to_dealer"),
    ("second_whist_responsible = []", "rules.second_whist_responsible"),
    ('whist_responsibility = "HALF"', "rules.whist_responsibility"),
    ('whist_responsibility = "quarter"', "rules.whist_responsibility"),
    ("whist_responsibility = 1", "rules.whist_responsibility"),
    ('convention = "rostov"', "rules.convention"),
    ("biding = true", "rules.biding"),
])
def test_a_bad_contract_key_is_one_line_naming_it_and_exit_2(tmp_path, line, key):
    # "Refused at start-up like any other bad key (an unknown key, a wrong type or value), with a
    # message naming the key."
    status, _, err = replay(tmp_path, Events(), rules=line)
    assert status == 2
    assert len(err) == 1 and key in err[0] and "Traceback" not in err[0]


def test_every_contract_key_with_a_good_value_is_accepted(tmp_path):
    # "`consolation_to_dealer` is accepted with 3 players and has no effect there."
    rules = "\n".join(["bidding = true", "pulya_target = 1", "ten_whisted = false", "half_whist = false",
                       "consolation_to_dealer = false", "second_whist_responsible = false",
                       'whist_responsibility = "half"', 'convention = "leningrad"'])
    # one valid line that starts no deal (a file without any is refused: exit 2)
    events = Events().raw('{"t": 0.5, "event": "button", "button": "confirm"}')
    status, summary, err = replay(tmp_path, events, rules=rules)
    assert status == 0 and err == []
    assert summary["pulya_target"] == 1 and summary["finished_after_deal"] is None
    assert summary["deals"] == []


# --- FORMATS-contracts.md "Table events: new control lines" ----------------------------

def test_bids_and_games_in_any_letter_case_and_misere_with_its_accent(tmp_path):
    # "readers also accept bids and games in any letter case and `misère`"; writers emit the forms
    ev = Events().bid("seat2:6S", "seat3:MISÈRE", "seat1:Pass", "seat2:9N", "seat3:pass")
    ev.contract("seat2", "9N")
    status, summary, err = replay(tmp_path, ev)
    assert status == 0 and err == []
    (deal,) = summary["deals"]
    assert deal["auction"] == [{"seat": "seat2", "bid": "6s"}, {"seat": "seat3", "bid": "misere"},
                               {"seat": "seat1", "bid": "pass"}, {"seat": "seat2", "bid": "9n"},
                               {"seat": "seat3", "bid": "pass"}]
    assert deal["game"] == "9n" and deal["value"] == 8


def test_a_control_line_with_a_bad_field_is_skipped_with_its_line_number(tmp_path):
    # "A control line with a missing or unknown field value (`"bid": "11s"`, `"call": "maybe"`, a
    # seat the table does not have) is not valid as a line: it is reported on standard error with
    # its line number and skipped ... and `t` must not decrease."
    ev = Events().bid("seat2:6s")                                   # line 1
    ev.bid("seat3:11s")                                             # 2
    ev.bid("seat4:pass")                                            # 3: a 3-player table
    ev.raw('{"t": 9.0, "event": "bid", "bid": "pass"}')             # 4: no seat
    ev.raw('{"t": 9.0, "event": "whist", "seat": "seat3", "call": "maybe"}')   # 5
    ev.raw('{"t": 9.0, "event": "whist_mode", "mode": "shut"}')     # 6
    ev.raw('{"t": 9.0, "event": "contract", "seat": "seat2", "game": "pass"}')  # 7: pass is no game
    ev.raw('{"t": 0.1, "event": "bid", "seat": "seat3", "bid": "pass"}')       # 8: back in time
    ev.raw('{"t": 9.0, "zone": "seat3", "event": "bid", "seat": "seat3", "bid": "pass"}')  # 9: a zone
    status, summary, err = replay(tmp_path, ev)
    assert status == 0
    skipped = [line for line in err if ": skipped: " in line]
    assert [int(line.split(":")[1]) for line in skipped] == [2, 3, 4, 5, 6, 7, 8, 9]
    assert summary["deals"][0]["auction"] == [{"seat": "seat2", "bid": "6s"}]


def test_whist_mode_may_carry_a_seat_which_is_ignored(tmp_path):
    # "`whist_mode` | `mode` (a `seat` is allowed and ignored)"
    ev = Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
    ev.whist("seat3:whist", "seat1:pass").mode("open", seat="seat9")
    status, summary, err = replay(tmp_path, ev)
    assert status == 0 and err == []
    assert summary["deals"][0]["whist_mode"] == "open"


def test_a_refused_control_line_still_sets_the_t_baseline(tmp_path):
    # Readings fixed: "A well-formed line that is refused (a control line with `bidding = false`,
    # an unknown tag) still sets the `t` baseline for "never decreasing"."
    ev = Events().raw('{"t": 5.0, "event": "bid", "seat": "seat3", "bid": "6s"}')   # out of turn
    ev.raw('{"t": 4.0, "event": "bid", "seat": "seat2", "bid": "6s"}')
    status, summary, err = replay(tmp_path, ev)
    assert status == 0 and summary["deals"] == []
    assert any(":2: skipped: field 't' goes back in time" in line for line in err)
    status, summary, err = replay(tmp_path, ev, rules="bidding = false")
    assert any(":2: skipped: field 't' goes back in time" in line for line in err)


# --- RULES-contracts.md "The auction", with four players --------------------------------

def test_four_players_the_sitting_out_dealer_never_bids_and_the_first_hand_opens(tmp_path):
    # "Only the three active seats bid (a sitting-out dealer never does). The first hand calls
    # first, then the calls go clockwise among the players who have not passed"; holding by the
    # senior ("comes earlier from the first hand"); the deal passes to the next seat.
    ev = Events().bid("seat1:6s")                                    # the dealer sits out: refused
    ev.bid("seat3:6s")                                               # not the first hand: refused
    ev.bid("seat2:6s", "seat3:6c", "seat1:pass", "seat4:pass")       # seat1 is not in the auction
    ev.bid("seat2:6c")                                               # seat2 is senior to seat3: holds
    ev.bid("seat3:pass")
    ev.contract("seat2", "6c").whist("seat3:pass", "seat4:pass")     # both pass: deal 1 written
    ev.bid("seat2:pass")                                             # deal 2: seat2 deals, sits out: refused
    ev.bid("seat3:pass", "seat4:7d", "seat1:7d")                     # seat1 is junior to seat4: no hold
    ev.bid("seat1:pass", "seat3:pass")                               # seat4 declares; then refused
    status, summary, err = replay(tmp_path, ev, players=4)
    assert status == 0
    first, second = summary["deals"]
    assert first["dealer"] == "seat1" and first["declarer"] == "seat2" and first["game"] == "6c"
    assert first["auction"] == [{"seat": "seat2", "bid": "6s"}, {"seat": "seat3", "bid": "6c"},
                                {"seat": "seat4", "bid": "pass"}, {"seat": "seat2", "bid": "6c"},
                                {"seat": "seat3", "bid": "pass"}]
    assert first["outcome"] == "passed" and first["kind"] == "unplayed"
    assert first["written"] == written(4, pulya={"seat2": 2})
    assert second["dealer"] == "seat2" and second["price"] == 1
    assert second["auction"] == [{"seat": "seat3", "bid": "pass"}, {"seat": "seat4", "bid": "7d"},
                                 {"seat": "seat1", "bid": "pass"}]
    assert second["kind"] == "contract" and second["declarer"] == "seat4" and second["game"] is None
    # the refused lines: seat1 and seat3 before the first bid, seat1's pass in deal 1; the dealer
    # seat2's pass, seat1's 7d and seat3's call after the auction in deal 2
    assert any("invalid control 6 (first line 1)" in line for line in err), err


def test_four_players_a_card_on_the_sitting_out_dealers_zone_is_out_of_turn(tmp_path):
    # "a sitting-out dealer lays no card (a card on his zone is out of turn)"; "The first hand
    # leads trick 1, whatever the contract and whoever declared".
    ev = Events().bid("seat2:6s", "seat3:pass", "seat4:pass").contract("seat2", "6s")
    ev.whist("seat3:whist", "seat4:whist")
    ev.lay("seat1", "7h")                                            # the dealer's zone
    ev.lift("seat1", "7h")
    ev.tricks(SIX_SPADES, {"seat1": "seat4"})
    status, summary, err = replay(tmp_path, ev, players=4)
    assert status == 0
    (deal,) = summary["deals"]
    assert deal["complete"] and deal["outcome"] == "made"
    assert [t["leader"] for t in deal["tricks"]] == ["seat2"] * 10
    assert deal["taken"] == {"seat1": 0, "seat2": 10, "seat3": 0, "seat4": 0}
    # made 6: pulya 2; two whisters on 6 with no trick each write (2 - 0) x 2 = 4 on the gora
    assert deal["written"] == written(4, gora={"seat3": 4, "seat4": 4}, pulya={"seat2": 2})
    assert any("out of turn 1" in line for line in err), err


# --- FORMATS-contracts.md "Summary JSON: new fields", phase by phase ---------------------

NEW_FIELDS = ["number", "dealer", "price", "kind", "auction", "declarer", "game", "value", "whist_calls",
              "whisters", "whist_mode", "outcome", "tricks", "taken", "claimed", "revoke", "revoke_trick",
              "complete", "written", "help"]


def test_the_summary_fields_of_a_deal_stopped_in_each_phase(tmp_path):
    # "Every deal entry gains these fields (always present; `null` or empty where they do not
    # apply)"; Readings fixed: "A deal that stops between the auction and the end of whisting has
    # `kind = "contract"` and `game`/`value` `null` until the contract line; a misère auction gives
    # `game = "misere"` and `value = 10` at once."
    def stopped(ev: Events) -> dict:
        status, summary, _ = replay(tmp_path, ev)
        # FORMATS.md: the summary "ends with the same settlement object"
        assert status == 0 and list(summary) == ["deals", "pulka", "pulya_target", "finished_after_deal",
                                                 "settlement"]
        deal = summary["deals"][-1]
        assert list(deal) == NEW_FIELDS and deal["complete"] is False
        assert deal["written"] is None and deal["help"] == [] and deal["outcome"] is None
        assert deal["tricks"] == [] and deal["revoke"] is None and deal["revoke_trick"] is None
        assert summary["pulka"]["seat2"] == {"gora": 0, "pulya": 0, "whists": {"seat1": 0, "seat3": 0}}
        return deal

    auction = stopped(Events().bid("seat2:6s", "seat3:pass"))
    assert auction["kind"] is None and auction["declarer"] is None and auction["game"] is None
    assert auction["value"] is None and auction["whist_mode"] is None and auction["whisters"] == []
    assert auction["whist_calls"] == []
    contract = stopped(Events().bid("seat2:6s", "seat3:pass", "seat1:pass"))
    assert (contract["kind"], contract["declarer"], contract["game"], contract["value"]) == \
        ("contract", "seat2", None, None)
    whisting = stopped(Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "7s")
                       .whist("seat3:pass", "seat1:half"))
    assert (whisting["kind"], whisting["game"], whisting["value"], whisting["whist_mode"]) == \
        ("contract", "7s", 4, None)
    assert whisting["whist_calls"] == [{"seat": "seat3", "call": "pass"}, {"seat": "seat1", "call": "half"}]
    assert whisting["whisters"] == []
    misere = stopped(Events().bid("seat2:misere", "seat3:pass", "seat1:pass"))
    assert (misere["kind"], misere["declarer"], misere["game"], misere["value"], misere["whist_mode"]) == \
        ("misere", "seat2", "misere", 10, "open")
    one = stopped(Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
                  .whist("seat3:pass", "seat1:whist"))
    assert one["whisters"] == ["seat1"] and one["whist_mode"] == "closed" and one["kind"] == "contract"
    two = stopped(Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
                  .whist("seat3:whist", "seat1:whist"))
    assert two["whisters"] == ["seat3", "seat1"] and two["whist_mode"] == "closed"
    rasp = stopped(Events().bid("seat2:pass", "seat3:pass", "seat1:pass"))
    assert (rasp["kind"], rasp["declarer"], rasp["game"], rasp["value"], rasp["whist_mode"]) == \
        ("raspasovka", None, None, None, None)


@pytest.mark.parametrize("rules, calls, outcome, writes", [
    ("bidding = true", ("seat3:pass", "seat1:pass"), "passed", {"pulya": {"seat2": 4}}),
    ("bidding = true", ("seat3:pass", "seat1:half", "seat3:pass"), "half_whist",
     {"pulya": {"seat2": 4}, "whists": {("seat1", "seat2"): 4}}),
    ('bidding = true\nconvention = "leningrad"', ("seat3:pass", "seat1:half", "seat3:pass"), "half_whist",
     {"pulya": {"seat2": 4}, "whists": {("seat1", "seat2"): 8}}),
])
def test_the_deals_written_without_play(tmp_path, rules, calls, outcome, writes):
    # "| both pass | the declarer: P into the pulya |"; "| half-whist (6, 7) | the declarer: P into
    # the pulya; the half-whister: O/2 × P × m whists on him"; "`tricks`: ... `[]` for an unplayed
    # deal"; "`complete`: `true` also for a finished unplayed deal".
    ev = Events().bid("seat2:7h", "seat3:pass", "seat1:pass").contract("seat2", "7h").whist(*calls)
    status, summary, _ = replay(tmp_path, ev, rules=rules)
    (deal,) = summary["deals"]
    assert (deal["kind"], deal["outcome"], deal["complete"], deal["tricks"]) == ("unplayed", outcome, True, [])
    assert deal["whisters"] == [] and deal["whist_mode"] is None and deal["help"] == []
    assert deal["taken"] == {"seat1": 0, "seat2": 0, "seat3": 0}
    assert deal["written"] == written(**writes)


def test_a_ten_not_whisted_ends_on_its_contract_line(tmp_path):
    # "With `false` ..., the contract line of a 10 ends the deal: it is written as made without play
    # (`outcome` `ten_unwhisted`)"; a whist line after it awaits no deal.
    ev = Events().bid("seat2:9h", "seat3:pass", "seat1:pass").contract("seat2", "10s")
    ev.whist("seat3:whist")
    status, summary, err = replay(tmp_path, ev, rules="bidding = true\nten_whisted = false")
    (deal,) = summary["deals"]
    assert (deal["kind"], deal["outcome"], deal["game"], deal["value"]) == ("unplayed", "ten_unwhisted", "10s", 10)
    assert deal["whist_calls"] == [] and deal["written"] == written(pulya={"seat2": 10})
    assert any("invalid control 1" in line for line in err)


# --- RULES-contracts.md "Dealer and progression" ------------------------------------------

def test_a_contract_at_the_last_step_gets_no_dealer_penalty_and_ends_the_series(tmp_path):
    # "The `price` of every deal is the progression price of its place in the series ...; the
    # last-step dealer penalty applies to raspasovka deals only"; "A contract, misère or unplayed
    # deal ends a raspasovka series: the deal passes to the next seat and the next raspasovka
    # starts at the first price."
    from table_script import DEAL_A
    ev = Events()
    for _ in range(2):
        ev.bid("seat2:pass", "seat3:pass", "seat1:pass").tricks(DEAL_A)
    ev.bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s").whist("seat3:pass", "seat1:pass")
    ev.bid("seat3:pass", "seat1:pass", "seat2:pass")
    status, summary, _ = replay(tmp_path, ev)
    deals = summary["deals"]
    assert [(d["dealer"], d["price"], d["kind"]) for d in deals] == [
        ("seat1", 1, "raspasovka"), ("seat1", 2, "raspasovka"), ("seat1", 3, "unplayed"), ("seat2", 1, "raspasovka")]
    assert deals[2]["written"] == written(pulya={"seat2": 2})       # no dealer penalty at price 3


# --- RULES-contracts.md "Revokes in contract and misère deals" through the CLI -----------

def test_a_whister_revoke_proven_later_through_the_cli(tmp_path):
    # "a revoke is proven the moment the offender later plays the suit he failed to follow";
    # "By a defender (pt 35): ... the declarer writes P into his pulya whatever his tricks; whists for
    # tricks ... on the adjusted counts; no consolation; the charged seat writes on his gora P × m
    # ... plus every whisters' remiz the adjusted counts bring (nobody else writes one)".
    ev = Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
    ev.whist("seat3:whist", "seat1:whist").tricks(SIX_SPADES_REVOKE)
    status, summary, err = replay(tmp_path, ev)
    (deal,) = summary["deals"]
    assert deal["revoke"] == "seat3" and deal["revoke_trick"] == 3 and deal["outcome"] == "made"
    assert deal["taken"] == {"seat1": 0, "seat2": 10, "seat3": 0}
    # 2 for the mistake + (2 - 0) x 2 for each whister's shortfall on 6, all on seat3
    assert deal["written"] == written(gora={"seat3": 10}, pulya={"seat2": 2})
    assert any("revoke 1" in line for line in err)


def test_a_played_six_taken_whole_by_the_declarer(tmp_path):
    # "One whister: he writes (O − D) × P × m × w"; in Leningrad w defaults to ½ and m = 2.
    ev = Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
    ev.whist("seat3:pass", "seat1:whist").mode("open").tricks(SIX_SPADES)
    status, summary, err = replay(tmp_path, ev)
    (deal,) = summary["deals"]
    assert deal["whist_mode"] == "open" and deal["whisters"] == ["seat1"]
    assert deal["written"] == written(gora={"seat1": 8}, pulya={"seat2": 2})
    status, summary, err = replay(tmp_path, ev, rules='bidding = true\nconvention = "leningrad"')
    assert summary["deals"][0]["written"] == written(gora={"seat1": 8}, pulya={"seat2": 2})
    assert summary["settlement"]["convention"] == "leningrad"


# --- bidding = false -------------------------------------------------------------------------

def test_with_bidding_off_every_control_line_is_an_invalid_control_mistake(tmp_path):
    # "With `bidding = false`, every bid, contract, whist and whist_mode line is an invalid control
    # line" (signalled, ignored): the raspasovka replays as without them.
    from table_script import DEAL_A
    plain = Events().tricks(DEAL_A)
    noisy = Events().bid("seat2:6s").contract("seat2", "6s").whist("seat3:whist").mode("open")
    noisy.tricks(DEAL_A)
    _, base, _ = replay(tmp_path, plain, rules="bidding = false")
    status, summary, err = replay(tmp_path, noisy, rules="bidding = false")
    assert status == 0 and summary == base
    assert any("invalid control 4 (first line 1)" in line for line in err), err
    # every field with every value of bidding (FORMATS-contracts.md, second edition)
    assert list(summary["deals"][0]) == NEW_FIELDS and summary["deals"][0]["kind"] == "raspasovka"


# --- misère through the CLI ---------------------------------------------------------------------

# A legal misère, dealer seat1, seat2 the declarer leads; prikup 9d Qd.  Hands: seat2 7s 8s 9s 7c
# 8c 9c 7h 8h 7d 8d; seat3 As Ks Qs Ac Kc Qc Ah Kh Ad Kd; seat1 Js 10s Jc 10c Jh 10h 9h Qh Jd 10d.
MISERE_CLEAN = [
    ("seat2:7s", "seat3:As", "seat1:Js"),
    ("seat3:Ks", "seat1:10s", "seat2:8s"),
    ("seat3:Qs", "seat1:Qh", "seat2:9s"),
    ("seat3:Ac", "seat1:Jc", "seat2:7c"),
    ("seat3:Kc", "seat1:10c", "seat2:8c"),
    ("seat3:Qc", "seat1:9h", "seat2:9c"),
    ("seat3:Ah", "seat1:Jh", "seat2:8h"),
    ("seat3:Kh", "seat1:10h", "seat2:7h"),
    ("seat3:Ad", "seat1:Jd", "seat2:7d"),
    ("seat3:Kd", "seat1:10d", "seat2:8d"),
]
# The declarer revokes in trick 5 (7h on the club lead, holding 8c 9c), proven in trick 6 (8c).
MISERE_REVOKE = MISERE_CLEAN[:4] + [
    ("seat3:Kc", "seat1:10c", "seat2:7h"),
    ("seat3:Qc", "seat1:9h", "seat2:8c"),
    ("seat3:Ah", "seat1:Jh", "seat2:8h"),
    ("seat3:Kh", "seat1:10h", "seat2:9c"),
] + MISERE_CLEAN[8:]


@pytest.mark.parametrize("tricks, rules, outcome, gora, pulya, revoke", [
    (MISERE_CLEAN, "bidding = true", "made", 0, 10, (None, None)),
    (MISERE_REVOKE, "bidding = true", "failed", 10, 0, ("seat2", 5)),
    (MISERE_REVOKE, 'bidding = true\nconvention = "leningrad"', "failed", 20, 0, ("seat2", 5)),
])
def test_a_misere_played_and_the_declarers_revoke_trick_counted_as_his(tmp_path, tricks, rules, outcome,
                                                                       gora, pulya, revoke):
    # "A misère. Taking no trick: P = 10 into the pulya. Otherwise 10 × m per trick taken on the
    # declarer's gora. Nobody writes whists"; "In a misère, the revoke trick counts as the
    # declarer's"; "`taken`: the tricks as played, before any revoke adjustment".
    ev = Events().bid("seat2:misere", "seat3:pass", "seat1:pass").contract("seat2", "misere")
    ev.tricks(tricks)
    status, summary, err = replay(tmp_path, ev, rules=rules)
    (deal,) = summary["deals"]
    assert (deal["kind"], deal["game"], deal["value"], deal["outcome"]) == ("misere", "misere", 10, outcome)
    assert (deal["revoke"], deal["revoke_trick"]) == revoke
    assert deal["taken"] == {"seat1": 0, "seat2": 0, "seat3": 10}
    assert deal["tricks"][0]["leader"] == "seat2" and deal["whist_calls"] == [] and deal["whisters"] == []
    assert deal["written"] == written(gora={"seat2": gora}, pulya={"seat2": pulya})


# --- undo through the CLI -------------------------------------------------------------------------

def test_undo_takes_back_deal_after_deal(tmp_path):
    # "`undo` takes back the last accepted line of the deal in progress, or of the deal just finished
    # until the next deal's first accepted line — a card or a control line alike. A deal whose only
    # line is taken back no longer exists."  Two unplayed deals, twelve lines, twelve undos.
    ev = Events().bid("seat2:8d", "seat3:pass", "seat1:pass").contract("seat2", "8d").whist("seat3:pass", "seat1:pass")
    ev.bid("seat3:6s", "seat1:pass", "seat2:pass").contract("seat3", "6s").whist("seat1:pass", "seat2:pass")
    for _ in range(6):
        ev.press("undo")
    status, summary, _ = replay(tmp_path, ev)
    assert len(summary["deals"]) == 1 and summary["deals"][0]["written"] == written(pulya={"seat2": 6})
    ev.press("undo")
    status, summary, _ = replay(tmp_path, ev)
    (deal,) = summary["deals"]
    assert deal["complete"] is False and deal["whist_calls"] == [{"seat": "seat3", "call": "pass"}]
    assert summary["pulka"]["seat2"]["pulya"] == 0
    for _ in range(6):
        ev.press("undo")
    status, summary, _ = replay(tmp_path, ev)
    assert summary["deals"] == [] and all(p["pulya"] == 0 for p in summary["pulka"].values())


# --- a failure to trump through the CLI ---------------------------------------------------------

# 6♠, dealer seat1, seat2 leads; prikup 8h 7h.  Hands: seat2 As Ks Qs Js 10s 9s Ad Kd Qd Jd;
# seat3 8s 7s Ac Kc Qc Jc Ah Kh Qh Jh; seat1 10d 9d 8d 7d 10c 9c 8c 7c 10h 9h.  seat3, void in
# diamonds and holding trumps, discards clubs in tricks 1 and 2 (failures to trump) and proves it
# with 8s in trick 3.
SIX_SPADES_NO_TRUMP = [
    ("seat2:Ad", "seat3:Ac", "seat1:7d"),
    ("seat2:Kd", "seat3:Kc", "seat1:8d"),
    ("seat2:Qd", "seat3:8s", "seat1:9d"),
    ("seat3:Ah", "seat1:10h", "seat2:As"),
    ("seat2:Jd", "seat3:7s", "seat1:10d"),
    ("seat3:Kh", "seat1:9h", "seat2:Ks"),
    ("seat2:Qs", "seat3:Qc", "seat1:7c"),
    ("seat2:Js", "seat3:Jc", "seat1:8c"),
    ("seat2:10s", "seat3:Qh", "seat1:9c"),
    ("seat2:9s", "seat3:Jh", "seat1:10c"),
]


def test_a_failure_to_trump_proven_by_a_later_trump_through_the_cli(tmp_path):
    # "A revoke (ренонс) is ... failing to play a trump when void in the led suit and holding one";
    # "a revoke is proven the moment the offender ... (a trump failure) later plays a trump"; "Only
    # the revoke whose offending card came first in play order counts"; by a defender: "the charged
    # seat writes on his gora P × m ... plus every whisters' remiz the adjusted counts bring".
    ev = Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
    ev.whist("seat3:whist", "seat1:whist").tricks(SIX_SPADES_NO_TRUMP)
    status, summary, err = replay(tmp_path, ev)
    (deal,) = summary["deals"]
    assert [t["winner"] for t in deal["tricks"]] == ["seat2", "seat2", "seat3", "seat2", "seat3"] + ["seat2"] * 5
    assert deal["taken"] == {"seat1": 0, "seat2": 8, "seat3": 2}
    assert (deal["revoke"], deal["revoke_trick"], deal["outcome"]) == ("seat3", 1, "made")
    # made: pulya 2; seat3 writes his 2 tricks x 2; seat1's shortfall on 6 (2 - 0) x 2 and the
    # mistake's 2 are seat3's
    assert deal["written"] == written(gora={"seat3": 6}, pulya={"seat2": 2}, whists={("seat3", "seat2"): 4})
    assert any("revoke 1 (first line" in line for line in err), err


@pytest.mark.parametrize("mode, charged", [("open", "seat1"), ("closed", "seat3")])
def test_a_passers_revoke_is_the_whisters_in_open_play_and_his_own_in_closed(tmp_path, mode, charged):
    # "The seat charged is the offender, except that in open play with one whister a revoke from the
    # passer's zone is the whister's"; Readings fixed: "a passer who revokes in closed play is charged
    # like a whister"; one whister writes D × P × m and his remiz (O − D) × P × m × w.
    ev = Events().bid("seat2:6s", "seat3:pass", "seat1:pass").contract("seat2", "6s")
    ev.whist("seat3:pass", "seat1:whist").mode(mode).tricks(SIX_SPADES_NO_TRUMP)
    status, summary, err = replay(tmp_path, ev)
    (deal,) = summary["deals"]
    assert (deal["revoke"], deal["revoke_trick"], deal["whist_mode"]) == (charged, 1, mode)
    assert deal["written"] == written(gora={charged: 2 + 4}, pulya={"seat2": 2}, whists={("seat1", "seat2"): 4})
