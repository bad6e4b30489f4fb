"""A new reader backend is one module plus one registry line (controller/app/backends).

The made-up PN532-like reader of ``pn532_backend`` (a module under tests/, written
only against the seam every backend uses) is registered by one line and then goes
through everything a real one does: the settings parse and check its section, its
reset line comes from the run's pin factory, ``preftable run`` reads cards from it
into the game log, ``preftable enroll`` enrols from it (a tag lying there at the
start lifted first), and ``doctor`` and ``doctor --live`` check it.  Nothing outside
the backend and the registry line names it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import threading
import types

import pytest

import pn532_backend as pn532
from controller.app import backends
from controller.app.settings import settings_from_dict
from controller.core.cards import DECK
from controller.core.clock import VirtualClock
from controller.core.deck import Deck, load_deck
from controller.core.errors import ConfigError, PinInUse, PreftableError


def uid(i: int) -> str:
    return f"04A1B2C3D4{i:02X}80"


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(backends.READERS, "pn532", "pn532_backend")        # the one line


@pytest.fixture
def bus(tmp_path):
    path = tmp_path / "i2c-1.json"
    pn532.lift(path)                           # the bus is there, every field empty
    return path


def config_doc(bus, **pn532_keys) -> dict:
    return {"readers": {"backend": "pn532"}, "pn532": {"bus": str(bus), "absent_ms": 50, **pn532_keys},
            "gpio": {"factory": "mock"}, "display": {"kind": "none"}}


def write_config(tmp_path, bus) -> tuple[str, str]:
    """(config file, deck file) of a table on the PN532 readers, the deck of uid(0..31)."""
    deck = tmp_path / "deck.toml"
    deck.write_text(Deck({uid(i): card for i, card in enumerate(DECK)}).to_toml(), encoding="utf-8")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[readers]\nbackend = "pn532"\n\n[pn532]\nbus = "{bus}"\nabsent_ms = 50\n\n'
                   f'[gpio]\nfactory = "mock"\n\n[display]\nkind = "none"\n\n[log]\ndir = "{tmp_path / "logs"}"\n',
                   encoding="utf-8")
    return str(cfg), str(deck)


# --- settings -------------------------------------------------------------------------------

def test_its_section_is_parsed_and_checked_by_its_own_module(bus):
    settings = settings_from_dict(config_doc(bus, reset_pin=17))
    assert settings.readers == pn532.Pn532Config(bus=str(bus), reset_pin=17, absent_ms=50)
    with pytest.raises(ConfigError) as err:
        settings_from_dict(config_doc(bus, irq_pin=4))
    assert err.value.key == "pn532.irq_pin" and "pn532.irq_pin: unknown key" in str(err.value)


def test_its_reset_line_is_claimed_like_every_other_pin(bus):
    doc = config_doc(bus)
    doc["gpio"]["leds"] = {"seat1": 22}
    with pytest.raises(ConfigError) as err:
        settings_from_dict(doc)
    assert str(err.value) == "pn532.reset_pin: GPIO22 is already used by gpio.leds.seat1"


def test_its_own_rule_on_every_claimed_pin_is_run(bus):
    doc = config_doc(bus)
    doc["gpio"]["buttons"] = {"undo": 3}
    with pytest.raises(ConfigError) as err:
        settings_from_dict(doc)
    assert err.value.key == "gpio.buttons.undo"
    assert str(err.value) == ("gpio.buttons.undo: GPIO3 is I2C1 SCL, the bus of the PN532 readers: "
                              "choose a pin off the I2C bus")


# --- the run's wiring, in process ---------------------------------------------------------

def test_its_reset_line_comes_from_the_run_pin_factory(bus, wait_until):
    settings = settings_from_dict(config_doc(bus))
    events: list = []
    with backends.open_pins(settings) as pins:
        assert pins is not None, "a reader's claimed pin gets the run a pin factory"
        ctx = backends.RunContext(settings, clock=lambda: 0.0, pins=pins)
        with pytest.raises(dataclasses.FrozenInstanceError):
            ctx.source = object()
        with pytest.raises(ValueError):         # an output could need the source: it comes first
            backends.build_outputs(ctx)
        ctx = backends.with_reader(ctx)
        assert backends.build_outputs(ctx) == []
        ctx.source.start(events.append)
        try:
            assert pins.owner(22) == "pn532 reset line"
            with pytest.raises(PinInUse) as err:
                pins.output_pin(22, "a second device")
            assert isinstance(err.value, PreftableError)
            assert str(err.value) == "GPIO22 is already in use by pn532 reset line (asked for by a second device)"
            pn532.lay(bus, "seat2", uid(5))
            placed = wait_until(lambda: [e for e in events if e.event == "placed"], "the card reported")
            assert [(e.zone, e.uid) for e in placed] == [("seat2", uid(5))]
        finally:
            ctx.source.stop()
        assert [level for _, level in pins.fake.outputs(22)][-2:] == [1, 0]   # raised, then let go


# --- preftable run and enroll, as processes -----------------------------------------------------

def test_run_reads_its_cards_into_the_game_log(tmp_path, bus, children, wait_until):
    cfg, deck = write_config(tmp_path, bus)
    proc = children(["-v", "run", "--config", cfg, "--deck", deck, "--new"], fork=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    logs = tmp_path / "logs"

    def logged(card_uid):
        return [json.loads(line) for path in logs.glob("*/events.jsonl")
                for line in path.read_text(encoding="utf-8").splitlines() if card_uid in line]

    wait_until(lambda: list(logs.glob("*/events.jsonl")) or proc.poll() is not None, "the session to open")
    pn532.lay(bus, "seat1", uid(7))
    lines = wait_until(lambda: logged(uid(7)) or proc.poll() is not None, "the card in the game log")
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert lines and lines[0]["event"] == "placed" and lines[0]["zone"] == "seat1", lines
    assert "pin factory: mock" in err and "pn532 reset line GPIO22 up" in err


def test_enroll_takes_its_tags_once_the_one_lying_there_is_lifted(tmp_path, bus, children, wait_until):
    cfg, deck = write_config(tmp_path, bus)
    (tmp_path / "deck.toml").write_text(Deck({uid(i): c for i, c in enumerate(DECK[:30])}).to_toml(),
                                        encoding="utf-8")           # two cards to go
    pn532.lay(bus, "seat2", uid(40))                                  # lies there as enrolment starts
    proc = children(["enroll", "--config", cfg, "--deck", deck], fork=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    said: list[str] = []

    def listen() -> None:
        for line in proc.stdout:
            said.append(line)

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()

    def heard(text):
        return wait_until(lambda: any(text in line for line in said) or proc.poll() is not None,
                          f"enroll to say {text!r}")

    heard("a tag lies on seat2: take it off first")
    pn532.lift(bus, "seat2")
    heard("readers clear")
    pn532.lay(bus, "seat1", uid(30))
    heard(f"{DECK[30]} = {uid(30)}")
    pn532.lift(bus, "seat1")
    heard(f"{DECK[30]} lifted")
    pn532.lay(bus, "seat3", uid(31))
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    reader.join(5)
    final = load_deck(deck)
    assert [final.card_for(uid(i)) for i in range(32)] == list(DECK)
    assert uid(40) not in final.cards
    assert any("deck complete" in line for line in said), said


# --- doctor ---------------------------------------------------------------------------------

def test_doctor_runs_its_checks_and_its_pins_get_the_gpio_checks(tmp_path, bus):
    from controller.app.doctor import Doctor, Host

    cfg, deck = write_config(tmp_path, bus)
    lines = [f.line() for f in Doctor(cfg, deck, Host(service_log_dirs=())).run()]
    assert any(line.startswith(f"ok   PN532 bus {bus}: readable and writable") for line in lines), lines
    assert "ok   PN532 reset line on GPIO22" in lines
    assert 'ok   gpio.factory = "mock": the pins are simulated' in lines


def test_doctor_live_checks_its_readers_by_hand(tmp_path, bus):
    from controller.app.doctor import live_check

    settings = settings_from_dict(config_doc(bus))
    cards = {"seat1": uid(1), "seat2": uid(2), "seat3": uid(3), "prikup": uid(4)}
    clock = VirtualClock()

    class Person(io.StringIO):
        """Does what the check asks, on the emulated bus."""

        def write(self, text):
            if text.startswith("  -> lay one card on "):
                zone = text.split()[5]
                pn532.lay(bus, zone, cards[zone])
            elif text.startswith("  -> lay a second card"):
                pn532.lay(bus, text.split()[-1], uid(9))
            elif text.startswith("  -> lift"):
                pn532.lift(bus)
            return super().write(text)

    out = Person()
    status = live_check(settings, out, driver=types.SimpleNamespace(now=clock, sleep=clock.sleep), step_s=5.0)
    report = out.getvalue()
    assert status == 0, report
    for zone, card_uid in cards.items():
        assert f"ok   {zone} (pn532 {zone}): firmware PN532 1.6" in report
        assert f"ok   {zone}: card {card_uid} (7-byte UID) placed after" in report
    assert "seat1: stacked cards read:" in report and report.count("removed") == 4
    assert "SPI" not in report and "drives itself" not in report
