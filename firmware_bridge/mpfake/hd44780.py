"""An emulated 20x4 HD44780 LCD behind a PCF8574 I2C backpack (P0=RS, P1=RW,
P2=E, P3=backlight, P4..P7=D4..D7), for ``Board.attach_i2c``.

Decodes the bytes written to the expander the way the controller would:
nibbles latched on E's falling edge, 8-bit mode until the function set that
selects 4 bits, DDRAM addressing of the 20x4 layout.  ``rows`` reads back
what a person would see.
"""

RS, RW, EN, BACKLIGHT = 0x01, 0x02, 0x04, 0x08
ROW_ADDR = (0x00, 0x40, 0x14, 0x54)


class Hd44780:
    """The LCD: ``rows`` is the text shown, ``display_on``/``backlight`` its state."""

    def __init__(self, cols=20, rows=4):
        self.cols = cols
        self.nrows = rows
        self.ddram = bytearray(b" " * 0x80)
        self.addr = 0
        self.four_bit = False
        self.display_on = False
        self.backlight = False
        self._port = 0
        self._high = None        # first nibble of a 4-bit transfer
        self.commands = []       # every command byte received

    def write(self, data):
        for byte in data:
            falling = self._port & EN and not byte & EN
            self._port = byte
            self.backlight = bool(byte & BACKLIGHT)
            if falling and not byte & RW:
                self._latch(byte >> 4, bool(byte & RS))

    def read(self, nbytes):
        return bytes([self._port]) * nbytes

    def _latch(self, nibble, rs):
        if not self.four_bit:
            self._execute(nibble << 4, rs)
            return
        if self._high is None:
            self._high = nibble
            return
        value, self._high = (self._high << 4) | nibble, None
        self._execute(value, rs)

    def _execute(self, value, rs):
        if rs:
            self.ddram[self.addr & 0x7F] = value
            self.addr = (self.addr + 1) & 0x7F
            return
        self.commands.append(value)
        if value & 0x80:
            self.addr = value & 0x7F
        elif value & 0x20:
            self.four_bit = not value & 0x10
            self._high = None
        elif value & 0x08:
            self.display_on = bool(value & 0x04)
        elif value == 0x01:
            self.ddram[:] = b" " * 0x80
            self.addr = 0
        elif value & 0xFE == 0x02:
            self.addr = 0

    @property
    def rows(self):
        """The text of each row as shown."""
        return [self.ddram[a:a + self.cols].decode("ascii", "replace") for a in ROW_ADDR[:self.nrows]]
