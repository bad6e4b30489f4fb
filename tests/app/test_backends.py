"""The registry of backends and outputs (controller/app/backends): each owns its section.

Every registered module parses its own section strictly (an unknown key is fatal
and named), provides what its kind needs, and a new backend is one module plus
one registration line -- shown here with a reader registered by a test.
"""

from __future__ import annotations

import sys
import types

import pytest

from controller.app import backends
from controller.app.settings import Settings, settings_from_dict
from controller.core.errors import ConfigError


@pytest.mark.parametrize("name", sorted(backends.section_modules()))
def test_each_section_refuses_an_unknown_key_naming_it(name):
    with pytest.raises(ConfigError) as err:
        settings_from_dict({name: {"bogus": 1}})
    assert err.value.key == f"{name}.bogus" and f"{name}.bogus: unknown key" in str(err.value)


@pytest.mark.parametrize("dotted", sorted(backends.READERS.values()))
def test_a_reader_module_provides_source_enrolment_and_doctor(dotted):
    mod = backends.module(dotted)
    for attr in ("SECTION", "parse", "source", "enroll_source", "doctor"):
        assert hasattr(mod, attr), f"{dotted} lacks {attr}"


@pytest.mark.parametrize("dotted", sorted(backends.OUTPUTS.values()))
def test_an_output_module_provides_outputs_and_doctor(dotted):
    mod = backends.module(dotted)
    for attr in ("SECTION", "parse", "outputs", "doctor"):
        assert hasattr(mod, attr), f"{dotted} lacks {attr}"


def test_an_unknown_section_names_the_registered_ones():
    with pytest.raises(ConfigError) as err:
        settings_from_dict({"pn532": {}})
    assert "pn532: unknown section" in str(err.value) and "hub" in str(err.value)


def test_a_new_reader_is_one_module_plus_one_registration_line(monkeypatch):
    pn532 = types.ModuleType("tests_pn532")
    pn532.SECTION = "pn532"
    pn532.parse = lambda raw, game: dict(raw)
    pn532.source = lambda config, ctx: ("pn532 source", config)
    pn532.enroll_source = pn532.source
    pn532.doctor = lambda config, doc, settings: doc.append(("pn532", config))
    monkeypatch.setitem(sys.modules, "tests_pn532", pn532)
    monkeypatch.setitem(backends.READERS, "pn532", "tests_pn532")       # the one line

    settings = settings_from_dict({"readers": {"backend": "pn532"}, "pn532": {"i2c_bus": 1}})
    assert settings.backend == "pn532" and settings.readers == {"i2c_bus": 1}
    ctx = backends.RunContext(settings, clock=lambda: 0.0)
    assert backends.reader("pn532").source(settings.readers, ctx) == ("pn532 source", {"i2c_bus": 1})
    found: list = []
    backends.run_doctor(settings, types.SimpleNamespace(append=found.append, add=lambda *finding: found.append(finding),
                                                        host=None, check_port=None, check_device=None,
                                                        check_module=None))
    assert found[0] == ("pn532", {"i2c_bus": 1})


def test_pins_are_claimed_once_across_sections():
    with pytest.raises(ConfigError) as err:
        settings_from_dict({"gpio": {"leds": {"seat1": 25}}, "spi": {"readers": [
            {"zone": "seat1", "bus": 0, "device": 0, "reset_pin": 25}]}})
    assert "spi.readers[0].reset_pin: GPIO25 is already used by gpio.leds.seat1" in str(err.value)


def test_default_settings_give_each_section_its_defaults():
    s = Settings()
    assert s.section("hub").port == "/dev/preftable-hub"
    assert s.section("display").kind == "terminal"
    assert s.readers == s.section("sim")


def test_outputs_follow_the_config():
    s = settings_from_dict({"display": {"kind": "none"}, "gpio": {"factory": "mock", "leds": {"seat1": 5}}})
    ctx = backends.RunContext(s, clock=lambda: 0.0)
    try:
        outs = backends.build_outputs(ctx)
        assert [o.name for o in outs] == ["gpio"]
    finally:
        for o in outs:
            o.close()
        ctx.close_pins()
