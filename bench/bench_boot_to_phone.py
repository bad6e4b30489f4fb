"""From "the table boots" to "a phone shows the table", as a new user meets it (prints figures).

Each round starts ``preftable run`` with the simulated readers and a ``[web]`` section, on a
fresh log dir (the first start: the PIN is made then), and a phone that is already on: Debian's
Chromium, headless, at 390x844, launched before the clock starts.  The clock starts just
before the process is spawned; the figures are when

1. ``run`` prints the page's address and PIN (its first stdout line: README "Joining the table");
2. the phone has loaded that address (the table page's HTML);
3. the page is live: its event stream is open (the status line says ``live``);
4. the page shows the first card the simulated players lay.

The page listens on loopback by default, so the bench sends nothing to the LAN; ``--lan``
listens on 0.0.0.0 as the Pi's config does, and then the table also announces itself by
multicast DNS (``preftable.local``), which sends packets to the LAN.

    .venv/bin/python bench/bench_boot_to_phone.py [--rounds 3] [--lan]
"""

from __future__ import annotations

import argparse
import os
import re
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "app"))       # the web tests' browser

from web_table import launch_browser, wait_live  # noqa: E402

ADDRESS = re.compile(r"the live table page: (http://\S+)\s+\(PIN (\d+)\)")
CONFIG = """\
[readers]
backend = "sim"

[sim]
seed = 1
speed = 1.0

[display]
kind = "none"

[web]
listen = "{host}:{port}"
"""


def free_port() -> int:
    # ``run`` prints the address from the config before the page listens: a real port, not 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def read_until(proc: subprocess.Popen, pattern: re.Pattern, timeout: float) -> re.Match:
    """Read the process's stdout (a pipe) until ``pattern`` matches; fail after ``timeout`` s."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while True:
        match = pattern.search(seen.decode("utf-8", "replace"))
        if match:
            return match
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise SystemExit(f"run never printed its address; it wrote:\n{seen.decode(errors='replace')}")
        if sel.select(left):
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                continue
            seen += chunk


def one_round(browser, lan: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="preftable-boot-") as tmp:
        config = Path(tmp) / "table.toml"
        config.write_text(CONFIG.format(host="0.0.0.0" if lan else "127.0.0.1", port=free_port()))
        page = browser.new_page()
        page.set_viewport_size({"width": 390, "height": 844})
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config", str(config),
                                 "--log-dir", str(Path(tmp) / "logs")], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            match = read_until(proc, ADDRESS, 60)
            printed = time.monotonic() - start
            url = match.group(1)
            if lan:                      # the phone opens the Pi's LAN address; here that is this machine
                url = re.sub(r"//[^/:]+", "//127.0.0.1", url)
            # the phone opens it as soon as it is printed; until the page listens the connection
            # is refused and the phone tries again (every 20 ms here, much faster than a person)
            port = int(re.search(r":(\d+)/", url).group(1))
            while not listening(port):
                if time.monotonic() - start > 60 or proc.poll() is not None:
                    raise SystemExit("the page never listened")
                time.sleep(0.02)
            page.goto(url, wait_until="domcontentloaded", timeout=30_000)
            loaded = time.monotonic() - start
            wait_live(page, 30_000)
            live = time.monotonic() - start
            page.wait_for_selector("[data-zone] .place [data-card]", timeout=60_000)
            card = time.monotonic() - start
        finally:
            page.close()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return {"address and PIN printed": printed, "page loaded": loaded, "page live": live,
            "first card on the page": card}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lan", action="store_true", help="listen on 0.0.0.0 and announce preftable.local")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_browser(playwright)
        try:
            rounds = [one_round(browser, args.lan) for _ in range(args.rounds)]
        finally:
            browser.close()
    names = list(rounds[0])
    print(f"preftable run (sim readers, [web] on {'0.0.0.0' if args.lan else '127.0.0.1'}) -> "
          f"a phone (headless Chromium 390x844), {args.rounds} rounds, seconds from the spawn:")
    print(f"{'':26}" + "".join(f"{f'round {i + 1}':>10}" for i in range(len(rounds))) + f"{'median':>10}")
    for name in names:
        values = [r[name] for r in rounds]
        print(f"{name:26}" + "".join(f"{v:10.2f}" for v in values) + f"{statistics.median(values):10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
