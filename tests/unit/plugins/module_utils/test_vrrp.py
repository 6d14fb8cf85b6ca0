import socket
import struct

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import vrrp


@pytest.mark.parametrize("vip,configured,expected", [
    ("10.0.0.100", 0, 101), ("10.0.0.0", 0, 1), ("10.0.0.254", 0, 255), ("10.0.0.255", 0, 1),
    ("10.0.0.100", 7, 7), ("10.0.0.100", 255, 255)])
def test_router_id(vip, configured, expected):
    assert vrrp.derive_router_id(vip, configured) == expected


@pytest.mark.parametrize("vip,configured", [("10.0.0.1", 256), ("10.0.0.1", -1), ("fd00::1", 0), ("nope", 0)])
def test_router_id_rejects(vip, configured):
    with pytest.raises(ValueError):
        vrrp.derive_router_id(vip, configured)


def advert(src, router_id, priority=100, addrs=("10.0.0.100",), version=2, proto=112):
    body = bytes([(version << 4) | 1, router_id, priority, len(addrs), 1, 1, 0, 0])
    body += b"".join(socket.inet_aton(a) for a in addrs)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 0, 0, 255, proto, 0,
                         socket.inet_aton(src), socket.inet_aton("224.0.0.18"))
    return header + body


def test_parse_advert():
    a = vrrp.parse_advert(advert("10.0.0.11", 101, 99))
    assert a == {"source": "10.0.0.11", "version": 2, "router_id": 101, "priority": 99,
                 "addresses": ["10.0.0.100"]}


@pytest.mark.parametrize("packet", [b"", b"\x45" * 10, advert("10.0.0.1", 1, proto=6),
                                    advert("10.0.0.1", 1, version=1)])
def test_parse_rejects(packet):
    assert vrrp.parse_advert(packet) is None


def test_conflicts_ignore_our_masters_and_other_ids():
    seen = [vrrp.parse_advert(advert(s, rid)) for s, rid in
            [("10.0.0.11", 101), ("10.0.0.50", 101), ("10.0.0.50", 101), ("10.0.0.60", 7)]]
    got = vrrp.conflicts(seen, 101, ["10.0.0.11", "10.0.0.12"])
    assert [c["source"] for c in got] == ["10.0.0.50"]
