"""The command line's bad inputs as a table: each with its exit status, one line naming the problem, no traceback.

Every row runs ``preftable …`` (``controller.app.cli.main``, in the test's process: the
same parser, checks and messages as ``python -m controller``, without a process each).  A row holds the
arguments, the files it needs (written into tmp_path), the exit status, and a
text the one stderr line must contain (what names the problem).  Rows that
start a long-running command give it inputs that fail before it runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from table_script import DEAL_A, event_lines

ROOT = Path(__file__).resolve().parents[2]

FULL_DECK_LINES = None


def deck_text(cards: int = 32, duplicate: bool = False, bad_card: bool = False) -> str:
    from controller.core.cards import DECK

    lines = ["[cards]"] + [f'"04{i:012X}" = "{card}"' for i, card in enumerate(DECK[:cards])]
    if duplicate:
        lines.append(f'"04{0:012X}" = "8s"')
    if bad_card:
        lines[1] = '"04AA" = "1z"'
    return "\n".join(lines) + "\n"


def events_text(tricks=DEAL_A) -> str:
    return "\n".join(event_lines(tricks)) + "\n"


FILES = {
    "ev": events_text(),
    "deck31": deck_text(31),
    "deckdup": deck_text(32, duplicate=True),
    "deckbad": deck_text(32, bad_card=True),
    "big": json.dumps({"A": {"gora": 1e308}, "B": {"gora": -1e308}}),
    "empty": "{}",
    "list": "[1, 2]",
    "badjson": "{",
    "whist": json.dumps({"A": {"whists": {"Z": 3}}, "B": {}}),
    "conv": json.dumps({"pulka": {"A": {}, "B": {}}, "settlement": {"convention": "moscow"}}),
    "toml_syntax": "[table\n",
    "players5": "[table]\nplayers = 5\n",
    "scoring": "[rules]\nscoring = \"whists\"\n[table]\nplayers = 4\n",
    "unknown_rule": "[rules]\nbogus = 1\n",
    "unknown_section": "[bogus]\nx = 1\n",
    "unknown_key": "[table]\nplayerz = 3\n",
    "backend": "[readers]\nbackend = \"usb\"\n",
    "sim_speed": "[sim]\nspeed = 0\n",
    "sim_speed_big": "[sim]\nspeed = 1001\n",
    "sim_seed": "[sim]\nseed = -1\n",
    "sim_noise": "[sim]\nnoise = 3\n",
    "display": "[display]\nkind = \"crt\"\n",
    "zones_dup": "[readers]\nbackend = \"hub\"\n[hub]\nport = \"loop://\"\nzones = [\"seat1\", \"seat1\"]\n",
    "zones_bad": "[readers]\nbackend = \"hub\"\n[hub]\nport = \"loop://\"\nzones = \"seat1\"\n",
    "gpio_clash": "[gpio]\nfactory = \"mock\"\nleds = { seat1 = 5 }\nbuzzer = 5\n",
    "hub_missing": "[readers]\nbackend = \"hub\"\n[hub]\nport = \"/dev/preftable-no-such-hub\"\n",
}

# (name, arguments, exit status, text of the one stderr line)
CASES = [
    # tracebacks once
    ("diagram into a missing folder", ["diagram", "-o", "/nonexistent/dir/x.mmd"], 2, "cannot write"),
    ("hub-emulator port too big", ["hub-emulator", "--tcp", "99999"], 2, "--tcp"),
    ("hub-emulator negative port", ["hub-emulator", "--tcp", "-5"], 2, "--tcp"),
    ("hub-emulator speed 0", ["hub-emulator", "--simulate", "1", "--speed", "0"], 2, "--speed"),
    ("hub-emulator speed nan", ["hub-emulator", "--simulate", "1", "--speed", "nan"], 2, "--speed"),
    ("settle of huge floats", ["settle", "{big}"], 2, "must be a number from"),
    # exit 1 once, now usage errors
    ("demo speed 0", ["demo", "--speed", "0"], 2, "--speed"),
    ("demo speed -1", ["demo", "--speed", "-1"], 2, "--speed"),
    ("demo speed nan", ["demo", "--speed", "nan"], 2, "--speed"),
    ("demo speed inf", ["demo", "--speed", "inf"], 2, "--speed"),
    ("demo speed above the readers' limit", ["demo", "--speed", "6"], 2, "at most 5"),
    ("demo speed not a number", ["demo", "--speed", "fast"], 2, "--speed"),
    ("demo deals -1", ["demo", "--deals", "-1"], 2, "--deals"),
    ("demo deals 0", ["demo", "--deals", "0"], 2, "--deals"),
    ("demo players 5", ["demo", "--players", "5"], 2, "--players"),
    ("demo bad config", ["demo", "--config", "{players5}"], 2, "table.players"),
    ("hub-emulator unknown zone", ["hub-emulator", "--zones", "seat1,bogus"], 2, "bogus"),
    ("hub-emulator zone twice", ["hub-emulator", "--zones", "seat1,seat1"], 2, "twice"),
    ("hub-emulator simulate -1", ["hub-emulator", "--simulate", "-1"], 2, "--simulate"),
    ("hub-emulator 31-card deck", ["hub-emulator", "--deck", "{deck31}"], 2, "missing"),
    ("hub-emulator deck with a repeated uid", ["hub-emulator", "--deck", "{deckdup}"], 2, "deckdup"),
    ("hub-emulator deck with a bad card", ["hub-emulator", "--deck", "{deckbad}"], 2, "1z"),
    ("hub-emulator no such deck", ["hub-emulator", "--deck", "nope.toml"], 2, "no such deck file"),
    ("hub-emulator no such script", ["hub-emulator", "--script", "nope.jsonl"], 2, "no such events file"),
    ("hub-emulator script and simulate", ["hub-emulator", "--script", "{ev}", "--simulate", "1"], 2, "exclude"),
    ("hub-emulator pty and tcp", ["hub-emulator", "--pty", "--tcp", "0"], 2, "not allowed with"),
    ("hub-emulator readers 0", ["hub-emulator", "--readers", "0"], 2, "--readers"),
    ("hub-emulator unknown option", ["hub-emulator", "--bogus"], 2, "--bogus"),
    ("settle an empty pulka", ["settle", "{empty}"], 2, "names no player"),
    ("settle a list", ["settle", "{list}"], 2, "must hold"),
    ("settle a whist on nobody", ["settle", "{whist}"], 2, "Z"),
    ("settle an unknown convention", ["settle", "{conv}"], 2, "settlement.convention"),
    ("settle --convention bogus", ["settle", "{empty}", "--convention", "moscow"], 2, "--convention"),
    ("settle no such file", ["settle", "nope.json"], 2, "no such file"),
    ("settle not JSON", ["settle", "{badjson}"], 2, "not valid JSON"),
    ("settle a folder", ["settle", "{tmp}"], 2, "cannot read"),
    # the replay's files
    ("replay no such events file", ["replay", "nope.jsonl"], 2, "no such events file"),
    ("replay a folder", ["replay", "{tmp}"], 2, "is a directory"),
    ("replay no such config", ["replay", "{ev}", "--config", "nope.toml"], 2, "no such config file"),
    ("replay no such deck", ["replay", "{ev}", "--deck", "nope.toml"], 2, "no such deck file"),
    ("replay 31-card deck", ["replay", "{ev}", "--deck", "{deck31}"], 2, "missing"),
    ("replay TOML syntax", ["replay", "{ev}", "--config", "{toml_syntax}"], 2, "toml_syntax"),
    ("replay 5 players", ["replay", "{ev}", "--config", "{players5}"], 2, "table.players"),
    ("replay whists with 4", ["replay", "{ev}", "--config", "{scoring}"], 2, "rules.scoring"),
    ("replay unknown rule", ["replay", "{ev}", "--config", "{unknown_rule}"], 2, "bogus"),
    ("run unknown section", ["run", "--config", "{unknown_section}"], 2, "bogus"),
    ("replay unknown key", ["replay", "{ev}", "--config", "{unknown_key}"], 2, "playerz"),
    # run: each fails before the table starts
    ("run no such config", ["run", "--config", "nope.toml"], 2, "no such config file"),
    ("run unknown backend", ["run", "--config", "{backend}"], 2, "readers.backend"),
    ("run sim speed 0", ["run", "--config", "{sim_speed}"], 2, "sim.speed"),
    ("run sim speed above 1000", ["run", "--config", "{sim_speed_big}"], 2, "sim.speed"),
    ("run sim seed -1", ["run", "--config", "{sim_seed}"], 2, "sim.seed"),
    ("run sim noise 3", ["run", "--config", "{sim_noise}"], 2, "sim.noise"),
    ("run display crt", ["run", "--config", "{display}"], 2, "display.kind"),
    ("run zone twice", ["run", "--config", "{zones_dup}"], 2, "hub.zones"),
    ("run zones not a list", ["run", "--config", "{zones_bad}"], 2, "hub.zones"),
    ("run a pin used twice", ["run", "--config", "{gpio_clash}"], 2, "GPIO5"),
    ("run a hub port that never existed", ["run", "--config", "{hub_missing}"], 2, "--wait"),
    ("run no such deck", ["run", "--deck", "nope.toml"], 2, "no such deck file"),
    ("run bad deck", ["run", "--deck", "{deck31}"], 2, "missing"),
    ("run unknown option", ["run", "--bogus"], 2, "--bogus"),
    # report, enroll, doctor
    ("report not a session", ["report", "{tmp}"], 2, "not a session folder"),
    ("report no such folder", ["report", "nope"], 2, "not a session folder"),
    ("enroll unknown zone", ["enroll", "--deck", "{tmp}/d.toml", "--zone", "seat9"], 2, "--zone"),
    ("enroll deck in a missing folder", ["enroll", "--deck", "/nonexistent/dir/d.toml"], 2, "cannot write"),
    ("enroll bad deck", ["enroll", "--deck", "{deckbad}"], 2, "1z"),
    ("enroll no --deck", ["enroll"], 2, "--deck"),
    ("enroll a hub port that never existed", ["enroll", "--deck", "{tmp}/d.toml", "--config", "{hub_missing}"],
     2, "--wait"),
    ("doctor unknown option", ["doctor", "--bogus"], 2, "--bogus"),
    # the parser itself
    ("no command", [], 2, "COMMAND"),
    ("unknown command", ["bogus"], 2, "bogus"),
    ("replay without a file", ["replay"], 2, "events"),
    ("unknown global option", ["--bogus", "replay", "x"], 2, "--bogus"),
]


@pytest.fixture
def files(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return {**{name: str(tmp_path / name) for name in FILES}, "tmp": str(tmp_path)}


def run(args, tmp_path, env=None, input=None):
    return cli(args, env=env, input=input)


@pytest.mark.parametrize("name,args,status,needle", CASES, ids=[c[0] for c in CASES])
def test_bad_input(name, args, status, needle, files, tmp_path):
    args = [a.format(**files) for a in args]
    # a temporary folder of our own: nothing may be left in it (the hub emulator's pty folder)
    res = run(args, tmp_path, env={"TMPDIR": str(tmp_path), "PREFTABLE_TEST": "1"})
    assert res.returncode == status, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert needle in res.stderr, res.stderr
    assert not list(tmp_path.glob("preftable-hub-*"))


def test_a_picture_without_graphviz_is_refused(tmp_path):
    from controller.app.diagram import graphviz_available

    if graphviz_available():
        pytest.skip("graphviz is installed here: the picture is drawn")
    res = run(["diagram", "-o", str(tmp_path / "x.png")], tmp_path)
    assert res.returncode == 2 and "graphviz" in res.stderr and len(res.stderr.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_every_command_explains_itself():
    from controller.app.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert set(sub.choices) == {"run", "demo", "replay", "analyse", "settle", "report", "enroll", "doctor",
                                "hub-emulator", "diagram", "club"}
    for name, command in sub.choices.items():
        assert command.description, name
        text = command.format_help()
        assert "examples:" in text and f"preftable {name}" in text.split("examples:")[1], name
        assert "exit status:" in text and "  2  " in text, name
        for action in command._actions:
            assert action.help, f"{name} {action.option_strings or action.dest}: no help text"
        res = run([name, "--help"], None)
        assert res.returncode == 0 and "exit status:" in res.stdout and res.stderr == ""
    for action in parser._actions:
        assert action.help, action.option_strings


def test_version():
    from controller import __version__

    res = run(["--version"], None)
    assert res.returncode == 0 and res.stdout.strip() == f"preftable {__version__}"


# --- the honest replay ---------------------------------------------------------------------

def test_replay_accepts_a_byte_order_mark(tmp_path):
    plain = tmp_path / "plain.jsonl"
    plain.write_text(events_text())
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + events_text().encode())
    a, b = run(["replay", str(plain), "--json"], tmp_path), run(["replay", str(bom), "--json"], tmp_path)
    assert a.returncode == b.returncode == 0
    assert json.loads(a.stdout) == json.loads(b.stdout) and json.loads(b.stdout)["deals"][0]["complete"]
    assert b.stderr == ""


def test_replay_sums_up_what_it_threw_away_and_the_mistakes(tmp_path):
    lines = events_text().splitlines()
    # line 2 out of turn (seat3 plays before seat2... the prikup lead is line 1), 30 bad lines
    bad = ["not json"] * 25 + ['{"t": 1, "zone": "seat9", "event": "placed", "card": "7s"}'] * 5
    lines[1:1] = [json.dumps({"t": 1.0, "zone": "seat3", "event": "placed", "card": "As"})]
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(bad + lines) + "\n")
    res = run(["replay", str(path)], tmp_path)
    assert res.returncode == 0 and "Traceback" not in res.stderr
    err = res.stderr.splitlines()
    assert len([l for l in err if ": skipped: " in l]) == 20          # the first 20, one by one
    [summary] = [l for l in err if "ignored" in l]
    assert "30 lines ignored" in summary
    assert "not valid JSON 25 (first line 1)" in summary and "field 'zone' 5 (first line 26)" in summary
    assert "mistake" in summary and "out of turn" in summary and "(first line 32)" in summary


def test_replay_cuts_long_quoted_values(tmp_path):
    path = tmp_path / "e.jsonl"
    # half a megabyte: a line the reader takes (longer ones are skipped unread, tests/store)
    path.write_text(json.dumps({"t": 1, "zone": "z" * 500_000, "event": "placed", "card": "7s"}) + "\n"
                    + events_text())
    res = run(["replay", str(path), "--json"], tmp_path)
    assert res.returncode == 0
    assert len(res.stderr) < 1000 and "field 'zone'" in res.stderr and "zzz..." in res.stderr
    path.write_text(json.dumps({"t": 1, "zone": "z" * 5_000_000, "event": "placed", "card": "7s"}) + "\n"
                    + events_text())
    res = run(["replay", str(path), "--json"], tmp_path)
    assert res.returncode == 0 and len(res.stderr) < 1000 and ":1: skipped: longer than" in res.stderr


def test_replay_reads_standard_input(tmp_path):
    res = run(["replay", "-", "--json"], tmp_path, input=events_text())
    assert res.returncode == 0 and json.loads(res.stdout)["deals"][0]["taken"] == {
        "seat1": 3, "seat2": 3, "seat3": 4}


def test_replay_inside_a_session_uses_its_config_and_deck(tmp_path):
    from controller.core.cards import DECK, parse_card

    folder = tmp_path / "2026-12-01T09-00-00Z"
    folder.mkdir()
    (folder / "config.toml").write_text('[table]\nnames = { seat1 = "Anna", seat2 = "Boris", seat3 = "Vera" }\n')
    (folder / "deck.toml").write_text(deck_text())
    uid = {str(card): f"04{i:012X}" for i, card in enumerate(DECK)}
    lines = []
    for line in events_text().splitlines():
        obj = json.loads(line)
        obj["uid"] = uid[str(parse_card(obj.pop("card")))]
        lines.append(json.dumps(obj))
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")
    res = run(["replay", str(folder / "events.jsonl")], tmp_path)
    assert res.returncode == 0 and "Anna" in res.stdout
    assert "the session's own config.toml and deck.toml" in res.stderr
    out = json.loads(run(["replay", str(folder / "events.jsonl"), "--json"], tmp_path).stdout)
    assert out["deals"][0]["taken"] == {"seat1": 3, "seat2": 3, "seat3": 4}     # the tags resolved
    other = tmp_path / "other.toml"
    other.write_text("[table]\n")
    res = run(["replay", str(folder / "events.jsonl"), "--config", str(other)], tmp_path)
    assert "Anna" not in res.stdout and f"--config {other} (given, not the session's)" in res.stderr


def test_docs_ship_with_the_clone_and_say_what_help_says():
    from controller.app.cli import HELP

    readme = (ROOT / "README.md").read_text()
    assert "../shared/" not in readme
    for name in ("RULES.md", "FORMATS.md", "PROTOCOL.md", "cli.md"):
        assert (ROOT / "docs" / name).is_file() and f"docs/{name}" in readme
    reference = (ROOT / "docs" / "cli.md").read_text()
    for name, (description, examples, exits) in HELP.items():
        assert f"## `{name}`" in reference and description in reference, name
        assert all(example in reference for example in examples), name
