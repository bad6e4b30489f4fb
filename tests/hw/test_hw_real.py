"""Real RC522 readers on a Raspberry Pi; skipped unless ``/dev/spidev0.0`` exists.

Wiring is read from the environment: ``PREFTABLE_RC522_RST`` (BCM reset pin of the reader on
spidev0.0, default 25); put a tag on it and set ``PREFTABLE_RC522_TAG`` to its UID (hex) to
check a real read.  Run on the Pi: ``.venv/bin/python -m pytest -m hardware tests/hw/test_hw_real.py``.

The whole table, in the order of docs/hardware-test.md: ``PREFTABLE_CONFIG=/etc/preftable/config.toml``
checks that the service is stopped (its lock), that every reader of the config answers and
keeps its configuration at the configured bus speed (a long cable or a sagging 3.3 V rail
fails it), that no reader holds MISO against its neighbours on a bus (the clone boards), that
every shared reset line is up, the polls per second, and that the config's deck is complete;
with ``PREFTABLE_LIVE=1`` (run with ``-s``: it asks you to lay, stack and lift cards and press
the buttons) the same steps as ``preftable doctor --live``: each card as laid (cross-talk), two
readers on one bus, stacked cards, a 7-byte tag, removal timing, LEDs, the buzzer and buttons.
"""

from __future__ import annotations

import os
import re
import time

import pytest

pytestmark = [
    pytest.mark.hardware,
    pytest.mark.skipif(not os.path.exists("/dev/spidev0.0"), reason="no /dev/spidev0.0 (not a Pi with SPI on)"),
]

RST = int(os.environ.get("PREFTABLE_RC522_RST", "25"))
TAG = os.environ.get("PREFTABLE_RC522_TAG", "").upper() or None


@pytest.fixture
def reader():
    from hw.pins import RPiGPIOFactory
    from hw.rc522 import RealBackend, Reader

    pins = RPiGPIOFactory()
    r = Reader(0, 0, RST, backend=RealBackend(pins))
    yield r
    r.close()
    pins.close()


def test_chip_answers(reader):
    assert reader.alive(), f"VersionReg reads 0x{reader.version():02X}"


def test_poll_gives_a_complete_uid_or_nothing(reader):
    for _ in range(10):
        uid = reader.read_uid()
        assert uid is None or re.fullmatch(r"[0-9A-F]{8}|[0-9A-F]{14}|[0-9A-F]{20}", uid)


@pytest.mark.skipif(TAG is None, reason="set PREFTABLE_RC522_TAG to the UID of a tag lying on the reader")
def test_tag_on_the_reader_is_read_completely(reader):
    reads = [reader.read_uid() for _ in range(10)]
    assert reads.count(TAG) >= 9, reads


def test_reset_brings_the_chip_back(reader):
    reader.reset()
    assert reader.alive()


def test_empty_polls_read_nothing(reader, record_property):
    """Twenty empty polls read no tag.  Their time is a figure, not a verdict (speed is for
    ``doctor --live`` and bench/bench_scan.py): it is recorded, and printed with ``-s``."""
    if TAG is not None:
        pytest.skip("a tag lies on the reader")
    start = time.perf_counter()
    for _ in range(20):
        assert reader.read_uid() is None
    per_poll = (time.perf_counter() - start) / 20
    record_property("empty_poll_ms", round(per_poll * 1e3, 2))
    print(f"{per_poll * 1e3:.1f} ms per empty poll (target 10 ms)")


CONFIG = os.environ.get("PREFTABLE_CONFIG")
LIVE = os.environ.get("PREFTABLE_LIVE") == "1"
needs_config = pytest.mark.skipif(CONFIG is None, reason="set PREFTABLE_CONFIG to the table's config file")


@needs_config
def test_the_service_is_stopped():
    """Step 1: a running service drives the same readers; their mixed traffic looks like bad wiring."""
    from pathlib import Path

    from controller.app.doctor import SERVICE_LOG_DIR, service_in_the_way
    from controller.app.settings import load_settings

    problem = service_in_the_way([Path(load_settings(CONFIG).log_dir), SERVICE_LOG_DIR])
    assert problem is None, problem


@pytest.fixture
def table():
    """Every reader of $PREFTABLE_CONFIG, powered up in order; yields (settings, [(zone, reader)], pins)."""
    from controller.app.backends.spi import share_reset_lines
    from controller.app.settings import load_settings
    from hw.pins import RPiGPIOFactory
    from hw.rc522 import RealBackend, open_readers

    settings = load_settings(CONFIG)
    pins = RPiGPIOFactory()
    spi = settings.section("spi")
    share_reset_lines(spi, pins)                 # the 4-player map's readers share one line
    wiring = [(r.bus, r.device, r.reset_pin) for r in spi.readers]
    readers = open_readers(wiring, spd=spi.speed_hz, backend=RealBackend(pins))
    yield settings, list(zip((r.zone for r in spi.readers), readers)), pins
    for r in readers:
        r.close()
    pins.close()


@needs_config
def test_every_reader_answers_and_keeps_its_configuration(table):
    from hw.rc522_regs import version_name

    _, readers, _ = table
    assert readers, "the config lists no spi.readers"
    bad = [f"{zone}: VersionReg {version_name(r.version())}, configured {r.configured}"
           for zone, r in readers if not r.alive()]
    assert not bad, bad


@needs_config
def test_every_reader_answers_the_same_at_the_configured_bus_speed(table):
    """A cable too long for spi.speed_hz, or a 3.3 V rail that sags, gives a VersionReg that changes."""
    settings, readers, _ = table
    speed = settings.section("spi").speed_hz
    for zone, r in readers:
        reads = {r.version() for _ in range(200)}
        assert len(reads) == 1, (f"{zone}: VersionReg read as {sorted(reads)} at {speed} Hz: shorten the cable "
                                 "or lower spi.speed_hz; check the 3.3 V supply (docs/hardware-test.md)")


@needs_config
def test_no_reader_holds_miso_against_its_neighbours(table):
    """Clone boards that keep MISO driven make every other reader on the bus read 0x00 or garbage."""
    from hw.rc522_regs import chip_answers, version_name

    _, readers, _ = table
    by_bus: dict[int, list[tuple[str, object]]] = {}
    for zone, r in readers:
        by_bus.setdefault(r.bus, []).append((zone, r))
    for bus, mates in by_bus.items():
        if len(mates) < 2:
            continue
        silent = [f"{zone} ({version_name(r.version())})" for zone, r in mates if not chip_answers(r.version())]
        assert not silent, (f"SPI bus {bus}: {', '.join(silent)} do not answer beside "
                            f"{', '.join(z for z, _ in mates)}: a module that does not release MISO "
                            "(a diode per MISO, docs/hardware-test.md)")


@needs_config
def test_every_shared_reset_line_is_up(table):
    from controller.app.backends.spi import shared_reset_lines

    settings, readers, _ = table
    alive = {zone: r.alive() for zone, r in readers}
    for pin, zones in shared_reset_lines(settings.section("spi")).items():
        assert all(alive[z] for z in zones), f"GPIO{pin} resets {zones}: {alive}"


@needs_config
def test_the_configs_deck_is_complete():
    """Step 5: the service refuses a real table without its deck."""
    from controller.app.settings import load_settings
    from controller.core.deck import load_deck

    settings = load_settings(CONFIG)
    path = settings.deck_file(os.environ.get("PREFTABLE_DECK"))
    assert path is not None, "set [table] deck in the config (or PREFTABLE_DECK)"
    assert len(load_deck(path).cards) == 32


@needs_config
def test_every_empty_reader_polls(table, record_property):
    """Every configured reader is polled for a second.  The polls a second are a
    figure against the target (``doctor --live`` judges them), recorded and printed with ``-s``."""
    from hw.check import MIN_POLLS_PER_S

    _, readers, _ = table
    for zone, r in readers:
        start, polls = time.perf_counter(), 0
        while time.perf_counter() - start < 1.0:
            r.read_uids()
            polls += 1
        record_property(f"{zone}_polls_per_s", polls)
        print(f"{zone}: {polls} polls in 1 s (target {MIN_POLLS_PER_S})")


@needs_config
@pytest.mark.skipif(not LIVE, reason="set PREFTABLE_LIVE=1 and run with -s: you lay the cards and press the buttons")
def test_the_live_check_passes(table):
    from hw.check import LiveCheck
    from hw.rc522 import RealBackend

    settings, readers, pins = table
    gpio = settings.section("gpio")
    leds = {zone: pins.output_pin(pin, f"{zone} LED") for zone, pin in gpio.leds.items()}
    buzzer = pins.output_pin(gpio.buzzer, "buzzer") if gpio.buzzer is not None else None
    buttons = {name: pins.input_pin(pin, f"button {name}") for name, pin in gpio.buttons.items()}
    check = LiveCheck(readers, RealBackend(pins), absent_ms=settings.section("spi").absent_ms, leds=leds,
                      buzzer=buzzer,
                      buttons=buttons, prompt=lambda text: print(f"\n  -> {text}", flush=True),
                      emit=lambda line: print(line.render(), flush=True))
    lines = check.run()
    assert not check.failed, "\n".join(line.render() for line in lines)
