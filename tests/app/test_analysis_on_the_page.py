"""A deal's analysis reaches the live page when it is written, not at the table's next event.

The analyst writes ``analysis.jsonl`` a moment after a deal's last card (off the table loop),
and a table between deals is quiet while the cards are gathered and dealt: the web output's
tick publishes the state again with the new line.
"""

from __future__ import annotations

from types import SimpleNamespace

from table_script import DEAL_A, Script, config, deal_a_analysis

from controller.app.web import WebConfig
from controller.app.web.output import WebOutput
from controller.store.analyses import AnalysisFile


class Published:
    """The web server's side of publishing: the states handed to it."""

    def __init__(self):
        self.states: list[dict] = []

    def publish(self, state) -> None:
        self.states.append(dict(state))


def test_an_analysis_written_after_the_last_event_is_published_at_the_next_tick(tmp_path):
    script = Script(config())
    script.deal(DEAL_A)
    entry = script.tracker.records[0].entry
    output = WebOutput(WebConfig(), submit=lambda event: None, log_dir=tmp_path, zones=("seat1", "seat2", "seat3"))
    output.server = server = Published()
    state = {"seq": 40, "deals": [entry]}
    output.receive(SimpleNamespace(session_dir=tmp_path, snapshot=SimpleNamespace(to_dict=lambda: dict(state))))
    assert [s["analysis"] for s in server.states] == [{}]
    output.tick(1.0)                                    # nothing new: nothing published
    assert len(server.states) == 1

    result = deal_a_analysis()
    AnalysisFile(tmp_path).append(entry, result)        # the analyst, a moment later; no event since
    output.tick(2.0)
    assert len(server.states) == 2 and server.states[1]["analysis"] == {"1": result.line()}
    assert server.states[1]["seq"] == 40 and server.states[1]["deals"] == [entry]
    output.tick(3.0)
    assert len(server.states) == 2
