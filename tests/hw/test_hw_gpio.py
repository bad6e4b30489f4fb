"""hw/ GPIO: the fake RPi.GPIO, pin factories, seat LEDs, buzzer and buttons.

Everything runs against :class:`hw.fake_gpio.FakeGPIO` (also as ``sys.modules["RPi.GPIO"]``
under the real ``mfrc522`` driver); one test needs a real Pi.
"""

from __future__ import annotations

import logging
import os
import sys
import types
import warnings

import pytest

from controller.core import events
from controller.core.errors import ConfigError, HardwareError, PinInUse
from hw.fake_gpio import FakeGPIO
from hw.indicators import ButtonPress, Buttons, Buzzer, SeatLeds, led_level, to_event
from hw.pins import (ENV_VAR, InvalidPin, MockFactory, RPiGPIOFactory, check_pin,
                     default_factory)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, t: float = 0.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock(100.0)


@pytest.fixture
def fake(clock) -> FakeGPIO:
    return FakeGPIO(clock=clock)


@pytest.fixture
def factory(fake) -> MockFactory:
    f = MockFactory(fake=fake)
    yield f
    f.close()


@pytest.fixture
def fake_modules(monkeypatch, fake):
    """``fake`` installed as RPi.GPIO for anything imported during the test."""
    for name, module in fake.as_modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    return fake


# ----------------------------------------------------------------------------- FakeGPIO

def test_constants_have_rpi_gpio_values(fake):
    assert (fake.BOARD, fake.BCM, fake.OUT, fake.IN, fake.LOW, fake.HIGH) == (10, 11, 0, 1, 0, 1)
    assert (fake.PUD_OFF, fake.PUD_DOWN, fake.PUD_UP) == (20, 21, 22)
    assert (fake.RISING, fake.FALLING, fake.BOTH) == (31, 32, 33)
    assert fake.VERSION.startswith("0.7") and fake.RPI_INFO["P1_REVISION"] == 3
    mod = fake.as_module()
    for name in ("BOARD", "BCM", "OUT", "IN", "PUD_UP", "VERSION", "RPI_INFO", "setup", "cleanup"):
        assert getattr(mod, name) == getattr(fake, name)


def test_mode_errors(fake):
    assert fake.getmode() is None
    with pytest.raises(RuntimeError, match="setmode"):
        fake.setup(17, fake.OUT)
    with pytest.raises(ValueError, match="invalid mode"):
        fake.setmode(12)
    fake.setmode(fake.BCM)
    fake.setmode(fake.BCM)                      # the same mode again is fine
    with pytest.raises(ValueError, match="different mode"):
        fake.setmode(fake.BOARD)
    assert fake.getmode() == fake.BCM


def test_setup_argument_errors(fake):
    fake.setmode(fake.BCM)
    with pytest.raises(ValueError, match="invalid direction"):
        fake.setup(17, 5)
    with pytest.raises(ValueError, match="pull_up_down parameter is not valid for outputs"):
        fake.setup(17, fake.OUT, pull_up_down=fake.PUD_UP)
    with pytest.raises(ValueError, match="initial parameter is not valid for inputs"):
        fake.setup(17, fake.IN, initial=fake.HIGH)
    with pytest.raises(ValueError, match="pull_up_down"):
        fake.setup(17, fake.IN, pull_up_down=99)
    with pytest.raises(ValueError, match="invalid on a Raspberry Pi"):
        fake.setup(54, fake.OUT)
    with pytest.raises(ValueError, match="Channel must be an integer"):
        fake.setup("17", fake.OUT)
    assert fake.configured == frozenset()


def test_output_and_input_need_setup(fake):
    fake.setmode(fake.BCM)
    with pytest.raises(RuntimeError, match="not been set up as an OUTPUT"):
        fake.output(17, 1)
    with pytest.raises(RuntimeError, match="must setup"):
        fake.input(17)
    fake.setup(4, fake.IN, pull_up_down=fake.PUD_UP)
    with pytest.raises(RuntimeError, match="not been set up as an OUTPUT"):
        fake.output(4, 1)
    assert fake.history == []


def test_history_is_stamped_by_the_injected_clock(fake, clock):
    fake.setmode(fake.BCM)
    fake.setup([17, 27], fake.OUT)
    clock.t = 101.5
    fake.output(17, fake.HIGH)
    clock.t = 102.0
    fake.output([17, 27], [0, True])
    with pytest.raises(RuntimeError, match="Number of channels"):
        fake.output([17, 27], [1])
    assert fake.history == [(101.5, 17, 1), (102.0, 17, 0), (102.0, 27, 1)]
    assert fake.outputs(27) == [(102.0, 1)]
    assert fake.input(27) == 1 and fake.level(17) == 0     # an output reads its latch


def test_setup_with_initial_is_recorded(fake, clock):
    fake.setmode(fake.BCM)
    fake.setup(5, fake.OUT, initial=fake.HIGH)
    assert fake.history == [(100.0, 5, 1)] and fake.level(5) == 1


def test_board_numbering_maps_to_bcm(fake):
    fake.setmode(fake.BOARD)
    fake.setup(22, fake.OUT)                    # header pin 22 is GPIO25
    fake.output(22, 1)
    assert fake.history[-1][1:] == (25, 1)
    assert fake.direction(25) == fake.OUT
    for power_pin in (1, 2, 6, 41, 0):
        with pytest.raises(ValueError, match="invalid on a Raspberry Pi"):
            fake.setup(power_pin, fake.OUT)


def test_inputs_follow_pulls_and_buttons(fake):
    fake.setmode(fake.BCM)
    fake.setup(5, fake.IN, pull_up_down=fake.PUD_UP)
    fake.setup(6, fake.IN, pull_up_down=fake.PUD_DOWN)
    assert (fake.input(5), fake.input(6)) == (1, 0)
    fake.press(5)
    assert fake.input(5) == 0
    fake.release(5)
    assert fake.input(5) == 1
    fake.set_input(6, 1)
    assert fake.input(6) == 1
    fake.set_input(6, None)
    assert fake.input(6) == 0


def test_cleanup_records_and_scopes(fake, clock):
    fake.setmode(fake.BCM)
    fake.setup([17, 27], fake.OUT)
    clock.t = 103.0
    fake.cleanup(17)
    assert fake.configured == {27} and fake.getmode() == fake.BCM
    assert fake.cleanups == [(103.0, (17,))] and not fake.global_cleanup_called
    fake.cleanup()
    assert fake.global_cleanup_called and fake.configured == frozenset()
    assert fake.getmode() is None               # the global cleanup forgets the mode, as RPi.GPIO does
    with pytest.warns(RuntimeWarning, match="nothing to clean up"):
        fake.cleanup()


def test_alt_function_pins_warn_on_setup(fake):
    fake.setmode(fake.BCM)
    assert fake.gpio_function(10) == fake.SPI and fake.gpio_function(17) == fake.IN
    with pytest.warns(RuntimeWarning, match="already in use"):
        fake.setup(10, fake.OUT)
    assert fake.gpio_function(10) == fake.OUT
    fake.setwarnings(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fake.setup(9, fake.IN)


def test_no_access_fault_is_the_real_message(clock):
    fake = FakeGPIO(clock=clock, no_access=True)
    fake.setmode(fake.BCM)
    with pytest.raises(RuntimeError, match="No access to /dev/mem"):
        fake.setup(17, fake.OUT)


# ----------------------------------------------------------------------- the real mfrc522 driver

class _IdleChip:
    """The least of an RC522 on SPI for the driver's init: registers that read back what was written."""

    def __init__(self):
        self.regs = [0] * 64
        self.opened = self.closed = False
        self.max_speed_hz = 0

    def open(self, bus, device):
        self.opened = True

    def xfer2(self, data):
        addr = (data[0] >> 1) & 0x3F
        if data[0] & 0x80:
            return [0, self.regs[addr]]
        self.regs[addr] = data[1]
        return [0, 0]

    def close(self):
        self.closed = True


@pytest.fixture
def mfrc522_on_fake(monkeypatch, fake_modules):
    """``mfrc522`` imported afresh over the fake RPi.GPIO and an idle chip; sys.modules restored after."""
    chips = []
    spidev = types.ModuleType("spidev")
    spidev.SpiDev = lambda: chips.append(_IdleChip()) or chips[-1]
    monkeypatch.setitem(sys.modules, "spidev", spidev)
    saved = {k: v for k, v in sys.modules.items() if k == "mfrc522" or k.startswith("mfrc522.")}
    for k in saved:
        del sys.modules[k]
    import mfrc522
    yield mfrc522, chips
    for k in [k for k in sys.modules if k == "mfrc522" or k.startswith("mfrc522.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_unmodified_mfrc522_runs_on_the_fake(mfrc522_on_fake, fake_modules):
    mfrc522, chips = mfrc522_on_fake
    reader = mfrc522.MFRC522()                   # BOARD numbering, reset on header pin 22 = GPIO25
    assert fake_modules.getmode() == fake_modules.BOARD
    assert fake_modules.outputs(25) == [(100.0, 1)]
    assert chips[0].opened and chips[0].regs[0x2A] == 0x8D   # TModeReg written by MFRC522_Init
    reader.Close_MFRC522()
    assert fake_modules.global_cleanup_called    # what the driver does: the reason for scoped_gpio


def test_scoped_gpio_keeps_the_driver_to_its_own_pins(mfrc522_on_fake, fake_modules, monkeypatch):
    mfrc522, chips = mfrc522_on_fake
    factory = MockFactory(fake=fake_modules)
    led = factory.output_pin(17, "LED seat1", initial=True)
    monkeypatch.setattr(sys.modules["mfrc522.MFRC522"], "GPIO", factory.scoped_gpio("reader seat1"))
    reader = mfrc522.MFRC522(pin_rst=25)
    assert factory.owner(25) == "reader seat1" and fake_modules.level(25) == 1
    with pytest.raises(PinInUse, match="GPIO25 is already in use by reader seat1"):
        factory.output_pin(25, "buzzer")
    reader.Close_MFRC522()
    assert not fake_modules.global_cleanup_called
    assert fake_modules.configured == {17} and factory.owner(25) is None
    assert led.state and fake_modules.level(17) == 1
    with pytest.raises(PinInUse, match="GPIO17 is already in use by LED seat1"):
        mfrc522.MFRC522(pin_rst=17)
    factory.close()


# ----------------------------------------------------------------------------- pin factories

def test_scoped_gpio_setup_and_cleanup(factory, fake):
    led = factory.output_pin(17, "LED seat1", initial=True)
    gpio = factory.scoped_gpio("reader prikup")
    assert gpio.getmode() == gpio.BCM and gpio.OUT == fake.OUT
    with pytest.raises(ValueError, match="different mode"):
        gpio.setmode(gpio.BOARD)
    with pytest.raises(PinInUse, match="GPIO17 is already in use by LED seat1"):
        gpio.setup([24, 25, 17], gpio.OUT)
    assert factory.reserved == {17: "LED seat1"} and fake.configured == {17}   # 24, 25 given back
    gpio.setup([24, 25], gpio.OUT)
    gpio.setup(25, gpio.OUT)                     # again by the same owner: fine
    gpio.output(25, 1)
    with pytest.raises(PinInUse, match="GPIO17 is in use by LED seat1"):
        gpio.output([25, 17], 0)
    assert fake.level(17) == 1 and fake.level(25) == 1
    gpio.cleanup(24)
    assert factory.owner(24) is None and factory.owner(25) == "reader prikup"
    gpio.cleanup()
    assert fake.configured == {17} and factory.reserved == {17: "LED seat1"} and led.state
    assert not fake.global_cleanup_called


def test_pin_in_use_names_pin_and_holder(factory):
    factory.output_pin(17, "LED seat1")
    with pytest.raises(PinInUse) as info:
        factory.input_pin(17, "button undo")
    assert "GPIO17" in str(info.value) and "LED seat1" in str(info.value) and "button undo" in str(info.value)
    assert isinstance(info.value, HardwareError) and isinstance(info.value, OSError)
    assert factory.owner(17) == "LED seat1"


@pytest.mark.parametrize("pin", [-1, 28, 40, "17", 17.0, True, None])
def test_invalid_pins_are_named(factory, pin):
    with pytest.raises(InvalidPin) as info:
        factory.output_pin(pin, "LED seat2")
    assert repr(pin) in str(info.value) and "LED seat2" in str(info.value)
    assert isinstance(info.value, ConfigError)
    assert factory.reserved == {}


def test_check_pin_accepts_bcm_range():
    assert [check_pin(p) for p in (0, 27)] == [0, 27]


def test_release_then_reuse(factory):
    factory.reserve(12, "a")
    factory.release(12)
    factory.release(12)                          # harmless twice
    assert factory.reserve(12, "b") == 12


def test_close_touches_only_this_factorys_pins(fake, clock):
    fake.setmode(fake.BCM)
    fake.setup(5, fake.OUT, initial=1)           # another program's pin
    mine = MockFactory(fake=fake)
    other = MockFactory(fake=fake)
    mine.output_pin(17, "LED seat1", initial=True)
    mine.input_pin(22, "button undo")
    other.output_pin(27, "buzzer")
    mine.close()
    assert fake.configured == {5, 27}
    assert fake.cleanups == [(100.0, (17, 22))] and not fake.global_cleanup_called
    assert mine.reserved == {} and other.owner(27) == "buzzer"
    mine.close()                                 # idempotent, no empty cleanup call
    assert len(fake.cleanups) == 1
    other.close()


def test_pin_close_drives_low_and_frees(factory, fake):
    pin = factory.output_pin(17, "LED seat1", initial=True)
    assert pin.set(True) is False               # unchanged level: not written
    pin.close()
    assert fake.outputs(17)[-1][1] == 0 and 17 not in fake.configured and factory.owner(17) is None
    with pytest.raises(HardwareError, match="GPIO17"):
        pin.set(True)
    factory.output_pin(17, "LED seat2")         # free again


def test_factory_refuses_board_numbering(fake):
    fake.setmode(fake.BOARD)
    with pytest.raises(HardwareError, match="BCM"):
        MockFactory(fake=fake)


def test_gpio_faults_become_actionable_hardware_errors(clock):
    factory = MockFactory(fake=FakeGPIO(clock=clock, no_access=True))
    with pytest.raises(HardwareError) as info:
        factory.output_pin(17, "LED seat1")
    msg = str(info.value)
    assert "GPIO17" in msg and "LED seat1" in msg and "gpio group" in msg and "\n" not in msg
    assert factory.reserved == {}                # nothing left reserved by the failure


def test_rpigpio_factory_uses_the_imported_module(fake_modules):
    factory = RPiGPIOFactory()
    assert factory.gpio is sys.modules["RPi.GPIO"] and factory.name == "rpigpio"
    factory.output_pin(17, "LED seat1").set(True)
    assert fake_modules.outputs(17) == [(100.0, 0), (100.0, 1)]
    factory.close()
    assert not fake_modules.global_cleanup_called


def test_rpigpio_factory_without_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "RPi.GPIO", None)     # import RPi.GPIO -> ImportError
    with pytest.raises(HardwareError) as info:
        RPiGPIOFactory()
    msg = str(info.value)
    assert "RPi.GPIO" in msg and "pip install" in msg and ENV_VAR in msg and "\n" not in msg


@pytest.mark.parametrize("raise_stmt, expected", [
    ("raise RuntimeError('This module can only be run on a Raspberry Pi!')", "not a Raspberry Pi"),
    ("raise PermissionError(13, 'Permission denied', '/dev/gpiomem')", "add the user to the gpio group"),
    ("raise RuntimeError('No access to /dev/mem.  Try running as root!')", "/dev/gpiomem"),
])
def test_rpigpio_import_failures_say_what_to_do(monkeypatch, tmp_path, raise_stmt, expected):
    pkg = tmp_path / "RPi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "GPIO.py").write_text(raise_stmt + "\n")
    for name in ("RPi", "RPi.GPIO"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(HardwareError, match=expected) as info:
        RPiGPIOFactory()
    assert "\n" not in str(info.value)
    for name in ("RPi", "RPi.GPIO"):
        sys.modules.pop(name, None)


def test_default_factory_explicit_name(monkeypatch, fake_modules):
    monkeypatch.setenv(ENV_VAR, "rpigpio")
    assert isinstance(default_factory("mock"), MockFactory)
    assert isinstance(default_factory("rpigpio", gpiomem="/nonexistent"), RPiGPIOFactory)


def test_default_factory_from_env(monkeypatch, caplog):
    monkeypatch.setenv(ENV_VAR, "mock")
    with caplog.at_level(logging.INFO, logger="hw.pins"):
        f = default_factory(gpiomem=__file__)    # env wins over an existing gpiomem
    assert isinstance(f, MockFactory)
    assert any("mock" in r.getMessage() and ENV_VAR in r.getMessage() for r in caplog.records)
    monkeypatch.setenv(ENV_VAR, "bogus")
    with pytest.raises(ConfigError, match="bogus"):
        default_factory()


def test_default_factory_probes_gpiomem(monkeypatch, tmp_path, fake_modules, caplog):
    monkeypatch.delenv(ENV_VAR, raising=False)
    gpiomem = tmp_path / "gpiomem"
    with caplog.at_level(logging.INFO, logger="hw.pins"):
        assert isinstance(default_factory(gpiomem=str(gpiomem)), MockFactory)
        gpiomem.write_bytes(b"")
        assert isinstance(default_factory(gpiomem=str(gpiomem)), RPiGPIOFactory)
    messages = [r.getMessage() for r in caplog.records]
    assert any("mock" in m and "no " in m for m in messages)
    assert any("rpigpio" in m and "exists" in m for m in messages)
    assert isinstance(default_factory(environ={}, gpiomem=str(tmp_path / "none")), MockFactory)


# ----------------------------------------------------------------------------- led_level

def _on_intervals(mode, period, span, step=0.001):
    """(start, end) of the lit stretches of ``mode`` sampled over [0, span)."""
    out, start = [], None
    for i in range(round(span / step)):
        t = i * step
        lit = led_level(mode, t, period)
        if lit and start is None:
            start = t
        if not lit and start is not None:
            out.append((round(start, 3), round(t, 3)))
            start = None
    if start is not None:
        out.append((round(start, 3), round(span, 3)))
    return out


def test_led_level_steady_modes():
    for t in (0.0, 0.2, 0.26, 7.3, 1e6):
        assert led_level("off", t) is False
        assert led_level("turn", t) is True


def test_led_level_winner_blinks_at_the_period():
    assert _on_intervals("winner", 0.5, 2.0) == [(0.0, 0.25), (0.5, 0.75), (1.0, 1.25), (1.5, 1.75)]
    assert _on_intervals("winner", 0.2, 0.4) == [(0.0, 0.1), (0.2, 0.3)]


def test_led_level_error_is_a_double_flash_unlike_the_others():
    assert _on_intervals("error", 0.5, 2.0) == [(0.0, 0.1), (0.2, 0.3), (1.0, 1.1), (1.2, 1.3)]
    samples = [i * 0.01 for i in range(200)]
    patterns = {m: [led_level(m, t) for t in samples] for m in ("off", "turn", "winner", "error")}
    assert len({tuple(p) for p in patterns.values()}) == 4


def test_led_level_rejects_bad_input():
    with pytest.raises(ValueError, match="blinky"):
        led_level("blinky", 0.0)
    with pytest.raises(ValueError, match="period"):
        led_level("winner", 0.0, 0)
    assert led_level("winner", -0.1) is True     # a clock that steps back is treated as "just changed"


# ----------------------------------------------------------------------------- SeatLeds

LED_PINS = {"seat1": 17, "seat2": 27, "seat3": 22}


def _run(device, clock, start, end, step=0.01):
    """Call device.tick every ``step`` from ``start`` to ``end`` with the clock moved along."""
    for i in range(round((end - start) / step) + 1):
        clock.t = start + i * step
        device.tick(clock.t)


def test_seat_leds_turn_is_steady_and_written_once(factory, fake, clock):
    leds = SeatLeds(factory, LED_PINS)
    setup_writes = len(fake.history)             # each LED set up LOW
    assert setup_writes == 3 and all(lv == 0 for _, _, lv in fake.history)
    leds.show({"seat2": "turn"}, clock.t)
    _run(leds, clock, 100.0, 102.0)
    assert fake.history[setup_writes:] == [(100.0, 27, 1)]
    assert leds.modes == {"seat1": "off", "seat2": "turn", "seat3": "off"}


def test_seat_leds_winner_blinks_and_writes_only_changes(factory, fake, clock):
    leds = SeatLeds(factory, LED_PINS, blink_period=0.5)
    n = len(fake.history)
    clock.t = 100.0
    leds.show({"seat1": "winner"}, clock.t)
    _run(leds, clock, 100.0, 101.0, step=0.001)
    assert [(round(t, 3), lv) for t, lv in fake.outputs(17)[1:]] == \
        [(100.0, 1), (100.25, 0), (100.5, 1), (100.75, 0), (101.0, 1)]
    assert len(fake.history) - n == 5            # no write for unchanged levels in 1000 ticks


def test_seat_leds_error_pattern(factory, fake, clock):
    leds = SeatLeds(factory, LED_PINS, blink_period=0.5)
    leds.show({"seat3": "error"}, 100.0)
    _run(leds, clock, 100.0, 100.999, step=0.001)
    assert [(round(t - 100.0, 3), lv) for t, lv in fake.outputs(22)[1:]] == \
        [(0.0, 1), (0.1, 0), (0.2, 1), (0.3, 0)]


def test_seat_leds_same_mode_keeps_phase_and_new_mode_restarts(factory, fake, clock):
    leds = SeatLeds(factory, LED_PINS)
    leds.show({"seat1": "winner"}, 100.0)
    leds.show({"seat1": "winner"}, 100.3)        # unchanged: still off until 100.5
    assert fake.level(17) == 0
    leds.show({"seat1": "turn"}, 100.35)
    assert fake.level(17) == 1
    leds.show({"seat1": "winner"}, 100.4)        # new mode: phase starts now, lit
    leds.tick(100.64)
    assert fake.level(17) == 1
    leds.tick(100.66)
    assert fake.level(17) == 0


def test_seat_leds_missing_zones_go_off_unknown_zones_ignored(factory, fake):
    leds = SeatLeds(factory, LED_PINS)
    leds.show({"seat1": "turn", "seat2": "turn"}, 100.0)
    leds.show({"seat2": "turn", "prikup": "error"}, 100.1)
    assert (fake.level(17), fake.level(27), fake.level(22)) == (0, 1, 0)
    with pytest.raises(ValueError, match="purple"):
        leds.show({"seat1": "purple"}, 100.2)


def test_seat_leds_close_switches_off_and_frees(factory, fake):
    leds = SeatLeds(factory, LED_PINS)
    leds.show({z: "turn" for z in LED_PINS}, 100.0)
    leds.close()
    assert all(fake.level(p) == 0 for p in LED_PINS.values())
    assert factory.reserved == {} and fake.configured == frozenset() and not fake.global_cleanup_called


def test_seat_leds_on_a_taken_pin(factory, fake):
    factory.output_pin(22, "buzzer")
    with pytest.raises(PinInUse, match="GPIO22 is already in use by buzzer.*LED seat3"):
        SeatLeds(factory, LED_PINS)
    assert factory.reserved == {22: "buzzer"}    # the LEDs opened before the failure were freed
    assert fake.configured == {22}


def test_seat_leds_bad_period(factory):
    with pytest.raises(ConfigError, match="period"):
        SeatLeds(factory, LED_PINS, blink_period=0)


# ----------------------------------------------------------------------------- Buzzer

def test_buzzer_beeps_for_the_duration(factory, fake, clock):
    buzzer = Buzzer(factory, 18)
    assert factory.owner(18) == "buzzer"
    buzzer.beep(100, 100.0)
    _run(buzzer, clock, 100.0, 100.3)
    assert [(round(t, 3), lv) for t, lv in fake.outputs(18)] == [(100.0, 0), (100.0, 1), (100.1, 0)]
    assert not buzzer.sounding


def test_buzzer_overlapping_beeps_extend_not_shorten(factory, fake):
    buzzer = Buzzer(factory, 18)
    buzzer.beep(300, 100.0)
    buzzer.beep(50, 100.1)                       # would end at 100.15: the 300 ms beep goes on
    buzzer.tick(100.2)
    assert buzzer.sounding
    buzzer.beep(400, 100.25)                     # now ends at 100.65
    buzzer.tick(100.5)
    assert buzzer.sounding
    buzzer.tick(100.65)
    assert not buzzer.sounding
    assert len(fake.outputs(18)) == 3            # setup LOW, on, off: the pin was written only on changes


def test_buzzer_zero_and_negative(factory, fake):
    buzzer = Buzzer(factory, 18)
    buzzer.beep(0, 100.0)
    assert not buzzer.sounding and len(fake.outputs(18)) == 1
    with pytest.raises(ValueError):
        buzzer.beep(-5, 100.0)
    buzzer.beep(1000, 100.0)
    buzzer.close()
    assert fake.level(18) == 0 and factory.owner(18) is None


# ----------------------------------------------------------------------------- Buttons

BUTTON_PINS = {"undo": 5, "new_deal": 6, "confirm": 13}


def _poll(buttons, clock, start, end, step=0.005, script=None):
    """Poll every ``step``; ``script(t)`` may press/release pins first.  Returns all presses."""
    out = []
    for i in range(round((end - start) / step) + 1):
        clock.t = round(start + i * step, 6)
        if script:
            script(clock.t)
        out += buttons.poll(clock.t)
    return out


def test_buttons_use_pull_ups(factory, fake):
    Buttons(factory, BUTTON_PINS)
    assert all(fake.pull(p) == fake.PUD_UP and fake.direction(p) == fake.IN for p in BUTTON_PINS.values())
    assert factory.owner(6) == "button new_deal"


def test_a_press_is_reported_once_after_the_debounce(factory, fake, clock):
    buttons = Buttons(factory, BUTTON_PINS, debounce_ms=30)

    def script(t):
        if t == 100.1:
            fake.press(5)
        if t == 100.5:
            fake.release(5)
    presses = _poll(buttons, clock, 100.0, 101.0, script=script)
    assert presses == [ButtonPress("undo", 100.13, False)]
    assert not buttons.is_pressed("undo")


def test_bounces_shorter_than_the_debounce_produce_nothing(factory, fake, clock):
    buttons = Buttons(factory, BUTTON_PINS, debounce_ms=30)

    def script(t):          # 25 ms blips: a press, then release, each shorter than 30 ms
        k = round((t - 100.0) * 1000)
        if k in (100, 300, 500):
            fake.press(13)
        if k in (125, 320, 505):
            fake.release(13)
    assert _poll(buttons, clock, 100.0, 101.0, script=script) == []


def test_a_bouncy_press_and_release_count_once(factory, fake, clock):
    buttons = Buttons(factory, BUTTON_PINS, debounce_ms=30)
    bounces = {100: 1, 105: 0, 110: 1, 120: 0, 125: 1,            # contact chatter, then closed
               400: 0, 405: 1, 415: 0, 420: 1, 430: 0}            # chatter on release
    presses = _poll(buttons, clock, 100.0, 101.0,
                    script=lambda t: (fake.press(13) if bounces[k] else fake.release(13))
                    if (k := round((t - 100.0) * 1000)) in bounces else None)
    assert presses == [ButtonPress("confirm", 100.155)]
    assert not buttons.is_pressed("confirm")


def test_a_long_press_adds_one_held_report(factory, fake, clock):
    buttons = Buttons(factory, BUTTON_PINS, debounce_ms=30, hold_s=3.0)

    def script(t):
        if t == 100.0:
            fake.press(6)
        if t == 104.0:
            fake.release(6)
        if t == 105.0:
            fake.press(6)
        if t == 105.5:
            fake.release(6)
    presses = _poll(buttons, clock, 100.0, 106.0, step=0.01, script=script)
    assert presses == [ButtonPress("new_deal", 100.03), ButtonPress("new_deal", 103.0, held=True),
                       ButtonPress("new_deal", 105.03)]
    assert [to_event(p) for p in presses] == [events.button(100.03, "new_deal"), None,
                                              events.button(105.03, "new_deal")]


def test_a_chatter_during_a_hold_does_not_restart_it(factory, fake, clock):
    buttons = Buttons(factory, BUTTON_PINS, debounce_ms=30, hold_s=1.0)
    chatter = {0: 1, 500: 0, 510: 1}             # a 10 ms opening half-way through the hold
    presses = _poll(buttons, clock, 100.0, 101.5, step=0.005,
                    script=lambda t: (fake.press(5) if chatter[k] else fake.release(5))
                    if (k := round((t - 100.0) * 1000)) in chatter else None)
    assert presses == [ButtonPress("undo", 100.03), ButtonPress("undo", 101.0, held=True)]


def test_simultaneous_buttons(factory, fake, clock):
    buttons = Buttons(factory, BUTTON_PINS, debounce_ms=10)
    fake.press(5)
    fake.press(13)
    assert buttons.poll(100.0) == []
    assert sorted(p.name for p in buttons.poll(100.01)) == ["confirm", "undo"]


def test_to_event_is_a_table_event():
    ev = to_event(ButtonPress("confirm", 12.5))
    assert ev.event == "button" and ev.button == "confirm" and ev.t == 12.5 and ev.zone is None
    assert ev.to_dict() == {"t": 12.5, "event": "button", "button": "confirm"}
    assert to_event(ButtonPress("new_deal", 15.5, held=True)) is None


def test_buttons_config_errors(factory):
    with pytest.raises(ConfigError, match="reset"):
        Buttons(factory, {"reset": 5})
    with pytest.raises(ConfigError, match="debounce"):
        Buttons(factory, BUTTON_PINS, debounce_ms=-1)
    with pytest.raises(ConfigError, match="hold"):
        Buttons(factory, BUTTON_PINS, hold_s=0)
    assert factory.reserved == {}


def test_devices_share_one_factory_and_clash_on_a_pin(factory, fake):
    leds = SeatLeds(factory, LED_PINS)
    buzzer = Buzzer(factory, 18)
    with pytest.raises(PinInUse, match="GPIO18 is already in use by buzzer.*button confirm"):
        Buttons(factory, {"undo": 5, "confirm": 18})
    assert factory.owner(5) is None              # undo was given back
    buttons = Buttons(factory, BUTTON_PINS)
    buttons.close()
    leds.close()
    assert factory.reserved == {18: "buzzer"} and fake.configured == {18}
    buzzer.close()
    assert not fake.global_cleanup_called


# ----------------------------------------------------------------------------- real Pi

@pytest.mark.hardware
@pytest.mark.skipif(not os.path.exists("/dev/gpiomem"), reason="needs a Raspberry Pi (/dev/gpiomem)")
def test_real_pins_round_trip():
    """Drive the LED pin in $PREFTABLE_TEST_LED_PIN (default GPIO17) on and off; read the latch back."""
    pin = int(os.environ.get("PREFTABLE_TEST_LED_PIN", "17"))
    factory = RPiGPIOFactory()
    try:
        led = factory.output_pin(pin, "hardware test LED")
        led.set(True)
        assert factory.gpio.input(pin) == 1
        led.set(False)
        assert factory.gpio.input(pin) == 0
    finally:
        factory.close()


# ------------------------------------------------------------------------------------------ real boards
@pytest.mark.parametrize("bus, pin", [(0, 9), (0, 11), (1, 16), (1, 19), (1, 20), (1, 21)])
def test_fake_gpio_refuses_the_pins_of_an_enabled_spi_bus(bus, pin):
    gpio = FakeGPIO(spi_buses=(bus,))
    gpio.setmode(gpio.BCM)
    with pytest.raises(RuntimeError, match=f"GPIO{pin} is SPI bus {bus}"):
        gpio.setup(pin, gpio.OUT)
    factory = MockFactory(spi_buses=(bus,))
    with pytest.raises(HardwareError, match=f"GPIO{pin}"):
        factory.input_pin(pin, "button undo")


def test_the_readers_fake_pins_know_both_spi_buses():
    from hw.rc522 import FakeBackend

    with pytest.raises(HardwareError, match="GPIO19.*SPI bus 1 MISO"):
        FakeBackend().pins().output_pin(19, "buzzer")


def test_on_a_raspberry_pi_auto_never_falls_back_to_mock_pins(tmp_path, monkeypatch):
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    monkeypatch.setitem(sys.modules, "RPi", None)               # RPi.GPIO (or rpi-lgpio) not importable
    with pytest.raises(HardwareError, match="RPi.GPIO cannot be imported"):
        default_factory(environ={}, gpiomem=str(tmp_path / "none"), model_files=[str(model)])


def test_off_a_pi_auto_simulates_the_pins_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="hw.pins"):
        f = default_factory(environ={}, gpiomem=str(tmp_path / "none"), model_files=[str(tmp_path / "m")])
    assert isinstance(f, MockFactory) and "do nothing" in caplog.text


def test_soc_base_address_error_on_a_pi_5_says_install_rpi_lgpio(tmp_path, monkeypatch):
    from hw import pins

    monkeypatch.setattr(pins, "board_model", lambda paths=(): "Raspberry Pi 5 Model B Rev 1.0")
    err = pins.explain(RuntimeError("Cannot determine SOC peripheral base address"))
    assert "rpi-lgpio" in str(err)


def test_no_access_hint_for_a_member_of_gpio_points_to_the_units_deviceallow(monkeypatch):
    from hw import pins

    monkeypatch.setattr(pins, "_in_group", lambda name: True)
    text = str(pins.explain(RuntimeError("No access to /dev/mem.  Try running as root!")))
    assert "although the user is in the gpio group" in text and "DeviceAllow=char-*gpiomem*" in text
    assert "usermod" not in text
    monkeypatch.setattr(pins, "_in_group", lambda name: False)
    assert "sudo usermod -aG gpio" in str(pins.explain(RuntimeError("No access to /dev/mem.  Try running as root!")))
