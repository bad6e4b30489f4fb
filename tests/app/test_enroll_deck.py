"""The table's deck as the service finds it: ``[table] deck`` in the config (relative to the
config file), ``--deck`` winning over it, ``enroll`` writing there by default (readable by the
service user), ``run`` refusing to start a real table without one, ``doctor`` checking it, and
a config saved with a byte order mark read as written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from controller.app import cli
from controller.app.doctor import FAIL, OK, WARN, Host, diagnose
from controller.app.settings import load_settings
from controller.core.cards import DECK
from controller.core.deck import load_deck
from controller.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def full_deck_text() -> str:
    return "[cards]\n" + "".join(f'"04{i:012X}" = "{c}"\n' for i, c in enumerate(DECK))


def host(tmp_path: Path) -> Host:
    """No wait for the hub's HELLO: the doctor's deck check is what these tests read (the
    HELLO wait has its own tests), and loop:// never says HELLO."""
    return Host(dev=tmp_path / "nodev", uid=os.geteuid(), user="table", module_available=lambda name: True,
                hello_timeout=0.0)


def test_the_deck_key_is_relative_to_the_config_file_and_deck_wins(tmp_path, monkeypatch):
    folder = tmp_path / "etc"
    folder.mkdir()
    cfg = folder / "config.toml"
    cfg.write_text('[table]\ndeck = "deck.toml"\n')
    monkeypatch.chdir(tmp_path)                  # not the config's folder
    settings = load_settings(cfg)
    assert settings.deck == folder / "deck.toml"
    assert settings.deck_file(None) == folder / "deck.toml"
    assert settings.deck_file("other.toml") == Path("other.toml")
    cfg.write_text(f'[table]\ndeck = "{tmp_path / "abs.toml"}"\n')
    assert load_settings(cfg).deck == tmp_path / "abs.toml"
    assert load_settings(None).deck is None


@pytest.mark.parametrize("value, needle", [("3", "table.deck: must be a string"), ('""', "table.deck: must name")])
def test_a_bad_deck_key_is_refused_naming_it(tmp_path, value, needle):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[table]\ndeck = {value}\n")
    with pytest.raises(ConfigError, match=needle):
        load_settings(cfg)


def test_replay_accepts_a_config_with_a_deck_key(tmp_path):
    from controller.core.config import load_game_config
    cfg = tmp_path / "c.toml"
    cfg.write_text('[table]\nplayers = 4\ndeck = "deck.toml"\n')
    assert load_game_config(cfg).table.players == 4


def test_the_installed_skeleton_names_the_deck_beside_it():
    settings = load_settings(ROOT / "systemd" / "config.toml")
    assert settings.deck == ROOT / "systemd" / "deck.toml"


def test_enroll_writes_the_configs_deck_by_default_readable_by_the_service(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[table]\ndeck = "deck.toml"\n[sim]\nseed = 3\nspeed = 1000\n[display]\nkind = "none"\n')
    old = os.umask(0o077)
    try:
        assert cli.main(["enroll", "--config", str(cfg)]) == 0
    finally:
        os.umask(old)
    deck = tmp_path / "deck.toml"
    assert len(load_deck(deck).cards) == 32
    assert stat.S_IMODE(deck.stat().st_mode) & 0o044 == 0o044, "the service user could not read the deck"


def test_enroll_without_any_deck_says_what_to_pass(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[sim]\nspeed = 1000\n')
    assert cli.main(["enroll", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--deck" in err and "[table] deck" in err


def test_run_refuses_a_real_table_without_a_deck(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "socket://127.0.0.1:9"\n[log]\ndir = "{tmp_path}"\n')
    assert cli.main(["run", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "no deck file" in err and "[table] deck" in err and "--deck" in err
    assert not list(tmp_path.glob("*/events.jsonl")), "no session may start"


def test_run_of_a_sim_table_needs_no_deck(tmp_path):
    """The simulated players lay card codes, not tags: no refusal (the run itself is elsewhere)."""
    from controller.app.settings import settings_from_dict
    assert settings_from_dict({}).deck_file(None) is None      # and cmd_run raises only for real readers


def test_doctor_checks_the_configs_deck(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[table]\ndeck = "deck.toml"\n[readers]\nbackend = "hub"\n[hub]\nport = "loop://"\n'
                   f'[log]\ndir = "{tmp_path}"\n')
    h = host(tmp_path)
    [missing] = [f for f in diagnose(str(cfg), None, h) if "deck" in f.text]
    assert missing.level == WARN and "not enrolled yet" in missing.text
    assert f"preftable enroll --config {cfg}" in missing.fix
    (tmp_path / "deck.toml").write_text('[cards]\n"0401" = "7s"\n')
    [partial] = [f for f in diagnose(str(cfg), None, h) if "deck" in f.text]
    assert partial.level == FAIL and "missing" in partial.text and "--config" in partial.fix
    (tmp_path / "deck.toml").write_text(full_deck_text())
    [good] = [f for f in diagnose(str(cfg), None, h) if "deck" in f.text]
    assert good.level == OK and "32 cards" in good.text and str(tmp_path / "deck.toml") in good.text
    cfg.write_text(f'[readers]\nbackend = "hub"\n[hub]\nport = "loop://"\n[log]\ndir = "{tmp_path}"\n')
    [none] = [f for f in diagnose(str(cfg), None, h) if "deck" in f.text]
    assert none.level == WARN and "refuses to start" in none.text and "[table] deck" in none.fix


def test_a_config_with_a_byte_order_mark_is_read(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_bytes("\ufeff[table]\nplayers = 4\n".encode("utf-8"))
    assert load_settings(cfg).game.table.players == 4
    cfg.write_bytes(b"\xef\xbb\xbf\xff[table]\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings(cfg)
