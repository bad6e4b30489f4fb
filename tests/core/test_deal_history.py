"""The snapshot's deal history: journal lines decoded only when read, through the one
lazy sequence of the core (controller.core.lazy)."""

from types import SimpleNamespace

import pytest

from controller.core.snapshot import DealHistory


def decode(line: str):
    decode.calls.append(line)
    return SimpleNamespace(entry={"number": int(line.split()[1])})


def test_an_undecoded_deal_is_decoded_once_and_shared_by_the_next_history():
    decode.calls = []
    cache: dict = {}
    lines = ("deal 1", "deal 2", "deal 3")
    first = DealHistory(lines, decode, cache)
    assert [d["number"] for d in first] == [1, 2, 3] and first[1:] == [{"number": 2}, {"number": 3}]
    again = DealHistory(lines, decode, cache)
    assert list(again) == list(first) and decode.calls == ["deal 1", "deal 2", "deal 3"]


def test_the_last_deal_read_from_the_end_is_the_histories_own_after_an_undo():
    """``history[-1]`` of a history with one deal fewer (an undo took the last back) is its
    own last deal, not the one the longer history cached from the end."""
    decode.calls = []
    cache: dict = {}
    longer = DealHistory(("deal 1", "deal 2", "deal 3"), decode, cache)
    assert longer[-1] == {"number": 3}
    for index in [i for i in cache if i >= 2]:        # the snapshot builder's trim after the undo
        del cache[index]
    shorter = DealHistory(("deal 1", "deal 2"), decode, cache)
    assert shorter[-1] == {"number": 2}
    with pytest.raises(IndexError):
        shorter[2]
