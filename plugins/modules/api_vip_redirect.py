#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Redirect VIP:vport to the local API server port on a master (third-party load balancer)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: api_vip_redirect
short_description: Make a master reach the load balancer VIP locally, without hairpin
version_added: 0.1.0
description:
  - Keeps exactly one rule C(iptables -t nat OUTPUT -p tcp -d VIP --dport VPORT -j REDIRECT --to-ports PORT)
    (TKE's third-party HA rule), tagged with a comment. The rule is checked with C(-C) before anything
    is inserted; rules of ours for another VIP or port, and duplicates, are deleted.
  - Before the rule for VIP:vport is first inserted, the module checks that something answers at
    VIP:vport (a TCP connection is accepted or actively refused); once the rule exists, connections
    from this host to VIP:vport reach the local port, so the check is not repeated. Nothing is
    changed when the check fails.
  - The rule lives in the kernel only; the ha_thirdparty role installs a systemd unit that puts it
    back at boot.
requirements:
  - iptables on the host
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Changes nothing. Without iptables on the host (check mode before the ha phase
      installed it) the rule is reported as would be inserted, unchecked and unprobed.
options:
  vip:
    description: Address of the load balancer (IPv4).
    type: str
    required: true
  vport:
    description: Port of the API on the load balancer.
    type: int
    required: true
  to_port:
    description: Local port of the API server.
    type: int
    default: 6443
  comment:
    description: Comment that marks the rules this module owns.
    type: str
    default: tke-vip-redirect
  state:
    description: Whether the rule is present or absent.
    type: str
    choices: [present, absent]
    default: present
  probe:
    description: Check that VIP:vport answers before the rule is first inserted.
    type: bool
    default: true
  probe_timeout:
    description: Seconds to wait for VIP:vport to answer.
    type: float
    default: 3
"""

EXAMPLES = r"""
- name: Reach the API VIP locally
  offline_pot.tke.api_vip_redirect:
    vip: 10.0.0.100
    vport: 8443
    to_port: 6443
"""

RETURN = r"""
rule:
  description: The rule specification (iptables arguments after the chain).
  returned: always
  type: list
  elements: str
deleted:
  description: Rule lines (iptables -S form) that were (or in check mode would be) deleted.
  returned: always
  type: list
  elements: str
inserted:
  description: Whether the rule was (or in check mode would be) inserted.
  returned: always
  type: bool
probe:
  description: Outcome of the VIP check (open, refused, timeout, error or skipped).
  returned: always
  type: str
"""

import errno
import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import nat_redirect


def probe(vip, port, timeout):
    try:
        with socket.create_connection((vip, port), timeout=timeout):
            return "open", ""
    except ConnectionRefusedError:
        return "refused", ""
    except socket.timeout:
        return "timeout", f"no answer within {timeout} s"
    except OSError as exc:
        if exc.errno == errno.ECONNREFUSED:
            return "refused", ""
        return "error", str(exc)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            vip=dict(type="str", required=True),
            vport=dict(type="int", required=True),
            to_port=dict(type="int", default=6443),
            comment=dict(type="str", default="tke-vip-redirect"),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            probe=dict(type="bool", default=True),
            probe_timeout=dict(type="float", default=3),
        ),
        supports_check_mode=True,
    )
    p = module.params
    rule = nat_redirect.rule_args(p["vip"], p["vport"], p["to_port"], p["comment"])
    ipt = module.get_bin_path("iptables", required=not module.check_mode)
    if not ipt:
        # check mode before iptables is installed (the task before this one would install it)
        after = " ".join(["-A", nat_redirect.CHAIN] + rule) + "\n" if p["state"] == "present" else ""
        module.exit_json(changed=bool(after), rule=rule, deleted=[], inserted=bool(after), probe="skipped",
                         msg="check mode: iptables is not installed yet; the rule is not checked",
                         diff=dict(before="", after=after))
    base = [ipt, "-w", "-t", "nat"]

    rc, listing, err = module.run_command(base + ["-S", nat_redirect.CHAIN])
    if rc != 0:
        module.fail_json(msg=f"iptables -t nat -S {nat_redirect.CHAIN} failed: {err.strip()}")
    existing = nat_redirect.ours(listing, p["comment"])
    rc, _out, _err = module.run_command(base + ["-C", nat_redirect.CHAIN] + rule)
    todo = nat_redirect.plan(existing, rc == 0, p["state"])

    probe_result = "skipped"
    if p["state"] == "present" and p["probe"] and todo["insert"] and rc != 0:
        probe_result, why = probe(p["vip"], p["vport"], p["probe_timeout"])
        if probe_result not in ("open", "refused"):
            module.fail_json(msg=f"nothing answers at the load balancer VIP {p['vip']}:{p['vport']} "
                                 f"from this host ({why}); check tke_vip/tke_vport and the load balancer",
                             probe=probe_result, rule=rule, deleted=[], inserted=False)

    changed = bool(todo["delete"]) or todo["insert"]
    after = [ln for ln in existing if ln not in todo["delete"]]
    if todo["insert"]:
        after.insert(0, " ".join(["-A", nat_redirect.CHAIN] + rule))
    result = dict(changed=changed, rule=rule, deleted=todo["delete"], inserted=todo["insert"],
                  probe=probe_result,
                  diff=dict(before="\n".join(existing) + "\n" if existing else "",
                            after="\n".join(after) + "\n" if after else ""))
    if changed and not module.check_mode:
        for line in todo["delete"]:
            module.run_command(base + nat_redirect.delete_args(line), check_rc=True)
        if todo["insert"]:
            module.run_command(base + ["-I", nat_redirect.CHAIN] + rule, check_rc=True)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
