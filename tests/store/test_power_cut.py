"""The power-cut soak: ``events.jsonl`` cut at 50 random bytes, and zeroed 4 KiB blocks.

Each damaged copy of one session is resumed: it must not fail, must say what
it repaired in one WARNING line (none when nothing needed repair), must leave a
log whose table-event lines replay to every derived line and to the resumed
table, and a second resume must find nothing left to repair.
"""

import json
import logging
import random
import shutil

import pytest

from controller.store.gamelog import SessionLog

from played import GAME, consistent, new_session, store_warnings

from test_resume import _run_until_ready, _stop, sim_cfg  # noqa: F401  (a fixture)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    session, _ = new_session(tmp_path_factory.mktemp("pristine"), 8, seed=5)
    return session.folder


def _copy(pristine, tmp_path, n):
    folder = tmp_path / f"logs{n}" / pristine.name
    shutil.copytree(pristine, folder)
    return SessionLog(folder)


def _resume_twice(session, caplog):
    caplog.clear()
    tracker, count, _ = session.resume(GAME, None)
    warnings = store_warnings(caplog)
    consistent(session, tracker)
    caplog.clear()
    again, count2, _ = SessionLog(session.folder).resume(GAME, None)
    assert store_warnings(caplog) == []
    assert again.summary() == tracker.summary() and count2 == count
    return warnings


def test_cut_at_50_random_bytes(pristine, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    data = (pristine / "events.jsonl").read_bytes()
    offsets = [json.loads(line)["offset"] for line in (pristine / "checkpoints.jsonl").read_text().splitlines()]
    rng = random.Random(10)
    for n, cut in enumerate(sorted(rng.sample(range(1, len(data)), 50))):
        session = _copy(pristine, tmp_path, n)
        with open(session.events_path, "rb+") as fh:
            fh.truncate(cut)
        mid_line = data[cut - 1:cut] != b"\n"
        torn_group = not mid_line and data[cut:cut + 40].find(b'"kind"') != -1
        stale_journal = any(offset > cut for offset in offsets)
        warnings = _resume_twice(session, caplog)
        assert len(warnings) == (1 if mid_line or torn_group or stale_journal else 0), (cut, warnings)


@pytest.mark.parametrize("seed", range(5))
def test_a_zeroed_4k_block(pristine, tmp_path, caplog, seed):
    caplog.set_level(logging.WARNING)
    size = (pristine / "events.jsonl").stat().st_size
    at = random.Random(seed).randrange(0, size - 4096) // 4096 * 4096
    session = _copy(pristine, tmp_path, seed)
    with open(session.events_path, "rb+") as fh:
        fh.seek(at)
        fh.write(bytes(4096))
    (warning,) = _resume_twice(session, caplog)
    assert "NUL" in warning


def test_a_zeroed_block_then_the_service_starts_and_stops_cleanly(pristine, tmp_path, sim_cfg):
    session = _copy(pristine, tmp_path, "run")
    with open(session.events_path, "rb+") as fh:
        fh.seek(8192)
        fh.write(bytes(4096))
    for _ in range(2):
        err = _stop(_run_until_ready(sim_cfg, session.folder.parent))
        assert "Traceback" not in err
    assert err.count("repaired") == 0                  # the first start repaired it for good
    tracker, _, _ = session.resume(GAME, None)
    consistent(session, tracker)
