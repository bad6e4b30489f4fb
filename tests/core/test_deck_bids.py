"""The deck file's optional [bids] table of bidding tokens (FORMATS.md "Deck file")."""

import pytest

from controller.core.cards import DECK
from controller.core.deck import Deck, deck_from_dict, load_deck
from controller.core.errors import DeckError
from controller.core.tokens import TOKENS


def cards_text():
    return "[cards]\n" + "".join(f'"04{i:012X}" = "{c}"\n' for i, c in enumerate(DECK))


def write(tmp_path, text):
    p = tmp_path / "deck.toml"
    p.write_text(text)
    return p


def test_bids_table_read_any_case_and_words_repeat(tmp_path):
    p = write(tmp_path, cards_text() + '[bids]\n"0b01" = "PASS"\n"0B02" = "pass"\n"0b03" = "Misère"\n'
              '"0B04" = "10N"\n"0B05" = "whist"\n"0b06" = "half"\n"0b07" = "open"\n"0b08" = "closed"\n')
    deck = load_deck(p)
    assert deck.token_for("0B01") == "pass" and deck.token_for("0b02") == "pass"
    assert deck.token_for("0B03") == "misere" and deck.token_for("0B04") == "10n"
    assert deck.card_for("0B01") is None and deck.token_for("04000000000000") is None
    assert len(deck.bids) == 8 and not deck.missing


def test_a_deck_without_bids_is_as_before(tmp_path):
    deck = load_deck(write(tmp_path, cards_text()))
    assert deck.bids == {} and "[bids]" not in deck.to_toml()


def test_to_toml_round_trips_the_bids(tmp_path):
    bids = {f"0B{i:02X}": word for i, word in enumerate(reversed(TOKENS))}
    deck = deck_from_dict({"cards": {f"04{i:012X}": str(c) for i, c in enumerate(DECK)}, "bids": bids})
    again = load_deck(write(tmp_path, deck.to_toml()))
    assert again == deck
    # written in the enrolment order of the words
    listed = [line.split(" = ")[1].strip('"') for line in deck.to_toml().split("[bids]")[1].split("\n") if line]
    assert listed == list(TOKENS)


@pytest.mark.parametrize("bids,needle", [
    ('"0B01" = "7x"\n', "UID 0B01: unknown bidding token '7x'"),
    ('"0B01" = "11s"\n', "unknown bidding token '11s'"),
    ('"0B01" = 6\n', "unknown bidding token 6"),
    ('"04000000000000" = "pass"\n', "UID 04000000000000 is both a card (7s) and a bidding token"),
    ('"0b01" = "pass"\n"0B01" = "whist"\n', "UID 0B01 given twice in [bids]"),
    ('"0B01" = "pass"\n"0B01" = "whist"\n', "UID 0B01 given twice in [bids] (lines"),
    ('"XYZ" = "pass"\n', "UID 'XYZ' is not hex digits"),
])
def test_bad_bids_named(tmp_path, bids, needle):
    with pytest.raises(DeckError) as err:
        load_deck(write(tmp_path, cards_text() + "[bids]\n" + bids))
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, ValueError)


def test_bids_not_a_table_and_unknown_sections(tmp_path):
    with pytest.raises(DeckError, match=r"\[bids\] must be a table"):
        load_deck(write(tmp_path, "bids = 3\n" + cards_text()))
    with pytest.raises(DeckError, match="only \\[cards\\] and \\[bids\\]"):
        load_deck(write(tmp_path, cards_text() + "[tokens]\n"))


def test_the_deck_rules_are_unchanged_with_bids(tmp_path):
    text = cards_text().replace('"04000000000000" = "7s"\n', "")
    with pytest.raises(DeckError, match="missing: 7s"):
        load_deck(write(tmp_path, text + '[bids]\n"0B01" = "pass"\n'))
    with pytest.raises(DeckError, match="no \\[cards\\] table"):
        load_deck(write(tmp_path, '[bids]\n"0B01" = "pass"\n'))


def test_partial_deck_may_hold_only_tokens(tmp_path):
    """Enrolment may enrol the token set first: a partial deck file with [bids] alone."""
    deck = load_deck(write(tmp_path, '[bids]\n"0B01" = "pass"\n'), complete=False)
    assert deck.cards == {} and deck.bids == {"0B01": "pass"}
    assert Deck({}, {"0B01": "pass"}).to_toml().startswith("[cards]\n\n[bids]")
