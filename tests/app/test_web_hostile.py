"""The table's web page under hostile use: links in the log dir, idle and oversized
connections, wrong PINs from one client, old sessions' replays off the table's process."""

import stat

from controller.app.web.pin import PIN_FILE, SECRET_FILE, PinGate, table_pin


def test_the_pin_and_the_secret_are_never_written_through_planted_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in (PIN_FILE, SECRET_FILE):
        (logs / f"{name}.tmp").symlink_to(outside / name)
    pin, _ = table_pin(logs)
    gate = PinGate.for_table(logs, None)
    assert list(outside.iterdir()) == []                 # nothing written out of the log dir
    assert (logs / PIN_FILE).read_text().strip() == pin == gate.pin
    for name in (PIN_FILE, SECRET_FILE):
        path = logs / name
        assert not path.is_symlink() and stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not (logs / f"{name}.tmp").exists()


# --- the server, by plain sockets and HTTP --------------------------------------------------------

import logging  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402

import pytest  # noqa: E402

from controller.app.web import WebConfig, start_web  # noqa: E402

ZONES = ("seat1", "seat2", "seat3", "prikup")
BOUND_S = 15.0          # only matters when the code is broken


def http(url: str, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=BOUND_S) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes the connection (EOF) within the bound."""
    sock.settimeout(BOUND_S)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (TimeoutError, socket.timeout):
        return False
    except ConnectionResetError:
        return True


def _session(log_dir, names=None):
    from controller.core.config import GameConfig, Table
    from controller.store.gamelog import SessionLog
    from table_script import Script

    game = GameConfig(Table(players=3, names=names or {"seat1": "Anna"}))
    log = SessionLog.create(log_dir, game, None)
    script = Script(game)
    signals = script.lay("prikup", "7s")
    log.append(script.events[-1], signals)
    log.close()
    return log


@pytest.fixture
def web(tmp_path, monkeypatch):
    from controller.app.web import server as web_server

    monkeypatch.setattr(web_server, "IDLE_S", 0.5, raising=False)      # aiohttp's keep-alive (header) timeout
    output = start_web(WebConfig(port=0, pin="2468"), submit=lambda e: None, log_dir=tmp_path / "logs",
                       zones=ZONES)
    output.base = output.server.url.rstrip("/")
    yield output
    output.close()


def _connect(web) -> socket.socket:
    host, port = web.server.bound
    return socket.create_connection((host, port), timeout=BOUND_S)


def test_a_connection_that_never_finishes_its_header_is_closed(web):
    idle, slow = _connect(web), _connect(web)
    try:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: table\r\n")         # and never the blank line
        assert closed_by_server(idle) and closed_by_server(slow)
    finally:
        idle.close()
        slow.close()


def test_at_the_connection_cap_the_oldest_idle_one_makes_room_and_the_page_answers(web, monkeypatch):
    from controller.app.web import server as web_server

    monkeypatch.setattr(web_server, "IDLE_S", 3600.0, raising=False)
    web.server.guard.cap = 6
    idle = [_connect(web) for _ in range(6)]
    try:
        for sock in idle:       # each one accepted (a request answered on it), then left idle
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: table\r\n\r\n")
            sock.settimeout(BOUND_S)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        status, body = http(web.base + "/api/state")
        assert status == 200 and b'"seq"' in body
        assert closed_by_server(idle[0])
        assert web.server.guard.counters["evicted"] >= 1
    finally:
        for sock in idle:
            sock.close()


def test_an_oversized_header_is_a_4xx_and_one_log_line_without_a_traceback(web, caplog):
    caplog.set_level(logging.INFO)
    status, _ = http(web.base + "/", headers={"X-Big": "a" * 20000})
    assert 400 <= status < 500
    status, _ = http(web.base + "/api/state")
    assert status == 200
    server_lines = [r for r in caplog.records if r.name.startswith("aiohttp")]
    assert len(server_lines) == 1, [r.getMessage() for r in server_lines]
    assert server_lines[0].exc_info is None and "\n" not in server_lines[0].getMessage()


def test_a_symlinked_events_file_is_not_served(web, tmp_path):
    log = _session(tmp_path / "logs")
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"secret": "not the table\'s"}\n')
    log.events_path.unlink()
    log.events_path.symlink_to(outside)
    status, body = http(f"{web.base}/sessions/{log.folder.name}/events.jsonl")
    assert status == 404 and b"secret" not in body


def test_an_old_sessions_pulka_is_made_in_another_process_bounded_and_cached(web, tmp_path):
    old = _session(tmp_path / "logs", names={"seat1": "Olga"})
    url = f"{web.base}/sessions/{old.folder.name}/pulka"
    status, body = http(url)
    assert status == 200 and b"Olga" in body and b"<svg" in body
    pool = web.server.replays
    workers = set(pool._executor._processes)
    assert workers and os.getpid() not in workers                   # not the table's process
    assert http(url) == (status, body) and pool.counters["hits"] == 1     # the same file: cached
    pool.pending = 0                                                  # the pool is full
    status, _ = http(url)
    assert status == 200                                              # a cached pulka still is served
    with old.events_path.open("a") as fh:                             # the log changed: made again...
        fh.write("\n")
    status, body = http(url)
    assert status == 503                                              # ... which waits for room


def test_each_client_has_a_budget_of_requests():
    from controller.app.web.guard import Budget

    now = [0.0]
    budget = Budget(rate=2.0, burst=4, clock=lambda: now[0])
    assert [budget.take("10.0.0.1") for _ in range(5)] == [True] * 4 + [False]
    assert budget.take("10.0.0.2") and budget.take("2001:db8::1")     # others have their own
    now[0] = 1.0
    assert [budget.take("10.0.0.1") for _ in range(3)] == [True, True, False]


def test_a_client_over_its_budget_is_answered_429_and_the_page_goes_on(web, monkeypatch):
    from controller.app.web import guard
    from controller.app.web.guard import Budget

    monkeypatch.setattr(guard, "TARPIT_S", 0.0)
    web.server.guard.budget = Budget(rate=0.001, burst=3)
    statuses = [http(web.base + "/api/state")[0] for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    assert web.server.guard.counters["over_budget"] == 2


def test_the_connection_cap_follows_the_descriptor_limit(monkeypatch):
    import resource

    from controller.app.web import guard

    monkeypatch.setattr(resource, "getrlimit", lambda which: (1024, 4096))
    assert guard.connection_cap() == guard.MAX_CONNECTIONS
    monkeypatch.setattr(resource, "getrlimit", lambda which: (256, 4096))
    assert guard.connection_cap() == (256 - guard.FD_RESERVE) // 2      # room left for the table
