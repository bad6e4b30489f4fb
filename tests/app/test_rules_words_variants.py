"""doctor and the pulka report say in words which rules a session plays
(docs/RULES-variants.md): the convention, the raspasovka, and every house rule away from
the table's own."""

from controller.app.doctor import OK, Host, diagnose
from controller.app.report import render_html
from controller.core.config import parse_rules


def host(tmp_path) -> Host:
    dev = tmp_path / "dev"
    dev.mkdir()
    return Host(dev=dev, uid=1000, gids=frozenset({1000}), user="table", group_name=lambda gid: None,
                group_members=lambda name: None, module_available=lambda name: True)


def test_doctor_says_the_rules(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[rules]\npreset = "kozlov"\nsettlement = "exact"\n[log]\ndir = "{tmp_path / "logs"}"\n')
    lines = [f.text for f in diagnose(str(config), None, host(tmp_path)) if f.level == OK and f.text.startswith("rules: ")]
    assert len(lines) == 1
    assert "preset kozlov: as oleksandrkozlov/preferans" in lines[0]
    assert "a single whister writes whists for his own tricks only" in lines[0]
    assert "whole whists" not in lines[0]          # the key beside the preset won


def test_the_pulka_report_says_the_rules():
    summary = {"deals": [], "pulka": {s: {"gora": 0, "pulya": 0, "whists": {}} for s in ("seat1", "seat2", "seat3")},
               "settlement": {"convention": "leningrad", "balance": {"seat1": 0, "seat2": 0, "seat3": 0}}}
    page = render_html(summary, rules=parse_rules({"preset": "prefandroid-leningrad"}, 3))
    assert '<h2>Rules</h2>' in page and '<ul id="rules">' in page
    assert "<li>gentleman&#x27;s whist: whister and passer share the whists of a failed contract equally</li>" in page
    assert "<h2>Rules</h2>" not in render_html(summary)


def test_a_pulka_of_the_tables_own_rules_lists_none():
    summary = {"deals": [], "pulka": {s: {"gora": 0, "pulya": 0, "whists": {}} for s in ("seat1", "seat2", "seat3")}}
    assert "<h2>Rules</h2>" not in render_html(summary, rules=parse_rules({}, 3))


def test_settle_prints_the_summarys_own_settlement_in_whole_whists(tmp_path, capsys):
    import json

    import pytest

    from controller.app.cli import main
    from controller.core.config import game_config_from_dict
    from table_script import DEAL_A, Script

    script = Script(game_config_from_dict({"rules": {"preset": "kozlov"}}))
    script.deal(DEAL_A)
    summary = script.summary
    assert summary["settlement"] == {"convention": "sochi", "whole": "rounded",
                                     "balance": {"seat1": 3.0, "seat2": 3.0, "seat3": -6.0}}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary))
    assert main(["settle", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == summary["settlement"]
    assert main(["settle", str(path)]) == 0
    assert "settlement (sochi, whole whists rounded), in whists:" in capsys.readouterr().out
    summary["settlement"]["whole"] = "nearest"
    path.write_text(json.dumps(summary))
    with pytest.raises(SystemExit) as err:
        main(["settle", str(path)])
    assert err.value.code == 2
    message = capsys.readouterr().err.strip()
    assert message.endswith("settlement.whole must be one of rounded, truncated, got 'nearest'")
    assert "\n" not in message
