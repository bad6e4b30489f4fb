"""A session's ``config.toml`` and ``rules.bidding`` across the editions of the rules.

RULES-contracts.md: ``"auto"`` is the default since the second edition, and "old logs (no
key) replay exactly as before".  The first edition wrote ``bidding`` into a session's
``config.toml`` only when it was ``true``; so the table now always writes the key, a
session's own ``config.toml`` without it means ``false`` (for its resume and its replay),
and a user's config without it means ``"auto"``.

The log used: a bid line the first edition refused (an invalid control line), then DEAL_A
laid card by card.  As played (``false``) it is a raspasovka; read with ``"auto"`` the bid
would begin an auction and every card would be outside play.
"""

from __future__ import annotations

import json
import tomllib

from conftest import cli
from table_script import DEAL_A, DEAL_A_TAKEN, event_lines

from controller.core.config import GameConfig, load_game_config
from controller.store.gamelog import CONFIG, EVENTS, SessionLog


def first_edition_config() -> str:
    """A session's config.toml as the first edition wrote it with bidding off: no key."""
    lines = GameConfig().to_toml().splitlines()
    return "\n".join(line for line in lines if not line.startswith("bidding = ")) + "\n"


def old_session(tmp_path):
    folder = tmp_path / "2025-05-01_20-00-00"
    folder.mkdir()
    (folder / CONFIG).write_text(first_edition_config())
    bid = json.dumps({"t": 0.5, "event": "bid", "seat": "seat2", "bid": "6s"})
    (folder / EVENTS).write_text("\n".join([bid] + event_lines(DEAL_A)) + "\n")
    return folder


def replay_json(*args) -> dict:
    done = cli(["replay", *args, "--json"])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_an_old_session_without_the_key_replays_as_it_was_played(tmp_path):
    folder = old_session(tmp_path)
    summary = replay_json(folder / EVENTS)
    (deal,) = summary["deals"]
    assert deal["kind"] == "raspasovka" and deal["taken"] == DEAL_A_TAKEN and deal["auction"] == []
    off = tmp_path / "off.toml"
    off.write_text("[rules]\nbidding = false\n")
    assert replay_json(folder / EVENTS, "--config", off) == summary
    # named with --config, as a club mirror's replay does, it is still the session's own
    assert replay_json(folder / EVENTS, "--config", folder / CONFIG) == summary


def test_an_old_session_resumes_with_bidding_off(tmp_path):
    folder = old_session(tmp_path)
    session = SessionLog(folder)
    game = session.game_config()
    assert game.rules.bidding is False
    tracker, replayed, _ = session.resume(game, None)
    assert tracker.summary()["deals"][0]["kind"] == "raspasovka"


def test_a_new_sessions_config_holds_the_key(tmp_path):
    session = SessionLog.create(tmp_path, GameConfig(), None)
    written = tomllib.loads((session.folder / CONFIG).read_text())
    assert written["rules"]["bidding"] == "auto"
    assert session.game_config().rules.bidding == "auto"


def test_a_users_config_without_the_key_is_auto(tmp_path):
    user = tmp_path / "table.toml"
    user.write_text("[table]\nplayers = 3\n")
    assert load_game_config(user).rules.bidding == "auto"
    # the same old log read with it: the bid begins an auction, as "auto" says
    folder = old_session(tmp_path)
    (deal,) = replay_json(folder / EVENTS, "--config", user)["deals"]
    assert deal["auction"] == [{"seat": "seat2", "bid": "6s"}]
