"""Output ``web``: the live table page, the game on every phone at the table.

    [web]
    listen = "127.0.0.1:8080"    # the Pi's installer sets "0.0.0.0:8080"
    pin = "482913"               # else one is generated at first start (log dir, web-pin)
    names_from_config = true

The registered module of section ``[web]`` (:mod:`controller.app.backends`):
``parse``, ``outputs`` and ``doctor`` below.  Importing it is light; aiohttp
and Jinja2 are imported when the server starts.

- :mod:`.config` -- the ``[web]`` section;
- :mod:`.pin` -- the table's PIN, its cookie and the guess limiter;
- :mod:`.pages` -- the HTML (Jinja2, autoescaped) rendered from the snapshot;
- :mod:`.server` -- aiohttp on its own thread and loop: the pages, the event
  stream and ``POST /api/control``;
- :mod:`.guard` -- what a hostile client may cost: idle and slow-header timeouts, the
  connection cap, one log line per bad request;
- :mod:`.replays` -- past sessions' pulkas made in a bounded, cached process pool;
- :mod:`.output` -- the bus subscriber that feeds it;
- :mod:`.board` -- the club board's page, ``/club`` (``preftable club --web``),
  on the same server pieces.

Contracts: the snapshot (:mod:`controller.core.snapshot`, carried by :mod:`controller.app.bus`), FORMATS.md / FORMATS-contracts.md (the
control lines), README "The live table page".
"""

from __future__ import annotations

from pathlib import Path

from ..findings import OK, WARN
from .config import SECTION, WebConfig, WebError, parse
from .output import WebOutput, for_service, start_web
from .pin import PIN_FILE, stored_pin


UNIT_STATE_DIR = Path("/var/lib/preftable")     # systemd/preftable.service: StateDirectory=preftable


def outputs(config: WebConfig, ctx) -> list:
    """The page for ``preftable run`` when the config has a ``[web]`` section (the Pi
    installer's has; a table without one imports no web server: ~24 MB less, and no port
    taken).  It needs the table service (``ctx.service``) to enter control lines; it starts
    listening with the first published snapshot."""
    service = getattr(ctx, "service", None)
    if service is None or SECTION not in ctx.settings.present:
        return []
    return [for_service(service, config, start=False)]


def doctor(config: WebConfig, doc, settings) -> None:
    """The page's address and where its PIN is (the PIN itself, for the person setting up the table)."""
    if SECTION not in settings.present:
        doc.add(OK, "web page off (no [web] section in the config)")
        return
    url = f"http://{config.listen}/"
    if config.host in ("127.0.0.1", "::1", "localhost"):
        doc.add(WARN, f"web page at {url}: only this computer can open it",
                'set [web] listen = "0.0.0.0:8080" for the phones at the table')
    else:
        doc.add(OK, f"web page at {url}")
    if config.pin:
        doc.add(OK, f"web PIN {config.pin} (from [web] pin)")
        return
    # the log dir the table runs with (doctor's --log-dir or $STATE_DIRECTORY already applied),
    # then the systemd unit's own (StateDirectory=preftable), for a doctor run by hand on the Pi
    places = [Path(settings.log_dir)] + [p for p in (UNIT_STATE_DIR,) if p != Path(settings.log_dir)]
    for place in places:
        pin = stored_pin(place)
        if pin:
            doc.add(OK, f"web PIN {pin} (generated, {place / PIN_FILE})")
            return
    doc.add(OK, f"web PIN: made at the first start, then kept in {Path(settings.log_dir) / PIN_FILE}")


__all__ = ["SECTION", "parse", "outputs", "doctor", "WebConfig", "WebError", "WebOutput", "for_service",
           "start_web"]
