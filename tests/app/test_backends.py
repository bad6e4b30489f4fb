"""The registry of backends and outputs (controller/app/backends): each owns its section.

Every registered module parses its own section strictly (an unknown key is fatal
and named), provides what its kind needs, and a new backend is one module plus
one registration line -- shown here with a reader whose source has a link of its
own, and in test_backends_new_reader.py with a PN532-like reader end to end.
"""

from __future__ import annotations

import io
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


def test_every_reader_source_is_a_reader_source():
    """What run, enroll and the outputs ask of a source (start, stop, lying, link) is one class."""
    from controller.app.backends.hub import HubSource
    from controller.app.backends.sim import SimSource
    from controller.app.backends.spi import SpiSource
    from controller.app.enroll import EnrolSimSource

    for cls in (HubSource, SimSource, SpiSource, EnrolSimSource):
        assert issubclass(cls, backends.ReaderSource), cls


def test_the_hub_port_is_checked_by_the_hub_backend_alone(tmp_path):
    """``run`` and ``enroll`` ask the chosen reader's preflight; only the hub has one."""
    from controller.core.errors import LinkError

    missing = tmp_path / "no-hub"
    settings = settings_from_dict({"readers": {"backend": "hub"}, "hub": {"port": str(missing)}})
    with pytest.raises(LinkError) as err:
        backends.preflight(settings)
    assert str(err.value).startswith(f"hub port {missing}: no such device")
    backends.preflight(settings, wait=True)                   # --wait: the link waits for it
    backends.preflight(settings_from_dict({}))                # the simulated players need nothing


def test_the_board_shows_the_link_of_any_reader_source(monkeypatch):
    """The terminal board draws the state of the source's own link (its URL), reading no
    other section: a reader reached over a network link is shown as the hub is."""
    from controller.app.linkstate import link_state

    link = types.SimpleNamespace(ready=False, hub_info=None, error=None, url="socket://relay.local:7000")

    class Relayed(backends.ReaderSource):
        def __init__(self):
            self.link = link

    relay = types.ModuleType("tests_relay")
    relay.SECTION = "relay"
    relay.parse = lambda raw, game: dict(raw)
    relay.source = lambda config, ctx: Relayed()
    monkeypatch.setitem(sys.modules, "tests_relay", relay)
    monkeypatch.setitem(backends.READERS, "relay", "tests_relay")       # the one line

    settings = settings_from_dict({"readers": {"backend": "relay"}})
    ctx = backends.with_reader(backends.RunContext(settings, clock=lambda: 0.0, stream=io.StringIO()))
    (board,) = backends.build_outputs(ctx)
    try:
        assert board.link is link
        assert link_state(board.link, board.port) == "waiting for hub on socket://relay.local:7000"
    finally:
        board.close()


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
    with backends.open_pins(s) as pins:
        ctx = backends.with_reader(backends.RunContext(s, clock=lambda: 0.0, pins=pins))
        outs = backends.build_outputs(ctx)
        try:
            assert [o.name for o in outs] == ["gpio"]
        finally:
            for o in outs:
                o.close()


def test_no_pin_factory_when_no_pin_is_claimed():
    with backends.open_pins(settings_from_dict({"display": {"kind": "none"}})) as pins:
        assert pins is None
