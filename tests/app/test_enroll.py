"""preftable enroll: the enrolment logic, the simulated helper, resume, interrupt, and a
whole enrolment through the hub emulator on a pty."""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from controller.app import cli
from controller.core.cards import DECK, parse_card
from controller.core.deck import Deck, load_deck
from controller.app.enroll import (DONE, ENROLLED, IGNORED, LIFTED, REFUSED, WAIT_LIFT, EnrolSimSource,
                               Enrolment, load_partial, save_deck)
from controller.core.errors import DeckError
from controller.core.events import button, placed, removed
from controller.core.cards import ascii_text
from firmware_bridge.emulator import HubEmulator

from conftest import eventually


def uid(i: int) -> str:
    return f"04A2B1{i:08X}"


def kinds(messages):
    return [m.kind for m in messages]


def enrol_all(enrolment: Enrolment, start: int = 0, zone: str = "seat1") -> None:
    i = start
    while not enrolment.done:
        assert ENROLLED in kinds(enrolment.on_event(placed(i, zone, uid=uid(i))))
        enrolment.on_event(removed(i + 0.5, zone, uid=uid(i)))
        i += 1


@pytest.fixture
def run_cli():
    """``preftable …`` as the console script runs it."""
    return cli.main


# --- the logic ----------------------------------------------------------------------------

def test_cards_in_deck_order_and_a_valid_deck_file(tmp_path):
    e = Enrolment()
    assert e.next_card == DECK[0] and e.indications().lines[:2] == ("place 7\u2660", "0/32")
    enrol_all(e)
    assert list(e.cards.values()) == list(DECK)
    assert [e.cards[uid(i)] for i in range(32)] == list(DECK)
    assert e.indications().lines[0] == "deck complete"
    path = tmp_path / "deck.toml"
    save_deck(path, e.deck)
    assert load_deck(path).cards == e.deck.cards


def test_each_step_shows_request_progress_and_message():
    e = Enrolment()
    [m] = e.on_event(placed(1, "seat2", uid=uid(1)))
    assert (m.kind, m.card, m.uid, m.zone) == (ENROLLED, DECK[0], uid(1), "seat2")
    ind = e.indications()
    assert ind.lines[0] == "lift 7\u2660" and ind.lines[1] == "1/32" and uid(1) in ind.lines[2]
    [m] = e.on_event(removed(2, "seat2", uid=uid(1)))
    assert m.kind == LIFTED
    assert e.indications().lines[0] == "place 8\u2660"
    assert all(len(line) <= 20 for line in ind.lines) and len(ind.lines) == 4


def test_an_enrolled_uid_is_refused_with_its_card_and_a_beep():
    e = Enrolment()
    e.on_event(placed(1, "seat1", uid=uid(1)))
    e.on_event(removed(2, "seat1", uid=uid(1)))
    [m] = e.on_event(placed(3, "seat3", uid=uid(1).lower()))      # UIDs match regardless of case
    assert m.kind == REFUSED and m.text == "already enrolled as 7s"
    assert e.next_card == DECK[1] and len(e.cards) == 1
    ind = e.indications(beep_ms=300)
    assert ind.beep_ms == 300 and ind.leds == {"seat3": "error"}
    assert " ".join(ind.lines[2:]).startswith("already enrolled as") and ind.lines[0] == "place 8\u2660"
    e.on_event(removed(4, "seat3", uid=uid(1)))                       # lifting the refused tag: no change
    [m] = e.on_event(placed(5, "seat3", uid=uid(2)))
    assert m.kind == ENROLLED and m.card == DECK[1]


def test_the_tag_must_be_lifted_before_the_next_card():
    e = Enrolment()
    e.on_event(placed(1, "seat1", uid=uid(1)))
    [m] = e.on_event(placed(2, "seat2", uid=uid(2)))                  # second tag while the first lies there
    assert m.kind == WAIT_LIFT and uid(2) not in e.cards
    assert e.on_event(removed(3, "seat2", uid=uid(2))) == []          # not the tag we wait for
    assert e.indications().lines[0] == "lift 7\u2660"
    assert kinds(e.on_event(removed(4, "seat1", uid=uid(1)))) == [LIFTED]
    [m] = e.on_event(placed(5, "seat2", uid=uid(2)))
    assert m.kind == ENROLLED and m.card == DECK[1]


def test_a_flickering_tag_is_not_enrolled_twice():
    e = Enrolment()
    e.on_event(placed(1, "seat1", uid=uid(1)))
    e.on_event(removed(2, "seat1", uid=uid(1)))
    assert kinds(e.on_event(placed(3, "seat1", uid=uid(1)))) == [REFUSED]
    assert list(e.cards) == [uid(1)]


def test_zone_filter_and_other_events_ignored():
    e = Enrolment(zone="prikup")
    assert kinds(e.on_event(placed(1, "seat1", uid=uid(1)))) == [IGNORED]
    assert e.on_event(placed(2, "seat1", card="7s")) == []           # no UID: not a tag read
    assert e.on_event(button(3, "undo")) == []
    assert e.cards == {}
    assert kinds(e.on_event(placed(4, "prikup", uid=uid(1)))) == [ENROLLED]
    assert e.indications().leds.get("prikup") == "turn"


def test_the_last_card_ends_the_enrolment():
    e = Enrolment(Deck({uid(i): c for i, c in enumerate(DECK[:-1])}))
    assert e.next_card == DECK[-1]
    assert kinds(e.on_event(placed(1, "seat1", uid=uid(99)))) == [ENROLLED, DONE]
    assert e.done and e.on_event(placed(2, "seat1", uid=uid(100))) == []


def test_resume_from_a_partial_file_continues_with_the_first_missing_card(tmp_path):
    path = tmp_path / "deck.toml"
    have = {uid(i): c for i, c in enumerate(DECK[:10]) if i != 4}      # 9 cards, 11s missing
    save_deck(path, Deck(have))
    e = Enrolment(load_partial(path))
    assert e.resumed_with == 9 and e.next_card == DECK[4] and e.progress == "9/32"
    assert kinds(e.on_event(placed(1, "seat1", uid=uid(3)))) == [REFUSED]   # already in the file
    enrol_all(e, start=50)
    assert {u: c for u, c in e.cards.items() if u in have} == have
    assert e.cards[uid(50)] == DECK[4] and e.cards[uid(51)] == DECK[10]
    save_deck(path, e.deck)
    assert len(load_deck(path).cards) == 32


def test_load_partial_of_a_missing_or_broken_file(tmp_path):
    assert load_partial(tmp_path / "none.toml").cards == {}
    bad = tmp_path / "bad.toml"
    bad.write_text('[cards]\n"0401" = "7s"\n"0402" = "7s"\n')
    with pytest.raises(DeckError, match="7s given twice"):
        load_partial(bad)


# --- the simulated helper ----------------------------------------------------------------

def test_sim_helper_lays_fresh_tags_lifts_each_and_repeats_some():
    helper = EnrolSimSource(("seat1", "seat2"), seed=5, repeat=0.3)
    gen = helper.events()
    moves = [next(gen) for _ in range(200)]
    placed_uids = [u for kind, _, u in moves if kind == "placed"]
    for (k1, z1, u1), (k2, z2, u2) in zip(moves[::2], moves[1::2]):
        assert (k1, k2) == ("placed", "removed") and (z1, u1) == (z2, u2)
    assert all(len(u) == 14 and u.startswith("04") for u in placed_uids)
    repeats = len(placed_uids) - len(set(placed_uids))
    assert 10 < repeats < 60
    again = EnrolSimSource(("seat1", "seat2"), seed=5, repeat=0.3).events()
    assert [next(again) for _ in range(200)] == moves


# --- the command ---------------------------------------------------------------------------

def sim_config(tmp_path: Path, speed: float = 1000, seed: int = 2) -> str:
    path = tmp_path / "sim.toml"
    path.write_text(f'[sim]\nseed = {seed}\nspeed = {speed}\n[display]\nkind = "terminal"\n')
    return str(path)


def test_enroll_command_with_the_sim_backend(tmp_path, run_cli, capsys):
    deck = tmp_path / "d.toml"
    assert run_cli(["enroll", "--deck", str(deck), "--config", sim_config(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert load_deck(deck) is not None and len(load_deck(deck).cards) == 32
    assert "place 7\u2660" in out and "already enrolled as" in out     # the helper showed a refusal
    assert out.rstrip().splitlines()[-1] == f"{deck}: deck complete, 32 cards (32 enrolled now)"
    assert run_cli(["enroll", "--deck", str(deck), "--config", sim_config(tmp_path)]) == 0
    assert "already complete" in capsys.readouterr().out


def test_enroll_command_resumes_a_partial_file(tmp_path, run_cli, capsys):
    deck = tmp_path / "d.toml"
    have = {uid(i): c for i, c in enumerate(DECK[:12])}
    save_deck(deck, Deck(have))
    assert run_cli(["enroll", "--deck", str(deck), "--config", sim_config(tmp_path), "--zone", "prikup"]) == 0
    final = load_deck(deck)
    assert {u: c for u, c in final.cards.items() if u in have} == have
    assert "(20 enrolled now)" in capsys.readouterr().out


def test_enroll_command_errors(tmp_path, run_cli, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[cards]\n"0401" = "7s"\n"0401" = "8s"\n')
    assert run_cli(["enroll", "--deck", str(bad), "--config", sim_config(tmp_path)]) == 2
    assert "0401 given twice" in capsys.readouterr().err
    assert run_cli(["enroll", "--deck", str(tmp_path / "d.toml"), "--config", sim_config(tmp_path),
                    "--zone", "seat9"]) == 2
    assert "--zone" in capsys.readouterr().err
    assert run_cli(["enroll", "--deck", str(tmp_path / "no" / "dir" / "d.toml"),
                    "--config", sim_config(tmp_path)]) == 2
    assert "cannot write the deck file" in capsys.readouterr().err


def _when_cards(path: Path, n: int, action) -> threading.Thread:
    """Run ``action`` once the deck file holds at least ``n`` cards."""
    def holds() -> bool:
        try:
            return path.exists() and len(load_deck(path, complete=False).cards) >= n
        except DeckError:           # written half: read again
            return False

    def watch() -> None:
        eventually(holds, timeout=10)
        action()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("how, code", [("SIGTERM", 0), ("Ctrl-C", 130)])
def test_interrupted_enrolment_keeps_every_card_and_says_how_to_resume(tmp_path, run_cli, capsys, how, code):
    deck = tmp_path / "d.toml"
    if how == "SIGTERM":
        action = lambda: os.kill(os.getpid(), signal.SIGTERM)   # noqa: E731
    else:
        action = _thread.interrupt_main
    # Ctrl-C at a terminal reaches a Python that handles SIGINT: this test process may have
    # been started with it ignored (a runner's background job), where interrupt_main does nothing
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        watcher = _when_cards(deck, 3, action)
        rc = run_cli(["enroll", "--deck", str(deck), "--config", sim_config(tmp_path, speed=20)])
        watcher.join(5)
    finally:
        signal.signal(signal.SIGINT, old_int)
    assert rc == code
    err = capsys.readouterr().err
    assert f"preftable enroll --deck {deck}" in err and "again to continue" in err
    saved = load_deck(deck, complete=False)
    assert 3 <= len(saved.cards) < 32
    assert list(saved.cards.values()) == list(DECK[:len(saved.cards)])
    assert signal.getsignal(signal.SIGTERM) is not None          # the previous handler is back


# --- end to end through the table hub ---------------------------------------------------------

def wait_for(pred, timeout: float = 5.0) -> bool:
    return eventually(pred, timeout, interval=0.003)


def test_enroll_through_the_hub_emulator(tmp_path, run_cli, capsys):
    emu = HubEmulator(readers=4, poll_ms=5, absent_ms=30, hb_ms=100, state_ms=250)
    path = emu.open_pty()
    cfg = tmp_path / "hub.toml"
    cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "{path}"\nabsent_ms = 50\n'
                   '[display]\nkind = "hub"\n')
    deck = tmp_path / "deck.toml"
    save_deck(deck, Deck({uid(100): parse_card("7s")}))                 # resume: 7s was enrolled before
    failures: list[str] = []
    row = lambda n: emu.text_rows.get(n, "")                            # noqa: E731

    def player() -> None:
        try:
            for i, card in enumerate(DECK[1:]):
                want = ascii_text(f"place {card.pretty}")
                if not wait_for(lambda: row(0) == want):
                    failures.append(f"never asked {want!r}, shows {emu.text_rows}")
                    return
                reader = i % 4
                if i == 3:                                              # an enrolled tag again: refused
                    emu.place(reader, uid(100))
                    if not wait_for(lambda: row(2).startswith("already enrolled")):
                        failures.append(f"no refusal shown: {emu.text_rows}")
                        return
                    emu.remove(reader)
                    time.sleep(0.1)
                emu.place(reader, uid(i))
                want = "deck complete" if card == DECK[-1] else "lift"
                if not wait_for(lambda: row(0).startswith(want)):
                    failures.append(f"{card}: not {want!r}: {emu.text_rows}")
                    return
                emu.remove(reader)
        except Exception as exc:  # reported by the main thread
            failures.append(repr(exc))
        finally:
            if failures:                                                # end the command: SIGTERM
                os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=player, daemon=True)
    thread.start()
    try:
        rc = run_cli(["enroll", "--deck", str(deck), "--config", str(cfg)])
        thread.join(10)
    finally:
        emu.close()
    assert not failures, failures
    assert rc == 0
    final = load_deck(deck)
    assert final.card_for(uid(100)) == DECK[0]
    assert [final.card_for(uid(i)) for i in range(31)] == list(DECK[1:])
    assert emu.beeps, "the refusal beeps on the hub"
    assert emu.cfg.get("absent_ms") == 50
    out = capsys.readouterr().out
    assert "already enrolled as 7s" in out and out.rstrip().endswith("(31 enrolled now)")


# --- end to end through the Pi's own RC522 readers (the real driver over emulated chips) --------

def test_enroll_through_spi_readers(tmp_path):
    import io

    from controller.app.enroll import EnrolRun
    from controller.app.outputs import DisplayOutput
    from controller.app.settings import settings_from_dict
    from controller.app.backends.spi import SpiSource
    from hw.display import TerminalDisplay
    from hw.rc522 import FakeBackend
    from hw.rc522_chip import VirtualTag

    settings = settings_from_dict({"readers": {"backend": "spi"}, "spi": {"absent_ms": 50, "readers": [
        {"zone": "seat1", "bus": 0, "device": 0, "reset_pin": 25},
        {"zone": "prikup", "bus": 1, "device": 0, "reset_pin": 24}]}})
    backend = FakeBackend()
    chips = [backend.add_chip(0, 0), backend.add_chip(1, 0)]
    path = tmp_path / "deck.toml"
    save_deck(path, Deck({uid(i): c for i, c in enumerate(DECK[:26])}))
    enrolment = Enrolment(load_partial(path))
    screen = io.StringIO()
    runner = EnrolRun(path, enrolment, SpiSource(settings.section("spi"), backend.clock, spi_backend=backend),
                      [DisplayOutput(TerminalDisplay(screen))])
    failures: list[str] = []

    def player() -> None:
        try:
            # a tag laid before the enrolment has looked at the readers would count as lying there
            if not runner.started.wait(30):
                failures.append("the enrolment never started")
                return
            for i, card in enumerate(DECK[26:], start=26):
                if not wait_for(lambda: enrolment.next_card == card and enrolment.lifting is None):
                    failures.append(f"never asked for {card}")
                    return
                chip = chips[i % 2]
                if i == 28:                                             # an enrolled tag: refused
                    tag = chip.field.put(VirtualTag(uid(3)))
                    if not wait_for(lambda: enrolment.last is not None and enrolment.last.kind == REFUSED):
                        failures.append("no refusal")
                        return
                    chip.field.take(tag)
                tag = chip.field.put(VirtualTag(uid(i)))
                if not wait_for(lambda: enrolment.cards.get(uid(i)) == card):
                    failures.append(f"{card} not enrolled")
                    return
                chip.field.take(tag)
        finally:
            if failures:
                runner.stop()

    thread = threading.Thread(target=player, daemon=True)
    thread.start()
    assert runner.run(), failures
    thread.join(5)
    assert not failures
    final = load_deck(path)
    assert [final.card_for(uid(i)) for i in range(32)] == list(DECK)
    rows = [line.strip("\u2502").rstrip() for line in screen.getvalue().splitlines() if line.startswith("\u2502")]
    assert ["already enrolled as", "10s"] in [rows[i:i + 2] for i in range(len(rows))]
    assert rows[-4:] == ["deck complete", "32/32", "all cards enrolled", ""]


def test_enroll_through_spi_readers_waits_for_a_tag_lying_there_to_be_lifted(tmp_path):
    """A tag already on a reader when enrolment starts is not enrolled at once; the
    reader is named, and enrolment starts once it is lifted (the Pi's own readers, like the hub)."""
    from controller.app.enroll import EnrolRun
    from controller.app.settings import settings_from_dict
    from controller.app.backends.spi import SpiSource
    from hw.rc522 import FakeBackend
    from hw.rc522_chip import VirtualTag

    settings = settings_from_dict({"readers": {"backend": "spi"}, "spi": {"absent_ms": 50, "readers": [
        {"zone": "seat1", "bus": 0, "device": 0, "reset_pin": 25},
        {"zone": "prikup", "bus": 1, "device": 0, "reset_pin": 24}]}})
    backend = FakeBackend()
    chips = [backend.add_chip(0, 0), backend.add_chip(1, 0)]
    stray = chips[1].field.put(VirtualTag(uid(40)))            # lies on the prikup reader already
    path = tmp_path / "deck.toml"
    save_deck(path, Deck({uid(i): c for i, c in enumerate(DECK[:31])}))
    enrolment = Enrolment(load_partial(path))
    said: list = []
    runner = EnrolRun(path, enrolment, SpiSource(settings.section("spi"), backend.clock, spi_backend=backend))
    runner.on_message = said.append
    failures: list[str] = []

    def player() -> None:
        try:
            if not wait_for(lambda: any("a tag lies on prikup" in m.text for m in said)):
                failures.append(f"the lying tag was not named: {[m.text for m in said]}")
                return
            if uid(40) in enrolment.cards:
                failures.append("the lying tag was enrolled")
                return
            chips[1].field.take(stray)
            if not wait_for(lambda: any("readers clear" in m.text for m in said)):
                failures.append("not cleared")
                return
            chips[0].field.put(VirtualTag(uid(31)))
            if not wait_for(lambda: enrolment.cards.get(uid(31)) == DECK[31]):
                failures.append("the last card was not enrolled")
        finally:
            if failures:
                runner.stop()

    thread = threading.Thread(target=player, daemon=True)
    thread.start()
    assert runner.run(), failures
    thread.join(5)
    assert not failures and uid(40) not in enrolment.cards
