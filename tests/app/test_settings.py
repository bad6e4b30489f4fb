"""The settings (controller/app/settings.py): a config as a whole, each section parsed by its module.

A table whose game is built elsewhere (the demo's, from its options) has its reader and
output sections parsed and checked the same way as a config file's, against that game.
"""

from __future__ import annotations

import pytest

from controller.app.settings import settings_from_dict
from controller.core.config import GameConfig, Table
from controller.core.errors import ConfigError

HUB_OF_FOUR = {"readers": {"backend": "hub"}, "hub": {"port": "loop://", "zones": ["seat1", "seat4", "prikup"]},
               "display": {"kind": "hub"}}


def test_sections_are_checked_against_the_game_given():
    game = GameConfig(table=Table(players=4))
    settings = settings_from_dict(HUB_OF_FOUR, game=game)
    assert settings.game is game
    assert settings.readers.zones == ("seat1", "seat4", "prikup")
    assert settings.section("display").kind == "hub"
    with pytest.raises(ConfigError) as err:          # the file's own (default) game has no seat4
        settings_from_dict(HUB_OF_FOUR)
    assert err.value.key == "hub.zones[1]"


def test_the_rules_across_sections_hold_for_a_given_game_too():
    doc = dict(HUB_OF_FOUR, readers={"backend": "sim"})
    with pytest.raises(ConfigError) as err:
        settings_from_dict(doc, game=GameConfig(table=Table(players=4)))
    assert str(err.value) == 'display.kind: "hub" needs readers.backend = "hub"'
