"""Each deal's double-dummy analysis line where players read it after the deal
(docs/analysis.md): the pulka report lists it per deal (pulka.html, a session's pulka
page, the text ``preftable report`` prints); a table's MQTT state carries its last
deal's line and the club page shows it."""

from __future__ import annotations

import json

import pytest

from mqtt_broker import SimTable, broker, club_factory, wait_until  # noqa: F401  (fixtures)
from table_script import DEAL_A, Script, config, deal_a_analysis

from controller.app.club import Club
from controller.app.club_view import ANALYSIS_CHARS, analysis_line
from controller.app.report import render_html, write_report
from controller.app.textview import analysis_lines_text
from controller.app.web.board import BoardPages
from controller.core.analysis import analyse_entry
from controller.store.analyses import ANALYSIS, AnalysisFile, AnalysisLines
from controller.store.gamelog import SessionLog

SESSION = "2026-12-01T18-00-00Z"


def played_deal():
    """One raspasovka played to its tenth trick, its summary entry and its analysis."""
    script = Script(config())
    script.deal(DEAL_A)
    entry = script.tracker.records[0].entry
    return script, entry, deal_a_analysis()


# --------------------------------------------------------------------------- the pulka report

def test_the_pulka_page_lists_each_deals_line_and_nothing_without_them():
    script, _, result = played_deal()
    summary = script.tracker.report_summary()
    line = result.line()
    assert line.startswith("best play: seat2 sure of ")
    page = render_html(summary, analysis={1: line + " <b>"})
    assert '<ul id="analysis">' in page
    assert f'<li data-deal="1"><span class="deal">deal 1</span>: {line} &lt;b&gt;</li>' in page
    # the page's own JSON state has string keys: the same list
    assert render_html(summary, analysis={"1": line + " <b>"}) == page
    # no analysis: the page is what it was
    assert render_html(summary, analysis={}) == render_html(summary)
    assert 'id="analysis"' not in render_html(summary)


def test_preftable_report_writes_and_prints_the_lines_of_the_sessions_analysis(tmp_path, capsys):
    from controller.app.cli import main
    from controller.core.tracker import DealTracker

    script, entry, result = played_deal()
    session = SessionLog.create(tmp_path / "logs", script.cfg, None)
    tracker = DealTracker(script.cfg)
    for event in script.events:
        session.append(event, tracker.feed(event))
    session.close()
    AnalysisFile(session.folder).append(entry, result)

    assert main(["report", str(session.folder), "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"deal 1: {result.line()}\n" in out
    page = (tmp_path / "out" / "pulka.html").read_text(encoding="utf-8")
    assert f'<span class="deal">deal 1</span>: {result.line()}</li>' in page


def test_the_pulka_sheet_lists_the_lines_under_its_history_wrapped_to_the_table(tmp_path):
    import xml.etree.ElementTree as ET

    script, _, result = played_deal()
    summary = script.tracker.report_summary()
    paths = write_report(summary, tmp_path, analysis={1: result.line()})
    svg = ET.parse(paths["svg"]).getroot()
    ns = {"svg": "http://www.w3.org/2000/svg"}
    group = svg.find(".//svg:g[@id='analysis']", ns)
    rows = [t.text for t in group.findall("svg:text", ns)]
    assert rows[0] == "Best play" and rows[1].startswith("deal 1: best play: ")
    assert " ".join(row.strip() for row in rows[1:]) == f"deal 1: {result.line()}"
    assert len(rows) > 2                              # this line is longer than the table is wide
    bottom = max(float(t.get("y")) for t in group.findall("svg:text", ns))
    assert bottom < float(svg.get("height"))          # the page is tall enough for them


def test_the_text_lists_the_lines_in_deal_order():
    assert analysis_lines_text({10: "b", 2: "a"}) == "deal 2: a\ndeal 10: b\n"
    assert analysis_lines_text({}) == ""


def test_write_report_without_analysis_writes_what_it_did(tmp_path):
    script, _, _ = played_deal()
    summary = script.tracker.report_summary()
    write_report(summary, tmp_path / "a")
    write_report(summary, tmp_path / "b", analysis={})
    for name in ("pulka.svg", "pulka.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


# --------------------------------------------------------------------------- the last line of a session

def test_the_last_line_is_the_highest_deal_and_is_read_again_when_the_file_grows(tmp_path):
    script, entry, result = played_deal()
    lines = AnalysisLines()
    assert lines.last(tmp_path) is None and not lines.changed(tmp_path)
    AnalysisFile(tmp_path).append(entry, result)
    assert lines.changed(tmp_path)
    assert lines.last(tmp_path) == {"deal": 1, "line": result.line()}
    assert not lines.changed(tmp_path)
    with open(tmp_path / ANALYSIS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"deal": 4, "key": "k", "version": 1, "line": "deal four", "analysis": {}}) + "\n")
    assert lines.changed(tmp_path)
    assert lines.last(tmp_path) == {"deal": 4, "line": "deal four"}


# --------------------------------------------------------------------------- the club board

def _state(analysis) -> bytes:
    doc = {"table": "t1", "session": SESSION, "lines": 0, "acked": 0,
           "snapshot": {"seats": ["seat1", "seat2", "seat3"], "names": {"seat1": "Anna"}, "phase": "idle"}}
    if analysis is not ...:
        doc["analysis"] = analysis
    return json.dumps(doc).encode()


def test_the_club_page_shows_the_last_deals_line_escaped(tmp_path):
    club = Club("mqtt://127.0.0.1:1", tmp_path / "club")      # never connected: handle() only
    club.handle("preftable/t1/state", _state({"deal": 3, "line": "best play: 7 for the declarer <script>"}))
    board = club.board()
    assert board["tables"][0]["analysis"] == {"deal": 3, "line": "best play: 7 for the declarer <script>"}
    html = BoardPages().part("club", board)
    assert '<p class="analysis" data-analysis>deal 3: best play: 7 for the declarer &lt;script&gt;</p>' in html
    # a table that sends none (an older table, analysis off): no line, the board as before
    club.handle("preftable/t1/state", _state(...))
    board = club.board()
    assert board["tables"][0]["analysis"] is None
    assert "data-analysis" not in BoardPages().part("club", board)


@pytest.mark.parametrize("value", [None, "best play", [3, "x"], {"deal": True, "line": "x"}, {"deal": 0, "line": "x"},
                                   {"deal": "3", "line": "x"}, {"deal": 3, "line": 7}, {"deal": 3}])
def test_an_analysis_that_is_not_one_is_no_line(value):
    assert analysis_line(value) is None


def test_an_overlong_line_is_cut_to_the_bound():
    assert analysis_line({"deal": 2, "line": "x" * (ANALYSIS_CHARS + 50)}) == {"deal": 2, "line": "x" * ANALYSIS_CHARS}


def test_a_tables_analysis_line_reaches_the_club_page_through_the_broker(tmp_path, broker, club_factory):
    """A real mosquitto: the table plays a deal, its analyst's line lands in analysis.jsonl
    after the last snapshot, and the table's retained state carries it to the board."""
    from html import escape

    club = club_factory(broker.url)
    table = SimTable(tmp_path / "logs", broker.url, "t3", seed=3, speed=300, deals=1, close=False).start()

    def shown():
        with club.lock:
            view = club.tables.get("t3")
            return view.analysis if view else None
    try:
        wait_until(table.played.is_set, 60, "the table to play its deal")
        tracker = table.service.tracker     # the source has sent every event: the loop may still be at them
        wait_until(lambda: len(tracker.records) >= 1, 60, "the table's loop to end the deal")
        entry = tracker.records[0].entry
        result = analyse_entry(entry, tracker.rules, tracker.players)
        wait_until(lambda: club.tables.get("t3") is not None, 60, "the board to see the table")
        assert shown() is None
        AnalysisFile(table.session.folder).append(entry, result)        # as the table's analyst does
        wait_until(lambda: shown() == {"deal": 1, "line": result.line()}, 60,
                   lambda: f"the board to show deal 1's line (it has {shown()})")
    finally:
        table.stop()
    assert f"deal 1: {escape(result.line(), quote=False)}</p>" in BoardPages().part("club", club.board())
