"""Regenerate the perf golden test's input sessions (run once; the outputs are committed).

    python tests/core/data/perf/make_sessions.py

A mixed contract game with table noise and a noisy raspasovka session, each with
hand-written edge lines spliced in (derived lines, lines that merely mention
"kind", odd spacing, duplicate keys, bad values, bytes that are not UTF-8, ...),
so that the replay's fast paths are held to the slow path's results.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "core")]

from contract_games import MixedGame  # noqa: E402
from controller.app.sim import Noise, TableSimulator  # noqa: E402
from controller.core.config import GameConfig, Rules, Table  # noqa: E402

# {t} is replaced by the previous event line's t (so only the lines meant to go back in time do)
EDGE = [
    '{"t": {t}, "kind": "play", "deal": 1, "zone": "seat1", "card": "7s"}',
    '{"t": {t}, "kind": "play", "deal": 1',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "Kh", "note": "kind"}',
    '{"t": {t}, "zone": "seat2", "event": "removed", "card": "kind"}',
    '{"t":{t},"zone":"seat1","event":"removed","card":"Kh"}',
    '   {"t": {t}, "zone": "seat3", "event": "placed", "card": "Th"}   ',
    '{"t": {t}, "zone": "seat3", "event": "removed", "card": "10h"}\r',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "K\\u0068"}',
    '{"t": {t}, "zone": "seat1", "event": "removed", "card": "kh"}',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "Kh", "card": "Qs"}',
    '{"t": {t}, "zone": "seat1", "event": "removed", "card": "Qs", "uid": "04AB"}',
    '{"t": {t}, "zone": "seat1", "event": "removed", "card": "Qs"}',
    '{"t": {t}, "zone": "seat2", "event": "placed", "uid": "04ab"}',
    '{"t": {t}, "zone": "seat2", "event": "removed", "uid": "04AB"}',
    '{"t": {t}, "zone": "seat2", "event": "placed", "uid": "04xz"}',
    '{"t": {t}, "zone": "seat9", "event": "placed", "card": "7s"}',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "Xx"}',
    '{"t": {t}, "zone": "seat1", "event": "put", "card": "7s"}',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "7s", "button": "undo"}',
    '{"t": 99999999999999, "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": 1000000000000.5, "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": -1, "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": NaN, "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": true, "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": "1", "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": 0.0, "zone": "seat1", "event": "placed", "card": "7s"}',
    '{"t": 0, "zone": "seat1", "event": "removed", "card": "7s"}',
    '{"t": {t}, "event": "button", "button": "confirm"}',
    '{"t": {t}, "event": "button", "button": "jump"}',
    '{"t": {t}, "event": "bid", "seat": "seat7", "bid": "6S"}',
    '{"t": {t}, "event": "whist_mode", "mode": "open"}',
    '[1, 2]',
    '"kind"',
    '',
    '\u00a0',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "7s"} x',
    '{"t": {t}, "zone": "seat1", "event": "placed", "card": "7\u2660"}',
    '{"t": {t}, "zone": "seat1", "event": "removed", "card": "7\u2660"}',
]


def events_lines(events) -> list[str]:
    return [event.to_json() for event in events]


def splice(lines: list[str], every: int) -> list[bytes]:
    out: list[bytes] = ["\ufeff".encode() + lines[0].encode()]
    last_t = json.loads(lines[0])["t"]
    edge = 0
    for number, line in enumerate(lines[1:], start=1):
        if number % every == 0:
            text = EDGE[edge % len(EDGE)].replace("{t}", repr(last_t))
            out.append(text.encode("utf-8"))
            edge += 1
            if edge % 11 == 0:
                out.append(b'{"t": 1.0, "zone": "seat1", "event": "placed", "card": "\xff"}')
        out.append(line.encode())
        last_t = json.loads(line)["t"]
    return out


def main() -> None:
    mixed = GameConfig(Table(), Rules(bidding=True))
    lines = events_lines(MixedGame(mixed, seed=3, noise=True).deals(60))
    (HERE / "mixed.jsonl.gz").write_bytes(gzip.compress(b"\n".join(splice(lines, 31)) + b"\n", mtime=0))
    sim = TableSimulator(GameConfig(), seed=5, noise=Noise.demo())
    lines = events_lines(sim.deals(40))
    (HERE / "raspasovka.jsonl.gz").write_bytes(gzip.compress(b"\n".join(splice(lines, 23)) + b"\n", mtime=0))


if __name__ == "__main__":
    main()
