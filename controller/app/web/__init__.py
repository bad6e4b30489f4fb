"""The live table page (issue 13): the game on every phone at the table.

- :mod:`.config` -- the ``[web]`` section (listen, pin, names_from_config);
- :mod:`.pin` -- the table's PIN, its cookie and the guess limiter;
- :mod:`.pages` -- the HTML (Jinja2, autoescaped) rendered from the snapshot;
- :mod:`.server` -- aiohttp on its own thread and loop, the pages, the event
  stream and ``POST /api/control``;
- :mod:`.output` -- the bus subscriber that feeds it.

Contracts: BUS.md (the snapshot), FORMATS.md / FORMATS-contracts.md (the
control lines), README "The live table page".
"""

from .config import WebConfig, parse
from .output import WebOutput, for_service, start_web
from .server import WebError, WebServer, control_event

__all__ = ["WebConfig", "parse", "WebOutput", "for_service", "start_web", "WebError", "WebServer",
           "control_event"]
