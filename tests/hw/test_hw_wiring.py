"""The documented wiring and the settings' SPI-pin check: no GPIO of the config
on a pin of an SPI bus its readers use, with a message naming both users; the README's and the
installed skeleton's wiring pass it with their readers on both buses."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from controller.app.settings import settings_from_dict
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
