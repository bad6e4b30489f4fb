"""The club board's web page: ``preftable club --web [HOST:]PORT`` serves ``/club``.

Every table the board follows, on one page that updates itself: table id and
status, players, the deal in progress (its number, phase, trick, whose card)
and its contract (raspasovka, misère, or declarer, game and trumps), the pulka
(pulya, gora, whists written, balance) and the board's mirror of the session
(lines, a gap waiting for the table to resend) and the line of the last deal's
double-dummy analysis (docs/analysis.md: what best play would have made, which
card cost a trick) when the table sends it; above them the bad messages
the board counted, by reason.  The data is :meth:`controller.app.club.Club.board`
(README "The club page"), the same the terminal board draws.

The server is the table page's :class:`~.server.LiveServer`: its own thread
and loop, the security headers, the static files, the event stream of
fragments rendered here (Jinja2, autoescaped: table ids and player names come
from the network).  The board reads only: GET routes, no form, no POST.

- ``/club``: the page; ``/`` sends there;
- ``/api/club``: the board as JSON;
- ``/api/club/events``: Server-Sent Events, ``?parts=club`` the rendered
  board (``event: parts``), without it the JSON (``event: state``).

The board tells the server when a message came in (:meth:`BoardServer.changed`,
on paho's thread, never blocking); the server takes a fresh copy of the board
on its own loop, at most every :data:`REFRESH_S`, so twenty busy tables cost
ten copies a second, not one per log line.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from aiohttp import web
from markupsafe import Markup

from .pages import environment
from .server import LiveServer

log = logging.getLogger(__name__)

REFRESH_S = 0.1
CLUB_PARTS = {"club": "_club.html"}
EMPTY_BOARD: Mapping[str, Any] = {"seq": 0, "tables": [], "bad": {}, "bad_total": 0}


class BoardPages:
    """Renders the club page and its one live fragment from the board's data."""

    parts = CLUB_PARTS

    def __init__(self, *, prefix: str = "", broker: str = ""):
        self.env = environment()
        self.prefix, self.broker = prefix, broker

    def context(self, board: Mapping[str, Any]) -> dict[str, Any]:
        tables = []
        for table in board.get("tables") or ():
            names = {p["seat"]: p["name"] for p in table.get("players") or ()}
            tables.append({**table, "names": names})
        return {"tables": tables, "bad": board.get("bad") or {}, "bad_total": board.get("bad_total", 0),
                "prefix": self.prefix, "broker": self.broker}

    def part(self, name: str, board: Mapping[str, Any], *, authorised: bool = False) -> str:
        return self.env.get_template(CLUB_PARTS[name]).render(self.context(board))

    def page(self, board: Mapping[str, Any]) -> str:
        context = self.context(board)
        context.update(title="Club", parts=["club"], state={"seq": board.get("seq", 0), "session": ""},
                       events_path=BoardServer.events_path, part_club=Markup(self.part("club", board)))
        return self.env.get_template("club.html").render(context)


class BoardServer(LiveServer):
    """``/club`` for one club board; ``source`` gives the board's data (under its own lock)."""

    what = "club page"
    events_path = "/api/club/events"

    def __init__(self, *, host: str, port: int, source: Callable[[], Mapping[str, Any]],
                 pages: BoardPages | None = None):
        super().__init__(host=host, port=port, pages=pages or BoardPages(), state=EMPTY_BOARD)
        self.source = source
        self._pull_due = False
        self._pulled_at = float("-inf")

    @property
    def page_url(self) -> str:
        return self.url + "club"

    def start(self, timeout: float = 10.0) -> "BoardServer":
        super().start(timeout)
        self.changed()                  # the board as it is when the page starts
        return self

    # ------------------------------------------------------------------ the board's side (any thread)

    def changed(self) -> None:
        """Something came in: take a fresh copy soon.  Never blocks, never raises."""
        loop = self._loop
        if loop is None:
            return
        with self._handoff:
            if self._pull_due:
                return
            self._pull_due = True
        try:
            loop.call_soon_threadsafe(self._schedule_pull)
        except RuntimeError:            # the loop has closed: the page is down, the board goes on
            pass

    # ------------------------------------------------------------------ the web loop

    def _schedule_pull(self) -> None:
        loop = self._loop
        if loop is None:
            return
        loop.call_later(max(0.0, self._pulled_at + REFRESH_S - loop.time()), self._pull)

    def _pull(self) -> None:
        with self._handoff:
            self._pull_due = False      # a message from now on asks for another copy
        self._pulled_at = self._loop.time() if self._loop is not None else 0.0
        try:
            board = self.source()
        except Exception:   # noqa: BLE001 - the page must outlive a bad copy; logged with its traceback
            log.exception("club page: cannot read the board")
            return
        if board != self.state:
            self._update(board)

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.home)
        app.router.add_get("/club", self.page_club)
        app.router.add_get("/api/club", self.api_state)

    async def home(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/club")

    async def page_club(self, request: web.Request) -> web.Response:
        return web.Response(text=self.pages.page(self.state), content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-store"})


def start_board(source: Callable[[], Mapping[str, Any]], host: str, port: int, *, prefix: str = "",
                broker: str = "") -> BoardServer:
    """The club page, listening (raises :class:`~.config.WebError` when it cannot)."""
    return BoardServer(host=host, port=port, source=source,
                       pages=BoardPages(prefix=prefix, broker=broker)).start()


__all__ = ["BoardServer", "BoardPages", "start_board", "REFRESH_S"]
