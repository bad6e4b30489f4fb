"""The checkpoint journal (``checkpoints.jsonl``): derived data, verified before it is trusted.

One line per ended deal, appended once the events it stands for are on disk.
Each line is a JSON object whose first keys are this module's own, followed by
the checkpoint itself (an opaque payload: the table between deals, as
``controller.store.checkpoints``/the tracker makes and restores it), and last a
checksum of the line::

    {"offset":81234,"events":612,"t":301.5,"crc":3735928559,"xxh3":1234,"jxxh3":5678, <payload>, "check":123456789}

- ``offset``: the byte length of ``events.jsonl`` the checkpoint stands for;
- ``events``: the table-event lines in those bytes;
- ``t``: the last table event's ``t``;
- ``crc``: CRC-32 of those bytes (``events.jsonl[:offset]``);
- ``xxh3``: XXH3-64 of the same bytes, and ``jxxh3``: XXH3-64 of the journal's
  own bytes before this line (both added for the resume's speed: XXH3 reads
  ~5x faster than CRC-32; lines written before them lack them and are still read);
- ``check``: CRC-32 of the line itself up to ``,"check":`` (closed with ``}``),
  so an edited or half-written line is never taken for a checkpoint.

Before a checkpoint is used it is verified against the events file: a checksum
and the event count of the bytes before its offset, and a newline just before it.
The quick way (:func:`verify_last`) reads the journal's last line from its end
and checks it against the events file (its ``xxh3``); its ``jxxh3`` vouches that
every line before it is the line once written (and verified) there, so those
lines are located but not decoded: one pass over each file.  When that does not
hold (an older journal, a mismatch, a torn or edited line), every line is decoded
and checked by its ``crc`` (:func:`verify_while_reading`, one streaming pass over
each file, nothing kept).  The journal is cut back to its last line that fits
(:meth:`Journal.truncate`), and the session's resume rebuilds the lines after it
from the events.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
import itertools
import queue
import threading
from typing import BinaryIO, Callable, Iterable

import xxhash

from .files import open_append, open_read, open_update, write_all
from .lines import MAX_LINE

_HEADER = re.compile(rb'\{"offset":(\d+),"events":(\d+),"t":([-+.eE0-9]+),"crc":(\d+)'
                     rb'(?:,"xxh3":(\d+),"jxxh3":(\d+))?[,}]')
_CHECK = b',"check":'
_DEAL = re.compile(rb'[,{]"record":\{"number":(\d+)')
# a derived line as the game log writes it: "t" first, "kind" second (FORMATS.md)
_DERIVED = re.compile(rb'^\{"t": [^,\n]*, "kind": ', re.M)
CHUNK = 1 << 20
TAIL = 1 << 16      # the journal's end is read backwards in blocks of this size


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal line: where it stands in the events file and in the journal (the
    payload stays on disk until :meth:`Journal.payload`: 10,000 lines are ~25 MB)."""

    offset: int
    events: int
    t: float
    crc: int
    deal: int | None    # the number of the ended deal it records, if the payload says
    start: int          # the line's byte offset in the journal
    length: int         # its length without the newline
    xxh3: int | None = None     # XXH3-64 of the events before ``offset`` (older lines: None)
    jxxh3: int | None = None    # XXH3-64 of the journal's bytes before the line (older lines: None)

    @property
    def end(self) -> int:
        """The byte offset in the journal just after this line."""
        return self.start + self.length + 1


class Checksums:
    """The running checksums of a file's bytes that a journal line carries: CRC-32 and XXH3-64."""

    __slots__ = ("crc", "_xxh")

    def __init__(self, crc: int = 0, xxh=None):
        self.crc = crc
        self._xxh = xxh if xxh is not None else xxhash.xxh3_64()

    def add(self, data) -> None:
        self.crc = zlib.crc32(data, self.crc)
        self._xxh.update(data)

    @property
    def xxh3(self) -> int:
        return self._xxh.intdigest()

    def copy(self) -> "Checksums":
        return Checksums(self.crc, self._xxh.copy())


def encode(offset: int, events: int, t: float, crc: int, payload: dict,
           xxh3: int | None = None, jxxh3: int | None = None) -> bytes:
    """A journal line (with its newline) for a checkpoint at ``offset``: ``crc`` and ``xxh3``
    are the events' checksums up to it, ``jxxh3`` the journal's before it (:meth:`Journal.line`
    knows it); without the last two the line is as older journals wrote it."""
    fields = {"offset": offset, "events": events, "t": t, "crc": crc}
    if xxh3 is not None and jxxh3 is not None:
        fields.update(xxh3=xxh3, jxxh3=jxxh3)
    head = json.dumps({**fields, **payload}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return head[:-1] + _CHECK + str(zlib.crc32(head)).encode() + b"}\n"


def decode(raw: bytes, start: int) -> Entry | None:
    """The entry of one journal line (without its newline) found at byte ``start`` of the
    journal, or None when the line is not one whole, unedited line."""
    cut = raw.rfind(_CHECK)
    m = _HEADER.match(raw)
    if cut < 0 or m is None or not raw.endswith(b"}"):
        return None
    digits = raw[cut + len(_CHECK):-1]
    if not digits.isdigit() or int(digits) != zlib.crc32(b"}", zlib.crc32(memoryview(raw)[:cut])):
        return None
    try:
        t = float(m.group(3))
    except ValueError:
        return None
    deal = _DEAL.match(raw, m.end() - 1) or _DEAL.search(raw, m.end() - 1)
    xxh3, jxxh3 = m.group(5, 6)
    return Entry(int(m.group(1)), int(m.group(2)), t, int(m.group(4)),
                 int(deal.group(1)) if deal else None, start, len(raw),
                 int(xxh3) if xxh3 is not None else None, int(jxxh3) if jxxh3 is not None else None)


def count_events(data: bytes) -> int:
    """Table-event lines among whole lines ``data`` (derived lines start ``{"t": …, "kind":``)."""
    return data.count(b"\n") - len(_DERIVED.findall(data))


class Journal:
    """The ``checkpoints.jsonl`` of one session."""

    def __init__(self, path: Path):
        self.path = path
        self._fh = None
        self._hash = None   # XXH3-64 state of the journal with the lines made so far, when known

    def line(self, offset: int, events: int, t: float, sums: Checksums, payload: dict) -> bytes:
        """The next journal line (to :meth:`append` after the lines made before it)."""
        if self._hash is None:
            self._hash = self._file_hash()
        data = encode(offset, events, t, sums.crc, payload, sums.xxh3, self._hash.intdigest())
        self._hash.update(data)
        return data

    def known(self, state) -> None:
        """The XXH3-64 state of the whole journal as it is (a resume computed it)."""
        self._hash = state

    def forget(self) -> None:
        """Lines made by :meth:`line` were not written: the next one's ``jxxh3`` comes from the file."""
        self._hash = None

    def _file_hash(self):
        """XXH3-64 state of the journal file (once per resume that did not compute it; a wrong
        value only sends the next resume the slower way)."""
        state = xxhash.xxh3_64()
        try:
            fh = open_read(self.path)
        except OSError:
            return state
        with fh:
            while chunk := fh.read(CHUNK):
                state.update(chunk)
        return state

    def last_lines(self, n: int = 2) -> tuple[list[Entry], bytes] | None:
        """The journal's last ``n`` lines (fewer if it has fewer), decoded, and the last one's
        bytes, read backwards from its end; None if the journal is empty, lost, or does not
        end in whole, unedited lines."""
        try:
            fh = open_read(self.path)
        except OSError:
            return None
        with fh:
            fd = fh.fileno()
            size = os.fstat(fd).st_size
            data, start = b"", size
            # the n lines and the newline ending the line before them (or the file's start)
            while start > 0 and data.count(b"\n") <= n and len(data) <= (n + 1) * (MAX_LINE + 1):
                block = max(0, start - TAIL)
                data = os.pread(fd, start - block, block) + data
                start = block
        if not data.endswith(b"\n"):
            return None
        lines = data[:-1].split(b"\n")
        if start > 0:
            lines = lines[1:]               # a line before the ones wanted, maybe partial
        lines = lines[-n:]
        start = size - sum(len(raw) + 1 for raw in lines)
        entries = []
        for raw in lines:
            entry = decode(raw, start)
            if entry is None:
                return None
            entries.append(entry)
            start = entry.end
        return (entries, lines[-1]) if entries else None

    def entries(self, on_entries: Callable[[list[Entry]], object] | None = None
                ) -> tuple[list[Entry], int, int]:
        """The journal's leading whole, self-consistent lines, in order of offset.

        Returns them, the byte length they take, and whether lines after them are
        not used (damaged, torn, or out of order): 1 if so, else 0.  ``on_entries``
        is given the entries of each chunk as soon as they are read
        (see :func:`verify_while_reading`).
        """
        try:
            fh = open_read(self.path)
        except FileNotFoundError:
            return [], 0, 0
        except OSError:         # a symlink (ELOOP) or unreadable: the journal is rebuilt
            return [], 0, 1
        good: list[Entry] = []
        end, rest, pos, carry, handed = 0, 0, 0, b"", 0
        with fh:
            # whole chunks split into lines (10,000 lines: a readline each would cost more)
            while rest == 0 and (chunk := fh.read(CHUNK)):
                lines = (carry + chunk).split(b"\n")
                carry = lines.pop()
                if len(carry) > MAX_LINE:
                    rest = 1
                for raw in lines:
                    entry = decode(raw, pos)
                    pos += len(raw) + 1
                    if entry is None or (good and (entry.offset <= good[-1].offset
                                                   or entry.events < good[-1].events)):
                        rest = 1
                        break
                    good.append(entry)
                    end = entry.end
                if on_entries is not None:
                    on_entries(good[handed:])
                    handed = len(good)
            if carry and not rest:
                rest = 1        # a torn last line
        return good, end, rest

    def payload(self, entry: Entry) -> dict:
        """The checkpoint of one entry, read from the journal."""
        with open_read(self.path) as fh:
            fh.seek(entry.start)
            return json.loads(fh.read(entry.length))

    def truncate(self, length: int) -> None:
        """Cut the journal to its first ``length`` bytes (a symlink is removed instead)."""
        self.close()
        self._hash = None
        try:
            fh = open_update(self.path)
        except FileNotFoundError:
            return
        except OSError:
            os.unlink(self.path)    # never cut through a symlink: drop the link itself
            return
        with fh:
            fh.truncate(length)
            os.fsync(fh.fileno())

    def append(self, lines: bytes, sync: bool = True) -> None:
        """Append whole journal lines (made by :meth:`line`), fsync'd unless ``sync`` is false
        (OSError to the caller).

        A short write is cut off again, so the journal never keeps half a line.
        """
        if self._fh is None:
            self._fh = open_append(self.path)
        fd = self._fh.fileno()
        size = os.fstat(fd).st_size
        try:
            write_all(fd, lines)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            self._hash = None
            raise
        if sync:
            os.fsync(fd)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


@dataclass(frozen=True, slots=True)
class Tail:
    """A journal whose last line :func:`verify_last` found to fit: that line, the one before
    it, where the lines before it start, and the running checksums at its end."""

    last: Entry
    before: Entry | None
    starts: list[int]       # byte offsets in the journal of the lines before ``last``, in order
    sums: Checksums         # of the events file up to ``last.offset``
    journal: object         # XXH3-64 state of the whole journal


def verify_last(journal: Journal, events: BinaryIO, size: int) -> Tail | None:
    """The quick way: the journal's last line, checked against the events file (of ``size``
    bytes) like every checkpoint, and through its ``jxxh3`` every line before it (located,
    not decoded).  None when that cannot be said (an older journal, a line that does not
    fit, a deal ended again after ``undo``): :func:`verify_while_reading` then decides.
    """
    found = journal.last_lines(2)
    if found is None:
        return None
    entries, raw = found
    last = entries[-1]
    before = entries[-2] if len(entries) > 1 else None
    if last.xxh3 is None or last.deal is None:
        return None
    if before is not None and (before.offset >= last.offset or before.events > last.events):
        return None
    # the events are hashed in a thread while the journal is: both read and hash outside the GIL
    hashed: list = [None]

    def hash_events() -> None:
        try:
            hashed[0] = _hash_prefix(events, last.offset, size)
        except OSError:
            pass                    # cannot be read: the slower way says so

    worker = threading.Thread(target=hash_events, name="checkpoint check")
    worker.start()
    try:
        located = line_starts(journal.path, last.start)
    finally:
        worker.join()
    state = hashed[0]
    if state is None or state.intdigest() != last.xxh3:
        return None
    if located is None or located[1].intdigest() != last.jxxh3:
        return None
    starts, whole = located
    # one line per deal 1 … n-1 before the line of deal n: no deal was ended twice (an undo
    # after a deal's end), so the lines are the deals in order (else :func:`chain` decides)
    if len(starts) != last.deal - 1 or (before is not None and starts[-1] != before.start):
        return None
    whole.update(raw)
    whole.update(b"\n")
    return Tail(last, before, starts, Checksums(last.crc, state), whole)


def _hash_prefix(fh: BinaryIO, offset: int, size: int):
    """XXH3-64 state of a file's first ``offset`` bytes (of ``size``), or None when the file
    is shorter or those bytes do not end in a newline; one buffer, however long the file."""
    if offset <= 0 or offset > size:
        return None
    state = xxhash.xxh3_64()
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    fh.seek(0)
    done = have = 0
    while done < offset:
        have = fh.readinto(view[:min(CHUNK, offset - done)])
        if not have:
            return None
        state.update(view[:have])
        done += have
    return state if buf[have - 1] == 0x0A else None


def checksums_of(fh: BinaryIO, offset: int) -> Checksums:
    """The checksums of a file's first ``offset`` bytes (read in chunks)."""
    sums = Checksums()
    fh.seek(0)
    left = offset
    while left > 0 and (chunk := fh.read(min(CHUNK, left))):
        sums.add(chunk)
        left -= len(chunk)
    return sums


def line_starts(path: Path, end: int):
    """The byte offsets of the lines in a journal's first ``end`` bytes, and the XXH3-64
    state of those bytes, in one pass of fixed memory; None if the file is shorter or
    those bytes do not end a line."""
    try:
        fh = open_read(path)
    except OSError:
        return None
    starts = [0]
    state = xxhash.xxh3_64()
    base = 0
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    with fh:
        while base < end:
            have = fh.readinto(view[:min(CHUNK, end - base)])
            if not have:
                return None
            state.update(view[:have])
            i = buf.find(b"\n", 0, have)
            while i >= 0:
                starts.append(base + i + 1)
                i = buf.find(b"\n", i + 1, have)
            base += have
    if starts.pop() != end:     # the last newline ends the bytes: the next line starts at ``end``
        return None
    return starts, state


def verify_while_reading(journal: Journal, events: BinaryIO, size: int
                         ) -> tuple[list[Entry], int, int, int, Checksums]:
    """:meth:`Journal.entries` and :func:`verify` at once: the events file is checked in a
    thread while the journal is read (its checksum work runs outside the GIL, so a long
    session's resume costs about the longer of the two, not their sum).

    Returns the entries, their byte length, the unused-lines flag, how many entries
    fit the events, and the checksums at the last that fits.
    """
    handed: queue.SimpleQueue = queue.SimpleQueue()
    result: list = [0, Checksums()]

    def check() -> None:
        try:
            result[:] = verify(itertools.chain.from_iterable(iter(handed.get, None)), events, size)
        except OSError:
            result[:] = [0, Checksums()]    # the events cannot be read: no checkpoint is trusted

    checker = threading.Thread(target=check, name="checkpoint check")
    checker.start()
    try:
        entries, length, rest = journal.entries(handed.put)
    finally:
        handed.put(None)
        checker.join()
    return entries, length, rest, result[0], result[1]


def verify(entries: Iterable[Entry], events: BinaryIO, size: int) -> tuple[int, Checksums]:
    """How many leading ``entries`` fit the events file (of ``size`` bytes), and the
    checksums of the events up to the last that fits.

    Each entry's CRC-32 of the bytes before its offset (and its XXH3-64, when it has
    one) and the newline just before it are checked in one pass over the file, read
    in chunks into one buffer (memory stays flat however long the log).
    """
    events.seek(0)
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    base = have = done = 0      # file offset of buf[0], bytes in buf, bytes of buf summed
    sums, good, fit = Checksums(), Checksums(), 0
    previous = 0
    for entry in entries:
        if entry.offset > size or entry.offset <= previous:
            break
        while entry.offset > base + have:
            sums.add(view[done:have])
            base, done = base + have, 0
            have = events.readinto(view) or 0
            if not have:
                return fit, good
        k = entry.offset - base
        sums.add(view[done:k])
        done = k
        if (sums.crc != entry.crc or buf[k - 1] != 0x0A
                or (entry.xxh3 is not None and sums.xxh3 != entry.xxh3)):
            break
        fit, good, previous = fit + 1, sums.copy(), entry.offset
    return fit, good


def chain(entries: list[Entry]) -> list[Entry]:
    """The lines of the deals 1 … n ending at the last entry: a deal taken back by ``undo``
    and ended again has a later line that replaces the earlier one."""
    out: list[Entry] = []
    for entry in entries:
        number = entry.deal
        if number is not None:
            del out[number - 1:]
        out.append(entry)
    return out
