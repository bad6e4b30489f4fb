"""Strict validation of config and deck files: one line naming the key, card or UID."""

import pytest

from controller.core.config import load_game_config
from controller.core.deck import load_deck
from controller.core.errors import ConfigError, DeckError
from controller.core.cards import DECK, parse_card
from controller.core.errors import CardError


def cfg(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(text)
    return p


def test_defaults(tmp_path):
    c = load_game_config(cfg(tmp_path, ""))
    assert c.table.players == 3 and c.rules.progression == (1, 2, 3) and c.rules.prikup == "dealer_leads"
    assert c.rules.last_step_dealer_penalty == 2 and c.rules.last_step_dealer_penalty_points is None


def test_full_valid(tmp_path):
    c = load_game_config(cfg(tmp_path, """
[table]
players = 4
first_dealer = "seat4"
names = { seat1 = "Anna", seat4 = "Dima" }
[rules]
prikup = "suit_only"
progression = [1, 2, 4]
same_dealer = true
last_step_dealer_penalty_points = 10
subtract_minimum = true
convention = "leningrad"
[readers]
backend = "sim"
"""))
    assert c.table.first_dealer == "seat4" and c.rules.last_step_dealer_penalty_points == 10
    assert c.table.name("seat4") == "Dima"


@pytest.mark.parametrize("text,key", [
    ("[table]\nplayers = 5", "table.players"),
    ("[table]\nplayers = true", "table.players"),
    ("[table]\nseats = 3", "table.seats"),
    ("[table]\nfirst_dealer = 'seat4'", "table.first_dealer"),
    ("[table]\nnames = { seat9 = 'X' }", "table.names.seat9"),
    ("[table]\nnames = { seat1 = 3 }", "table.names.seat1"),
    ("[rules]\nprikup = 'open'", "rules.prikup"),
    ("[rules]\nscoring = 'points'", "rules.scoring"),
    ("[table]\nplayers = 4\n[rules]\nscoring = 'whists'", "rules.scoring"),
    ("[rules]\nwhists_per_trick = 0", "rules.whists_per_trick"),
    ("[rules]\nwhists_per_trick = 2.5", "rules.whists_per_trick"),
    ("[rules]\nprogression = []", "rules.progression"),
    ("[rules]\nprogression = [1, 0]", "rules.progression"),
    ("[rules]\nprogression = 3", "rules.progression"),
    ("[rules]\nsame_dealer = 'yes'", "rules.same_dealer"),
    ("[rules]\nlast_step_dealer_penalty = -1", "rules.last_step_dealer_penalty"),
    ("[rules]\nlast_step_dealer_penalty = 2\nlast_step_dealer_penalty_points = 10",
     "rules.last_step_dealer_penalty_points"),
    ("[rules]\nsubtract_minimum = 1", "rules.subtract_minimum"),
    ("[rules]\nconvention = 'moscow'", "rules.convention"),
    ("[rules]\ntrumps = true", "rules.trumps"),
    ("rules = 3", "rules"),
])
def test_invalid_config_names_key(tmp_path, text, key):
    with pytest.raises(ConfigError) as err:
        load_game_config(cfg(tmp_path, text))
    msg = str(err.value)
    assert key in msg and "\n" not in msg
    assert isinstance(err.value, ValueError)


def test_unreadable_config(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        load_game_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_game_config(cfg(tmp_path, "[rules\n"))


def deck_text(pairs):
    return "[cards]\n" + "".join(f'"{u}" = "{c}"\n' for u, c in pairs)


def full_pairs():
    return [(f"04{i:012X}", str(c)) for i, c in enumerate(DECK)]


def test_deck_ok_case_insensitive(tmp_path):
    p = tmp_path / "d.toml"
    pairs = full_pairs()
    pairs[0] = (pairs[0][0].lower().replace("04", "0a", 1), "7s")
    p.write_text(deck_text(pairs))
    d = load_deck(p)
    assert str(d.card_for("0A000000000000")) == "7s"


@pytest.mark.parametrize("mutate,needle", [
    (lambda p: p[:-1], "missing: Ah"),
    (lambda p: p[:-1] + [("04FFFFFFFFFFFF", "7s")], "card 7s given twice"),
    (lambda p: p[:-1] + [("04FFFFFFFFFFFF", "6h")], "unknown card '6h'"),
    (lambda p: p + [(p[0][0].lower(), "Ah")], "UID 04000000000000 given twice"),
    (lambda p: p[:-1] + [("XYZ", "Ah")], "UID 'XYZ'"),
])
def test_bad_deck_names_card_or_uid(tmp_path, mutate, needle):
    p = tmp_path / "d.toml"
    p.write_text(deck_text(mutate(full_pairs())))
    with pytest.raises(DeckError) as err:
        load_deck(p)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_deck_exact_duplicate_uid_named(tmp_path):
    p = tmp_path / "d.toml"
    pairs = full_pairs()
    p.write_text(deck_text(pairs + [pairs[3]]))
    with pytest.raises(DeckError, match=f"UID {pairs[3][0]} given twice"):
        load_deck(p)


@pytest.mark.parametrize("text,card", [("7s", "7s"), ("10h", "10h"), ("Th", "10h"), ("q\u2666", "Qd"),
                                       ("A\u2663", "Ac"), ("j\u2660", "Js")])
def test_card_parsing(text, card):
    assert str(parse_card(text)) == card


@pytest.mark.parametrize("text", ["6s", "1h", "Kx", "", "10", 7, None])
def test_bad_cards(text):
    with pytest.raises(CardError):
        parse_card(text)
