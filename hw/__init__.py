"""The Raspberry Pi's own hardware: GPIO pins (LEDs, buzzer, buttons), RC522 readers, serial display.

Hardware libraries (``RPi.GPIO``, ``spidev``, ``mfrc522``) are imported lazily, only when a
real device is asked for; :mod:`hw.fake_gpio` and the mock pin factory stand in elsewhere.
"""
