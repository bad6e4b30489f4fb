"""The checkpoint journal is verified against the events file before use."""

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


# --- the quick way (the resume's speed): the last line checked, the earlier ones vouched for


def _no_full_check(monkeypatch):
    """Make the full, line-by-line check fail the test if a resume takes it."""
    from controller.store import journal

    def refused(*args, **kw):
        raise AssertionError("the resume read every journal line")

    monkeypatch.setattr(journal, "verify_while_reading", refused)


def test_a_resume_decodes_only_the_journals_last_lines(tmp_path, monkeypatch, caplog):
    from controller.store import journal

    session, played = new_session(tmp_path, 12)
    decoded = []
    real = journal.decode
    monkeypatch.setattr(journal, "decode", lambda raw, start: decoded.append(start) or real(raw, start))
    _no_full_check(monkeypatch)
    caplog.set_level(logging.WARNING)
    resumed = SessionLog(session.folder)
    tracker, count, _ = resumed.resume(GAME, None)
    assert len(decoded) == 2                            # the last line and the one before it
    assert count == table_lines(session.events_path)
    assert tracker.summary() == played.summary()        # every earlier deal read from its line
    assert store_warnings(caplog) == []
    consistent(resumed, tracker)


def _as_older_journal(path) -> None:
    """Rewrite a journal as the code before xxh3/jxxh3 wrote it."""
    from controller.store.journal import encode

    lines = []
    for raw in path.read_bytes().splitlines():
        obj = json.loads(raw)
        head = [obj.pop(key) for key in ("offset", "events", "t", "crc")]
        for key in ("xxh3", "jxxh3", "check"):
            del obj[key]
        lines.append(encode(*head, obj))
    path.write_bytes(b"".join(lines))


def test_a_journal_written_before_xxh3_resumes_and_then_goes_the_quick_way(tmp_path, monkeypatch, caplog):
    stream = events(12)
    played = DealTracker(GAME)
    cut = next(i for i, e in enumerate(stream)
               if any(s.kind == "deal" for s in played.feed(e)) and len(played.records) == 6) + 1
    session = SessionLog.create(tmp_path, GAME, None)
    play(session, DealTracker(GAME), stream[:cut])
    session.close()
    _as_older_journal(session.checkpoints_path)
    older = session.checkpoints_path.read_bytes()
    assert b'"xxh3"' not in older
    caplog.set_level(logging.WARNING)
    resumed = SessionLog(session.folder)
    tracker, _, last_t = resumed.resume(GAME, None)
    assert tracker.summary() == played.summary() and store_warnings(caplog) == []
    assert session.checkpoints_path.read_bytes() == older       # believed as it is, not rebuilt
    play(resumed, tracker, stream[cut:])                        # new lines carry xxh3 and jxxh3
    resumed.close()
    newer = session.checkpoints_path.read_bytes()
    assert newer.startswith(older) and b'"jxxh3"' in newer[len(older):]
    _no_full_check(monkeypatch)
    again = SessionLog(session.folder)
    tracker, count, _ = again.resume(GAME, None)
    assert count == table_lines(session.events_path)
    consistent(again, tracker)
    assert store_warnings(caplog) == []


def test_an_edited_earlier_line_sends_the_resume_the_full_way_and_is_rebuilt(tmp_path, caplog):
    session, played = new_session(tmp_path, 8)
    before = session.checkpoints_path.read_bytes()
    lines = before.splitlines(keepends=True)
    # deal 3's record: its writes edited, the line still JSON (its own check no longer fits)
    lines[2] = lines[2].replace(b'"number":3', b'"number":3 ', 1)
    session.checkpoints_path.write_bytes(b"".join(lines))
    caplog.set_level(logging.WARNING)
    tracker, _, _ = SessionLog(session.folder).resume(GAME, None)
    assert tracker.summary() == played.summary()
    assert len(store_warnings(caplog)) == 1
    assert session.checkpoints_path.read_bytes() == before      # rebuilt from the events


def test_a_forged_earlier_line_with_its_own_check_is_not_vouched_for(tmp_path, monkeypatch):
    """A line re-encoded whole (its check recomputed) with another record: the last line's
    jxxh3 no longer fits, so the resume does not take the earlier lines on trust."""
    from controller.store import journal

    session, played = new_session(tmp_path, 6)
    lines = session.checkpoints_path.read_bytes().splitlines(keepends=True)
    obj = json.loads(lines[1])
    head = [obj.pop(key) for key in ("offset", "events", "t", "crc", "xxh3", "jxxh3")]
    del obj["check"]
    obj["record"]["dealer"] = "seat3" if obj["record"]["dealer"] != "seat3" else "seat2"
    lines[1] = journal.encode(*head[:4], obj, *head[4:])
    session.checkpoints_path.write_bytes(b"".join(lines))
    quick = []
    real = journal.verify_last
    monkeypatch.setattr(journal, "verify_last", lambda *a: quick.append(real(*a)) or quick[-1])
    SessionLog(session.folder).resume(GAME, None)
    assert quick == [None]


def test_a_deal_ended_again_after_undo_resumes_the_full_way(tmp_path, caplog):

    from controller.core.events import TableEvent

    stream = events(3)
    tracker = DealTracker(GAME)
    end = next(i for i, e in enumerate(stream)
               if any(s.kind == "deal" for s in tracker.feed(e)) and len(tracker.records) == 2)
    last = stream[end]
    again = [TableEvent(last.t, "button", button="undo"), last._replace(event="removed", t=last.t + 0.5),
             last._replace(t=last.t + 1.0)]
    stream = stream[:end + 1] + again + [e._replace(t=e.t + 1.0) for e in stream[end + 1:]]
    session = SessionLog.create(tmp_path, GAME, None)
    played = DealTracker(GAME)
    play(session, played, stream)
    session.close()
    numbers = [json.loads(line)["record"]["number"] for line in session.checkpoints_path.read_bytes().splitlines()]
    assert numbers == [1, 2, 2, 3]
    caplog.set_level(logging.WARNING)
    resumed = SessionLog(session.folder)
    tracker, _, _ = resumed.resume(GAME, None)
    assert tracker.summary() == played.summary() and store_warnings(caplog) == []
    consistent(resumed, tracker)


def test_a_long_rebuild_keeps_its_ended_deals_on_disk_and_gives_the_same_table(tmp_path, monkeypatch):
    """A rebuild's memory stays flat in the log's length.  Every LIGHTEN_EVERY deals
    the rebuilding tracker is restored from the journal line just written (as a restart
    would), so the ended deals before it are journal lines on disk, not objects."""
    from controller.core.events import TableEvent
    from controller.store import repair

    monkeypatch.setattr(repair, "LIGHTEN_EVERY", 3)
    session, played = new_session(tmp_path, 11)
    before = session.checkpoints_path.read_bytes()
    session.checkpoints_path.unlink()
    tracker, count, _ = SessionLog(session.folder).resume(GAME, None)
    assert session.checkpoints_path.read_bytes() == before          # the same journal, rebuilt
    items, _ = tracker.records.frozen()
    assert sum(1 for item in items if isinstance(item, int)) >= 8    # earlier deals: lines on disk
    assert tracker.summary() == played.summary()
    assert tracker.events_seen == played.events_seen == count
    # and it plays on as the uninterrupted table does: the next deal, then undo into it
    more = events(12)[len(events(11)):]
    t0 = max(e.t for e in events(11)) + 1
    more = [TableEvent(e.t + t0, e.event, e.zone, e.uid, e.card, e.button) for e in more]
    more.append(TableEvent(more[-1].t + 1, "button", button="undo"))
    assert [s.to_dict() for e in more for s in tracker.feed(e)] == \
        [s.to_dict() for e in more for s in played.feed(e)]
    assert tracker.summary() == played.summary()
