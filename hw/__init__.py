"""The Raspberry Pi's own hardware: GPIO pins (LEDs, buzzer, buttons), RC522 readers, serial display.

Hardware libraries (``RPi.GPIO`` or its Pi 5 drop-in ``rpi-lgpio``, ``spidev``, ``mfrc522``) are
imported lazily, only when a real device is asked for; :mod:`hw.fake_gpio`, the mock pin factory
and the emulated MFRC522 (:mod:`hw.rc522_chip`) stand in elsewhere.  :mod:`hw.rc522_regs` is the
one register table, :mod:`hw.header` the SPI buses' pins, :mod:`hw.check` ``doctor --live``.
"""
