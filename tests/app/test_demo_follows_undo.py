"""The demo's players follow the table after an ``undo`` from the page, as people would: the
card taken back is laid again and play goes on; the demo's last line says what was recorded.

The demo runs on a virtual clock (as fast as the code runs).  The undo is pressed by a
watcher on the table's bus, on the table loop's thread, the moment a fifth card of a deal
lies on the table: the players' next move waits until the page has answered, so the undo
always comes mid-deal, however fast or loaded the machine is."""

from __future__ import annotations

import io
import json
import re
import urllib.request

from controller.app.demo import recorded_text, run_demo
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig


def _post(url: str, body: dict, cookie: str | None = None):
    headers = {"Content-Type": "application/json", **({"Cookie": cookie} if cookie else {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers.get("Set-Cookie", "")


class UndoOnThePage:
    """A player who, once five cards of a deal have been played, signs in on the page with the
    PIN the demo wrote and presses ``undo`` there (once)."""

    name = "undo presser"
    inline = True

    def __init__(self, out: io.StringIO):
        self.out = out
        self.pressed = False
        self.answers: list[int] = []
        self.at_cards = 0

    def receive(self, item) -> None:
        deal = item.snapshot.deal
        played = len(deal["current"]) + 3 * len(deal["tricks"]) if deal else 0
        if self.pressed or played < 5:
            return
        self.pressed, self.at_cards = True, played
        url, pin = re.search(r"page: (\S+)  \(PIN (\d+)\)", self.out.getvalue()).groups()
        _, cookie = _post(url + "pin", {"pin": pin})
        self.answers.append(_post(url + "api/control", {"event": "button", "button": "undo"},
                                  cookie.split(";")[0])[0])

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        pass


def test_an_undo_from_the_page_leaves_every_deal_recorded(tmp_path):
    out = io.StringIO()
    presser = UndoOnThePage(out)
    result = run_demo(deals=2, speed=5, seed=11, log_dir=tmp_path, game=GameConfig(), stream=out, web_port=0,
                      clock=VirtualClock(), outputs=[presser])
    assert presser.answers == [202] and presser.at_cards == 5
    counts = result["recorded"]
    assert counts["undos"] == 1
    assert counts["deals"] == 2 and counts["complete"] == 2, counts        # nothing lost to the undo
    assert counts["mistakes"] <= 6, counts                                 # the demo's own noise, no cascade
    assert recorded_text(counts, 2).startswith("recorded 2 of 2 deals (all complete)")
