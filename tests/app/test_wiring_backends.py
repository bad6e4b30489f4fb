"""``doctor --wiring`` asks the config's reader backend where its pins go (its ``WIRE_PINS``
and ``wires``), so a new backend's readers are drawn without wiring.py naming it; a backend
whose readers are not on the header (the hub on USB, the simulation) has no reader rows."""

from __future__ import annotations

import io
import types

import pytest

import pn532_backend as pn532
from controller.app import backends, wiring
from controller.app.doctor import print_wiring
from controller.app.settings import settings_from_dict


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setitem(backends.READERS, "pn532", "pn532_backend")        # the one line


def settings(backend: str, **sections):
    return settings_from_dict({"readers": {"backend": backend}, "display": {"kind": "none"},
                               "gpio": {"factory": "mock", "leds": {"seat1": 17}}, **sections})


def test_a_new_backends_readers_are_in_the_wiring_table_and_drawing(tmp_path):
    s = settings("pn532", pn532={"bus": str(tmp_path / "bus.json"), "reset_pin": 22,
                                 "zones": ["seat1", "seat2", "seat3", "prikup"]})
    text = wiring.markdown(s)
    assert "| reader | VCC | GND | SDA | SCL | RSTPDN |" in text
    row = next(line for line in text.splitlines() if line.startswith("| seat2 reader"))
    assert "3 (GPIO2 I2C1 SDA)" in row and "5 (GPIO3 I2C1 SCL)" in row and "15 (GPIO22)" in row
    assert "| seat1 LED |" in text                                         # the other parts as before
    labels = wiring.header_labels(s)
    assert labels[3][1] == "i2c" and "seat1" in labels[3][0] and "prikup" in labels[3][0]
    picture = wiring.svg(s, "pn532")
    assert picture.startswith("<?xml") and "seat3" in picture


def test_the_rc522_rows_come_from_the_spi_backend():
    s = settings("spi", spi={"readers": [{"zone": "seat1", "bus": 0, "device": 0, "reset_pin": 25}]})
    assert wiring.reader_pins(s) == backends.reader("spi").WIRE_PINS
    assert "| seat1 reader (spidev0.0) | 24 (GPIO8 CE0) | 23 (GPIO11 SCLK) |" in wiring.markdown(s)


@pytest.mark.parametrize("backend", ["hub", "sim"])
def test_readers_off_the_header_have_no_rows(tmp_path, backend):
    out = io.StringIO()
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[readers]\nbackend = "{backend}"\n[gpio]\nleds = {{ seat1 = 17 }}\n', encoding="utf-8")
    assert print_wiring(types.SimpleNamespace(config=str(cfg), svg=None, wiring=True), out) == 0
    assert f'readers.backend = "{backend}": no reader wired to the Pi\'s header.' in out.getvalue()
    assert "| seat1 LED |" in out.getvalue()
