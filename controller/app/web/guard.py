"""The page servers' connection guard: what a hostile or careless client on the LAN may cost.

Every page server (the table's, the club board's) listens through
:class:`CappedSite` and logs aiohttp's errors through :class:`OneLineLog`:

- **Idle connections time out.** aiohttp's keep-alive timer, started when a
  connection opens and again after each response, closes a connection that
  has not sent a whole request header within :data:`IDLE_S` (a connection
  that sends nothing, or trickles a header byte by byte) or that idles
  between requests that long.  A request's handler (its body read included)
  gets :data:`REQUEST_S` (the event stream excepted: it lives as long as
  the phone looks).
- **Open connections are capped** at :func:`connection_cap` (at most
  :data:`MAX_CONNECTIONS`, and half of what the descriptor limit leaves
  beside the table's own files): a new connection at the cap closes the
  oldest idle one (one that is not in a request); when every connection is
  in a request (event streams), the new one is answered 503 and closed.  So
  the page keeps answering a phone even with 1,000 idle connections open
  and the process near its descriptor limit (``LimitNOFILE``).
- **Each client has a budget** of :data:`RATE_PER_S` requests a second
  (:data:`BURST` at once; a client is its IPv4 address or IPv6 /64): beyond
  it a request waits :data:`TARPIT_S` (costing nothing but its connection)
  and is answered 429.  Ten clients looping over every route then get a few
  requests a second each instead of the table's GIL: the page's work stays
  bounded however fast they ask.  A phone loading pages uses a handful.
- **A bad request is one log line**: aiohttp's "Error handling request"
  (an oversized header, garbage instead of HTTP) is logged as one WARNING
  without a traceback (the first :data:`LOG_FIRST` of each kind, then every
  1000th); the client gets aiohttp's 4xx.

Contract: README "The live table page" (the routes), systemd/preftable.service (``LimitNOFILE``).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import Counter, OrderedDict

from aiohttp import web

from .pin import GuessLimiter

log = logging.getLogger(__name__)

IDLE_S = 10.0               # a whole request header within this; an idle keep-alive connection this long
REQUEST_S = 20.0            # a request's handler (the event stream excepted)
MAX_CONNECTIONS = 256       # open connections at most, whatever the descriptor limit allows
FD_RESERVE = 64             # descriptors left for the table itself (log files, serial, MQTT, journal)
LOG_FIRST = 20
RATE_PER_S = 20.0           # requests a second per client, on average
BURST = 120                 # ... and at once
TARPIT_S = 1.0              # a request over the budget waits this long, then 429
CLIENTS_KEPT = 4096
_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Retry-After: 5\r\nConnection: close\r\nContent-Length: 37\r\n\r\n"
            b"too many connections; try again soon\n")


def connection_cap(limit: int = MAX_CONNECTIONS) -> int:
    """Open connections allowed: ``limit``, or half of what the soft descriptor limit leaves
    after :data:`FD_RESERVE` (each connection is one descriptor; the rest is headroom for
    accepting and closing the ones over the cap)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return limit
    return max(4, min(limit, (soft - FD_RESERVE) // 2))


class OneLineLog(logging.LoggerAdapter):
    """aiohttp's server logger: an exception is one WARNING line naming it, no traceback
    (with ``-vv``, DEBUG, the traceback too); counted by kind so a flood stays short."""

    def __init__(self, logger: logging.Logger):
        super().__init__(logger, {})
        self.counts: Counter = Counter()

    def exception(self, msg, *args, exc_info=True, **kwargs) -> None:
        exc = exc_info if isinstance(exc_info, BaseException) else None
        kind = type(exc).__name__ if exc is not None else "error"
        self.counts[kind] += 1
        n = self.counts[kind]
        if n > LOG_FIRST and n % 1000:
            return
        text = msg % args if args else str(msg)
        detail = str(exc).replace("\n", " ")[:200] if exc is not None else ""
        self.logger.warning("web: %s: %s%s%s", text, kind, f": {detail}" if detail else "",
                            f" (#{n})" if n > 1 else "",
                            exc_info=exc if self.logger.isEnabledFor(logging.DEBUG) else None)


class _Refused(asyncio.Protocol):
    """A connection over the cap when none can be closed for it: 503, then closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(_REFUSAL)
        transport.close()


class Budget:
    """A token bucket per client: ``rate`` requests a second, ``burst`` at once."""

    def __init__(self, rate: float = RATE_PER_S, burst: float = BURST, clock=time.monotonic):
        self.rate, self.burst, self.clock = rate, burst, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()   # key -> (tokens, when)

    def take(self, client: str) -> bool:
        """One request of ``client``: True within its budget."""
        key = GuessLimiter.key(client)
        now = self.clock()
        tokens, when = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - when) * self.rate)
        ok = tokens >= 1
        self._buckets[key] = (tokens - 1 if ok else tokens, now)
        while len(self._buckets) > CLIENTS_KEPT:
            self._buckets.popitem(last=False)
        return ok


class Guard:
    """The connections of one server: which are in a request (never closed for room), the cap,
    and each client's budget of requests."""

    def __init__(self, cap: int | None = None, streams=(), budget: Budget | None = None):
        self.cap = cap if cap is not None else connection_cap()
        self.streams = frozenset(streams)
        self.budget = budget or Budget()
        self.busy: set = set()          # request handlers (aiohttp's protocols) in a request
        self.counters = {"evicted": 0, "refused": 0, "over_budget": 0}

    def protocol_factory(self, server: web.Server):
        def make() -> asyncio.Protocol:
            open_now = server.connections
            if len(open_now) >= self.cap:
                idle = next((h for h in open_now if h not in self.busy and not h._force_close), None)
                if idle is None:
                    self.counters["refused"] += 1
                    return _Refused()
                self.counters["evicted"] += 1
                idle.force_close()          # the oldest idle connection makes room
            return server()
        return make

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        """Marks the connection as in a request, and bounds the request's time (``streams``:
        the paths of event streams, exempt)."""
        protocol = request.protocol
        self.busy.add(protocol)
        try:
            if not self.budget.take(request.remote or "?"):
                self.counters["over_budget"] += 1
                await asyncio.sleep(TARPIT_S)
                return web.Response(status=429, text="too many requests; slow down\n",
                                    headers={"Retry-After": "1"})
            if request.path in self.streams:
                return await handler(request)
            try:
                async with asyncio.timeout(REQUEST_S):
                    return await handler(request)
            except TimeoutError:
                return web.Response(status=408, text="request took too long\n")
        finally:
            self.busy.discard(protocol)


class CappedSite(web.SockSite):
    """:class:`aiohttp.web.SockSite` whose connections go through a :class:`Guard`."""

    def __init__(self, runner: web.AppRunner, sock, guard: Guard, **kw):
        super().__init__(runner, sock, **kw)
        self.guard = guard

    async def start(self) -> None:
        await web.BaseSite.start(self)          # registers the site with the runner
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self.guard.protocol_factory(self._runner.server),
                                                sock=self._sock, backlog=self._backlog)


__all__ = ["Guard", "CappedSite", "OneLineLog", "connection_cap", "IDLE_S", "REQUEST_S", "MAX_CONNECTIONS"]
