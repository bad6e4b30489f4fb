"""The demo's table analyses each deal as ``run``'s does, and the live page's History shows
the analysis line (docs/analysis.md) while the next deal is played: in a real browser at a
phone's size (390x844), Debian's Chromium driven by Playwright.

The demo plays seed 1 on a virtual clock: its first deal is a contract played out to the
tenth trick (so it is analysed); at deal 2's first event the table is held (an inline
output waits, as a slow LED would) until the test has seen the page, so the page stays up
while the analysis is made in its child process, on real time; the line is in the deal's
card, opened as a player opens it.  With ``PREFTABLE_SCREENS`` set (a folder), the
History is saved there as ``analysis-history.png``.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
from pathlib import Path

import pytest

from conftest import wait_until
from web_table import CHROMIUM

from controller.app.demo import run_demo
from controller.app.options import DEFAULT_SPEED
from controller.core.clock import VirtualClock
from controller.core.config import GameConfig

pytestmark = [pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
              pytest.mark.timeout(300)]

sync_api = pytest.importorskip("playwright.sync_api")

PHONE = {"width": 390, "height": 844}
SEED, DEALS = 1, 2


class Written(io.StringIO):
    """The demo's terminal, read by the test while the demo writes to it on its thread."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            return super().write(text)

    def text(self) -> str:
        with self.lock:
            return self.getvalue()


class HoldAtSecondDeal:
    """An inline output: the first event after deal 1 ended waits until the test lets go."""

    name, inline = "hold", True

    def __init__(self):
        self.go = threading.Event()
        self.held = threading.Event()
        self.ended = None

    def receive(self, item) -> None:
        # not on the item that ends deal 1 (an inline output is called before the page's
        # mailbox gets it), on the next event
        if item.event is None or not item.snapshot.deals or self.held.is_set():
            return
        if self.ended is None:
            self.ended = item
            return
        self.held.set()
        self.go.wait(240)

    def tick(self, now: float) -> None:
        pass

    def close(self) -> None:
        self.go.set()


def test_the_demo_analyses_each_deal_and_the_history_shows_its_line(browser, tmp_path):
    out = Written()
    result: dict = {}
    hold = HoldAtSecondDeal()

    def play() -> None:
        try:
            result.update(run_demo(deals=DEALS, speed=DEFAULT_SPEED, seed=SEED, log_dir=tmp_path, game=GameConfig(),
                                   stream=out, web_port=0, entry="page",
                                   clock=VirtualClock(), outputs=[hold]))
        except BaseException as exc:     # noqa: BLE001 - handed to the test's thread, which fails with it
            result["error"] = exc

    demo = threading.Thread(target=play, name="demo", daemon=True)
    demo.start()
    page = browser.new_page()
    try:
        url = wait_until(lambda: re.search(r"the live table page: (http://\S+)", out.text()), "the page's address")
        page.set_viewport_size(PHONE)
        page.goto(url.group(1).rstrip("/") + "/history")
        first_deal = page.locator('#history details[data-deal="1"]')
        first_deal.wait_for(state="attached", timeout=120_000)      # deal 1 ended
        first_deal.locator("summary").click()                        # its card opened, as a player does
        line = first_deal.locator("p.analysis")
        line.wait_for(timeout=60_000)          # its analysis written, while deal 2 is played
        text = line.inner_text()
        assert text.startswith("best play: ") and "for the declarer (played " in text, text
        screens = os.environ.get("PREFTABLE_SCREENS")
        if screens:
            page.screenshot(path=str(Path(screens) / "analysis-history.png"), full_page=True)
    finally:
        hold.go.set()
        page.close()
        demo.join(300)
    assert "error" not in result, result.get("error")
    # the line the page showed is the session's own, for its first deal, a contract played out
    lines = [json.loads(x) for x in (result["session"] / "analysis.jsonl").read_text().splitlines()]
    first = next(x for x in lines if x["deal"] == 1)
    assert first["analysis"]["analysed"] and result["summary"]["deals"][0]["kind"] == "contract"
    assert first["line"] == text
    # the demo's analyst wrote every deal, the last one too (written as the table stopped)
    assert sorted(x["deal"] for x in lines) == list(range(1, DEALS + 1))
