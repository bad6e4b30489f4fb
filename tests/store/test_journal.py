"""Issue 10, case 1: the checkpoint journal is verified against the events file before use."""

import json
import logging

from controller.core.tracker import DealTracker
from controller.store.gamelog import SessionLog

from played import GAME, consistent, events, new_session, play, store_warnings, table_lines


def test_events_that_shrank_and_grew_again_do_not_revive_stale_checkpoints(tmp_path, caplog):
    session, _ = new_session(tmp_path, 12)
    full = session.events_path.stat().st_size
    with open(session.events_path, "rb+") as fh:        # a power cut loses the page cache
        fh.truncate(full // 3)
    resumed = SessionLog(session.folder)
    tracker, _, last_t = resumed.resume(GAME, None)
    # the table plays on (another game: the players do not re-lay what was lost) past the old size
    play(resumed, tracker, events(14, seed=7, t0=last_t + 1))
    resumed.close()
    assert session.events_path.stat().st_size > full
    caplog.clear()
    again = SessionLog(session.folder)
    tracker, count, _ = again.resume(GAME, None)
    assert count == table_lines(session.events_path)
    consistent(again, tracker)
    assert store_warnings(caplog) == []                 # the first resume repaired the journal


def test_an_edited_checkpoint_is_not_believed(tmp_path):
    session, played = new_session(tmp_path, 6)
    lines = session.checkpoints_path.read_bytes().splitlines()
    last = json.loads(lines[-1])

    def edit(node):             # the pulka's gora of seat1, wherever the payload keeps it
        if isinstance(node, dict):
            if isinstance(node.get("gora"), dict) and "seat1" in node["gora"]:
                node["gora"]["seat1"] = "9999"
                return True
            return any(edit(v) for k, v in node.items() if k != "record")
        return False

    assert edit(last)
    lines[-1] = json.dumps(last, separators=(",", ":")).encode()
    session.checkpoints_path.write_bytes(b"\n".join(lines) + b"\n")
    tracker, count, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    consistent(session, tracker)


def test_a_damaged_journal_gives_one_warning_once_and_is_repaired(tmp_path, caplog):
    session, played = new_session(tmp_path, 8)
    lines = session.checkpoints_path.read_bytes().splitlines()
    damaged = lines[:3] + [b'{"offset":' + line[10:-20] + b"}" for line in lines[3:]]
    session.checkpoints_path.write_bytes(b"\n".join(damaged) + b"\n")
    caplog.set_level(logging.WARNING)
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    assert len(store_warnings(caplog)) == 1
    from controller.store.journal import decode
    rebuilt = session.checkpoints_path.read_bytes().splitlines()
    assert len(rebuilt) == len(lines) and all(decode(line, 0) for line in rebuilt)
    caplog.clear()
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    assert store_warnings(caplog) == []


def test_a_lost_journal_rebuilds_itself(tmp_path, caplog):
    session, played = new_session(tmp_path, 5)
    before = session.checkpoints_path.read_bytes()
    session.checkpoints_path.unlink()
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    assert session.checkpoints_path.read_bytes() == before     # the same lines, rebuilt from the events
    # and the rebuilt journal is what the next resume starts from
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    assert tracker.summary() == played.summary()


def test_every_checkpoint_is_checked_against_the_bytes_before_it(tmp_path):
    session, played = new_session(tmp_path, 6)
    data = bytearray(session.events_path.read_bytes())
    first = json.loads(session.checkpoints_path.read_bytes().splitlines()[0])
    # same length, other bytes, inside the first deal: every checkpoint after it is stale
    at = data.index(b'"t": ', first["offset"] // 2) + 5
    data[at] = ord("9") if data[at] != ord("9") else ord("8")
    session.events_path.write_bytes(bytes(data))
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    consistent(resumed, tracker)


def test_summary_of_a_resumed_long_session_reads_earlier_deals_from_the_journal(tmp_path):
    session, played = new_session(tmp_path, 30)
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    whole = DealTracker(GAME)
    whole.feed_all(events(30))
    assert tracker.summary() == whole.summary() == played.summary()


def test_a_checkpoint_that_cannot_be_restored_is_rebuilt_once(tmp_path, caplog):
    from controller.store.journal import decode, encode

    session, played = new_session(tmp_path, 4)
    lines = session.checkpoints_path.read_bytes().splitlines()
    last = decode(lines[-1], 0)
    # a whole, self-consistent line that fits the events, but whose payload is not a table
    lines[-1] = encode(last.offset, last.events, last.t, last.crc, {"record": {"number": 4}})[:-1]
    session.checkpoints_path.write_bytes(b"\n".join(lines) + b"\n")
    caplog.set_level(logging.WARNING)
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    assert len(store_warnings(caplog)) == 1
    caplog.clear()
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary() and store_warnings(caplog) == []
