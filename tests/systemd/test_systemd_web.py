"""The unit lets the live table page listen and loosens nothing else.

The web server needs IPv4/IPv6 sockets, a TCP listener on the page's port and the
phones of the LAN; its name on the LAN (multicast DNS) needs UDP 5353, the mDNS group and
netlink sockets (test_systemd_mdns.py says why).  Compared with the same unit sealed off
the network (no sockets but AF_UNIX, a private network namespace, no IP traffic), the
offline security check may differ in exactly those network items, and the rating
stays at or under 2.0.  The installer opens no firewall port either.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from controller.app.web.config import WebConfig

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
UNIT = SYSTEMD / "preftable.service"
INSTALL = SYSTEMD / "install.sh"
NETWORK_KEYS = ("RestrictAddressFamilies", "PrivateNetwork", "IPAddressDeny", "IPAddressAllow",
                "SocketBindAllow", "SocketBindDeny")
# What the web server may add to the sealed unit's exposure, and nothing else.
NETWORK_CHECKS = {"RestrictAddressFamilies=~AF_(INET|INET6)", "RestrictAddressFamilies=~AF_NETLINK",
                  "PrivateNetwork=", "IPAddressDeny="}
MDNS_BIND = "ipv4:udp:5353"          # zeroconf's port, IPv4 only (test_systemd_mdns.py)
MDNS_GROUP = "224.0.0.251"

needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze absent")


def service_lines(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def sealed(text: str) -> str:
    """The same unit without network: its network lines replaced by the pre-web ones."""
    kept = [line for line in text.splitlines() if line.partition("=")[0].strip() not in NETWORK_KEYS]
    index = kept.index("PrivateTmp=yes") + 1
    kept[index:index] = ["PrivateNetwork=yes", "IPAddressDeny=any", "RestrictAddressFamilies=AF_UNIX"]
    return "\n".join(kept) + "\n"


def test_the_unit_allows_ip_sockets_the_page_port_mdns_and_the_lan_only():
    lines = service_lines(UNIT.read_text())
    assert set(" ".join(lines["RestrictAddressFamilies"]).split()) == {"AF_UNIX", "AF_INET", "AF_INET6",
                                                                       "AF_NETLINK"}
    assert "PrivateNetwork" not in lines, "a private network namespace would hide the page from the phones"
    assert lines["SocketBindAllow"] == [f"tcp:{WebConfig().port}", MDNS_BIND]
    assert lines["SocketBindDeny"] == ["any"]
    assert lines["IPAddressDeny"] == ["any"]
    for entry in " ".join(lines["IPAddressAllow"]).split():
        if entry in ("localhost", "link-local", MDNS_GROUP):
            continue
        network = ipaddress.ip_network(entry)
        assert network.is_private and not network.is_global, entry
    # The capabilities stay empty: port 8080 needs no CAP_NET_BIND_SERVICE.
    assert lines["CapabilityBoundingSet"] == [""] and lines["AmbientCapabilities"] == [""]


def analyse(text: str, tmp_path: Path) -> tuple[float, set[str]]:
    unit = tmp_path / "preftable.service"
    unit.write_text(text)
    run = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", "--json=short",
                          str(unit)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    checks = json.loads(run.stdout)
    exposed = {c["name"] for c in checks if c.get("exposure")}
    text_run = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager", str(unit)],
                              capture_output=True, text=True, timeout=60)
    level = float(re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", text_run.stdout).group(1))
    return level, exposed


@needs_analyze
def test_only_the_network_checks_differ_from_the_sealed_unit_and_the_rating_stays_at_most_2(tmp_path):
    text = UNIT.read_text()
    level, exposed = analyse(text, tmp_path)
    sealed_level, sealed_exposed = analyse(sealed(text), tmp_path)
    assert level <= 2.0, f"systemd-analyze security rates the unit {level}"
    assert exposed - sealed_exposed == NETWORK_CHECKS
    assert sealed_exposed <= exposed
    assert sealed_level < level            # the comparison is real: the network costs something


def test_the_installer_opens_no_port():
    script = INSTALL.read_text()
    for tool in ("ufw", "iptables", "nft ", "firewall-cmd", "ip6tables"):
        assert tool not in script, f"install.sh runs {tool}"


def test_the_installed_config_skeleton_opens_the_page_to_the_lan_on_the_units_port():
    from controller.app.settings import load_settings

    web = load_settings(SYSTEMD / "config.toml").section("web")
    assert (web.host, web.port) == ("0.0.0.0", 8080)
    assert service_lines(UNIT.read_text())["SocketBindAllow"] == [f"tcp:{web.port}", MDNS_BIND]
