"""Seat indicator LEDs: a chain of WS2812 ("NeoPixel") LEDs on one pin, driven by a PIO state machine.

One data pin serves any number of seats; colours are whatever the host sends
(``LED <index> <RRGGBB>``).  :meth:`Ws2812Chain.set` buffers, :meth:`Ws2812Chain.show`
sends the whole chain (~30 us per LED).
"""

from array import array


def _program(rp2):
    """The WS2812 PIO program (800 kHz at 8 MHz state-machine clock); rp2 is passed in so
    this module imports anywhere."""

    # The body is rp2's assembler DSL: asm_pio runs it with wrap_target, label,
    # out, jmp, nop, x, not_x ... as globals (hence the noqa).
    @rp2.asm_pio(sideset_init=rp2.PIO.OUT_LOW, out_shiftdir=rp2.PIO.SHIFT_LEFT,
                 autopull=True, pull_thresh=24)
    def ws2812():
        T1 = 2
        T2 = 5
        T3 = 3
        wrap_target()  # noqa: F821
        label("bitloop")  # noqa: F821
        out(x, 1)               .side(0)    [T3 - 1]  # noqa: F821
        jmp(not_x, "do_zero")   .side(1)    [T1 - 1]  # noqa: F821
        jmp("bitloop")          .side(1)    [T2 - 1]  # noqa: F821
        label("do_zero")  # noqa: F821
        nop()                   .side(0)    [T2 - 1]  # noqa: F821
        wrap()  # noqa: F821

    return ws2812


class Ws2812Chain:
    """``count`` WS2812 LEDs on ``pin`` (a ``machine.Pin``), state machine ``sm_id``."""

    def __init__(self, rp2, pin, count, sm_id=0):
        self.count = count
        self._words = array("I", [0] * count)
        self._sm = rp2.StateMachine(sm_id, _program(rp2), freq=8000000, sideset_base=pin)
        self._sm.active(1)
        self.dirty = True

    def set(self, index, rgb):
        """Colour of LED ``index`` as 0xRRGGBB (sent on the next :meth:`show`)."""
        r, g, b = (rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF
        self._words[index] = (g << 16) | (r << 8) | b   # WS2812 wants GRB
        self.dirty = True

    def show(self):
        """Send the colours to the chain."""
        self._sm.put(self._words, 8)
        self.dirty = False
