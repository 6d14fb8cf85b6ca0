# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""VRRP helpers for the keepalived VIP: router id derivation, advert parsing, conflict detection.

Pure functions; the vrrp_probe module does the socket work.
"""
from __future__ import annotations

import ipaddress

VRRP_PROTO = 112
VRRP_GROUP = "224.0.0.18"


def derive_router_id(vip: str, configured: int = 0) -> int:
    """The virtual_router_id to use: the configured one (1-255), or derived from the VIP as TKE
    does (last octet + 1), wrapped into 1-255 (a last octet of 255 gives 1)."""
    if configured:
        if not 1 <= int(configured) <= 255:
            raise ValueError(f"virtual_router_id {configured} is outside 1-255")
        return int(configured)
    addr = ipaddress.ip_address(vip)
    if addr.version != 4:
        raise ValueError(f"VIP {vip} is not an IPv4 address")
    return int(addr.packed[-1]) % 255 + 1


def parse_advert(packet: bytes) -> dict | None:
    """Parse a raw IPv4 packet holding a VRRP advertisement (v2 or v3).

    Returns source, version, router_id, priority and addresses, or None when the packet is not
    a well-formed VRRP advertisement."""
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return None
    ihl = (packet[0] & 0x0F) * 4
    if packet[9] != VRRP_PROTO or len(packet) < ihl + 8:
        return None
    vrrp = packet[ihl:]
    version, vtype = vrrp[0] >> 4, vrrp[0] & 0x0F
    if version not in (2, 3) or vtype != 1:
        return None
    count = vrrp[3]
    addrs = []
    for i in range(count):
        chunk = vrrp[8 + 4 * i:12 + 4 * i]
        if len(chunk) == 4:
            addrs.append(str(ipaddress.IPv4Address(chunk)))
    return {"source": str(ipaddress.IPv4Address(packet[12:16])), "version": version,
            "router_id": vrrp[1], "priority": vrrp[2], "addresses": addrs}


def conflicts(adverts: list[dict], router_id: int, own_addresses: list[str]) -> list[dict]:
    """Adverts for router_id sent by a router that is not one of ours (our masters)."""
    own = set(own_addresses)
    seen = {}
    for a in adverts:
        if a["router_id"] == router_id and a["source"] not in own:
            seen.setdefault(a["source"], a)
    return list(seen.values())
