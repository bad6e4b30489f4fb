"""Entry point of the hub firmware: build the hub from the board's pins and run it.

On a Pico, ``main()`` imports ``machine``/``rp2`` and talks over USB CDC.
Under CPython, pass fakes (``firmware_bridge.mpfake``) and a transport in.
``PINS`` is the wiring README.md describes; ``config`` overrides any of it.
"""

from . import proto
from .buzzer import Buzzer
from .hub import Hub, make_boot_id
from .lcd import Lcd
from .leds import Ws2812Chain
from .rc522 import Rc522

PINS = {
    "spi": 0, "sck": 18, "mosi": 19, "miso": 16, "spi_baud": 4000000,
    "reader_cs": (17, 20, 21, 22, 26, 27),   # one chip-select per RC522, reader 0 first
    "reader_rst": 14,                        # NRSTPD of every RC522, held high
    "i2c": 0, "sda": 4, "scl": 5, "i2c_freq": 100000, "lcd_addr": 0x27,
    "led_pin": 2, "led_count": 8,            # WS2812 chain
    "buzzer": 15, "buzzer_freq": 2700,
    "watchdog_ms": 3000,                     # machine.WDT; 0: none
}


def build(machine, rp2, transport, config=None, clock=None):
    """The :class:`Hub` wired as ``PINS`` (updated with ``config``) says; ``clock`` (a
    ``ticks_ms``) is the board's unless a test passes its own."""
    pins = dict(PINS)
    if config:
        pins.update(config)
    Pin = machine.Pin
    Pin(pins["reader_rst"], Pin.OUT, value=1)
    cs_pins = [Pin(cs, Pin.OUT, value=1) for cs in pins["reader_cs"]]
    spi = machine.SPI(pins["spi"], baudrate=pins["spi_baud"], polarity=0, phase=0,
                      sck=Pin(pins["sck"]), mosi=Pin(pins["mosi"]), miso=Pin(pins["miso"]))
    readers = [Rc522(spi, cs) for cs in cs_pins]
    i2c = machine.I2C(pins["i2c"], sda=Pin(pins["sda"]), scl=Pin(pins["scl"]), freq=pins["i2c_freq"])
    display = Lcd(i2c, pins["lcd_addr"])
    leds = None
    if pins["led_count"]:
        leds = Ws2812Chain(rp2, Pin(pins["led_pin"], Pin.OUT), pins["led_count"])
    buzzer = Buzzer(machine.PWM(Pin(pins["buzzer"])), pins["buzzer_freq"])
    timing = {} if clock is None else {"clock": clock}
    return Hub(readers, transport, leds=leds, display=display, buzzer=buzzer,
               boot_id=make_boot_id(machine.unique_id()), **timing)


def main(machine=None, rp2=None, transport=None, stop=None, config=None, clock=None):
    """Run the hub until ``stop()`` is true (never, on a Pico).

    A watchdog (``watchdog_ms``) reboots a hung board; on the board itself
    (no ``transport`` passed in) an unexpected error is reported on a ``#``
    line and the board reboots -- the host sees a new boot_id and resyncs.
    Given a ``transport`` (CPython), errors propagate to the caller.
    """
    on_board = transport is None
    if machine is None:
        import machine
    if rp2 is None:
        import rp2
    if on_board:
        import micropython
        from .transport import UsbTransport
        micropython.kbd_intr(-1)     # a stray 0x03 from the host must not stop the firmware
        transport = UsbTransport()
    hub = build(machine, rp2, transport, config, clock)
    timeout = (config or {}).get("watchdog_ms", PINS["watchdog_ms"])
    feed = machine.WDT(timeout=timeout).feed if timeout else None
    try:
        hub.run(stop, feed)
    except Exception as exc:
        if not on_board:
            raise
        transport.write(proto.debug("fatal: %r; rebooting" % (exc,)))
        machine.reset()
    return hub
