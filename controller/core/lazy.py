"""Sequences whose items are decoded only when read: a long session's ended deals stay
checkpoint-journal lines (FORMATS.md "Game log") until an output or ``undo`` needs one.

:class:`LazySequence` is the sequence protocol once (length, an index or a slice, then
the iteration, ``in`` and ``index`` of :class:`collections.abc.Sequence`); a subclass says
how one stored item becomes what it holds.  The snapshot's deal history
(:class:`controller.core.snapshot.DealHistory`) is one, the tracker's ended deals
(:class:`controller.core.records.Records`) another.
"""

from __future__ import annotations

from collections.abc import Sequence


class LazySequence(Sequence):
    """``items`` as stored (decoded or not); :meth:`_item` gives the one at an index."""

    def __init__(self, items=()):
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(len(self._items)))]
        if index < 0:
            index += len(self._items)
        if not 0 <= index < len(self._items):
            raise IndexError("index out of range")
        return self._item(index)

    def _item(self, index: int):
        raise NotImplementedError
