"""The command line as users and scripts call it: output, exit codes, one-line errors."""

import json

import pytest

from conftest import cli as preftable_main
from table_script import DEAL_A, event_lines



def cli(*args, input=None):
    return preftable_main(args, input=input)


def events_file(tmp_path, tricks=DEAL_A, extra=()):
    lines = event_lines(tricks)
    lines[3:3] = list(extra)
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_replay_json_summary(tmp_path):
    res = cli("replay", events_file(tmp_path), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    # every field with every value of rules.bidding (FORMATS-contracts.md, second edition)
    assert list(out) == ["deals", "pulka", "pulya_target", "finished_after_deal", "settlement"]
    (deal,) = out["deals"]
    assert list(deal) == ["number", "dealer", "price", "kind", "auction", "declarer", "game", "value",
                          "whist_calls", "whisters", "whist_mode", "outcome", "tricks", "taken", "claimed",
                          "revoke", "revoke_trick", "complete", "written", "help"]
    assert deal["kind"] == "raspasovka" and deal["auction"] == [] and deal["claimed"] is None
    assert deal["written"]["seat3"] == {"gora": 4, "pulya": 0, "whists": {"seat1": 0, "seat2": 0}}
    assert deal["taken"] == {"seat1": 3, "seat2": 3, "seat3": 4}
    assert out["pulka"]["seat3"] == {"gora": 4, "pulya": 0, "whists": {"seat1": 0, "seat2": 0}}
    assert out["settlement"]["convention"] == "sochi"
    assert sum(out["settlement"]["balance"].values()) == pytest.approx(0, abs=0.015)   # exact sum 0; rounded to 0.01


def test_replay_reports_bad_lines_with_numbers_and_goes_on(tmp_path):
    path = events_file(tmp_path, extra=["garbage", '{"t": 1, "zone": "seat9", "event": "placed", "card": "7s"}'])
    res = cli("replay", path, "--json")
    assert res.returncode == 0
    assert res.stderr.splitlines() == [l for l in res.stderr.splitlines() if ":4:" in l or ":5:" in l]
    assert len(res.stderr.splitlines()) == 2
    assert json.loads(res.stdout)["deals"][0]["complete"]


def test_replay_text_table(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[table]\nnames = { seat1 = "Anna", seat2 = "Boris", seat3 = "Vera" }\n')
    res = cli("replay", events_file(tmp_path), "--config", cfg)
    assert res.returncode == 0 and "Anna" in res.stdout and "settlement (sochi)" in res.stdout


@pytest.mark.parametrize("args,needle", [
    (("replay", "nope.jsonl"), "no such events file"),
    (("replay", "{ev}", "--config", "nope.toml"), "no such config file"),
    (("replay", "{ev}", "--deck", "nope.toml"), "no such deck file"),
    (("replay", "{ev}", "--config", "{badcfg}"), "rules.scoring"),
    (("settle", "nope.json"), "no such file"),
    (("settle", "{badjson}"), "not valid JSON"),
])
def test_bad_inputs_one_line_exit_2(tmp_path, args, needle):
    ev = events_file(tmp_path)
    badcfg = tmp_path / "bad.toml"
    badcfg.write_text('[table]\nplayers = 4\n[rules]\nscoring = "whists"\n')
    badjson = tmp_path / "bad.json"
    badjson.write_text("{")
    args = [a.format(ev=ev, badcfg=badcfg, badjson=badjson) for a in args]
    res = cli(*args)
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and needle in res.stderr
    assert "Traceback" not in res.stderr


PULKA = {"E": {"pulya": 56, "gora": 22, "whists": {"S": 24, "W": 32}},
         "S": {"pulya": 22, "gora": 22, "whists": {"E": 100, "W": 32}},
         "W": {"pulya": 12, "gora": 34, "whists": {"E": 72, "S": 56}}}


def test_settle_rules_example(tmp_path):
    p = tmp_path / "p.json"
    p.write_text(json.dumps(PULKA))
    res = cli("settle", p, "--json")
    assert json.loads(res.stdout) == {"convention": "sochi", "balance": {"E": 184.0, "S": 12.0, "W": -196.0}}
    res = cli("settle", p, "--convention", "leningrad", "--json")
    assert json.loads(res.stdout)["balance"] == {"E": 444.0, "S": -68.0, "W": -376.0}


def test_settle_summary_uses_its_convention_and_missing_fields_are_zero(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"deals": [], "pulka": {"a": {"gora": 3}, "b": {"pulya": 1}, "c": {}},
                             "settlement": {"convention": "leningrad"}}))
    res = cli("settle", p, "--json")
    out = json.loads(res.stdout)
    assert out["convention"] == "leningrad"
    # k=2: goras a 3+2, b 0, c 2 -> A = 7/3; balances 10*(A - g)
    assert out["balance"] == {"a": -26.67, "b": 23.33, "c": 3.33}


def test_settle_replay_output(tmp_path):
    res = cli("replay", events_file(tmp_path), "--json")
    summary = tmp_path / "summary.json"
    summary.write_text(res.stdout)
    res2 = cli("settle", summary, "--json")
    assert json.loads(res2.stdout) == json.loads(res.stdout)["settlement"]


def test_diagram_mermaid():
    res = cli("diagram")
    assert res.returncode == 0 and "\nstateDiagram-v2\n" in res.stdout
    assert "held --> play: release_trick" in res.stdout
    assert "whisting --> play: whisting_ends [whisting_played]" in res.stdout
