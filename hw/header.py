"""The Raspberry Pi's 40-pin header: which BCM GPIOs an enabled SPI bus takes.

Bus 0 (``dtparam=spi=on``): CE1 7, CE0 8, MISO 9, MOSI 10, SCLK 11.  Bus 1
(``dtoverlay=spi1-3cs``): CE2 16, CE1 17, CE0 18, MISO 19, MOSI 20, SCLK 21.
Read by the settings' pin check, the reader (a reset pin may not be one of
them), the fake RPi.GPIO (it refuses them while the bus is on) and the installer's
``config.txt`` advice.
"""

from __future__ import annotations

SPI_BUS_PINS: dict[int, dict[int, str]] = {
    0: {7: "CE1", 8: "CE0", 9: "MISO", 10: "MOSI", 11: "SCLK"},
    1: {16: "CE2", 17: "CE1", 18: "CE0", 19: "MISO", 20: "MOSI", 21: "SCLK"},
}
CONFIG_TXT = "/boot/firmware/config.txt"          # bookworm; /boot/config.txt before it
SPI_OVERLAYS = {0: "dtparam=spi=on", 1: "dtoverlay=spi1-3cs"}


def spi_pin_user(pin: int, buses) -> str | None:
    """``"SPI bus 1 MISO"`` if ``pin`` belongs to one of ``buses``, else None."""
    for bus in sorted(set(buses)):
        role = SPI_BUS_PINS.get(bus, {}).get(pin)
        if role is not None:
            return f"SPI bus {bus} {role} ({SPI_OVERLAYS[bus]})"
    return None


__all__ = ["SPI_BUS_PINS", "CONFIG_TXT", "SPI_OVERLAYS", "spi_pin_user"]
