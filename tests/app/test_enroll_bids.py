"""preftable enroll --bids: bidding token sets enrolled the guided way into the deck file's
[bids] table, resumable, the cards of the file kept."""

from __future__ import annotations

from controller.app import cli
from controller.app.enroll import DONE, ENROLLED, LIFTED, REFUSED, TokenEnrolment, save_deck
from controller.core.cards import DECK
from controller.core.deck import Deck, load_deck
from controller.core.events import placed, removed
from controller.core.tokens import TOKENS


def uid(i: int) -> str:
    return f"0B{i:06X}"


def lay(enrolment, i, zone="seat1"):
    out = enrolment.on_event(placed(i, zone, uid=uid(i)))
    out += enrolment.on_event(removed(i + 0.5, zone, uid=uid(i)))
    return [m.kind for m in out]


def test_each_word_of_each_set_in_turn_and_the_display_says_which():
    enrolment = TokenEnrolment(sets=2)
    assert enrolment.indications().lines[0] == "place pass of set 1"
    assert lay(enrolment, 0) == [ENROLLED, LIFTED]
    assert enrolment.indications().lines[0] == "place 6s of set 1"
    for i in range(1, len(TOKENS)):
        lay(enrolment, i)
    assert enrolment.indications().lines[0] == "place pass of set 2"
    assert enrolment.progress == f"{len(TOKENS)}/{2 * len(TOKENS)}"
    for i in range(len(TOKENS), 2 * len(TOKENS) - 1):
        lay(enrolment, i)
    assert lay(enrolment, 99)[:2] == [ENROLLED, DONE]
    assert enrolment.done and enrolment.indications().lines[0] == "tokens complete"
    deck = enrolment.deck
    assert sorted(deck.bids.values()) == sorted(TOKENS * 2) and deck.cards == {}


def test_a_card_or_token_already_enrolled_is_refused():
    cards = {f"04{i:012X}": c for i, c in enumerate(DECK)}
    enrolment = TokenEnrolment(Deck(cards, {uid(7): "pass"}))
    assert enrolment.next_card.word == "6s"             # resumed: pass is there
    out = enrolment.on_event(placed(1, "seat1", uid="04000000000000"))
    assert [m.kind for m in out] == [REFUSED] and out[0].text == "already enrolled as 7s"
    out = enrolment.on_event(placed(2, "seat1", uid=uid(7)))
    assert [m.kind for m in out] == [REFUSED] and out[0].text == "already enrolled as token pass"
    assert enrolment.deck.cards == cards                  # the cards are kept as they are


def test_enroll_bids_command_with_the_sim_backend_and_resume(tmp_path, capsys):
    config = tmp_path / "sim.toml"
    config.write_text('[sim]\nseed = 3\nspeed = 1000\n[display]\nkind = "terminal"\n')
    deck_path = tmp_path / "deck.toml"
    cards = {f"04{i:012X}": c for i, c in enumerate(DECK)}
    save_deck(deck_path, Deck(cards, {uid(1): "pass", uid(2): "6s"}))      # a partial set
    assert cli.main(["enroll", "--deck", str(deck_path), "--config", str(config), "--bids"]) == 0
    out = capsys.readouterr().out
    assert f"resuming: 2/{len(TOKENS)} tokens enrolled, next token 6c" in out
    assert out.rstrip().splitlines()[-1] == (f"{deck_path}: bidding tokens complete, {len(TOKENS)}/{len(TOKENS)} "
                                             f"tokens in 1 set ({len(TOKENS) - 2} enrolled now)")
    deck = load_deck(deck_path)                           # still a complete deck of cards, with its tokens
    assert deck.cards == cards and sorted(deck.bids.values()) == sorted(TOKENS)
    assert cli.main(["enroll", "--deck", str(deck_path), "--config", str(config), "--bids"]) == 0
    assert "bidding tokens already complete" in capsys.readouterr().out
    # the cards' enrolment keeps the tokens of the file too
    assert cli.main(["enroll", "--deck", str(deck_path), "--config", str(config)]) == 0
    assert load_deck(deck_path).bids == deck.bids


def test_enroll_bids_bad_count(tmp_path, capsys):
    config = tmp_path / "sim.toml"
    config.write_text('[sim]\nseed = 3\n')
    assert cli.main(["enroll", "--deck", str(tmp_path / "d.toml"), "--config", str(config), "--bids", "0"]) == 2
    err = capsys.readouterr().err
    assert "--bids" in err and err.count("\n") == 1
