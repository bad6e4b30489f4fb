"""The Pico's USB CDC serial port as MicroPython's stdio sees it, on a virtual clock.

What is modelled follows MicroPython's TinyUSB glue, ``shared/tinyusb/mp_usbd_cdc.c``
(``mp_usbd_cdc_poll_interfaces`` and ``mp_usbd_cdc_tx_strn``) and
``shared/tinyusb/tusb_config.h``:

- the device's transmit FIFO holds ``CFG_TUD_CDC_TX_BUFSIZE`` bytes (256 at full
  speed); the host takes bytes out of it at ``drain_bytes_per_s`` (0: the port
  is open but nobody reads) as the virtual clock moves;
- ``poll`` reports the port writable when the host is not connected, or when
  ``tud_cdc_write_available() > 0`` -- one free byte is enough;
- a write is cut into ``CFG_TUD_CDC_EP_BUFSIZE`` (64-byte) pieces; while
  connected, each piece waits until that many bytes are free, in 1 ms steps
  (``mp_event_wait_ms(1)``) for up to ``MICROPY_HW_USB_CDC_TX_TIMEOUT`` (500 ms),
  then writes what fits; if nothing fits the write stops there and returns the
  count written.  The firmware's loop is stalled meanwhile: the wait moves the
  virtual clock, so a watchdog fed by that loop sees the gap;
- not connected, the FIFO keeps the newest bytes (the oldest are overwritten).

Input: :meth:`UsbCdc.host_send` puts bytes where ``sys.stdin.buffer`` reads them.

The clock is the hub's ``ticks_ms`` look-alike (:class:`~firmware_bridge.mpfake.devices.HubTicks`
with ``realtime=False``): nothing here sleeps for real.  :attr:`UsbCdc.select` is a
``select``-module look-alike whose ``poll()`` objects understand these streams,
with a poll timeout passing as virtual time.
"""

import types

TX_BUFSIZE = 256          # CFG_TUD_CDC_TX_BUFSIZE, full speed
EP_BUFSIZE = 64           # CFG_TUD_CDC_EP_BUFSIZE
TX_TIMEOUT_MS = 500       # MICROPY_HW_USB_CDC_TX_TIMEOUT
POLLIN, POLLOUT = 0x0001, 0x0004


class UsbCdc:
    """The CDC port: ``stdout``/``stdin`` streams for the firmware, ``received`` for the host."""

    def __init__(self, ticks, drain_bytes_per_s=11000.0, capacity=TX_BUFSIZE, connected=True):
        self.ticks = ticks                     # the hub's ms clock: called to read, advance(ms) to move
        self.drain_bytes_per_s = drain_bytes_per_s
        self.capacity = capacity
        self.connected = connected
        self.fifo = bytearray()                # written by the firmware, not yet taken by the host
        self.received = bytearray()            # what the host has read
        self.inbox = bytearray()               # host -> firmware
        self.blocked_ms = 0                    # time the firmware spent inside writes, waiting for room
        self.longest_block_ms = 0
        self._last = ticks()
        self._credit = 0.0
        self.stdout = _Stdout(self)
        self.stdin = _Stdin(self)
        self.select = types.SimpleNamespace(poll=lambda: _Poll(self), POLLIN=POLLIN, POLLOUT=POLLOUT)

    # -- the host side --------------------------------------------------
    def host_send(self, data):
        self.inbox.extend(data)

    def drain(self):
        """Let the host take what it reads at its rate since the last look."""
        now = self.ticks()
        elapsed = max(0, now - self._last)
        self._last = now
        if not self.connected:
            return
        self._credit += elapsed / 1000.0 * self.drain_bytes_per_s
        take = min(len(self.fifo), int(self._credit))
        if take:
            self.received.extend(self.fifo[:take])
            del self.fifo[:take]
            self._credit -= take
        if not self.fifo:
            self._credit = min(self._credit, 1.0)      # an idle host does not save up

    def free(self):
        self.drain()
        return self.capacity - len(self.fifo)

    def wait_ms(self, ms):
        """Virtual time passes (the firmware sleeping, or stuck in a write)."""
        self.ticks.advance(ms)
        self.drain()

    # -- the device side (mp_usbd_cdc_tx_strn) ---------------------------
    def tx_strn(self, data):
        data = bytes(data)
        i = 0
        while i < len(data):
            n = min(len(data) - i, EP_BUFSIZE)
            if self.connected:
                waited = 0
                while n > self.free() and waited < TX_TIMEOUT_MS:
                    self.wait_ms(1)
                    waited += 1
                self.blocked_ms += waited
                self.longest_block_ms = max(self.longest_block_ms, waited)
                n = min(n, self.free())
                if n == 0:
                    break
                self.fifo.extend(data[i:i + n])
            else:
                self.fifo.extend(data[i:i + n])
                del self.fifo[:max(0, len(self.fifo) - self.capacity)]
            i += n
        return i

    def writable(self):
        return not self.connected or self.free() > 0

    def readable(self):
        return bool(self.inbox)


class _Stdout:
    """``sys.stdout.buffer`` (and the object ``select`` registers for POLLOUT)."""

    def __init__(self, cdc):
        self._cdc = cdc

    def write(self, data):
        return self._cdc.tx_strn(data)


class _Stdin:
    """``sys.stdin.buffer`` (and the object ``select`` registers for POLLIN)."""

    def __init__(self, cdc):
        self._cdc = cdc

    def read(self, n=-1):
        inbox = self._cdc.inbox
        n = len(inbox) if n is None or n < 0 else min(n, len(inbox))
        data = bytes(inbox[:n])
        del inbox[:n]
        return data


class _Poll:
    """``select.poll()`` over the CDC streams; ``poll(timeout_ms)`` lets virtual time pass
    until a registered event is ready or the timeout has gone by."""

    def __init__(self, cdc):
        self._cdc = cdc
        self._registered = []

    def register(self, obj, mask=POLLIN | POLLOUT):
        self._registered = [(o, m) for o, m in self._registered if o is not obj] + [(obj, mask)]

    def unregister(self, obj):
        self._registered = [(o, m) for o, m in self._registered if o is not obj]

    def _ready(self):
        out = []
        for obj, mask in self._registered:
            events = 0
            if mask & POLLIN and isinstance(obj, _Stdin) and self._cdc.readable():
                events |= POLLIN
            if mask & POLLOUT and isinstance(obj, _Stdout) and self._cdc.writable():
                events |= POLLOUT
            if events:
                out.append((obj, events))
        return out

    def poll(self, timeout_ms=-1):
        ready = self._ready()
        if ready or not timeout_ms:
            return ready
        if timeout_ms < 0:
            raise ValueError("a poll without timeout would wait for ever on the virtual clock")
        for _ in range(int(timeout_ms)):             # 1 ms steps: the host may free room meanwhile
            self._cdc.wait_ms(1)
            ready = self._ready()
            if ready:
                return ready
        return []
