#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Listen for VRRP advertisements on an interface and report routers that use a given id."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: vrrp_probe
short_description: Find other VRRP routers using a virtual_router_id on this network
version_added: 0.1.0
description:
  - Joins the VRRP multicast group on an interface and listens for advertisements for a few
    seconds (a VRRP master advertises every second by default), then reports every router seen
    and those that use I(router_id) without being one of I(own_addresses).
  - Routers that advertise by unicast to other hosts cannot be seen; multicast ones can.
  - Never changes the host.
requirements:
  - root on the host (a raw socket for IP protocol 112, VRRP)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
options:
  interface:
    description: Interface to listen on.
    type: str
    required: true
  router_id:
    description: The virtual_router_id we intend to use.
    type: int
    required: true
  own_addresses:
    description: Addresses of our own routers (the masters); their adverts are not conflicts.
    type: list
    elements: str
    default: []
  seconds:
    description: How long to listen.
    type: float
    default: 3
"""

EXAMPLES = r"""
- name: Is virtual_router_id 101 free on eth0?
  offline_pot.tke.vrrp_probe:
    interface: eth0
    router_id: 101
    own_addresses: [10.0.0.11, 10.0.0.12, 10.0.0.13]
  register: probe
  failed_when: probe.conflicts | length > 0
"""

RETURN = r"""
adverts:
  description: One entry per (source, router id) seen.
  returned: always
  type: list
  elements: dict
conflicts:
  description: Adverts for I(router_id) from routers that are not ours.
  returned: always
  type: list
  elements: dict
"""

import socket
import struct
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import vrrp


def listen(interface, seconds):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, vrrp.VRRP_PROTO)
    try:
        sock.setsockopt(socket.SOL_SOCKET, 25, interface.encode() + b"\0")  # SO_BINDTODEVICE
        ifindex = socket.if_nametoindex(interface)
        mreq = struct.pack("4s4si", socket.inet_aton(vrrp.VRRP_GROUP), socket.inet_aton("0.0.0.0"), ifindex)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
        seen = {}
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            try:
                packet = sock.recv(2048)
            except socket.timeout:
                break
            advert = vrrp.parse_advert(packet)
            if advert:
                seen[(advert["source"], advert["router_id"])] = advert
        return list(seen.values())
    finally:
        sock.close()


def main():
    module = AnsibleModule(
        argument_spec=dict(
            interface=dict(type="str", required=True),
            router_id=dict(type="int", required=True),
            own_addresses=dict(type="list", elements="str", default=[]),
            seconds=dict(type="float", default=3),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        adverts = listen(p["interface"], p["seconds"])
    except OSError as exc:
        module.fail_json(msg=f"cannot listen for VRRP on {p['interface']}: {exc}")
    module.exit_json(changed=False, adverts=adverts,
                     conflicts=vrrp.conflicts(adverts, p["router_id"], p["own_addresses"]))


if __name__ == "__main__":
    main()
