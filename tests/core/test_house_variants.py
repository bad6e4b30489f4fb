"""The house rules of docs/RULES-variants.md, hand-worked: each key's example, the presets,
the config's one-line errors, the words doctor and the report show, and a made-up house rule
added as one module and one line.

Every key's default is the table's own rule (RULES.md, RULES-contracts.md); the other
tests of tests/core hold that the defaults still score every log as before.
"""

import tomllib
import types
from fractions import Fraction
from types import SimpleNamespace

import pytest

from controller.core import house_rules
from controller.core.config import GameConfig, Rules, Table, game_config_from_dict, parse_rules
from controller.core.contract_scoring import ContractDeal, score_contract
from controller.core.errors import ConfigError
from controller.core.house_rules.book import HouseRule
from controller.core.scoring import Pulka, Writes, pulya_order, score_deal, settle, settle_pulka
from controller.core.series import next_deal

S3 = ("seat1", "seat2", "seat3")
S4 = ("seat1", "seat2", "seat3", "seat4")


def rules(players=3, **keys) -> Rules:
    return parse_rules(keys, players)


def contract(r, game, taken, whisters, declarer="seat2", dealer="seat1", seats=S3, ending="played"):
    active = pulya_order(seats, dealer)[:3]
    i = active.index(declarer)
    defenders = (active[(i + 1) % 3], active[(i + 2) % 3])
    d = ContractDeal(game=game, declarer=declarer, ending=ending, defenders=defenders, whisters=tuple(whisters),
                     half_whister=None, dealer=dealer, seats=seats, taken=dict(taken))
    writes, outcome = score_contract(r, d)
    return writes, outcome


# --- 1. gentleman's whist ----------------------------------------------------------------

def test_gentlemans_whist_shares_a_failed_contracts_whists():
    # 9♠ failed with 4 tricks; seat3 whists (3 tricks), seat1 passes (3 tricks); Leningrad
    taken = {"seat2": 4, "seat3": 3, "seat1": 3}
    greedy, _ = contract(rules(convention="leningrad"), "9s", taken, ["seat3"])
    assert greedy.whists == {("seat3", "seat2"): 176, ("seat1", "seat2"): 80}
    shared, outcome = contract(rules(convention="leningrad", gentleman_whist=True), "9s", taken, ["seat3"])
    assert outcome == "failed" and shared.whists == {("seat3", "seat2"): 128, ("seat1", "seat2"): 128}
    assert shared.gora == greedy.gora == {"seat2": 80}


def test_gentlemans_whist_leaves_a_made_contract_to_the_whister():
    taken = {"seat2": 8, "seat3": 1, "seat1": 1}
    made, _ = contract(rules(gentleman_whist=True), "8s", taken, ["seat3"])
    assert made.whists == {("seat3", "seat2"): 12}


# --- 2. a single whister's own tricks -------------------------------------------------------

def test_single_whister_credited_with_his_own_tricks_only():
    taken = {"seat2": 4, "seat3": 3, "seat1": 3}
    table, _ = contract(rules(), "9s", taken, ["seat3"])
    assert table.whists[("seat3", "seat2")] == 88          # (3 + 3) × 8 + 5 × 8
    own, _ = contract(rules(single_whister_tricks="own"), "9s", taken, ["seat3"])
    assert own.whists == {("seat3", "seat2"): 64, ("seat1", "seat2"): 40}     # 3 × 8 + 40


# --- 3. Leningrad doubles raspasovka gora ------------------------------------------------------

def test_leningrad_doubles_raspasovka_gora_when_asked():
    taken = {"seat1": 6, "seat2": 2, "seat3": 2}
    plain = score_deal(rules(convention="leningrad", subtract_minimum=True), S3, S3, "seat1", 1, 0, taken, None)
    assert plain.gora == {"seat1": 4}
    doubled = score_deal(rules(convention="leningrad", subtract_minimum=True, raspasovka_doubled=True),
                         S3, S3, "seat1", 1, 0, taken, None)
    assert doubled.gora == {"seat1": 8} and doubled.pulya == {}
    # Sochi's factor is 1: the key changes nothing there
    assert score_deal(rules(subtract_minimum=True, raspasovka_doubled=True), S3, S3, "seat1", 1, 0,
                      taken, None).gora == {"seat1": 4}


# --- 4. amnesty over all four seats ------------------------------------------------------------

def test_amnesty_over_every_seat_the_sitting_out_dealer_included():
    # dealer seat1 sits out with 1 prikup trick; seat2 5, seat3 2, seat4 2
    taken = {"seat1": 1, "seat2": 5, "seat3": 2, "seat4": 2}
    active = ("seat2", "seat3", "seat4")
    table = score_deal(rules(4, subtract_minimum=True), S4, active, "seat1", 1, 0, taken, None)
    assert table.gora == {"seat1": 1, "seat2": 3}
    every = score_deal(rules(4, subtract_minimum=True, amnesty_seats="all"), S4, active, "seat1", 1, 0, taken, None)
    assert every.gora == {"seat2": 4, "seat3": 1, "seat4": 1}


# --- 5. the sitting-out dealer's pulya is never helped -------------------------------------------

def _help(r):
    pulka = Pulka(S4)
    pulka.pulya.update({"seat1": 8, "seat2": 9, "seat3": 2, "seat4": 0})
    w = Writes()
    w.add_pulya("seat2", 4)        # seat2 closes at 10 with 3 to spare; seat1 deals (sits out)
    return pulka.write_deal(r, w, pulya_order(S4, "seat1"))


def test_the_sitting_out_dealers_pulya_is_not_helped():
    table = _help(rules(4, pulya_target=10))
    assert [(h.to, h.points) for h in table.help] == [("seat1", 2), ("seat3", 1)]
    kept = _help(rules(4, pulya_target=10, help_sitting_out_dealer=False))
    assert [(h.to, h.points) for h in kept.help] == [("seat3", 3)]
    assert kept.writes.whists == {("seat2", "seat3"): 30}


# --- 6. a whisted 10 without obligation --------------------------------------------------------

def test_a_whisted_ten_carries_no_obligation():
    taken = {"seat2": 10, "seat3": 0, "seat1": 0}
    table, _ = contract(rules(), "10n", taken, ["seat3"])
    assert table.gora == {"seat3": 10} and table.pulya == {"seat2": 10}
    free, _ = contract(rules(ten_obligation=False), "10n", taken, ["seat3"])
    assert free.gora == {} and free.pulya == {"seat2": 10}


# --- 7. the raspasovka series ----------------------------------------------------------------

def _series(r, deals, players=3):
    """(dealer, step) of each deal, with ``deals`` the kinds (and outcomes) of the deals before."""
    config = GameConfig(Table(players=players), r)
    last, out = None, []
    for kind, outcome in deals:
        dealer, step = next_deal(config, last)
        out.append((dealer, step))
        last = SimpleNamespace(dealer=dealer, step=step, abandoned=False, kind=kind,
                               entry={"kind": kind, "outcome": outcome})
    out.append(next_deal(config, last))
    return out


R, FAILED, MADE, PASSED = ("raspasovka", None), ("contract", "failed"), ("contract", "made"), ("contract", "passed")


def test_the_table_series_restarts_after_any_game():
    assert _series(rules(), [R, FAILED, R]) == [("seat1", 0), ("seat1", 1), ("seat2", 0), ("seat2", 1)]


def test_a_failed_game_leaves_the_series_running_and_the_price_stays_at_its_last_step():
    r = rules(same_dealer=False, series_after_last="stay", series_end="not_failed")
    steps = _series(r, [R, R, R, FAILED, R, MADE])
    assert [s for _, s in steps] == [0, 1, 2, 2, 2, 2, 0]
    assert [d for d, _ in steps] == ["seat1", "seat2", "seat3", "seat1", "seat2", "seat3", "seat1"]


def test_prefandroid_deals_a_failed_game_in_a_running_series_again():
    r = rules(preset="prefandroid-sochi")
    steps = _series(r, [R, FAILED, R, FAILED, PASSED])
    # after seat2's failed game (price 2 in force) seat2 deals again; a passed game ends the series
    assert steps == [("seat1", 0), ("seat2", 1), ("seat2", 1), ("seat3", 2), ("seat3", 2), ("seat1", 0)]


def test_kozlov_ends_a_series_only_with_a_game_made_in_play():
    steps = _series(rules(preset="kozlov"), [R, PASSED, R, FAILED, R, MADE])
    assert [s for _, s in steps] == [0, 1, 1, 2, 2, 2, 0]


# --- 8. settlement in whole whists ----------------------------------------------------------

PULKA = {"seat1": {"gora": 1, "pulya": 0, "whists": {}}, "seat2": {"gora": 0, "pulya": 0, "whists": {}},
         "seat3": {"gora": 0, "pulya": 0, "whists": {}}}


def test_settlement_in_whole_whists():
    assert settle(PULKA) == {"seat1": Fraction(-20, 3), "seat2": Fraction(10, 3), "seat3": Fraction(10, 3)}
    # kozlov: the others write round(10/3) = 3 each on seat1
    assert settle_pulka(PULKA, rules(settlement="whole_rounded")) == {"seat1": -6, "seat2": 3, "seat3": 3}
    # PrefCount: 10 × (A − gora) cut toward zero: -6.67 → -6, 3.33 → 3
    assert settle_pulka(PULKA, rules(settlement="whole_truncated")) == {"seat1": -6, "seat2": 3, "seat3": 3}
    two = {p: dict(e, gora=2 if p == "seat1" else 0) for p, e in PULKA.items()}
    assert settle_pulka(two, rules(settlement="whole_rounded")) == {"seat1": -14, "seat2": 7, "seat3": 7}
    assert settle_pulka(two, rules(settlement="whole_truncated")) == {"seat1": -13, "seat2": 6, "seat3": 6}


def test_the_book_example_in_whole_whists():
    # RULES.md's worked example: each player's gora in whists is whole (300, -40, -260), so
    # cutting changes nothing; kozlov's shares are not: E's pulya 44 above W's is 440/3 → 147
    # on each of S and W, S's 10 is 100/3 → 33, W's gora 12 above theirs 120/3 = 40 from each
    book = {"E": {"gora": 22, "pulya": 56, "whists": {"S": 24, "W": 32}},
            "S": {"gora": 22, "pulya": 22, "whists": {"E": 100, "W": 32}},
            "W": {"gora": 34, "pulya": 12, "whists": {"E": 72, "S": 56}}}
    for how in ("exact", "whole_truncated"):
        assert settle_pulka(book, rules(settlement=how)) == {"E": 184, "S": 12, "W": -196}
    # E: (147 - 33) + (147 + 40) - 116 whists saldo = 185
    assert settle_pulka(book, rules(settlement="whole_rounded")) == {"E": 185, "S": 11, "W": -196}


# --- 9. Rostov and the presets --------------------------------------------------------------

def test_presets_fill_the_keys_and_a_key_beside_wins():
    r = rules(preset="rostov")
    assert (r.scoring, r.responsibility, r.convention) == ("whists", "half", "sochi")
    r = rules(preset="prefandroid-leningrad", gentleman_whist=False)
    assert r.convention == "leningrad" and not r.book.gentleman_whist and r.book.raspasovka_factor == 2
    assert rules(preset="kozlov").book.single_whister_own_tricks


@pytest.mark.parametrize("keys, message", [
    ({"preset": "moscow"}, "rules.preset: must be one of sochi, leningrad, rostov"),
    ({"gentleman_whist": "yes"}, "rules.gentleman_whist: must be true or false, got a string 'yes'"),
    ({"series_end": "never"}, "rules.series_end: must be one of every_game, not_failed, made_in_play, got 'never'"),
    ({"settlement": 1}, "rules.settlement: must be one of exact, whole_rounded, whole_truncated, got 1"),
    ({"gentlemans_whist": True}, "rules.gentlemans_whist: unknown key"),
])
def test_a_bad_house_rule_is_one_clear_line(keys, message):
    with pytest.raises(ConfigError) as err:
        rules(**keys)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_presets_and_house_rules_survive_the_sessions_config_toml():
    for name in house_rules.PRESETS:
        cfg = game_config_from_dict({"rules": {"preset": name, "second_whist_responsible": True,
                                               "series_end": "every_game"}})
        again = game_config_from_dict(tomllib.loads(cfg.to_toml()))
        assert again == cfg and again.rules.book == cfg.rules.book, name


def test_words_say_which_rules_a_session_used():
    plain = house_rules.describe(rules())
    assert plain[0].startswith("Sochi") and not any("gentleman" in line for line in plain)
    words = house_rules.describe(rules(preset="prefandroid-leningrad"))
    assert "preset prefandroid-leningrad: as PrefAndroid's Leningrad" in words
    assert any(line.startswith("gentleman's whist") for line in words)
    assert any("sitting-out dealer's pulya is never helped" in line for line in words)


# --- a made-up house rule: one module plus one line --------------------------------------------

def _dealer_tip(answers, value):
    if value:
        def tip(rules, kind, deal, writes):
            if kind == "raspasovka" and deal["dealer"] not in deal["active"]:
                writes.add_pulya(deal["dealer"], value)
        answers.setdefault("deal_hooks", []).append(tip)


MADE_UP = types.ModuleType("dealer_tip")
MADE_UP.RULES = (HouseRule("dealer_tip", (0, 1, 2), {1: "a sitting-out dealer writes 1 into his pulya",
                                                   2: "a sitting-out dealer writes 2 into his pulya"},
                           _dealer_tip, "made up for this test"),)


def test_a_made_up_house_rule_is_one_module_and_one_line():
    taken = {"seat1": 0, "seat2": 5, "seat3": 3, "seat4": 2}
    active = ("seat2", "seat3", "seat4")
    with pytest.raises(ConfigError, match="rules.dealer_tip: unknown key"):
        rules(4, dealer_tip=2)
    with house_rules.extra_module(MADE_UP):
        r = rules(4, dealer_tip=2)
        assert score_deal(r, S4, active, "seat1", 1, 0, taken, None).pulya == {"seat1": 2}
        assert "a sitting-out dealer writes 2 into his pulya" in house_rules.describe(r)
        with pytest.raises(ConfigError, match="rules.dealer_tip: must be one of 0, 1, 2, got 3"):
            rules(4, dealer_tip=3)
    assert score_deal(rules(4), S4, active, "seat1", 1, 0, taken, None).pulya == {}


# --- the session's config.toml reads back any name ------------------------------------------------

@pytest.mark.parametrize("name", ["Ann\u007f", "Bob\u0000", 'Q"uote\\', "Ольга\u2028", "tab\there"])
def test_a_saved_config_reads_back_whatever_the_names(name):
    cfg = game_config_from_dict({"table": {"names": {"seat1": name}}})
    assert game_config_from_dict(tomllib.loads(cfg.to_toml())) == cfg


# --- the config skeletons name every key, with its default ----------------------------------

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("skeleton", ["controller/examples/config.toml", "systemd/config.toml"])
def test_the_config_skeletons_name_every_house_rule_at_its_default(skeleton):
    text = (ROOT / skeleton).read_text()
    given = {}
    for line in text.splitlines():
        if line.startswith("# ") and " = " in line and not line.startswith("#  "):
            key, _, rest = line[2:].partition(" = ")
            if key.strip() in house_rules.registered() or key.strip() == "preset":
                given[key.strip()] = tomllib.loads(f"v = {rest.split('#')[0].strip()}")["v"]
    assert set(given) == set(house_rules.registered()) | {"preset"}
    for key, rule in house_rules.registered().items():
        assert given[key] == rule.default, key
    assert parse_rules(given, 3).book == parse_rules({"preset": "sochi"}, 3).book


# --- through the tracker: a session's rules reach its summary and its series ------------------

def test_a_kozlov_session_through_the_tracker():
    from table_script import DEAL_A, DEAL_A_TAKEN, Script

    game = game_config_from_dict({"rules": {"preset": "kozlov"}})
    script = Script(game)
    script.deal(DEAL_A)
    assert script.tracker.records[-1].entry["taken"] == DEAL_A_TAKEN
    summary = script.summary
    # amnesty: only seat3's trick beyond the fewest (3) is written; settled in whole whists
    assert summary["pulka"]["seat3"]["gora"] == 1 and summary["pulka"]["seat1"]["gora"] == 0
    assert summary["settlement"] == {"convention": "sochi", "whole": "rounded",
                                     "balance": {"seat1": 3.0, "seat2": 3.0, "seat3": -6.0}}
    # the live snapshot settles as the summary does
    from controller.core.snapshot import SnapshotBuilder
    snap = SnapshotBuilder().build(script.tracker, seq=1)
    assert snap.settlement["balance"] == summary["settlement"]["balance"]
    # the deal passes on, the price follows the series
    assert script.tracker.next_deal_params() == ("seat2", 1) and snap.next_deal["price"] == 2
    plain = Script(game_config_from_dict({}))
    plain.deal(DEAL_A)
    # the table's own: every trick written (3/3/4), exact thirds
    assert plain.summary["settlement"]["balance"] == {"seat1": 3.33, "seat2": 3.33, "seat3": -6.67}
    assert plain.tracker.next_deal_params() == ("seat1", 1)
