"""``preftable doctor --live`` (hw/check.py, controller/app/doctor.py) on the emulated table: a fake
person lays, stacks and lifts the cards and presses the buttons when the check asks; every step
and every failure meaning of docs/hardware-test.md appears."""

from __future__ import annotations

import io

import pytest

from controller.app.doctor import live_check
from controller.app.settings import settings_from_dict
from hw.check import FAIL, MEANINGS, OK, WARN, LiveCheck
from hw.rc522 import FakeBackend, open_readers
from hw.rc522_chip import VirtualTag

WIRING = {"seat1": (0, 0, 25), "seat2": (0, 1, 24), "seat3": (1, 0, 23)}
CARDS = {"seat1": "04A2B11C6F5E80", "seat2": "3A5F1C7E", "seat3": "04A2B11C6F5E8011AA55"}


class Person:
    """Does what the check's prompts say, on the emulated chips and pins."""

    def __init__(self, backend, chips, *, stack="08112233", lays=CARDS):
        self.backend, self.chips, self.stack, self.lays = backend, chips, stack, lays
        self.prompts: list[str] = []

    def __call__(self, text: str) -> None:
        self.prompts.append(text)
        fake = self.backend.pins().fake
        if text.startswith("lay one card on "):
            zone = text.split()[4]
            if zone in self.lays:
                self.chips[zone].field.put(VirtualTag(self.lays[zone]))
        elif text.startswith("lay a second card"):
            self.chips[text.split()[-1]].field.put(VirtualTag(self.stack))
        elif text.startswith("lift"):
            for chip in self.chips.values():
                chip.field.clear()
        elif text.startswith("press"):
            fake.press(int(text.split("GPIO")[1].rstrip(")")))


def table(**chip_kwargs):
    backend = FakeBackend()
    chips = {zone: backend.add_chip(bus, dev, **chip_kwargs.get(zone, {})) for zone, (bus, dev, _) in WIRING.items()}
    return backend, chips


def run(backend, chips, person=None, **kw):
    readers = list(zip(WIRING, open_readers(list(WIRING.values()), backend=backend)))
    person = person or Person(backend, chips)
    check = LiveCheck(readers, backend, prompt=person, step_s=5.0, **kw)
    try:
        return check.run(), person, check
    finally:
        for _, r in readers:
            r.close()


def texts(lines, level=None):
    return [line.text for line in lines if level is None or line.level == level]


def test_a_good_table_passes_every_step():
    backend, chips = table(seat2={"version": 0x88})                      # a clone on seat2
    lines, person, check = run(backend, chips)
    assert not check.failed, [line.render() for line in lines]
    ok = " | ".join(texts(lines, OK))
    assert "seat1 (spidev0.0): VersionReg 0x92 (MFRC522 v2.0)" in ok
    assert "seat2 (spidev0.1): VersionReg 0x88 (FM17522 clone)" in ok
    assert "empty polls per second" in ok and "us per SPI transfer" in ok
    for zone, uid in CARDS.items():
        assert f"{zone}: card {uid} ({len(uid) // 2}-byte UID) placed after" in ok
    assert "SPI bus 0: 2 of 2 readers (seat1, seat2) read their own card" in ok
    assert "seat1: stacked cards read:" in ok and "08112233" in ok
    assert "a 7-byte UID was read completely" in ok
    assert ok.count("removed") == 3
    assert [p.split()[0] for p in person.prompts] == ["lay", "lay", "lay", "lay", "lift"]


def test_failures_say_what_they_mean():
    backend, chips = table(seat3={"version": 0x00})                      # a dead reader
    person = Person(backend, chips, lays={"seat1": "3A5F1C7E"})          # nothing laid on seat2
    lines, _, check = run(backend, chips, person)
    assert check.failed
    fails = {line.text: line.meaning for line in lines if line.level == FAIL}
    assert fails["seat3 (spidev1.0): VersionReg 0x00 (no chip answering)"] == MEANINGS[0x00]
    assert fails["seat2: no card placed within 5 s"] == MEANINGS["unseen"]
    assert any(line.level == WARN and line.meaning == MEANINGS["seven"] for line in lines)
    assert "SPI bus 0: 1 of 2 readers (seat1, seat2) read their own card" in fails


def test_cross_talk_is_reported():
    backend, chips = table()
    tag = VirtualTag("3A5F1C7E")

    class Neighbours(Person):
        def __call__(self, text):
            super().__call__(text)
            if text == "lay one card on seat1 (leave the cards already laid where they are)":
                self.chips["seat2"].field.put(tag)                       # the same card in both fields
                self.chips["seat1"].field.put(tag)

    person = Neighbours(backend, chips, lays={"seat2": "04A2B11C6F5E80", "seat3": CARDS["seat3"]})
    lines, _, _ = run(backend, chips, person)
    fails = {line.text: line.meaning for line in lines if line.level == FAIL}
    assert fails["seat1: card 3A5F1C7E also read by seat2: never placed"] == MEANINGS["crosstalk"]


def test_doctor_live_drives_leds_buzzer_and_buttons_one_by_one():
    doc = {"readers": {"backend": "spi"},
           "spi": {"readers": [{"zone": z, "bus": b, "device": d, "reset_pin": p} for z, (b, d, p) in WIRING.items()]},
           "gpio": {"leds": {"seat1": 5, "seat2": 6}, "buzzer": 12, "buttons": {"undo": 4, "confirm": 26}}}
    settings = settings_from_dict(doc)
    backend, chips = table()
    out = io.StringIO()
    person = Person(backend, chips)

    class Stream(io.StringIO):
        def write(self, text):
            if text.startswith("  -> "):
                person(text[5:].strip())
            return super().write(text)

    out = Stream()
    status = live_check(settings, out, driver=backend, factory=backend.pins(), step_s=5.0)
    report = out.getvalue()
    assert status == 0, report
    fake = backend.pins().fake
    assert [lv for _, lv in fake.outputs(5)] == [0, 1, 0] and [lv for _, lv in fake.outputs(6)] == [0, 1, 0]
    assert [lv for _, lv in fake.outputs(12)][-2:] == [1, 0]
    assert "button undo on GPIO4: pressed and released" in report
    assert "button confirm on GPIO26: pressed and released" in report
    assert report.index("seat1 LED") < report.index("seat2 LED") < report.index("buzzer") < report.index("button undo")


def test_a_button_nobody_presses_fails_with_its_meaning():
    backend, chips = table()
    pins = backend.pins()
    button = pins.input_pin(4, "button undo")
    check = LiveCheck([], backend, buttons={"undo": button}, step_s=0.5)
    check.run()
    assert [(line.level, line.meaning) for line in check.lines] == [(FAIL, MEANINGS["button"])]


def test_doctor_on_a_pi_5_without_dev_gpiomem_does_not_say_simulated(tmp_path):
    from controller.app.doctor import Doctor, Host

    config = tmp_path / "c.toml"
    config.write_text('[gpio]\nbuttons = { undo = 4 }\n')
    host = Host(dev=tmp_path, board_model=lambda: "Raspberry Pi 5 Model B Rev 1.0",
                module_available=lambda name: name == "RPi.GPIO")
    lines = [f.line() for f in Doctor(str(config), None, host).run()]
    assert any("Raspberry Pi 5" in line and "never simulated" in line for line in lines), lines
    assert not any("will be simulated" in line for line in lines)


@pytest.mark.parametrize("overhead_us", [0, 60, 250])
def test_the_cost_of_one_spi_transfer_is_measured(overhead_us):
    """VersionReg reads timed on the backend's clock: what one transfer costs on this bus (the
    emulation's per-transfer cost plus 16 bits at 1 MHz), as doctor --live prints it."""
    from hw.check import measure_transfer_cost
    from hw.rc522_chip import FakeSpidev

    backend = FakeBackend(FakeSpidev(xfer_overhead_s=overhead_us * 1e-6))
    backend.add_chip(0, 0)
    (reader,) = open_readers([(0, 0, 25)], spd=1_000_000, backend=backend)
    try:
        assert measure_transfer_cost(reader, backend.now) == pytest.approx((overhead_us + 16) * 1e-6)
    finally:
        reader.close()


def test_doctor_live_prints_the_cost_of_one_spi_transfer():
    """Also where the spidev module counts nothing (the real one): the cost is timed, not counted."""
    import types

    backend, chips = table()
    readers = list(zip(WIRING, open_readers(list(WIRING.values()), backend=backend)))
    real_like = types.SimpleNamespace(now=backend.now, sleep=backend.sleep, pins=backend.pins,
                                      spidev=lambda: types.ModuleType("spidev"))
    try:
        check = LiveCheck(readers, real_like, prompt=Person(backend, chips), step_s=1.0)
        check.check_rates(readers)
    finally:
        for _, reader in readers:
            reader.close()
    rates = [line.text for line in check.lines if "empty polls per second" in line.text]
    assert len(rates) == 3 and all(text.endswith(", 76 us per SPI transfer") for text in rates)   # 60 + 16
