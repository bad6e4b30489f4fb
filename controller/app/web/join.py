"""Joining the table from a phone in one glance: the page's addresses, its PIN, a QR code,
and the table's name on the LAN (``preftable.local``).

``run`` prints these at start (no ``-v`` needed) with the QR code on the terminal, the
table's display shows the address and PIN at boot and the PIN between deals, and the
page serves the QR code at ``/join`` (README "The live table page").

- :func:`join_info`: the addresses a phone can open (``http://preftable.local:8080/``
  when the table announces itself, then each LAN address of this machine) and the PIN;
  nothing here opens a socket: the addresses are the interfaces' own (``ifaddr``);
- :func:`qr_terminal` / :func:`qr_svg`: the QR code of an address, drawn by ``segno``
  (for the terminal in Unicode half blocks; for the page as inline SVG, so the page's
  content security policy stays ``img-src 'self'``);
- :class:`Announcer`: the table's name and page on the LAN by multicast DNS
  (``zeroconf``: ``preftable.local`` and an ``_http._tcp`` service), so a phone opens
  ``http://preftable.local:8080`` without knowing the Pi's address.  The registrar is
  injectable: the tests never send a packet off this machine.
"""

from __future__ import annotations

import io
import ipaddress
import logging
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .config import WebConfig

log = logging.getLogger(__name__)

HOSTNAME = "preftable"                      # the table's name on the LAN: preftable.local
SERVICE_TYPE = "_http._tcp.local."
_LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class JoinInfo:
    """What a phone needs: the addresses to open (best first) and the PIN."""

    urls: tuple[str, ...]
    pin: str
    local_only: bool                # only this computer can open the page ([web] listen on loopback)

    @property
    def url(self) -> str:
        return self.urls[0]

    def lines(self) -> list[str]:
        """The words ``run`` prints at start."""
        out = [f"the live table page: {self.url}  (PIN {self.pin})"]
        out += [f"  also: {url}" for url in self.urls[1:]]
        if self.local_only:
            out.append('  only this computer can open it: set [web] listen = "0.0.0.0:8080" for the phones')
        return out


def lan_addresses(adapters: Callable[[], Sequence] | None = None) -> list[str]:
    """This machine's IPv4 addresses a phone on the LAN can reach (no loopback, no link-local),
    read from the interfaces (``ifaddr``): nothing is sent anywhere."""
    try:
        import ifaddr
    except ImportError:             # zeroconf brings it; without it the page's own address will do
        return []
    try:
        listed = (adapters or ifaddr.get_adapters)()
    except OSError as exc:          # no netlink socket (a sandbox's address families): no LAN addresses
        log.warning("cannot read this machine's network addresses (%s); the page's own address is shown",
                    exc.strerror or exc)
        return []
    found: list[str] = []
    for adapter in listed:
        for ip in adapter.ips:
            if not isinstance(ip.ip, str):
                continue            # IPv6 (a tuple): phones are given the IPv4 address
            address = ipaddress.IPv4Address(ip.ip)
            if not (address.is_loopback or address.is_link_local) and ip.ip not in found:
                found.append(ip.ip)
    return found


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def join_info(config: WebConfig, pin: str, *, port: int | None = None, announced: bool = True,
              addresses: Sequence[str] | None = None) -> JoinInfo:
    """The addresses of the page listening as ``config`` says (``port``: the port it really got)."""
    port = config.port if port is None else port
    if config.host in _LOOPBACK_HOSTS:
        return JoinInfo((_url("127.0.0.1" if config.host == "localhost" else config.host, port),), pin, True)
    if config.host not in ("0.0.0.0", "::", ""):
        return JoinInfo((_url(config.host, port),), pin, False)
    urls = [_url(f"{HOSTNAME}.local", port)] if announced else []
    urls += [_url(a, port) for a in (lan_addresses() if addresses is None else addresses)]
    return JoinInfo(tuple(urls) or (_url("127.0.0.1", port),), pin, not urls)


def qr_terminal(url: str) -> str:
    """The QR code of ``url`` in Unicode half blocks (two modules a character row)."""
    import segno
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def qr_svg(url: str, scale: int = 6) -> str:
    """The QR code of ``url`` as inline SVG markup (dark on light, whatever the page's theme)."""
    import segno
    return segno.make(url, error="m").svg_inline(scale=scale, border=2, dark="#000", light="#fff",
                                                 title=f"QR code: {url}", omitsize=True)


def display_rows(info: JoinInfo) -> tuple[str, str]:
    """The two rows of the 20x4 display at boot: where to point a phone, and the PIN."""
    host = info.url.removeprefix("http://").rstrip("/")
    return host[:20], f"PIN {info.pin}"


class Announcer:
    """The table's page on the LAN by multicast DNS: ``preftable.local`` and its port.

    ``registrar`` makes the object that registers (``zeroconf.Zeroconf`` by default;
    the tests pass their own); ``start`` never raises: a LAN without multicast still has
    the page at its addresses."""

    def __init__(self, port: int, addresses: Sequence[str], *, name: str = HOSTNAME,
                 registrar: Callable[[], object] | None = None):
        self.port = port
        self.addresses = [a for a in addresses]
        self.name = name
        self.registrar = registrar
        self.zc = None
        self.info = None

    def service_info(self):
        from zeroconf import ServiceInfo
        return ServiceInfo(SERVICE_TYPE, f"{self.name}.{SERVICE_TYPE}", port=self.port,
                           addresses=[socket.inet_aton(a) for a in self.addresses],
                           server=f"{self.name}.local.", properties={"path": "/"})

    def start(self) -> bool:
        if not self.addresses:
            return False
        try:
            if self.registrar is None:
                from zeroconf import Zeroconf
                self.registrar = Zeroconf
            self.info = self.service_info()
            self.zc = self.registrar()
            self.zc.register_service(self.info, allow_name_change=True)
        except Exception as exc:     # noqa: BLE001 - no multicast, a name taken: the page goes on
            log.warning("web: cannot announce %s.local on the LAN (%s); open the page by its address",
                        self.name, exc)
            self.close()
            return False
        log.info("web: announced as http://%s.local:%d/", self.name, self.port)
        return True

    def close(self) -> None:
        zc, self.zc = self.zc, None
        if zc is None:
            return
        try:
            if self.info is not None:
                zc.unregister_service(self.info)
        finally:
            zc.close()


def pin_for(config: WebConfig, log_dir: Path) -> str:
    """The table's PIN as the page will use it (made now if it is the first start)."""
    from .pin import table_pin
    return table_pin(Path(log_dir), config.pin)[0]


__all__ = ["JoinInfo", "join_info", "lan_addresses", "qr_terminal", "qr_svg", "display_rows", "Announcer",
           "pin_for", "HOSTNAME"]
