"""The documented wiring and the settings' SPI-pin check: no GPIO of the config
on a pin of an SPI bus its readers use, with a message naming both users; the README's and the
installed skeleton's wiring pass it with their readers on both buses."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from controller.app.settings import load_settings, settings_from_dict
from controller.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
READERS = [{"zone": "seat1", "bus": 0, "device": 0, "reset_pin": 25},
           {"zone": "seat2", "bus": 0, "device": 1, "reset_pin": 24},
           {"zone": "seat3", "bus": 1, "device": 0, "reset_pin": 23}]


def config(**gpio):
    return {"readers": {"backend": "spi"}, "spi": {"readers": READERS}, "gpio": gpio}


@pytest.mark.parametrize("gpio, owner, pin, bus", [
    ({"buzzer": 19}, "gpio.buzzer", 19, 1),
    ({"buttons": {"undo": 20}}, "gpio.buttons.undo", 20, 1),
    ({"buttons": {"new_deal": 21}}, "gpio.buttons.new_deal", 21, 1),
    ({"leds": {"seat1": 16}}, "gpio.leds.seat1", 16, 1),
    ({"leds": {"seat2": 9}}, "gpio.leds.seat2", 9, 0),
])
def test_a_gpio_on_a_used_spi_bus_is_refused_naming_both_users(gpio, owner, pin, bus):
    with pytest.raises(ConfigError) as err:
        settings_from_dict(config(**gpio))
    text = str(err.value)
    assert text.startswith(f"{owner}: GPIO{pin} is SPI bus {bus}")
    assert f"spi.readers[{2 if bus else 0}]" in text


def test_a_reset_pin_on_an_spi_bus_is_refused():
    readers = READERS[:2] + [dict(READERS[2], reset_pin=18)]
    with pytest.raises(ConfigError, match=r"spi.readers\[2\].reset_pin: GPIO18 is SPI bus 1 CE0"):
        settings_from_dict({"spi": {"readers": readers}})


def test_spi_bus_1_pins_are_free_when_no_reader_uses_bus_1():
    doc = {"spi": {"readers": READERS[:2]}, "gpio": {"buzzer": 19, "buttons": {"undo": 20}}}
    assert settings_from_dict(doc).section("gpio").buzzer == 19


def toml_blocks(text: str) -> list[dict]:
    return [tomllib.loads(block) for block in re.findall(r"```toml\n(.*?)```", text, re.S)]


def test_the_readmes_wiring_passes_the_check_with_readers_on_both_buses():
    (block,) = [b for b in toml_blocks((ROOT / "README.md").read_text()) if "gpio" in b and "spi" in b]
    assert {r["bus"] for r in block["spi"]["readers"]} == {0, 1}
    settings_from_dict({k: v for k, v in block.items()})


def test_the_installed_skeletons_wiring_passes_with_its_commented_spi_readers():
    text = (ROOT / "systemd" / "config.toml").read_text()
    doc = tomllib.loads(text)
    spi = re.search(r"# \[spi\]\n((?:#.*\n)+)", text).group(1)
    readers = tomllib.loads("\n".join(line[2:] for line in spi.splitlines()))["readers"]
    assert {r["bus"] for r in readers} == {0, 1}
    doc["spi"] = {"readers": readers}
    settings_from_dict(doc)


# --- four players: readers share a reset line -------------------------------------------------

FIVE = [{"zone": z, "bus": b, "device": d, "reset_pin": 25}
        for z, b, d in (("seat1", 0, 0), ("seat2", 0, 1), ("seat3", 1, 0), ("seat4", 1, 1), ("prikup", 1, 2))]


def four_players(**gpio):
    return {"table": {"players": 4}, "readers": {"backend": "spi"}, "spi": {"readers": FIVE}, "gpio": gpio}


def test_readers_may_share_a_reset_line_but_nothing_else_may_take_it():
    settings = settings_from_dict(four_players(leds={"seat1": 5}))
    assert {r.reset_pin for r in settings.section("spi").readers} == {25}
    with pytest.raises(ConfigError, match=r"spi.readers\[0\].reset_pin: GPIO25 is already used by gpio.leds.seat2"):
        settings_from_dict(four_players(leds={"seat2": 25}))


def test_the_shipped_4_player_map_fits_the_pi_and_warns_of_nothing():
    from controller.app.doctor import WARN, Host, diagnose

    path = ROOT / "controller" / "examples" / "config-4players.toml"
    settings = load_settings(path)
    assert settings.game.table.players == 4
    spi = settings.section("spi")
    assert {r.zone for r in spi.readers} == {"seat1", "seat2", "seat3", "seat4", "prikup"}
    gpio = settings.section("gpio")
    assert set(gpio.leds) == {"seat1", "seat2", "seat3", "seat4"} and gpio.buzzer is not None
    assert set(gpio.buttons) == {"undo", "new_deal", "confirm"}
    findings = diagnose(str(path), None, Host(dev=ROOT / "no-dev", user="table", module_available=lambda n: True))
    assert not [f for f in findings if "header pin" in f.text], "a pin of the map is an I2C or UART pin"


@pytest.mark.parametrize("gpio, owner, pin, what", [
    ({"buttons": {"undo": 2}}, "gpio.buttons.undo", 2, "I2C1 SDA"),
    ({"leds": {"seat1": 3}}, "gpio.leds.seat1", 3, "I2C1 SCL"),
    ({"buzzer": 14}, "gpio.buzzer", 14, "UART TXD"),
    ({"buttons": {"confirm": 15}}, "gpio.buttons.confirm", 15, "UART RXD"),
])
def test_doctor_warns_of_a_pin_on_the_i2c_or_uart_pins(tmp_path, gpio, owner, pin, what):
    from controller.app.doctor import WARN, Host, diagnose

    (key, value), = gpio.items()
    value = "{ %s = %d }" % next(iter(value.items())) if isinstance(value, dict) else value
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[gpio]\nfactory = "mock"\n{key} = {value}\n[log]\ndir = "{tmp_path}"\n')
    findings = diagnose(str(cfg), None, Host(dev=tmp_path, user="table", module_available=lambda n: True))
    [warning] = [f for f in findings if f.text.startswith(f"{owner}: GPIO{pin} ")]
    assert warning.level == WARN and what in warning.text and "header pin" in warning.text


def test_a_shared_reset_line_is_raised_once_and_held_up_while_a_neighbour_runs():
    """Five emulated chips on one reset pin: all come up, each reads its own card; a reset of
    one reader and the closing of another never drop the line under the rest."""
    from controller.app.backends.spi import share_reset_lines
    from hw.rc522 import FakeBackend, open_readers
    from hw.rc522_chip import VirtualTag

    settings = settings_from_dict(four_players())
    spi = settings.section("spi")
    backend = FakeBackend()
    chips = [backend.add_chip(r.bus, r.device) for r in spi.readers]
    pins = backend.pins()
    share_reset_lines(spi, pins)
    readers = open_readers([(r.bus, r.device, r.reset_pin) for r in spi.readers], backend=backend, factory=pins)
    fake = pins.fake
    try:
        assert all(r.alive() for r in readers)
        assert [lv for _, lv in fake.outputs(25)].count(0) == 0, "the line was never low"
        for i, chip in enumerate(chips):
            chip.field.put(VirtualTag(f"04A2B1000000{i:02X}"))
        assert [r.read_uid() for r in readers] == [f"04A2B1000000{i:02X}" for i in range(5)]
        resets = [c.hard_resets for c in chips]
        readers[2].reset()                                     # the scanner's cure for a silent reader
        readers[0].close()
        assert fake.level(25) == 1 and [c.hard_resets for c in chips] == resets
        assert [lv for _, lv in fake.outputs(25)].count(0) == 0
        assert [r.read_uid() for r in readers[1:]] == [f"04A2B1000000{i:02X}" for i in range(1, 5)]
        assert readers[1].alive() and readers[2].alive()
    finally:
        for r in readers:
            r.close()
    assert 25 not in fake.configured, "the last reader lets the line go"


def test_the_spi_source_of_run_opens_five_readers_on_one_reset_line():
    from controller.app.backends.spi import SpiSource
    from hw.rc522 import FakeBackend

    spi = settings_from_dict(four_players()).section("spi")
    backend = FakeBackend()
    for r in spi.readers:
        backend.add_chip(r.bus, r.device)
    source = SpiSource(spi, backend.clock, spi_backend=backend)
    source.start(lambda event: None)
    try:
        assert [zone for zone, _ in source.readers] == ["seat1", "seat2", "seat3", "seat4", "prikup"]
        assert all(reader.configured for _, reader in source.readers)     # read back at start, before the scan
    finally:
        source.stop()


# --- the wiring, generated from the config: the guide and the drawing ------------------------

GUIDE = ROOT / "docs" / "hardware-test.md"


def test_the_guides_wiring_tables_are_what_doctor_prints_for_the_shipped_maps():
    from controller.app import wiring

    blocks = re.findall(r"<!-- wiring: (\S+) -->\n(.*?)\n<!-- end wiring -->", GUIDE.read_text(), re.S)
    assert {path for path, _ in blocks} == {"controller/examples/config-3players.toml",
                                            "controller/examples/config-4players.toml"}
    for path, block in blocks:
        assert block.strip() == wiring.markdown(load_settings(ROOT / path)).strip(), \
            f"docs/hardware-test.md disagrees with preftable doctor --wiring --config {path}"


def test_every_rc522_pin_goes_to_the_right_header_pin():
    from controller.app.wiring import reader_wires

    wires = {(w.part.split()[0], w.part_pin): w for w in
             reader_wires(load_settings(ROOT / "controller" / "examples" / "config-4players.toml"))}
    assert wires[("seat1", "SDA")].header == 24 and wires[("seat2", "SDA")].header == 26       # CE0, CE1
    assert wires[("prikup", "SDA")].header == 36                                              # bus 1 CE2
    assert {wires[(z, "SCK")].header for z in ("seat3", "seat4", "prikup")} == {40}
    assert {wires[(z, "MISO")].header for z in ("seat1", "seat2")} == {21}
    assert {wires[(z, "RST")].header for z in ("seat1", "seat2", "seat3", "seat4", "prikup")} == {22}
    assert {w.header for (z, p), w in wires.items() if p == "3.3V"} <= {1, 17}
    assert {w.header for (z, p), w in wires.items() if p == "GND"} <= {6, 9, 14, 20, 25, 30, 34, 39}
    assert wires[("seat1", "IRQ")].header is None


def test_doctor_wiring_prints_it_and_draws_it(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    from controller.app import cli, wiring

    cfg = ROOT / "controller" / "examples" / "config-4players.toml"
    drawing = tmp_path / "wiring.svg"
    assert cli.main(["doctor", "--wiring", "--config", str(cfg), "--svg", str(drawing)]) == 0
    assert capsys.readouterr().out == wiring.markdown(load_settings(cfg))
    texts = [t.text for t in ET.parse(drawing).getroot().iter("{http://www.w3.org/2000/svg}text")]
    assert "GPIO25: RST seat1, seat2, seat3, seat4, prikup" in texts
    assert "GPIO16: SDA prikup" in texts and "GPIO12: buzzer (active)" in texts
    assert cli.main(["doctor", "--wiring"]) == 2
    assert "--config" in capsys.readouterr().err
    assert cli.main(["doctor", "--svg", str(tmp_path / "no" / "x.svg"), "--config", str(cfg)]) == 2
    assert "cannot write it" in capsys.readouterr().err


def test_the_guide_stops_the_service_first_and_covers_the_build():
    text = GUIDE.read_text()
    stop = text.index("sudo systemctl stop preftable")
    assert stop < text.index("preftable doctor --live --config") and stop < text.index("preftable enroll --config")
    assert text.index("## 5. Enrol the deck") < text.index("sudo systemctl start preftable")
    for heading in ("### The 3.3 V budget", "### Antennas and cross-talk", "### SPI cable length and bus speed",
                    "### Clone boards that do not release MISO", "### The buzzer: an active one, on the Pi"):
        assert heading in text
