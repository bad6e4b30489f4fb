"""The score display: a 20x4 HD44780 character LCD behind a PCF8574 I2C backpack.

Backpack wiring (the common one): P0=RS, P1=RW, P2=E, P3=backlight,
P4..P7=D4..D7; the LCD runs in 4-bit mode.  Rows are cached so unchanged text
is not resent.  I2C errors surface as OSError (no device at the address).
"""

from .ticks import sleep_ms

RS = 0x01
EN = 0x04
BACKLIGHT = 0x08
ROW_ADDR = (0x00, 0x40, 0x14, 0x54)


class Lcd:
    """An HD44780 of ``cols`` x ``rows`` at I2C address ``addr`` of ``i2c`` (a ``machine.I2C``)."""

    def __init__(self, i2c, addr=0x27, cols=20, rows=4):
        self._i2c = i2c
        self.addr = addr
        self.cols = cols
        self.rows = rows
        self._shown = [None] * rows
        self._buf = bytearray(2)

    def _nibble(self, nibble, mode):
        byte = (nibble << 4) | mode | BACKLIGHT
        self._buf[0] = byte | EN
        self._buf[1] = byte                       # falling E latches the nibble
        self._i2c.writeto(self.addr, self._buf)

    def _send(self, value, mode=0):
        self._nibble(value >> 4, mode)
        self._nibble(value & 0x0F, mode)

    def init(self):
        """Reset into 4-bit mode, clear, display on; OSError if nobody answers."""
        self._shown = [None] * self.rows
        sleep_ms(20)
        for wait in (5, 1, 1):
            self._nibble(0x03, 0)                 # function set, 8-bit: resynchronise
            sleep_ms(wait)
        self._nibble(0x02, 0)                     # 4-bit mode
        self._send(0x28)                          # 2 lines (4 on a 20x4), 5x8 font
        self._send(0x08)                          # display off
        self._send(0x01)                          # clear
        sleep_ms(2)
        self._send(0x06)                          # entry mode: increment
        self._send(0x0C)                          # display on, no cursor
        self._shown = [" " * self.cols] * self.rows

    def show(self, row, text):
        """Write ``text`` (cut or padded to the width) on ``row``."""
        text = (text + " " * self.cols)[:self.cols]
        if self._shown[row] == text:
            return
        self._shown[row] = None                   # unknown until fully written
        self._send(0x80 | ROW_ADDR[row])
        for ch in text.encode():
            self._send(ch, RS)
        self._shown[row] = text
