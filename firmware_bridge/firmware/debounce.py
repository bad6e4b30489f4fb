"""Debouncing of one reader (PROTOCOL.md): SEEN after 2 consecutive polls
with the same UID, GONE once the reported tag went unseen for ``absent_ms``.

Pure logic: :meth:`ReaderTrack.update` takes one poll's result and the time
and returns the edges to report, in order.
"""

from .ticks import ticks_diff

SEEN = "SEEN"
GONE = "GONE"


class ReaderTrack:
    """What one reader reports: ``uid`` (str or None) is the tag it announced."""

    def __init__(self):
        self.uid = None          # reported tag (after SEEN, until GONE)
        self._last_seen = 0      # ticks the reported tag was last read
        self._candidate = None   # UID of the previous poll, not yet reported
        self._count = 0          # consecutive polls that read _candidate

    def update(self, uid, now, absent_ms):
        """Record one poll (``uid`` or None) at ticks ``now``; return [(verb, uid), ...]."""
        edges = []
        if uid is not None and uid == self.uid:
            self._last_seen = now
            self._candidate, self._count = None, 0
            return edges
        if uid is None:
            self._candidate, self._count = None, 0
        elif uid == self._candidate:
            self._count += 1
        else:
            self._candidate, self._count = uid, 1
        if self._count >= 2:
            if self.uid is not None:  # another tag took the reader's place
                edges.append((GONE, self.uid))
            self.uid, self._last_seen = uid, now
            self._candidate, self._count = None, 0
            edges.append((SEEN, uid))
        elif self.uid is not None and ticks_diff(now, self._last_seen) >= absent_ms:
            edges.append((GONE, self.uid))
            self.uid = None
        return edges

    def forget(self):
        """Drop the pending candidate (a reader that stopped answering)."""
        self._candidate, self._count = None, 0
