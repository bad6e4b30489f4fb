"""Fakes of MicroPython's hardware modules so the hub firmware runs unchanged under CPython.

:class:`machine.Board` is the world around the RP2040 (emulated SPI chips per
chip-select pin, I2C devices, PWM and PIO outputs); ``board.modules()`` gives
the ``machine``/``rp2``/``micropython`` look-alikes bound to it, and
:class:`runner.FirmwareRunner` runs the firmware's real ``main()`` in a
thread, talking over a pty; :class:`usb_cdc.UsbCdc` is the Pico's USB CDC port itself
(its transmit FIFO, a host draining it at a set rate, MicroPython's blocking write) on
a virtual clock.  Nothing is put in ``sys.modules``.
"""
