"""Under the shipped unit the table can announce itself as ``preftable.local``, and the unit
opens nothing more than that needs.

What the announcement needs is read from the zeroconf the table runs (its ``const`` and its
socket code): it binds UDP 5353 on 0.0.0.0 and on each interface's IPv4 address (the
table's ``Zeroconf()`` is IPv4 only), sends to the group 224.0.0.251 and answers the phones
at their LAN addresses; it lists the interfaces with ``getifaddrs(3)``, as the page does for
the addresses it prints, and glibc asks the kernel for them over a netlink socket.  The
unit's ``RestrictAddressFamilies=`` is systemd's seccomp filter on ``socket(2)`` (EAFNOSUPPORT
for any other family); a child here gets the same filter, built from the unit's own line,
and must still read the interfaces.
"""

from __future__ import annotations

import ctypes
import ipaddress
import platform
import socket
import struct
import sys

import pytest

from conftest import default_signals, run
from test_systemd_web import UNIT, service_lines

zeroconf = pytest.importorskip("zeroconf")
from zeroconf import const as zc_const                    # noqa: E402  (after the skip)
from zeroconf._utils import net as zc_net                 # noqa: E402


def bind_rule(rule: str) -> tuple[str | None, str | None, str | None]:
    """``[family:][protocol:][ports]`` (systemd.resource-control(5)) as its three parts."""
    family = protocol = ports = None
    for part in rule.split(":"):
        if part in ("ipv4", "ipv6"):
            family = part
        elif part in ("tcp", "udp"):
            protocol = part
        else:
            ports = part
    return family, protocol, ports


def test_the_announcer_runs_zeroconf_on_ipv4_only(monkeypatch):
    """What the unit allows below is for this Zeroconf: all interfaces, IPv4 (autodetected)."""
    from controller.app.web.join import Announcer
    made = []

    class Recorder:
        def __init__(self, *args, **kwargs):
            made.append((args, kwargs))

        def register_service(self, info, allow_name_change=False):
            pass

        def unregister_service(self, info):
            pass

        def close(self):
            pass

    monkeypatch.setattr(zeroconf, "Zeroconf", Recorder)
    announcer = Announcer(8080, ["192.168.1.20"])
    assert announcer.start()
    announcer.close()
    assert made == [((), {})]
    assert zc_net.autodetect_ip_version(zc_net.InterfaceChoice.All) is zc_net.IPVersion.V4Only


def test_the_unit_lets_zeroconf_bind_the_mdns_port_on_ipv4_and_nothing_else_new():
    lines = service_lines(UNIT.read_text())
    rules = [bind_rule(r) for r in lines["SocketBindAllow"]]
    assert ("ipv4", "udp", str(zc_const._MDNS_PORT)) in rules
    assert set(rules) == {(None, "tcp", "8080"), ("ipv4", "udp", str(zc_const._MDNS_PORT))}
    assert lines["SocketBindDeny"] == ["any"]


def test_the_unit_lets_traffic_reach_the_mdns_group_and_no_other_public_address():
    lines = service_lines(UNIT.read_text())
    allowed = " ".join(lines["IPAddressAllow"]).split()
    assert zc_const._MDNS_ADDR in allowed
    for entry in allowed:
        if entry in ("localhost", "link-local"):
            continue
        network = ipaddress.ip_network(entry)
        if network.is_multicast:
            assert network == ipaddress.ip_network(zc_const._MDNS_ADDR), entry   # only the mDNS group
        else:
            assert network.is_private and not network.is_global, entry


# -- the unit's RestrictAddressFamilies= as systemd applies it: a seccomp filter on socket(2)

_ARCH = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}    # AUDIT_ARCH_*, __NR_socket


def _families(unit_text: str) -> list[int]:
    names = " ".join(service_lines(unit_text)["RestrictAddressFamilies"]).split()
    return [int(getattr(socket, name)) for name in names]


def _restrict_families(allowed: list[int]) -> None:
    """In the child before exec: ``socket(2)`` of any other family fails with EAFNOSUPPORT."""
    default_signals()
    arch, nr_socket = _ARCH[platform.machine()]
    ld_abs, jeq, ret = 0x20, 0x15, 0x06
    allow, errno = 0x7FFF0000, 0x00050000 | 97          # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO|EAFNOSUPPORT
    prog = [(ld_abs, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, allow),        # seccomp_data.arch
            (ld_abs, 0, 0, 0), (jeq, 1, 0, nr_socket), (ret, 0, 0, allow),   # .nr
            (ld_abs, 0, 0, 16)]                                              # .args[0]: the family
    prog += [(jeq, len(allowed) - i, 0, family) for i, family in enumerate(allowed)]
    prog += [(ret, 0, 0, errno), (ret, 0, 0, allow)]
    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *f) for f in prog))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    fprog = SockFprog(len(prog), ctypes.cast(code, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0):   # NO_NEW_PRIVS, SECCOMP
        raise OSError(ctypes.get_errno(), "seccomp")


READ_INTERFACES = """
import socket
from controller.app.web.join import lan_addresses
from zeroconf._utils.net import get_all_addresses
lan_addresses(); get_all_addresses()
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
except OSError as exc:
    print("refused", exc.errno)
"""


def _under_families(unit_text: str):
    families = _families(unit_text)
    return run([sys.executable, "-c", READ_INTERFACES], capture_output=True, text=True,
               preexec_fn=lambda: _restrict_families(families))


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() not in _ARCH, reason="a Linux seccomp filter")
def test_under_the_units_address_families_the_table_reads_its_interfaces():
    done = _under_families(UNIT.read_text())
    assert done.returncode == 0, done.stderr[-2000:]
    # The filter is real: a family the unit does not name is refused (EAFNOSUPPORT).
    assert done.stdout.split() == ["refused", "97"]
