"""The hub's main loop: scan the readers, report edges and state, obey the host.

Follows PROTOCOL.md (version 1).  Single-threaded and cooperative:
:meth:`Hub.step` does whatever is due and returns how long the loop may sleep;
:meth:`Hub.run` loops until ``stop()``.  All hardware comes in through the
constructor (see ``main.build``), the clock too, so the same class runs on a
Pico, under CPython with the fakes of ``mpfake`` and in the hub emulator.

Every number a host command carries is checked against PROTOCOL.md's bounds
before anything is done with it: outside them the answer is ``NAK <seq>
BADARG``, and a token is never turned into a number longer than its bound.
"""

import os

from . import proto
from .debounce import ReaderTrack
from .rc522 import ChipError
from .ticks import ticks_add, ticks_diff, ticks_ms

FW_VERSION = "0.1.0"
PROTO = 1
STATE_MS = 500
HB_MS = 1000
REVIVE_MS = 1000
MAX_SLEEP_MS = 20
TEXT_ROWS = 4
TEXT_COLS = 20           # PROTOCOL.md: a TEXT row is at most 20 characters
MAX_MS = 60000           # PROTOCOL.md: `ms` and CFG values at most 60000
UINT32 = 0xFFFFFFFF      # uptime_ms, edge_ms and the HB counters stay below 2**32
# CFG keys: (lowest, highest) accepted value.  0 is refused: no poll period would
# be a busy loop, and no absent time would turn every missed read into a GONE.
CFG_LIMITS = {"absent_ms": (1, MAX_MS), "poll_ms": (1, MAX_MS)}
CFG_DEFAULTS = {"absent_ms": 300, "poll_ms": 25}

ACK = "ACK"
NAK_BADARG = "BADARG"
NAK_UNKNOWN = "UNKNOWN"


def make_boot_id(unique_id=b""):
    """8 upper-case hex digits, random at every boot (mixed with the board's unique id)."""
    rnd = bytearray(os.urandom(4))
    for i, byte in enumerate(unique_id):
        rnd[i & 3] ^= byte
    return "%02X%02X%02X%02X" % (rnd[0], rnd[1], rnd[2], rnd[3])


def _uint(token, highest):
    """Decimal digits only, 0..highest; None otherwise (never converts more digits
    than ``highest`` has, so a 10**12 or a 400-digit token costs nothing)."""
    if not token or len(token) > len(str(highest)) or not token.isdigit():
        return None
    value = int(token)
    return value if value <= highest else None


def _hex_rgb(token):
    if len(token) != 6:
        return None
    for ch in token:
        if ch not in "0123456789ABCDEFabcdef":
            return None
    return int(token, 16)


class Hub:
    """PROTOCOL.md's hub over ``transport`` with ``readers`` (list of ``rc522.Rc522``).

    ``leds`` (``Ws2812Chain``), ``display`` (``Lcd``) and ``buzzer`` (``Buzzer``)
    may be None: commands for a missing device are still answered.
    """

    def __init__(self, readers, transport, leds=None, display=None, buzzer=None,
                 boot_id="00000000", fw_version=FW_VERSION, clock=ticks_ms, config=None,
                 proto_version=PROTO, state_ms=STATE_MS, hb_ms=HB_MS, edge_times=True):
        """``config`` overrides ``CFG_DEFAULTS`` (as the host's CFG would); ``proto_version``,
        ``state_ms``, ``hb_ms`` and ``edge_times`` (send ``@edge_ms`` in STATE) are
        PROTOCOL.md's values unless an emulation needs another hub."""
        self.readers = readers
        self.transport = transport
        self._quiet = False
        self.leds = leds
        self.display = display
        self.buzzer = buzzer
        self.boot_id = boot_id
        self.fw_version = fw_version
        self.clock = clock
        self.tracks = [ReaderTrack() for _ in readers]
        self.alive = [False] * len(readers)
        self.config = dict(CFG_DEFAULTS)
        if config:
            self.config.update(config)
        self.proto_version = proto_version
        self.state_ms = state_ms
        self.hb_ms = hb_ms
        self.edge_times = edge_times
        self.parser = proto.LineParser()
        self.rejected = 0        # valid frames that still had to be dropped
        self.tx_dropped = 0      # frames that could not be sent (the output path counts them)
        self.seq = 0
        self.rounds = 0
        self._display_ok = False
        self.uptime_ms = 0       # summed at each HB, so it outlives the 30-bit ticks' wrap
        self._last_hb = clock()
        self._hb_rounds = 0
        # uptime_ms of each reader's last SEEN/GONE; None: no edge since boot
        self.edge_ms = [None] * len(readers)

    # -- output ---------------------------------------------------------
    def send(self, payload):
        """Frame ``payload`` with the next sequence number and send it."""
        if self._quiet:
            return
        self.transport.write(proto.encode("%d %s" % (self.seq, payload)))
        self.seq = (self.seq + 1) % proto.SEQ_MOD

    def debug(self, text):
        """A ``#`` line for humans; the host only logs it."""
        self.transport.write(proto.debug(text))

    def hello(self):
        self.send("HELLO %d %s %s %d" % (self.proto_version, self.fw_version, self.boot_id, len(self.readers)))

    def state(self):
        """STATE: ``uid-or-dash@edge_ms`` per reader (no ``@`` part for a reader with
        no edge since boot).  Should the edge times not fit in one frame (many
        readers with long UIDs), the STATE goes without them -- the host then
        knows it cannot tell the order -- rather than not at all."""
        uids = [t.uid or "-" for t in self.tracks]
        if self.edge_times:
            timed = [uid if edge is None else "%s@%d" % (uid, edge) for uid, edge in zip(uids, self.edge_ms)]
            if self._fits("STATE " + " ".join(timed)):
                self.send("STATE " + " ".join(timed))
                return
        if self._fits("STATE " + " ".join(uids)):
            self.send("STATE " + " ".join(uids))
        else:
            self.tx_dropped += 1
            self.debug("STATE of %d readers does not fit in a frame" % len(uids))

    def _fits(self, payload):
        return len(payload) + 6 <= proto.MAX_PAYLOAD      # "65535 " in front

    def uptime(self, now=None):
        """Milliseconds since boot, as HB reports them (wrapping at 2**32)."""
        if now is None:
            now = self.clock()
        return (self.uptime_ms + ticks_diff(now, self._last_hb)) & UINT32

    @property
    def dropped(self):
        """Frames dropped since boot (the HB's ``dropped_frames``): input lines (garbage,
        bad CRC, over-long, bad sequence number, unknown verb) and frames that
        could not be sent."""
        unsent = self.tx_dropped + getattr(self.transport, "dropped", 0)   # the USB queue's overflow
        return (self.parser.dropped + self.rejected + unsent) & UINT32

    # -- start ----------------------------------------------------------
    def start(self):
        """Boot: bring up the readers and scan them twice, quietly, so that the first
        STATE already shows the tags lying there; then HELLO, FAULT for missing readers,
        and the display."""
        self._quiet = True                      # nothing goes out before HELLO
        for index, reader in enumerate(self.readers):
            self._bring_up(index, reader, boot=True)
        self._poll_round()
        self._poll_round()
        self._quiet = False
        now = self.clock()
        self.uptime_ms = 0
        self._last_hb = now
        self.edge_ms = [None] * len(self.readers)   # the boot scan's finds are no edges: nothing was sent
        self.hello()
        for index in range(len(self.readers)):
            if not self.alive[index]:
                self.send("FAULT %d NOREPLY" % index)
        self._init_display()
        self._hb_rounds = 0
        self._next_poll = now
        self._next_state = ticks_add(now, self.state_ms)
        self._next_hb = ticks_add(now, self.hb_ms)
        self._next_revive = ticks_add(now, REVIVE_MS)

    def _bring_up(self, index, reader, boot=False):
        try:
            ok = reader.init()
        except OSError as exc:   # SPI itself failing
            self.debug("reader %d: %s" % (index, exc))
            ok = False
        if ok and not self.alive[index]:
            self.alive[index] = True
            if not boot:
                self.send("FAULT %d OK" % index)
        elif not ok and (self.alive[index] or boot):
            self.alive[index] = False
            self.tracks[index].forget()
            self.send("FAULT %d NOREPLY" % index)
        return ok

    def _init_display(self):
        if self.display is None:
            return
        try:
            self.display.init()
            self._display_ok = True
        except OSError as exc:
            self._display_ok = False
            self.debug("display at I2C 0x%02X does not answer (%s)" % (self.display.addr, exc))

    # -- main loop ------------------------------------------------------
    def run(self, stop=None, feed=None):
        """Start, then loop until ``stop()`` is true (forever on a Pico); ``feed()``
        (a watchdog's) is called on every turn."""
        self.start()
        while stop is None or not stop():
            if feed is not None:
                feed()
            self.transport.wait(self.step())

    def step(self):
        """Do whatever is due now; return the ms the loop may sleep."""
        data = self.transport.read()
        if data:
            for payload in self.parser.feed(data):
                self._command(payload)
        if self.leds is not None and self.leds.dirty:
            self.leds.show()
        now = self.clock()
        if ticks_diff(now, self._next_poll) >= 0:
            self._poll_round()
            now = self.clock()
            self._next_poll = ticks_add(self._next_poll, self.config["poll_ms"])
            if ticks_diff(now, self._next_poll) >= 0:   # fell behind: no burst to catch up
                self._next_poll = ticks_add(now, self.config["poll_ms"])
        if ticks_diff(now, self._next_revive) >= 0:
            self._next_revive = ticks_add(now, REVIVE_MS)
            for index, reader in enumerate(self.readers):
                if not self.alive[index] and self._answers(reader):
                    self._bring_up(index, reader)
        if ticks_diff(now, self._next_state) >= 0:
            # on a fixed grid like HB (no drift), but never a burst to catch up
            self._next_state = ticks_add(self._next_state, self.state_ms)
            if ticks_diff(now, self._next_state) >= 0:
                self._next_state = ticks_add(now, self.state_ms)
            self.state()
        if ticks_diff(now, self._next_hb) >= 0:
            elapsed = ticks_diff(now, self._last_hb)
            self.uptime_ms = (self.uptime_ms + elapsed) & UINT32
            # scans_per_s: complete poll rounds per second, i.e. how often each reader is read
            rate = (self._hb_rounds * 1000 + elapsed // 2) // max(1, elapsed)
            self.send("HB %d %d %d" % (self.uptime_ms, rate & UINT32, self.dropped))
            self._hb_rounds = 0
            self._last_hb = now
            self._next_hb = ticks_add(self._next_hb, self.hb_ms)
            if ticks_diff(now, self._next_hb) >= 0:
                self._next_hb = ticks_add(now, self.hb_ms)
        wait = min(ticks_diff(self._next_poll, now), ticks_diff(self._next_state, now),
                   ticks_diff(self._next_hb, now), MAX_SLEEP_MS)
        if self.buzzer is not None:
            left = self.buzzer.update(now)
            if left is not None:
                wait = min(wait, left)
        return max(0, wait)

    @staticmethod
    def _answers(reader):
        try:
            return reader.alive()
        except OSError:
            return False

    def _poll_round(self):
        absent = self.config["absent_ms"]
        for index, reader in enumerate(self.readers):
            uid = None
            if self.alive[index]:
                uid = self._scan(index, reader)
            now = self.clock()
            for verb, tag in self.tracks[index].update(uid, now, absent):
                if not self._quiet:
                    self.edge_ms[index] = self.uptime(now)
                self.send("%s %d %s" % (verb, index, tag))
        self.rounds += 1
        self._hb_rounds += 1

    def _scan(self, index, reader):
        """The UID (hex) on one reader, or None; a dead reader is reported and reset."""
        try:
            if reader.alive():
                uid = reader.read_uid()
                return None if uid is None else "".join("%02X" % b for b in uid)
        except ChipError as exc:
            self.debug("reader %d stuck (%s): soft reset" % (index, exc))
            self._bring_up(index, reader)
            return None
        except OSError as exc:
            self.debug("reader %d: %s" % (index, exc))
        self.alive[index] = False
        self.tracks[index].forget()
        self.send("FAULT %d NOREPLY" % index)
        return None

    # -- host commands --------------------------------------------------
    def _command(self, payload):
        parts = payload.split(" ", 2)
        seq = _uint(parts[0], proto.SEQ_MOD - 1)
        if seq is None or len(parts) < 2:
            self.rejected += 1
            return
        verb = parts[1]
        args = parts[2] if len(parts) > 2 else ""
        if verb == "HELLO":
            self.hello()
        elif verb == "SNAP":
            self.state()
        elif verb in self._HANDLERS:
            ok = getattr(self, self._HANDLERS[verb])(args)
            self.send("ACK %d" % seq if ok else "NAK %d %s" % (seq, NAK_BADARG))
        else:
            self.rejected += 1
            self.send("NAK %d %s" % (seq, NAK_UNKNOWN))

    _HANDLERS = {"LED": "_cmd_led", "TEXT": "_cmd_text", "BEEP": "_cmd_beep", "CFG": "_cmd_cfg"}

    def _cmd_led(self, args):
        parts = args.split(" ")
        count = 0 if self.leds is None else self.leds.count
        if len(parts) != 2:
            return False
        index = _uint(parts[0], count - 1)
        rgb = _hex_rgb(parts[1])
        if index is None or rgb is None:
            return False
        self.leds.set(index, rgb)
        self.leds.show()            # done before the ACK says so
        return True

    def _cmd_text(self, args):
        parts = args.split(" ", 1)
        row = _uint(parts[0], TEXT_ROWS - 1)
        text = parts[1] if len(parts) > 1 else ""
        if row is None or len(text) > TEXT_COLS:
            return False
        if self.display is not None:
            if not self._display_ok:
                self._init_display()
            if self._display_ok:
                try:
                    self.display.show(row, text)
                except OSError as exc:
                    self._display_ok = False
                    self.debug("display at I2C 0x%02X: %s" % (self.display.addr, exc))
        return True

    def _cmd_beep(self, args):
        ms = _uint(args, MAX_MS)          # 0 is in bounds: it silences a beep
        if ms is None:
            return False
        if self.buzzer is not None:
            self.buzzer.beep(ms, self.clock())
        return True

    def _cmd_cfg(self, args):
        parts = args.split(" ")
        if len(parts) != 2 or parts[0] not in CFG_LIMITS:
            return False
        lowest, highest = CFG_LIMITS[parts[0]]
        value = _uint(parts[1], highest)
        if value is None or value < lowest:
            return False
        self.config[parts[0]] = value
        return True
