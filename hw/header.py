"""The Raspberry Pi's 40-pin header: which BCM GPIOs an enabled SPI bus takes, which
header pin each GPIO is on, and which GPIOs other interfaces own.

Bus 0 (``dtparam=spi=on``): CE1 7, CE0 8, MISO 9, MOSI 10, SCLK 11.  Bus 1
(``dtoverlay=spi1-3cs``): CE2 16, CE1 17, CE0 18, MISO 19, MOSI 20, SCLK 21.
Read by the settings' pin check, the reader (a reset pin may not be one of
them), the fake RPi.GPIO (it refuses them while the bus is on), the installer's
``config.txt`` advice and the doctor's wiring table.  The header is the same on
every 40-pin Pi (B+ to 5): https://pinout.xyz and the Raspberry Pi documentation's
"GPIO and the 40-pin header".
"""

from __future__ import annotations

SPI_BUS_PINS: dict[int, dict[int, str]] = {
    0: {7: "CE1", 8: "CE0", 9: "MISO", 10: "MOSI", 11: "SCLK"},
    1: {16: "CE2", 17: "CE1", 18: "CE0", 19: "MISO", 20: "MOSI", 21: "SCLK"},
}
CONFIG_TXT = "/boot/firmware/config.txt"          # bookworm; /boot/config.txt before it
SPI_OVERLAYS = {0: "dtparam=spi=on", 1: "dtoverlay=spi1-3cs"}


# BCM GPIO -> physical header pin (odd pins on the inner row, pin 1 at the SD card end).
HEADER_PIN: dict[int, int] = {
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19, 9: 21,
    25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35, 16: 36, 26: 37,
    20: 38, 21: 40,
}
POWER_PINS: dict[str, tuple[int, ...]] = {"3V3": (1, 17), "5V": (2, 4), "GND": (6, 9, 14, 20, 25, 30, 34, 39)}

# GPIOs another interface of the Pi owns: a LED, buzzer, button or reset line there works badly
# or takes the interface away.  GPIO2/3 have 1.8 kOhm pull-ups to 3.3 V on the board; 14/15 are
# the serial console's TXD/RXD when enable_uart=1; 0/1 are read at boot for a HAT's EEPROM.
OTHER_USERS: dict[int, str] = {
    0: "ID_SD, the HAT EEPROM's I2C (read at boot)",
    1: "ID_SC, the HAT EEPROM's I2C (read at boot)",
    2: "I2C1 SDA (a 1.8 kOhm pull-up to 3.3 V on the board; an I2C display or HAT needs it)",
    3: "I2C1 SCL (a 1.8 kOhm pull-up to 3.3 V on the board; an I2C display or HAT needs it)",
    14: "UART TXD (the serial console, or a display on the Pi's UART)",
    15: "UART RXD (the serial console, or a display on the Pi's UART)",
}


def spi_pin_user(pin: int, buses) -> str | None:
    """``"SPI bus 1 MISO"`` if ``pin`` belongs to one of ``buses``, else None."""
    for bus in sorted(set(buses)):
        role = SPI_BUS_PINS.get(bus, {}).get(pin)
        if role is not None:
            return f"SPI bus {bus} {role} ({SPI_OVERLAYS[bus]})"
    return None


__all__ = ["SPI_BUS_PINS", "CONFIG_TXT", "SPI_OVERLAYS", "HEADER_PIN", "POWER_PINS", "OTHER_USERS", "spi_pin_user"]
