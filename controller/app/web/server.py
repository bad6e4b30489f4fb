"""The web servers: aiohttp on its own thread and its own asyncio loop (the table's page, and
the club board's ``/club`` through :class:`LiveServer`).

The server lives in the service's process but never on the table
loop's thread.  The table's side only ever calls :meth:`WebServer.publish`,
which hands the newest snapshot to the web loop with
``call_soon_threadsafe`` and returns at once; a slow, failing or absent web
server therefore never delays an event, a LED or a log line.  Each viewer's
event stream holds only the newest state (older ones are skipped), so a slow
phone costs nothing but its own staleness.

Routes (README "The live table page"):

- ``/`` the table, ``/pulka``, ``/history``, ``/sessions`` (+ each session's
  ``/pulka`` and ``/events.jsonl``): server-rendered HTML;
- ``/api/state``: the snapshot's ``to_dict()``;
- ``/api/events``: Server-Sent Events; ``event: state`` carries the snapshot
  JSON, or with ``?parts=table,controls`` ``event: parts`` carries the
  re-rendered fragments that changed;
- ``POST /api/control``: one control line (FORMATS.md / FORMATS-contracts.md,
  without ``t``), validated by :func:`controller.core.events.event_from_dict`
  and entered with the ``submit`` callable (``service.submit``); 401 without
  the PIN cookie;
- ``POST /pin``: the PIN, answered with the cookie; guesses are rate-limited.

:class:`LiveServer` is what every page server of this package shares: the
thread and loop, the listening socket, the newest-only hand-over of the state
from other threads, the security headers, the static files, and the event
stream of fragments rendered once per state version.  :class:`WebServer` adds
the table's pages and its control lines; :mod:`.board` the club's page.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Mapping

from aiohttp import web
from aiohttp_sse import sse_response
from markupsafe import Markup

from ...core.errors import EventError, PreftableError
from ...core.events import CONTROL_EVENTS, TableEvent, event_from_dict
from ...store.files import open_read
from ...store.gamelog import EVENTS, SUMMARY, SessionLog
from .. import report
from .config import WebError
from .guard import IDLE_S, CappedSite, Guard, OneLineLog
from .pages import STATIC, Pages
from . import remote
from .pin import COOKIE, PinGate
from .replays import PoolBusy, ReplayFailed, ReplayPool

log = logging.getLogger(__name__)

MAX_CONTROL_BYTES = 4096
SESSIONS_LISTED = 200       # /sessions lists the newest this many
EVENTS_CHUNK = 1 << 18      # a session's events.jsonl is sent this much at a time
RENDERED_KEPT = 64          # pages kept rendered (per state version)
# The table loop and the web thread share one GIL: a thread that waits for it gets it after at
# most this long (CPython's default is 5 ms, taken at every write and fsync of a card's line
# while the page is busy); the table's card then waits less behind the page's work.
GIL_SWITCH_S = 0.0005
SSE_PING_S = 15.0
_SECURITY_HEADERS = {
    # Defence in depth behind the escaping: no inline script, nothing from elsewhere.
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.json_response(data, status=status, headers=headers,
                             dumps=lambda obj: json.dumps(obj, ensure_ascii=False))


class _Viewer:
    """One open event stream: a one-slot mailbox holding the newest state only."""

    def __init__(self) -> None:
        self.wake = asyncio.Event()


class LiveServer:
    """A page server: ``publish`` from any thread, everything else on its own loop.

    ``pages`` renders the fragments (``pages.parts``: name -> template) the event
    stream sends; subclasses add their routes in :meth:`routes`."""

    what = "web page"               # for the log: what is served
    events_path = "/api/events"

    def __init__(self, *, host: str, port: int, pages, state: Mapping[str, Any]):
        self.host, self.port = host, port
        self.pages = pages
        self.state: dict[str, Any] = dict(state)
        self.version = 0
        self._viewers: set[_Viewer] = set()
        self._handoff = threading.Lock()
        self._pending: Mapping[str, Any] | None = None
        self._scheduled = False
        self._parts_cache: dict[tuple[str, bool], tuple[int, str]] = {}
        self._messages: dict[tuple, tuple[int, str]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None
        self._started = threading.Event()
        self.error: BaseException | None = None
        self._loop_errors: set[str] = set()
        self.socket: socket.socket | None = None
        self.counters = {"published": 0, "viewers_max": 0, "viewers_refused": 0}
        self.guard = Guard(streams={self.events_path})

    # ------------------------------------------------------------------ the table's side (any thread)

    def publish(self, state: Mapping[str, Any]) -> None:
        """Hand the newest snapshot (``to_dict()``) to the web loop; never blocks, never raises.

        Only the newest is kept: a stuck web loop holds one pending state, not a growing queue.
        """
        loop = self._loop
        if loop is None:
            return
        with self._handoff:
            self._pending = state
            if self._scheduled:
                return
            self._scheduled = True
        try:
            loop.call_soon_threadsafe(self._take_pending)
        except RuntimeError:            # the loop has closed: the web is down, the table goes on
            pass

    def start(self, timeout: float = 10.0) -> "WebServer":
        """Start the server thread; wait until it listens.  Raises :class:`WebError` if it cannot."""
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_S))
        self._thread = threading.Thread(target=self._run, name="web", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise WebError(f"the web server did not start within {timeout:g} s")
        if self.error is not None:
            raise WebError(f"web: cannot listen on {self.host}:{self.port}: {self.error}") from None
        return self

    @property
    def bound(self) -> tuple[str, int]:
        address = self.socket.getsockname()
        return address[0], address[1]

    @property
    def url(self) -> str:
        host, port = self.bound
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        shown = f"[{shown}]" if ":" in shown else shown
        return f"http://{shown}:{port}/"

    def stop(self, timeout: float = 5.0) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            try:
                loop.call_soon_threadsafe(stopping.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ the web loop

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception as exc:            # the web server died: say so once, the table goes on
            log.error("web server stopped: %s", exc, exc_info=log.isEnabledFor(logging.DEBUG))
            self.error = self.error or exc
        finally:
            self._loop = None
            self._started.set()

    def _listen(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(128)
        sock.setblocking(False)
        return sock

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        try:
            self.socket = self._listen()
        except OSError as exc:
            self.error = exc.strerror or exc
            self._started.set()
            return
        self._loop.set_exception_handler(self._loop_error)
        # keepalive_timeout: a connection must send a whole request header within IDLE_S of
        # opening (and of its last response), or it is closed (see .guard)
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0,
                               keepalive_timeout=IDLE_S, logger=OneLineLog(logging.getLogger("aiohttp.server")))
        await runner.setup()
        await CappedSite(runner, self.socket, self.guard).start()
        log.info("web: the %s is at %s", self.what, self.url)
        self._started.set()
        try:
            await self._stopping.wait()
        finally:
            for viewer in list(self._viewers):
                viewer.wake.set()
            await runner.cleanup()

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """Errors inside the web loop (a dead listener retried every second...): logged once per kind."""
        exc = context.get("exception")
        kind = f"{context.get('message')}:{type(exc).__name__}"
        if kind not in self._loop_errors:
            self._loop_errors.add(kind)
            log.error("web: %s (%s); the table goes on", context.get("message"), exc)

    def _take_pending(self) -> None:
        with self._handoff:
            state, self._pending, self._scheduled = self._pending, None, False
        if state is not None:
            self._update(state)

    def _update(self, state: Mapping[str, Any]) -> None:
        self.state = dict(state)
        self.version += 1
        self.counters["published"] += 1
        for viewer in self._viewers:
            viewer.wake.set()

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard.middleware, self._headers], client_max_size=64 * 1024)
        self.routes(app)
        app.router.add_get(self.events_path, self.api_events)
        app.router.add_get("/static/pulka.css", self.pulka_css)
        app.router.add_static("/static", STATIC)
        return app

    def routes(self, app: web.Application) -> None:
        """The server's own pages and API (the event stream and static files are added after)."""
        raise NotImplementedError

    @web.middleware
    async def _headers(self, request: web.Request, handler):
        response = await handler(request)
        for key, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    async def pulka_css(self, request: web.Request) -> web.Response:
        return web.Response(text=report.PULKA_CSS, content_type="text/css", charset="utf-8")

    def authorised(self, request: web.Request) -> bool:
        """Whether the request may see what only the PIN shows (nothing, unless a subclass says)."""
        return False

    async def api_state(self, request: web.Request) -> web.Response:
        """The current state as JSON (the table's ``/api/state``, the club's ``/api/club``),
        encoded once per state version however many ask."""
        return web.Response(text=self._message("state", (), False, {}), content_type="application/json",
                            charset="utf-8", headers={"Cache-Control": "no-store"})

    def render_part(self, name: str, authorised: bool) -> str:
        """A fragment of the current state, rendered once per state version and PIN status."""
        key = (name, authorised and name == "controls")
        cached = self._parts_cache.get(key)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        text = self.pages.part(name, self.state, authorised=authorised)
        self._parts_cache[key] = (self.version, text)
        return text

    # ------------------------------------------------------------------ the event stream

    async def api_events(self, request: web.Request) -> web.StreamResponse:
        wanted = [p for p in request.query.get("parts", "").split(",") if p]
        unknown = [p for p in wanted if p not in self.pages.parts]
        if unknown:
            raise web.HTTPBadRequest(text=f"unknown part {unknown[0]!r} (known: {', '.join(self.pages.parts)})")
        if len(self._viewers) >= self.guard.cap // 2:      # room left for pages and control lines
            self.counters["viewers_refused"] += 1
            raise web.HTTPServiceUnavailable(text="too many live views open; try again soon",
                                             headers={"Retry-After": "15"})
        authorised = self.authorised(request)
        viewer = _Viewer()
        self._viewers.add(viewer)
        self.counters["viewers_max"] = max(self.counters["viewers_max"], len(self._viewers))
        sent: dict[str, str] = {}
        seen = -1
        try:
            async with sse_response(request, headers={"Cache-Control": "no-store"},
                                    ping_interval=SSE_PING_S) as stream:
                while not self._stopping.is_set() and stream.is_connected():
                    if seen != self.version:
                        seen = self.version
                        await self._send_update(stream, wanted, authorised, sent)
                    viewer.wake.clear()
                    if seen == self.version:
                        try:        # wake up now and then to notice a phone that went away
                            await asyncio.wait_for(viewer.wake.wait(), SSE_PING_S)
                        except TimeoutError:
                            pass
                return stream
        except (ConnectionResetError, TimeoutError):
            return web.Response(status=204)     # the viewer went away; nothing more to say
        finally:
            self._viewers.discard(viewer)

    async def _send_update(self, stream, wanted: list[str], authorised: bool, sent: dict[str, str]) -> None:
        """The state to one viewer: the state JSON, or the fragments that changed since its last one."""
        if not wanted:
            await stream.send(self._message("state", (), authorised, {}), event="state")
            return
        changed = {}
        for name in wanted:
            html = self.render_part(name, authorised)
            if sent.get(name) != html:
                changed[name] = html
        if changed:
            sent.update(changed)
            await stream.send(self._message("parts", tuple(sorted(changed)), authorised, changed), event="parts")

    def _message(self, kind: str, names: tuple[str, ...], authorised: bool, parts: dict[str, str]) -> str:
        """One event's data, encoded once per state version for every viewer that needs the same
        (50 phones cost one rendering and one encoding, not fifty)."""
        key = (kind, names, authorised and "controls" in names)
        cached = self._messages.get(key)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        if kind == "state":
            text = json.dumps(self.state, ensure_ascii=False)
        else:
            text = json.dumps({"seq": self.state.get("seq", 0), "session": self.state.get("session", ""),
                               "parts": parts}, ensure_ascii=False)
        if len(self._messages) > 64:
            self._messages.clear()
        self._messages[key] = (self.version, text)
        return text


class WebServer(LiveServer):
    """Serves one table: its pages, its state and the control lines entered with the PIN."""

    what = "table page"

    def __init__(self, *, host: str, port: int, pages: Pages, gate: PinGate, zones: tuple[str, ...],
                 submit: Callable[[TableEvent], None], log_dir: Path, session_rules=None):
        super().__init__(host=host, port=port, pages=pages, state={
            "seq": 0, "session": "", "players": 0, "seats": [], "names": {}, "phase": "idle", "deal": None,
            "on_table": {}, "last_trick": None, "alerts": [], "pulka": {}, "settlement": {}, "deals": [],
            "next_deal": {}, "link": {"state": "none", "detail": ""}, "display": [], "leds": {}, "beep_ms": 0})
        self.gate = gate
        self.zones = zones
        self.submit = submit
        self.log_dir = Path(log_dir)
        self.counters.update(controls=0, refused=0)
        self.replays = ReplayPool()
        self._rendered: dict[tuple, tuple[int, str]] = {}     # pages rendered at a state version

    def app(self) -> web.Application:
        app = super().app()
        app.on_cleanup.append(self._close_replays)
        return app

    async def _close_replays(self, app: web.Application) -> None:
        self.replays.close()

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.page_table)
        app.router.add_get("/pulka", self.page_pulka)
        app.router.add_get("/history", self.page_history)
        app.router.add_get("/sessions", self.page_sessions)
        app.router.add_get("/sessions/{name}/pulka", self.page_session_pulka)
        app.router.add_get("/sessions/{name}/events.jsonl", self.session_events)
        app.router.add_get("/api/state", self.api_state)
        app.router.add_post("/api/control", self.api_control)
        app.router.add_post("/pin", self.pin)
        remote.add_routes(self, app)        # the phone as the table's remote (names, the pulka, /join)

    # ------------------------------------------------------------------ helpers

    def authorised(self, request: web.Request) -> bool:
        return self.gate.valid(request.cookies.get(COOKIE))

    def _page(self, request: web.Request, template: str, title: str, parts=(), **extra) -> web.Response:
        authorised = self.authorised(request)
        message = {"wrong": "Wrong PIN.", "wait": "Too many wrong PINs: wait a minute."}.get(
            request.query.get("pin", ""), "")
        key = (template, title, tuple(parts), authorised, request.path, message, _frozen(extra))
        cached = self._rendered.get(key)
        if cached is not None and cached[0] == self.version:
            text = cached[1]        # ten clients reloading cost one rendering per state
        else:
            text = self.pages.page(template, self.state, authorised=authorised, title=title, parts=parts,
                                   next_path=request.path, pin_message=message, **extra)
            if len(self._rendered) >= RENDERED_KEPT:
                self._rendered.clear()
            self._rendered[key] = (self.version, text)
        return web.Response(text=text, content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-store"})

    # ------------------------------------------------------------------ pages

    async def page_table(self, request: web.Request) -> web.Response:
        return self._page(request, "table.html", "Table", ("table", "controls"))

    async def page_pulka(self, request: web.Request) -> web.Response:
        return self._page(request, "pulka.html", "Pulka", ("pulka",))

    async def page_history(self, request: web.Request) -> web.Response:
        return self._page(request, "history.html", "History", ("history",))

    def _sessions(self) -> list[dict[str, Any]]:
        """The newest :data:`SESSIONS_LISTED` sessions (the cost of the page is bounded)."""
        return [{"name": p.name, "finished": (p / SUMMARY).exists()}
                for p in reversed(SessionLog.sessions(self.log_dir)[-SESSIONS_LISTED:])]

    def _session_folder(self, name: str) -> Path:
        """The session folder called ``name`` (only names the log dir lists: no path tricks)."""
        for folder in SessionLog.sessions(self.log_dir):
            if folder.name == name:
                return folder
        raise web.HTTPNotFound(text=f"no session {name!r} in the log dir")

    async def page_sessions(self, request: web.Request) -> web.Response:
        sessions = await asyncio.get_running_loop().run_in_executor(None, self._sessions)
        return self._page(request, "sessions.html", "Sessions", sessions=sessions)

    async def page_session_pulka(self, request: web.Request) -> web.Response:
        folder = self._session_folder(request.match_info["name"])
        try:
            # replayed in another process (never on the table's GIL), bounded and cached
            sections = await self.replays.pulka_html(folder, self.pages.names_from_config)
        except PoolBusy:
            raise web.HTTPServiceUnavailable(text="the table is busy making other pulkas; try again soon",
                                             headers={"Retry-After": "5"}) from None
        except ReplayFailed as exc:
            raise web.HTTPInternalServerError(text=f"cannot read the session {folder.name}: {exc}") from None
        return self._page(request, "session_pulka.html", "Sessions", session_name=folder.name,
                          pulka_html=Markup(sections))

    async def session_events(self, request: web.Request) -> web.StreamResponse:
        folder = self._session_folder(request.match_info["name"])
        loop = asyncio.get_running_loop()
        try:        # the log dir's opener: a link at events.jsonl (or a FIFO) is not served
            fh = await loop.run_in_executor(None, lambda: open_read(folder / EVENTS, folder=True))
        except OSError as exc:
            raise web.HTTPNotFound(text=f"no game log in {folder.name}: {exc.strerror}") from None
        with fh:
            response = web.StreamResponse(headers={
                "Content-Type": "application/x-ndjson; charset=utf-8",
                "Content-Disposition": f'attachment; filename="{folder.name}-events.jsonl"'})
            response.content_length = os.fstat(fh.fileno()).st_size
            await response.prepare(request)
            left = response.content_length
            while left > 0 and (chunk := await loop.run_in_executor(None, fh.read, min(left, EVENTS_CHUNK))):
                left -= len(chunk)
                await response.write(chunk)
            await response.write_eof()
        return response

    # ------------------------------------------------------------------ the API

    async def api_control(self, request: web.Request) -> web.Response:
        if not self.authorised(request):
            self.counters["refused"] += 1
            return _json({"error": "the table's PIN is needed to enter control lines"}, status=401)
        if request.content_type != "application/json":
            return _json({"error": "send the control line as application/json"}, status=415)
        raw = await request.content.read(MAX_CONTROL_BYTES + 1)
        if len(raw) > MAX_CONTROL_BYTES:
            return _json({"error": "a control line is one short JSON object"}, status=413)
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return _json({"error": "not valid JSON"}, status=400)
        try:
            event = control_event(line, self.zones)
        except EventError as exc:
            return _json({"error": str(exc)}, status=400)
        try:
            self.submit(event)
        except PreftableError as exc:
            return _json({"error": str(exc)}, status=503)
        self.counters["controls"] += 1
        shown = event.to_dict()
        shown.pop("t", None)
        log.info("web: control line from %s: %s", request.remote, json.dumps(shown, ensure_ascii=False))
        return _json({"accepted": True, "line": shown}, status=202)

    async def pin(self, request: web.Request) -> web.Response:
        client = request.remote or "?"
        as_json = request.content_type == "application/json"
        if as_json:
            try:
                body = await request.json()
            except ValueError:
                body = {}
            body = body if isinstance(body, dict) else {}
            next_path = "/"
        else:
            body = dict(await request.post())
            next_path = str(body.get("next") or "/")
        if not next_path.startswith("/") or next_path.startswith("//"):
            next_path = "/"             # only back to a page of this table
        wait = self.gate.limiter.retry_after(client)
        if wait > 0:
            headers = {"Retry-After": str(int(wait) + 1)}
            if as_json:
                return _json({"error": "too many wrong PINs; wait"}, status=429, headers=headers)
            raise web.HTTPSeeOther(f"{next_path}?pin=wait", headers=headers)
        guess = body.get("pin")
        if not isinstance(guess, str) or not self.gate.check_pin(guess.strip()):
            self.gate.limiter.failed(client)
            log.warning("web: wrong PIN from %s", client)
            if as_json:
                return _json({"error": "wrong PIN"}, status=401)
            raise web.HTTPSeeOther(f"{next_path}?pin=wrong")
        response = _json({"ok": True}) if as_json else web.HTTPSeeOther(next_path)
        response.set_cookie(COOKIE, self.gate.token(), max_age=self.gate.max_age, httponly=True,
                            samesite="Strict", path="/")
        if as_json:
            return response
        raise response


def _frozen(value: Any) -> Any:
    """A page's extra values as a hashable key (lists and dicts as tuples)."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def control_event(line: object, zones: tuple[str, ...]) -> TableEvent:
    """One control line from outside (no ``t``: the table stamps it) as a table event.

    Parsed by :func:`controller.core.events.event_from_dict` like any log line;
    cards (``placed``/``removed``) come from the readers only.
    """
    if not isinstance(line, dict):
        raise EventError("a control line is a JSON object")
    if "t" in line:
        raise EventError("a control line from outside has no field 't' (the table's clock stamps it)")
    if line.get("event") not in CONTROL_EVENTS:
        raise EventError(f"field 'event' must be a control line ({', '.join(CONTROL_EVENTS)}); "
                         "cards come from the readers")
    return event_from_dict({**line, "t": 0.0}, zones)


__all__ = ["LiveServer", "WebServer", "WebError", "control_event"]
