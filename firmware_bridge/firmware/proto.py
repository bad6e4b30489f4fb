"""Frames of PROTOCOL.md: ``$<payload>*<CRC>\\n``, CRC-16/CCITT-FALSE.

Pure code, no I/O: :func:`encode` builds a frame, :class:`LineParser` turns
received bytes into payloads and counts what it had to drop.
"""

from array import array

MAX_FRAME = 160          # bytes, '$' and '\n' included
MAX_PAYLOAD = MAX_FRAME - 7  # '$' + '*' + 4 hex + '\n'
SEQ_MOD = 65536


def _crc_table():
    table = array("H", [0] * 256)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table[i] = crc
    return table


_TABLE = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout)."""
    table = _TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFF00) ^ table[(crc >> 8) ^ byte]
    return crc


def _printable(data):
    for byte in data:
        if byte < 0x20 or byte > 0x7E or byte == 0x24 or byte == 0x2A:  # '$' '*'
            return False
    return True


def encode(payload):
    """The frame (bytes) carrying ``payload`` (str); ValueError if it can't be framed."""
    raw = payload.encode()
    if len(raw) > MAX_PAYLOAD or not _printable(raw):
        raise ValueError("payload not frameable: %r" % payload)
    return b"$" + raw + b"*" + ("%04X" % crc16(raw)).encode() + b"\n"


def debug(text):
    """A ``#`` debug line (not a frame), cut to fit and kept printable."""
    raw = bytes(b if 0x20 <= b <= 0x7E else 0x3F for b in text.encode())
    return b"# " + raw[:MAX_FRAME - 3] + b"\n"


def _is_hex(byte):
    return 0x30 <= byte <= 0x39 or 0x41 <= byte <= 0x46 or 0x61 <= byte <= 0x66


def decode_line(line):
    """The payload (str) of one line (bytes, without '\\n'), or None if it is no valid frame."""
    if line[-1:] == b"\r":
        line = line[:-1]
    n = len(line)
    if n < 6 or n + 1 > MAX_FRAME or line[0] != 0x24 or line[n - 5] != 0x2A:
        return None
    payload = line[1:n - 5]
    crc = line[n - 4:]
    for byte in crc:
        if not _is_hex(byte):
            return None
    if not _printable(payload) or int(crc.decode(), 16) != crc16(payload):
        return None
    return payload.decode()


class LineParser:
    """Splits a byte stream into lines and yields the payloads of valid frames.

    Bad lines (no '$' first, bad CRC, unprintable, over-long) are dropped and
    counted in ``dropped``; blank lines and ``#`` lines are skipped uncounted.
    """

    def __init__(self):
        self._buf = bytearray()
        self._overlong = False
        self.dropped = 0

    def feed(self, data):
        """Add received bytes; return the list of valid payloads they completed."""
        out = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._append(data[start:])
                return out
            self._append(data[start:end])
            payload = self._finish()
            if payload is not None:
                out.append(payload)
            start = end + 1

    def _append(self, chunk):
        if self._overlong or not chunk:
            return
        if len(self._buf) + len(chunk) > MAX_FRAME:  # '\r' tolerated on top of 159
            self._overlong = True
            self._buf = bytearray()
        else:
            self._buf.extend(chunk)

    def _finish(self):
        line = bytes(self._buf)
        self._buf = bytearray()
        if self._overlong:
            self._overlong = False
            self.dropped += 1
            return None
        if not line or line == b"\r" or line[0] == 0x23:  # '#'
            return None
        payload = decode_line(line)
        if payload is None:
            self.dropped += 1
        return payload
