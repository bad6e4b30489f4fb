"""The emulated MFRC522 and the RC522 reader wrapper, with the real ``mfrc522`` driver over them.

Every test runs the unmodified driver code (loaded by :func:`hw.rc522.load_driver` over a
fake spidev and a FakeGPIO-backed pin factory); times are the emulation's modelled times.
"""

from __future__ import annotations

import logging
import sys

import pytest

from controller.core.errors import ConfigError, HardwareError, PinInUse
from hw import rc522_chip as rc
from hw.pins import MockFactory
from hw.rc522 import FakeBackend, RealBackend, Reader, ReaderFault, load_driver
from hw.rc522_chip import EmulatedMFRC522, FakeSpidev, VirtualClock, VirtualTag

UID4 = "3A5F1C7E"
UID7 = "04A2B11C6F5E80"
UID10 = "04A2B11C6F5E8011AA55"
HW_MODULES = ("spidev", "RPi", "RPi.GPIO", "mfrc522", "mfrc522.MFRC522")


@pytest.fixture
def backend():
    return FakeBackend()


@pytest.fixture
def chip(backend):
    return backend.add_chip(0, 0)


@pytest.fixture
def reader(backend, chip):
    r = Reader(0, 0, 25, backend=backend)
    yield r
    r.close()


def timed(clock, fn, *args):
    start = clock()
    result = fn(*args)
    return result, clock() - start


def reg_read(chip, *addrs):
    out = chip.transfer(bytes([0x80 | (a << 1) for a in addrs] + [0]))
    return list(out[1:])


def reg_write(chip, addr, *values):
    chip.transfer(bytes([(addr << 1) & 0x7E, *values]))


# ------------------------------------------------------------------------------------------ the chip
def test_crc_a_matches_iso14443_examples():
    assert rc.with_crc(b"\x50\x00") == bytes.fromhex("500057CD")          # HLTA
    assert rc.with_crc(b"\x30\x00") == bytes.fromhex("300002A8")          # READ page 0


def test_spi_protocol_version_burst_read_and_fifo():
    chip = EmulatedMFRC522()
    assert reg_read(chip, rc.VERSION) == [0x92]
    reg_write(chip, rc.FIFO_DATA, 1, 2, 3, 4)                                # burst write to one address
    assert reg_read(chip, rc.FIFO_LEVEL, rc.FIFO_DATA, rc.FIFO_DATA, rc.FIFO_LEVEL) == [4, 1, 2, 2]
    reg_write(chip, rc.FIFO_LEVEL, 0x80)                                     # flush
    assert reg_read(chip, rc.FIFO_LEVEL) == [0]
    reg_write(chip, rc.COMM_IRQ, 0x7F)                                       # Set1=0: clear marked bits
    assert reg_read(chip, rc.COMM_IRQ)[0] & 0x7F & ~rc.IRQ_LO_ALERT == 0
    reg_write(chip, rc.COMM_IRQ, 0x80 | rc.IRQ_TIMER)                        # Set1=1: set marked bits
    assert reg_read(chip, rc.COMM_IRQ)[0] & rc.IRQ_TIMER


def test_spi_time_is_bytes_at_the_clock():
    spi = FakeSpidev(xfer_overhead_s=0.0)              # the bits alone (the Pi's overhead: next test)
    spi.add_chip(0, 0)
    dev = spi.SpiDev()
    dev.open(0, 0)
    dev.max_speed_hz = 1_000_000
    assert dev.xfer2([0x80 | (rc.VERSION << 1), 0]) == [0, 0x92]
    assert spi.clock() == pytest.approx(16e-6)
    dev.max_speed_hz = 4_000_000
    dev.xfer2([0x80 | (rc.VERSION << 1), 0])
    assert spi.clock() == pytest.approx(20e-6)
    dev.close()
    with pytest.raises(OSError):
        dev.xfer2([0, 0])


def test_each_transfer_costs_a_pis_overhead_by_default():
    from hw.rc522_chip import PI_XFER_OVERHEAD_S

    spi = FakeSpidev()
    assert spi.xfer_overhead_s == PI_XFER_OVERHEAD_S > 0
    spi.add_chip(0, 0)
    dev = spi.SpiDev()
    dev.open(0, 0)
    dev.max_speed_hz = 1_000_000
    dev.xfer2([0x80 | (rc.VERSION << 1), 0])
    assert spi.clock() == pytest.approx(16e-6 + PI_XFER_OVERHEAD_S)


def test_timer_from_tmode_tprescaler_treload():
    clock = VirtualClock()
    chip = EmulatedMFRC522(clock)
    for addr, value in ((rc.T_MODE, 0x8D), (rc.T_PRESCALER, 0x3E), (rc.T_RELOAD_L, 30), (rc.T_RELOAD_H, 0)):
        reg_write(chip, addr, value)                         # the driver's values: 31 x 0.5 ms
    reg_write(chip, rc.COMM_IRQ, 0x7F)
    reg_write(chip, rc.CONTROL, 0x40)                        # TStartNow
    clock.advance(0.0150)
    assert not reg_read(chip, rc.COMM_IRQ)[0] & rc.IRQ_TIMER
    assert reg_read(chip, rc.STATUS1)[0] & 0x08              # TRunning
    clock.advance(0.0006)
    assert reg_read(chip, rc.COMM_IRQ)[0] & rc.IRQ_TIMER
    assert not reg_read(chip, rc.STATUS1)[0] & 0x08


def test_calc_crc_and_soft_reset():
    chip = EmulatedMFRC522()
    reg_write(chip, rc.MODE, 0x3D)                           # CRC preset 0x6363
    reg_write(chip, rc.FIFO_DATA, 0x50, 0x00)
    reg_write(chip, rc.COMMAND, rc.CMD_CALC_CRC)
    assert reg_read(chip, rc.DIV_IRQ)[0] & rc.DIV_CRC
    assert reg_read(chip, rc.CRC_RESULT_L, rc.CRC_RESULT_M) == [0x57, 0xCD]
    reg_write(chip, rc.T_RELOAD_L, 99)
    reg_write(chip, rc.COMMAND, rc.CMD_SOFT_RESET)
    assert reg_read(chip, rc.T_RELOAD_L, rc.MODE, rc.TX_CONTROL, rc.COMMAND) == [0, 0x3F, 0x80, 0x20]


def test_dead_chip_reads_constant():
    chip = EmulatedMFRC522()
    chip.kill(0x00)
    assert reg_read(chip, rc.VERSION, rc.COMM_IRQ) == [0, 0]
    chip.kill(0xFF)
    assert chip.transfer(bytes([0x80 | (rc.VERSION << 1), 0])) == b"\xff\xff"
    chip.revive()
    assert reg_read(chip, rc.VERSION) == [0x92]


def test_virtual_tag_cascade_and_halt():
    tag = VirtualTag(UID7)
    assert tag.hear(b"\x26", 7) == (b"\x44\x00", 0)                            # ATQA: double size
    assert tag.hear(b"\x93\x20", 0) == (bytes.fromhex("8804A2B19F"), 0)        # CT + 3 bytes + BCC
    sak1 = tag.hear(rc.with_crc(bytes.fromhex("93708804A2B19F")), 0)
    assert sak1[0][0] == 0x04                                                  # UID not complete
    assert tag.hear(b"\x95\x20", 0) == (bytes.fromhex("1C6F5E80AD"), 0)
    assert tag.hear(rc.with_crc(bytes.fromhex("95701C6F5E80AD")), 0)[0][0] == 0x00
    assert tag.state == rc.ACTIVE
    assert tag.hear(rc.with_crc(b"\x50\x00"), 0) is None and tag.state == rc.HALT
    assert tag.hear(b"\x26", 7) is None                                        # REQA ignores HALT
    assert tag.hear(b"\x52", 7) == (b"\x44\x00", 0)                            # WUPA wakes it
    with pytest.raises(ValueError):
        VirtualTag("88010203")


# ------------------------------------------------------------------------------------------ the driver
@pytest.fixture
def driver(backend, chip):
    """The unmodified driver class over the emulation (no Reader wrapper)."""
    pins = backend.pins()
    module = load_driver(pins.scoped_gpio("test driver"), backend.spidev(), "test")
    drv = module.MFRC522(bus=0, device=0, pin_rst=25)
    for handler in logging.getLogger("mfrc522Logger").handlers[:]:
        logging.getLogger("mfrc522Logger").removeHandler(handler)
    yield drv
    drv.spi.close()


def test_unmodified_driver_reads_level_one_only(driver, chip, backend):
    chip.field.put(VirtualTag(UID7))
    status, bits = driver.MFRC522_Request(driver.PICC_REQIDL)
    assert (status, bits) == (driver.MI_OK, 16)
    status, uid = driver.MFRC522_Anticoll()
    assert status == driver.MI_OK
    assert bytes(uid).hex().upper() == "8804A2B19F"                  # the defect: 0x88 + 3 bytes
    assert driver.MFRC522_SelectTag(uid) == 0x04                     # SAK says: UID not complete
    assert driver.CalulateCRC([0x50, 0x00]) == [0x57, 0xCD]


def test_unmodified_driver_reads_a_4_byte_tag_and_its_memory(driver, chip):
    chip.field.put(VirtualTag(UID4))
    assert driver.MFRC522_Request(driver.PICC_REQIDL)[0] == driver.MI_OK
    status, uid = driver.MFRC522_Anticoll()
    assert bytes(uid[:4]).hex().upper() == UID4
    assert driver.MFRC522_SelectTag(uid) == 0x08
    assert bytes(driver.MFRC522_Read(0)[:3]) == bytes.fromhex(UID4)[:3]


def test_unmodified_driver_empty_poll_costs_its_whole_loop(driver, backend):
    """With the library's defaults an empty reader costs the 2000-iteration wait (the loop ignores
    TimerIRq), ~32 ms of SPI at 1 MHz; the timer alone would be 15.5 ms."""
    backend.spi.xfer_overhead_s = 0.0                        # the bits on the wire only
    (status, _), spent = timed(backend.clock, driver.MFRC522_Request, driver.PICC_REQIDL)
    assert status == driver.MI_ERR
    assert 0.030 < spent < 0.034


def test_driver_loading_leaves_sys_modules_alone(backend):
    before = {name: sys.modules.get(name) for name in HW_MODULES}
    backend.add_chip(0, 0)
    with Reader(0, 0, 25, backend=backend):
        pass
    assert {name: sys.modules.get(name) for name in HW_MODULES} == before


# ------------------------------------------------------------------------------------------ the reader
@pytest.mark.parametrize("uid", [UID4, UID7, UID10])
def test_complete_uid_of_4_7_10_bytes(reader, chip, uid):
    tag = chip.field.put(VirtualTag(uid))
    for _ in range(3):                                       # first read, then the known-UID fast path
        assert reader.read_uid() == uid
    chip.field.take(tag)
    assert reader.read_uid() is None


def test_another_tag_of_the_same_size_is_read_at_once(reader, chip):
    first = chip.field.put(VirtualTag(UID7))
    assert reader.read_uid() == UID7
    chip.field.take(first)
    chip.field.put(VirtualTag("04FFEE1C6F5E81"))
    assert reader.read_uid() == "04FFEE1C6F5E81"             # the fast path's SELECT fails, anticollision reads


def test_empty_poll_under_2_ms_and_short_timer_programmed(reader, chip, backend):
    for _ in range(3):
        uid, spent = timed(backend.clock, reader.read_uid)
        assert uid is None
        assert spent < 0.002
    assert chip.peek(rc.T_MODE) & 0x80                       # TAuto
    assert chip._timer_period() == pytest.approx(0.001, rel=0.01)


def test_tag_still_read_with_the_short_timer(reader, chip, backend):
    chip.field.put(VirtualTag(UID7, fdt_s=0.0008))          # a sluggish tag: answers after 0.8 ms
    uid, spent = timed(backend.clock, reader.read_uid)
    assert uid == UID7
    assert spent < 0.009                                    # 4 exchanges, each ~0.7 ms later, and the release


def test_tag_slower_than_the_timer_is_missed(reader, chip):
    chip.field.put(VirtualTag(UID7, fdt_s=0.0012))
    assert reader.read_uid() is None


def test_steady_7_byte_read_is_fast(reader, chip, backend):
    backend.spi.xfer_overhead_s = 0.0                        # the bits on the wire only
    chip.field.put(VirtualTag(UID7))
    reader.read_uid()
    times = [timed(backend.clock, reader.read_uid)[1] for _ in range(5)]
    assert max(times) < 0.0035


def test_flicker_pattern_misses_polls(reader, chip):
    chip.field.put(VirtualTag(UID4), pattern=[True, False, False])
    assert [reader.read_uid() for _ in range(6)] == [UID4, None, None, UID4, None, None]


@pytest.mark.parametrize("uids, winner", [
    (("11223344", "11223355"), "11223355"),                  # differ in the last byte, bit 0
    (("A1223344", "21223344"), "A1223344"),                  # differ in the first byte, bit 7
    (("04A2B11C6F5E80", "04A2B11C6F5E81"), "04A2B11C6F5E81"),   # same first level, collide at level 2
    (("3A5F1C7E", "04A2B11C6F5E80"), "3A5F1C7E"),            # a 4- and a 7-byte tag: ATQAs collide too
])
def test_anticollision_picks_the_same_one_of_several_tags(reader, chip, uids, winner):
    """The ISO rule (a 1 at the colliding bit), as the hub firmware does: both paths agree."""
    for uid in uids:
        chip.field.put(VirtualTag(uid))
    assert [reader.read_uid() for _ in range(3)] == [winner] * 3
    chip.field.take(chip.field.tags[[t.uid_hex for t in chip.field.tags].index(winner)])
    other = next(u for u in uids if u != winner)
    assert reader.read_uid() == other


def test_global_gpio_cleanup_never_called(backend):
    pins = backend.pins()
    led = pins.output_pin(5, "seat1 LED", initial=True)
    readers = []
    for (bus, dev), pin in zip([(0, 0), (0, 1), (1, 0)], [25, 24, 23]):
        backend.add_chip(bus, dev)
        readers.append(Reader(bus, dev, pin, backend=backend))
    for r in readers:
        r.close()
        r.close()
    fake = pins.fake
    assert not fake.global_cleanup_called
    assert fake.direction(5) == fake.OUT and fake.level(5) == 1    # the LED kept its pin and level
    assert sorted(pins for _, pins in fake.cleanups) == [(23,), (24,), (25,)]
    assert pins.owner(25) is None and pins.owner(5) == "seat1 LED"
    led.close()


def test_driver_close_would_clean_up_everything_with_a_raw_gpio(backend, chip):
    """The defect the wrapper avoids, seen on the fake: Close_MFRC522 frees every pin."""
    fake = backend.pins().fake
    led = backend.pins().output_pin(5, "seat1 LED", initial=True)
    drv = load_driver(fake.as_module(), backend.spidev(), "raw").MFRC522(bus=0, device=0, pin_rst=25)
    logging.getLogger("mfrc522Logger").handlers.clear()
    drv.Close_MFRC522()
    assert fake.global_cleanup_called and fake.direction(5) is None    # the LED lost its pin
    assert led.pin == 5


def test_driver_gets_a_scoped_gpio(reader):
    from hw.pins import ScopedGPIO
    assert isinstance(reader._drv.MFRC522_Init.__globals__["GPIO"], ScopedGPIO)


def test_one_log_handler_whatever_the_number_of_readers(backend, caplog):
    logger = logging.getLogger("mfrc522Logger")
    before = list(logger.handlers)
    readers = []
    for bus, dev, pin in [(0, 0, 25), (0, 1, 24), (1, 0, 23), (1, 1, 22), (1, 2, 27)]:
        backend.add_chip(bus, dev)
        readers.append(Reader(bus, dev, pin, backend=backend))
    assert logger.handlers == before
    with caplog.at_level(logging.ERROR, logger="mfrc522Logger"):
        readers[0]._drv.MFRC522_Auth(0x60, 7, [0xFF] * 6, [1, 2, 3, 4])   # the driver logs errors
    auth = [r for r in caplog.records if r.getMessage() == "AUTH ERROR!!"]
    assert len(auth) == 1
    for r in readers:
        r.close()


def test_bcm_reset_pin_respected(reader, backend):
    fake = backend.pins().fake
    assert fake.getmode() == fake.BCM
    assert fake.direction(25) == fake.OUT and fake.level(25) == 1
    assert fake.direction(15) is None and not fake.outputs(15)       # never the UART RX pin
    assert backend.pins().owner(25) == "RC522 reader spidev0.0 (reset)"


def test_reset_pin_in_use_is_refused_and_spi_closed(backend):
    backend.add_chip(0, 0)
    backend.pins().output_pin(25, "buzzer")
    with pytest.raises(PinInUse, match="GPIO25.*buzzer"):
        Reader(0, 0, 25, backend=backend)
    assert not backend.spi.open_devices


def test_reset_pin_must_not_be_an_spi_pin(backend):
    backend.add_chip(0, 0)
    with pytest.raises(ConfigError, match="GPIO8"):
        Reader(0, 0, 8, backend=backend)


def test_missing_and_forbidden_spi_devices_explained(backend):
    with pytest.raises(HardwareError, match=r"/dev/spidev1\.2.*raspi-config.*spi1-3cs"):
        Reader(1, 2, 27, backend=backend)
    backend.add_chip(0, 1)
    backend.spi.deny(0, 1)
    with pytest.raises(HardwareError, match=r"/dev/spidev0\.1.*spi group"):
        Reader(0, 1, 24, backend=backend)
    assert backend.pins().owner(24) is None and backend.pins().owner(27) is None


def test_dead_reader_not_alive_and_reset_brings_back_a_latched_chip(reader, chip, backend):
    chip.field.put(VirtualTag(UID7))
    assert reader.alive() and reader.read_uid() == UID7
    chip.kill(0x00, until_reset=True)
    assert not reader.alive()
    with pytest.raises(ReaderFault, match="spidev0.0"):
        reader.read_uid()
    before = chip.hard_resets                               # (power-up was one: the pin rose from reset)
    reader.reset()
    assert chip.hard_resets == before + 1
    assert [lv for _, lv in backend.pins().fake.outputs(25)][-2:] == [0, 1]
    assert reader.alive()
    assert reader.read_uid() == UID7


def test_floating_miso_reads_as_dead(reader, chip):
    chip.kill(0xFF)
    assert reader.read_uid() is None
    assert not reader.alive()
    reader.reset()
    assert not reader.alive()                                # not cured by a reset: wiring
    chip.revive()
    reader.reset()
    assert reader.alive()


def test_closed_reader_refuses_to_read(reader):
    reader.close()
    with pytest.raises(HardwareError, match="closed"):
        reader.read_uid()


def test_real_backend_imports_spidev_only_when_asked():
    backend = RealBackend(pins=MockFactory())
    try:
        import spidev  # noqa: F401
    except ImportError:
        with pytest.raises(HardwareError, match="spidev"):
            Reader(0, 0, 25, backend=backend)
    else:
        pytest.skip("spidev is installed here")


def test_spi_backend_is_chosen_independently_of_the_pin_factory():
    """Mock pins (a Pi 5 where RPi.GPIO failed) must not turn the readers into fakes."""
    from hw.rc522 import default_backend
    mock = MockFactory()
    backend = default_backend(mock, environ={})
    assert isinstance(backend, RealBackend) and backend.pins() is mock
    fake = default_backend(mock, name="fake")
    assert isinstance(fake, FakeBackend) and fake.pins() is mock
    assert isinstance(default_backend(None, environ={"PREFTABLE_SPI_BACKEND": "fake"}), FakeBackend)
    assert isinstance(default_backend(None, environ={}), RealBackend)
    with pytest.raises(ConfigError, match="PREFTABLE_SPI_BACKEND"):
        default_backend(None, environ={"PREFTABLE_SPI_BACKEND": "bogus"})


def test_version_0x91_chip_accepted(backend):
    backend.add_chip(0, 1, version=0x91)
    with Reader(0, 1, 24, backend=backend) as r:
        assert r.alive()


def test_reader_on_a_dead_chip_warns_at_start(backend, caplog):
    backend.add_chip(0, 0).kill(0x00)
    with caplog.at_level(logging.WARNING, logger="hw.rc522"):
        with Reader(0, 0, 25, backend=backend) as r:
            assert not r.alive()
    assert any("spidev0.0" in rec.getMessage() and "0x00" in rec.getMessage() for rec in caplog.records)
    assert issubclass(ReaderFault, HardwareError) and issubclass(ReaderFault, OSError)


def test_reader_uses_the_given_pin_factory(backend):
    backend.add_chip(0, 0)
    shared = MockFactory()                                   # the one the LEDs and buttons use
    with Reader(0, 0, 25, backend=backend, factory=shared):
        assert shared.owner(25) == "RC522 reader spidev0.0 (reset)"
        assert backend.pins().owner(25) is None
    assert shared.owner(25) is None


def test_reader_without_backend_on_a_mock_factory_explains_missing_spi():
    with pytest.raises(HardwareError, match=r"/dev/spidev0\.0"):
        Reader(0, 0, 25, factory=MockFactory())


# ------------------------------------------------------------------------------------------ real boards
@pytest.mark.parametrize("version", [0x91, 0x92, 0x88, 0xB2, 0x12])
def test_clone_versionregs_are_alive_and_read_tags(backend, version):
    chip = backend.add_chip(0, 0, version=version)
    chip.field.put(VirtualTag(UID7))
    with Reader(0, 0, 25, backend=backend) as r:
        assert r.alive() and r.read_uid() == UID7


@pytest.mark.parametrize("version", [0x00, 0xFF])
def test_versionreg_0x00_or_0xff_is_a_dead_chip(backend, version):
    backend.add_chip(0, 0, version=version)
    with Reader(0, 0, 25, backend=backend) as r:
        assert not r.alive()


def test_a_4_byte_uid_starting_0x88_is_decided_by_the_sak(reader, chip):
    from hw.rc522_chip import VirtualTag as Tag

    tag = Tag.__new__(Tag)                                   # VirtualTag refuses 0x88 (ISO says no) ...
    Tag.__init__(tag, "08112233")
    tag.uid = bytes.fromhex("88112233")                      # ... but such clone tags exist
    chip.field.put(tag)
    assert reader.read_uid() == "88112233"
    assert reader.read_uid() == "88112233"


def test_configuring_during_the_oscillator_start_up_is_lost(backend):
    """What the mfrc522 driver alone does (configure right after raising NRSTPD) leaves the antenna off."""
    chip = backend.add_chip(0, 0)
    pins = backend.pins()
    backend.wire(0, 0, 25, pins)
    gpio = pins.scoped_gpio("test")
    gpio.setup(25, gpio.OUT, initial=gpio.LOW)
    gpio.output(25, 1)                                       # out of reset now ...
    spi = backend.spidev().SpiDev()
    spi.open(0, 0)
    spi.xfer2([rc.TX_CONTROL << 1, 0x83])                    # ... antenna on at once: lost
    assert spi.xfer2([0x80 | rc.VERSION << 1, 0]) == [0, 0]
    backend.sleep(chip.osc_startup_s)
    assert chip.peek(rc.TX_CONTROL) == 0x80
    spi.close()


def test_readers_power_up_in_order_and_a_reset_held_chip_loads_miso(backend):
    """Every reset pin high before any chip is configured (a chip held in reset pulls MISO low)."""
    from hw.rc522 import open_readers

    chips = [backend.add_chip(0, 0), backend.add_chip(0, 1)]
    pins = backend.pins()
    backend.wire(0, 1, 24, pins)                             # the second chip is wired, still in reset
    spi = backend.spidev().SpiDev()
    spi.open(0, 0)
    assert spi.xfer2([0x80 | rc.VERSION << 1, 0]) == [0, 0]  # its reset loads the shared MISO
    spi.close()
    readers = open_readers([(0, 0, 25), (0, 1, 24)], backend=backend)
    try:
        for chip in chips:
            chip.field.put(VirtualTag(UID4 if chip is chips[0] else UID7))
        assert [r.alive() for r in readers] == [True, True]
        assert [r.read_uid() for r in readers] == [UID4, UID7]
    finally:
        for r in readers:
            r.close()


def test_powerdown_sets_and_clears(reader, chip, backend):
    reader._xfer([rc.COMMAND << 1, rc.POWER_DOWN])
    assert reader._xfer([0x80 | rc.COMMAND << 1, 0])[1] & rc.POWER_DOWN
    reader._xfer([rc.COMMAND << 1, rc.CMD_SOFT_RESET])        # PowerDown=0: wakes after 1024 clocks
    backend.sleep(50e-6)
    assert not reader._xfer([0x80 | rc.COMMAND << 1, 0])[1] & rc.POWER_DOWN
    reader.reset()
    chip.field.put(VirtualTag(UID4))
    assert reader.read_uid() == UID4


def test_register_that_does_not_stick_is_reported(backend, caplog):
    chip = backend.add_chip(0, 0)
    original = chip._write
    chip._write = lambda addr, value: None if addr == rc.T_PRESCALER else original(addr, value)
    with caplog.at_level(logging.WARNING, logger="hw.rc522"):
        with Reader(0, 0, 25, backend=backend) as r:
            assert not r.alive()
    assert "did not stick" in caplog.text and "0x2B" in caplog.text


def test_collision_error_irq_comes_mid_frame(chip, backend):
    """ErrIRq at the colliding bit, RxIRq only at the frame's end."""
    chip.field.put(VirtualTag("11223344"))
    chip.field.put(VirtualTag("11223355"))
    with Reader(0, 0, 25, backend=backend) as r:
        x = r._xfer
        x([rc.COMMAND << 1, rc.CMD_TRANSCEIVE])
        x([rc.FIFO_DATA << 1, 0x52])
        x([rc.BIT_FRAMING << 1, 0x87])
        backend.sleep(0.001)
        x([rc.COMM_IRQ << 1, 0x7F])
        x([rc.FIFO_LEVEL << 1, 0x80])
        x([rc.FIFO_DATA << 1, 0x93, 0x20])
        x([rc.BIT_FRAMING << 1, 0x80])
        irqs = []
        for _ in range(200):
            irqs.append(x([0x80 | rc.COMM_IRQ << 1, 0])[1] & (rc.IRQ_ERR | rc.IRQ_RX))
            if irqs[-1] & rc.IRQ_RX:
                break
        assert rc.IRQ_ERR in irqs and irqs[-1] == rc.IRQ_ERR | rc.IRQ_RX


def test_one_reader_at_a_time_fails_while_a_neighbour_is_still_in_reset(backend):
    """The old power-up order: reader 0.0 configured while 0.1 still holds MISO low."""
    backend.add_chip(0, 0)
    backend.add_chip(0, 1)
    backend.wire(0, 1, 24, backend.pins())                   # wired, its RST not raised yet
    with Reader(0, 0, 25, backend=backend) as first:
        assert not first.alive()                              # everything it read was 0x00
        with Reader(0, 1, 24, backend=backend) as second:
            assert second.alive()
            first.reset()
            assert first.alive()


# ------------------------------------------------------------------------------------------ the scan's cost
def test_a_card_read_twice_is_then_checked_with_one_frame(reader, chip, backend):
    """A tag read in two polls in a row stays READY at its last cascade level; the next polls
    ask only that level's ANTICOLLISION: a few transfers, well under a full cascade's time."""
    chip.field.put(VirtualTag(UID7))
    assert reader.read_uid() == UID7 and reader.read_uid() == UID7
    for _ in range(3):
        transfers = backend.spi.transfers
        uid, spent = timed(backend.clock, reader.read_uid)
        assert uid == UID7
        # 3 writes, the CommIrqReg polls while the frame is on the air, one read of the FIFO
        assert backend.spi.transfers - transfers <= 16            # (the old WUPA + cascade: about 50)
        assert spent < 0.0015                                     # 3 frames' air time alone would be 2.2 ms


def test_a_card_swapped_for_another_is_read_at_once(reader, chip):
    first = chip.field.put(VirtualTag(UID7))
    for _ in range(3):
        assert reader.read_uid() == UID7
    chip.field.take(first)
    chip.field.put(VirtualTag("04A2B11C6F5E99"))                  # the same first level, another card
    assert reader.read_uid() == "04A2B11C6F5E99"


def test_an_empty_poll_proves_the_chip_alive_without_asking_again(reader, backend):
    assert reader.read_uid() is None
    transfers = backend.spi.transfers
    assert reader.alive()                                         # its timer just fired as programmed
    assert backend.spi.transfers == transfers
    assert reader.alive() and backend.spi.transfers == transfers + 1   # asked again: VersionReg
