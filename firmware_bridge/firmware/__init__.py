"""The table hub's MicroPython firmware (Raspberry Pi Pico); also runs under CPython with ``firmware_bridge.mpfake``."""
