"""The demo's table analyses each deal as ``run``'s does, and the live page's History shows
the analysis line (docs/analysis.md) while the next deal is played: in a real browser at a
phone's size (390x844), Debian's Chromium driven by Playwright.

The demo plays seed 1 at its default speed: its first deal is a contract played out to the
tenth trick (so it is analysed), and the second keeps the table and its page up while the
analysis is made in its child process; the line is in the deal's card, opened as a player
opens it.  With ``PREFTABLE_SCREENS`` set (a folder), the
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
from web_table import CHROMIUM, browser_context

from controller.app.demo import run_demo
from controller.app.options import DEFAULT_SPEED
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


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    yield from browser_context(tmp_path_factory)


def test_the_demo_analyses_each_deal_and_the_history_shows_its_line(browser, tmp_path):
    out = Written()
    result: dict = {}

    def play() -> None:
        try:
            result.update(run_demo(deals=DEALS, speed=DEFAULT_SPEED, seed=SEED, log_dir=tmp_path, game=GameConfig(),
                                   stream=out, web_port=0, entry="page"))
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
