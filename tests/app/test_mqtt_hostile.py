"""The MQTT publisher and the club board under hostile use: links in the log dir, table ids
that are not names, descriptors, unbounded files, escape sequences, deep JSON."""

import json
import os

import pytest

from controller.app.mqtt import MARK_FILE, Outbox, unfinished_outboxes
from controller.core.errors import LogError

SESSION = "2026-12-01T08-00-00Z"


def _session(folder, lines=5):
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(json.dumps({"t": float(i)}) + "\n" for i in range(lines)))
    return folder


# --- links ---------------------------------------------------------------------------------------

def test_the_acked_mark_is_never_written_through_a_link(tmp_path):
    folder = _session(tmp_path / "logs" / SESSION)
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file\n")
    (folder / MARK_FILE).symlink_to(outside)
    box = Outbox(folder)
    box.take(3)
    for line in (1, 2, 3):
        box.answer(line, True)
    box.save()
    box.close()
    assert outside.read_text() == "someone else's file\n"
    assert not (folder / MARK_FILE).is_symlink()
    assert json.loads((folder / MARK_FILE).read_text()) == {"line": 3}


def test_a_symlinked_session_folder_is_not_published(tmp_path):
    elsewhere = _session(tmp_path / "elsewhere" / SESSION)
    (elsewhere / MARK_FILE).write_text('{"line": 0}\n')
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / SESSION).symlink_to(elsewhere)
    assert unfinished_outboxes(logs) == []
    with pytest.raises(LogError):
        Outbox(logs / SESSION)
