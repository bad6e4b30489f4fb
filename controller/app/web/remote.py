"""The phone as the table's remote: the routes the live page adds to the table's server.

The game itself is entered as control lines (``POST /api/control``, :mod:`.server`): a
bid, the auction's result, a whist call, the whist mode, a claim, the buttons -- the same
lines a bidding token or a button makes, so the log replays exactly.  What is not a line
of the game goes through the table service as the table's own hardware does:

- ``POST /api/pulka/close`` (with the PIN; body ``{"close": "pulka"}``): closes the pulka
  and starts a new one, exactly what holding the ``new_deal`` button does
  (:meth:`~controller.app.service.TableService.close_pulka`): the closed session's
  summary.json is its own replay's, nothing is added to its events;
- ``POST /api/names`` (with the PIN; body ``{"names": {"seat1": "Anna", ...}}``): names
  the players (:meth:`~controller.app.service.TableService.set_names`), saved in the
  session's config.toml, so the display, the terminal, the page, the pulka report and
  the club all show them;
- ``GET /join``: the page's address as a QR code (and the PIN, to a phone that has it);
- ``GET /manifest.webmanifest`` and ``/favicon.ico``: the page installs as a home-screen
  app, and no browser asks for an icon in vain.

Registered by :meth:`~.server.WebServer.routes` with one call of :func:`add_routes`.
Everything is served by the table itself: no CDN, the LAN without internet is enough.
"""

from __future__ import annotations

import json
import logging

from aiohttp import web
from markupsafe import Markup

from .pages import STATIC

log = logging.getLogger(__name__)

MAX_BODY = 4096
MANIFEST = {
    "name": "preftable: the card table",
    "short_name": "preftable",
    "description": "The Preferans table: the deal, the pulka, and the table's remote",
    "start_url": "/", "scope": "/", "display": "standalone", "orientation": "portrait",
    "background_color": "#f6f4ee", "theme_color": "#1f6b3a",
    "icons": [{"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
              {"src": "/static/icon-maskable.svg", "sizes": "any", "type": "image/svg+xml",
               "purpose": "maskable"}],
}


def add_routes(server, app: web.Application) -> None:
    """The remote's routes on the table's server (``server``: a :class:`~.server.WebServer`)."""
    remote = Remote(server)
    app.router.add_get("/join", remote.page_join)
    app.router.add_post("/api/names", remote.api_names)
    app.router.add_post("/api/pulka/close", remote.api_close_pulka)
    app.router.add_get("/manifest.webmanifest", remote.manifest)
    app.router.add_get("/favicon.ico", remote.favicon)


def _answer(data: dict, status: int) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda obj: json.dumps(obj, ensure_ascii=False))


class Remote:
    """The handlers; ``server.table`` is the table service (None: a page without a table)."""

    def __init__(self, server):
        self.server = server

    async def _body(self, request: web.Request) -> dict | web.Response:
        """The request's JSON object, or the answer refusing it (no PIN, not JSON, too long)."""
        if not self.server.authorised(request):
            self.server.counters["refused"] += 1
            return _answer({"error": "the table's PIN is needed for this"}, 401)
        if request.content_type != "application/json":
            return _answer({"error": "send application/json"}, 415)
        raw = await request.content.read(MAX_BODY + 1)
        if len(raw) > MAX_BODY:
            return _answer({"error": "too long"}, 413)
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return _answer({"error": "not valid JSON"}, 400)
        if not isinstance(body, dict):
            return _answer({"error": "send a JSON object"}, 400)
        if getattr(self.server, "table", None) is None:
            return _answer({"error": "this page has no table to change"}, 503)
        return body

    async def api_names(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        names = body.get("names")
        if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
            return _answer({"error": "field 'names' must be an object of seat -> name"}, 400)
        try:
            self.server.table.set_names(names)
        except ValueError as exc:
            return _answer({"error": str(exc)}, 400)
        log.info("web: players named from %s", request.remote)
        return _answer({"accepted": True, "names": names}, 202)

    async def api_close_pulka(self, request: web.Request) -> web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        if body.get("close") != "pulka":
            return _answer({"error": "say {\"close\": \"pulka\"} to close the pulka"}, 400)
        self.server.table.close_pulka()
        log.warning("web: the pulka is closed from the page (%s)", request.remote)
        return _answer({"accepted": True, "closed": True}, 202)

    async def page_join(self, request: web.Request) -> web.Response:
        from .join import join_info, qr_svg
        join = getattr(self.server, "join", None)
        if join is None:                    # a server started without its output (tests)
            from .config import WebConfig
            host, port = self.server.bound
            join = join_info(WebConfig(host=host, port=port), self.server.gate.pin, port=port, announced=False)
        return self.server._page(request, "join.html", "Join", join=join, qr=Markup(qr_svg(join.url)))

    async def manifest(self, request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(MANIFEST), content_type="application/manifest+json",
                            charset="utf-8")

    async def favicon(self, request: web.Request) -> web.Response:
        return web.FileResponse(STATIC / "icon.svg", headers={"Content-Type": "image/svg+xml",
                                                              "Cache-Control": "max-age=86400"})


__all__ = ["add_routes", "Remote", "MANIFEST"]
