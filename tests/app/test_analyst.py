"""The table's analyst: ended deals analysed in a child process, into the session's analysis.jsonl."""

from __future__ import annotations

import json
from types import SimpleNamespace

from table_script import DEAL_A, Script, config, deal_a_analysis
from conftest import wait_until

from controller.app.analyst import Analyst
from controller.store.analyses import ANALYSIS


def published(folder, deals):
    return SimpleNamespace(session_dir=folder, snapshot=SimpleNamespace(deals=deals))


def test_ended_deals_are_analysed_once_into_the_session(tmp_path):
    script = Script(config())
    script.deal(DEAL_A)
    script.trick(*DEAL_A[0])
    script.press("new_deal")                        # deal 2 abandoned
    deals = [r.entry for r in script.tracker.records]
    analyst = Analyst(script.cfg.rules, 3)
    try:
        analyst.receive(published(tmp_path, deals[:1]))
        analyst.receive(published(tmp_path, deals))
        analyst.wait()
    finally:
        analyst.close()
    lines = [json.loads(line) for line in (tmp_path / ANALYSIS).read_text().splitlines()]
    assert [(line["deal"], line["analysis"]["analysed"]) for line in lines] == [(1, True), (2, False)]
    assert "abandoned" in lines[1]["analysis"]["reason"]
    assert lines[0]["analysis"]["dd"]["guaranteed"].keys() == {"seat1", "seat2", "seat3"}

    # a restart reads the file: nothing is handed to a child again
    again = Analyst(script.cfg.rules, 3)
    try:
        again.receive(published(tmp_path, deals))
        assert again._pool is None and not again._running
    finally:
        again.close()


def test_run_writes_the_analysis_of_each_deal(tmp_path):
    """`preftable run` (the simulated table): the session's analysis.jsonl gains a line per
    ended deal while the table plays, and SIGTERM still stops it cleanly (the child ended)."""
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    cfg = tmp_path / "sim.toml"
    cfg.write_text(f'[sim]\nseed = 3\nspeed = 200\n[display]\nkind = "none"\n[log]\ndir = "{tmp_path / "logs"}"\n')
    proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config", str(cfg)], cwd=root,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(120, proc.kill)      # a hung table fails the test, not the run
    watchdog.daemon = True
    watchdog.start()
    try:
        wait_until(lambda: list((tmp_path / "logs").glob(f"*/{ANALYSIS}")) or proc.poll() is not None,
                   "the session's analysis.jsonl", timeout=120)
        assert proc.poll() is None, "the table stopped before its analysis was written"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        watchdog.cancel()
    assert proc.returncode == 0, err
    (path,) = (tmp_path / "logs").glob(f"*/{ANALYSIS}")
    first = json.loads(path.read_text().splitlines()[0])
    assert first["deal"] == 1 and first["analysis"]["number"] == 1


def test_the_history_shows_each_deals_analysis_line(tmp_path):
    """The live page's History: a deal's line from analysis.jsonl under its summary."""
    from controller.app.web.output import WebOutput
    from controller.app.web.pages import Pages
    from controller.store.analyses import AnalysisFile, AnalysisLines

    script = Script(config())
    script.deal(DEAL_A)
    entry = script.tracker.records[0].entry
    result = deal_a_analysis()
    AnalysisFile(tmp_path).append(entry, result)
    output = WebOutput.__new__(WebOutput)
    output._analysis_lines = AnalysisLines()
    lines = output._analysis(tmp_path)
    assert lines == {"1": result.line()} and result.line().startswith("best play: seat2 sure of ")
    state = {"seats": ["seat1", "seat2", "seat3"], "deals": [entry], "analysis": lines}
    html = Pages().part("history", state)
    assert '<p class="analysis">best play: seat2 sure of ' in html
    assert "analysis" not in Pages().part("history", dict(state, analysis={}))
