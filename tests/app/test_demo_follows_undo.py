"""The demo's players follow the table after an ``undo`` from the page, as people would: the
card taken back is laid again and play goes on; the demo's last line says what was recorded."""

from __future__ import annotations

import io
import json
import re
import threading
import time
import urllib.request

from controller.app.demo import recorded_text, run_demo
from controller.core.config import GameConfig


class Watched(io.StringIO):
    """The demo's output, with an event set once the page's address and PIN are written."""

    def __init__(self):
        super().__init__()
        self.page = threading.Event()

    def write(self, text: str) -> int:
        n = super().write(text)
        if "(PIN " in self.getvalue():
            self.page.set()
        return n


def _post(url: str, body: dict, cookie: str | None = None):
    headers = {"Content-Type": "application/json", **({"Cookie": cookie} if cookie else {})}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers.get("Set-Cookie", "")


def test_an_undo_from_the_page_leaves_every_deal_recorded(tmp_path):
    out = Watched()
    undone: list[int] = []

    def press_undo():
        assert out.page.wait(60)
        url, pin = re.search(r"page: (\S+)  \(PIN (\d+)\)", out.getvalue()).groups()
        _, cookie = _post(url + "pin", {"pin": pin})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:          # until a few cards of deal 1 are on the table
            with urllib.request.urlopen(url + "api/state", timeout=10) as response:
                state = json.loads(response.read())
            if state["deal"] and len(state["deal"]["current"]) + 3 * len(state["deal"]["tricks"]) >= 5:
                undone.append(_post(url + "api/control", {"event": "button", "button": "undo"},
                                    cookie.split(";")[0])[0])
                return
            time.sleep(0.05)

    presser = threading.Thread(target=press_undo, daemon=True)
    presser.start()
    result = run_demo(deals=2, speed=5, seed=11, log_dir=tmp_path, game=GameConfig(), stream=out, web_port=0)
    presser.join(10)
    assert undone == [202]
    counts = result["recorded"]
    assert counts["undos"] == 1
    assert counts["deals"] == 2 and counts["complete"] == 2, counts        # nothing lost to the undo
    assert counts["mistakes"] <= 6, counts                                 # the demo's own noise, no cascade
    assert recorded_text(counts, 2).startswith("recorded 2 of 2 deals (all complete)")
