#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Gather a host's facts and evaluate the install prerequisites in one call."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: precheck
short_description: Check a host against the prerequisites of a Kubernetes install
version_added: 0.1.0
description:
  - Gathers, in one call, everything the precheck rules need (CPU, memory, swap, OS, kernel,
    architecture, free disk per path, required commands, listening ports) and evaluates the rules.
  - Never changes the host. The result lists every check with its value, limit and status;
    the module itself does not fail on failing checks, so the calling play can report every
    failing check of every host at once.
requirements:
  - Python 3 on the host (the probes read /proc, /etc and the file systems; no other tool)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
  - offline_pot.tke.attributes.ACTION
options:
  min_cpu:
    description: Minimum number of usable CPUs.
    type: int
    default: 2
  min_memory_mb:
    description: Minimum memory in MiB.
    type: int
    default: 3800
  disk:
    description: Minimum free space per path (the file system holding the path, or its nearest existing parent).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Directory whose file system is measured.
        type: path
        required: true
      min_free_gb:
        description: Minimum free GiB.
        type: float
        required: true
  supported_os:
    description: Supported operating systems, by os-release ID and VERSION_ID.
    type: list
    elements: dict
    default: []
    suboptions:
      id:
        description: os-release ID, for example C(debian).
        type: str
        required: true
      versions:
        description: Supported VERSION_ID values.
        type: list
        elements: str
        required: true
  min_kernel:
    description: Minimum kernel version.
    type: str
    default: "4.19"
  arch:
    description: Supported machine architectures (C(uname -m)).
    type: list
    elements: str
    default: [x86_64, aarch64]
  commands:
    description: Commands that must be on the PATH.
    type: list
    elements: str
    default: []
  ports:
    description: TCP ports that must be free on this host.
    type: list
    elements: int
    default: []
  port_owners:
    description:
      - Port -> process names (as in /proc/PID/comm) of the services this install runs on that port.
        A port held by one of them passes, so precheck passes again on an installed site.
    type: dict
    default: {}
  swap:
    description: What swap being on means.
    type: str
    choices: [fail, warn, ignore]
    default: fail
  peers:
    description:
      - Other nodes this host must reach, each with the TCP ports to probe. A port that accepts
        or refuses a connection is reachable (nothing may listen yet before the install); a
        timeout or an unreachable network means a firewall or the network drops it.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Inventory name of the peer.
        type: str
        required: true
      address:
        description: Its IP address.
        type: str
        required: true
      ports:
        description: TCP ports to probe.
        type: list
        elements: int
        required: true
  fsync_path:
    description:
      - Measure etcd's disk latency here (writes of 2300 bytes, each followed by fdatasync, in a
        scratch file removed afterwards, in the nearest existing parent directory). Empty skips it.
    type: path
  fsync_samples:
    description: Number of write + fdatasync samples.
    type: int
    default: 200
  max_fsync_ms:
    description: Highest acceptable p99 fdatasync latency in milliseconds (kubekey and etcd's guidance 10 ms).
    type: float
    default: 10
  max_time_skew_s:
    description:
      - Highest acceptable clock difference to the controller, in seconds. Evaluated by the
        action plugin of the same name on the controller (the host's clock is read at the start of
        the module; the transport time is the measurement's uncertainty and is not held against the host).
    type: float
    default: 1
  node_address:
    description:
      - The address the install uses for this node (C(tke_node_ip), else C(ansible_host)). When it is
        an IP address, the check C(node address) fails unless an interface of the host holds it, and
        the facts name that interface (C(node_interface), from which tke.json's C(networkDevice) comes).
    type: str
  k8s_version:
    description:
      - The Kubernetes version the site runs. From 1.35 the check C(cgroup) fails on a cgroup v1 host (the kubelet
        refuses it by default, KEP-5573) unless I(allow_cgroup_v1). Empty skips the check.
    type: str
  allow_cgroup_v1:
    description: Whether the site allows cgroup v1 hosts from 1.35 (C(tke_allow_cgroup_v1)); the check then warns.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Check the host
  offline_pot.tke.precheck:
    min_cpu: 2
    disk:
      - path: /var/lib
        min_free_gb: 30
    ports: [6443, 2379, 2380]
  register: precheck
"""

RETURN = r"""
checks:
  description: Every check, in a stable order.
  returned: always
  type: list
  elements: dict
  contains:
    check: {description: Name of the check., type: str}
    value: {description: What the host has., type: raw}
    limit: {description: What is required., type: str}
    status: {description: "One of V(pass), V(warn) or V(fail).", type: str, choices: [pass, warn, fail]}
    message: {description: Why it failed or warned; empty when it passed., type: str}
failed_checks:
  description: The checks whose status is fail.
  returned: always
  type: list
  elements: dict
table:
  description: The checks as lines of a fixed-width table.
  returned: always
  type: list
  elements: str
facts:
  description: The facts the rules were evaluated on.
  returned: always
  type: dict
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import host_probe, precheck_rules


def main():
    started = time.time()
    module = AnsibleModule(
        argument_spec=precheck_rules.ARGUMENT_SPEC,
        supports_check_mode=True,
    )
    p = module.params
    facts = host_probe.gather(paths=[d["path"] for d in p["disk"]], commands=p["commands"])
    facts.update(host_probe.gather_more(hostname=facts["hostname"], peers=p["peers"],
                                        fsync_path=p["fsync_path"], fsync_samples=p["fsync_samples"],
                                        node_address=p["node_address"]))
    # the clock as read when the module started, and how long the module worked since
    facts["time"], facts["elapsed"] = started, time.time() - started
    results = precheck_rules.evaluate(facts, p)
    module.exit_json(changed=False, checks=results, failed_checks=precheck_rules.failures(results),
                     table=precheck_rules.format_table(results), facts=facts)


if __name__ == "__main__":
    main()
