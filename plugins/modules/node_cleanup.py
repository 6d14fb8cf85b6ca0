#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Remove what the install put on a host: services, files and directories, netfilter chains, links."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: node_cleanup
short_description: Stop services and remove files, netfilter chains and network links the install made
version_added: 0.3.0
description:
  - One call per role of the reset (C(playbooks/reset.yml)). It first finds what is there, then
    removes only that, so a second run reports no change.
  - Stops and disables each of I(services) that is active or enabled (C(systemctl disable --now)).
  - Unmounts every mount point at or below I(paths) and what the directories of I(empty) hold (deepest
    first), then removes each path that exists (files, links, whole directories) and everything inside
    each directory of I(empty) (the directory stays). A removed unit file makes it run C(systemctl daemon-reload).
  - Removes the netfilter chains (iptables and ip6tables, every table) whose names start with one of
    I(chain_prefixes), with the rules of other chains that jump to them, in one C(iptables-restore
    --noflush) per table and family.
  - Deletes the network links whose names match one of I(links) (shell patterns).
  - With I(ipvs_clear), clears the IPVS table (C(ipvsadm -C)) when it has services and ipvsadm is
    installed.
requirements:
  - systemctl and ip (iproute2) on the host; iptables-save/iptables-restore for the netfilter chains, ipvsadm to clear IPVS
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Reports what would be stopped and removed; changes nothing.
  diff_mode:
    details: What is there before (services running or enabled, paths, chains, links) and after.
options:
  services:
    description: systemd units to stop and disable (a unit that does not exist is left alone).
    type: list
    elements: str
    default: []
  paths:
    description: Files and directories to remove, whole; mount points below them are unmounted first.
    type: list
    elements: path
    default: []
  empty:
    description:
      - Directories emptied, not removed - for a directory a running service watches and may not lose
        (containerd 2 exits when its CNI configuration directory is deleted, and its restart creates it again).
      - A directory that does not exist is left alone.
    type: list
    elements: path
    default: []
  chain_prefixes:
    description: Netfilter chains whose names start with one of these are removed (e.g. C(KUBE-), C(FLANNEL-)).
    type: list
    elements: str
    default: []
  links:
    description: Shell patterns of network link names to delete (e.g. C(cni0), C(flannel.*)).
    type: list
    elements: str
    default: []
  ipvs_clear:
    description: Clear the IPVS table (kube-proxy in ipvs mode) when ipvsadm is there.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Remove the registry service and its configuration
  offline_pot.tke.node_cleanup:
    services: [tke-registry]
    paths: [/etc/systemd/system/tke-registry.service, /etc/tke-registry]

- name: Remove the pod network's state
  offline_pot.tke.node_cleanup:
    empty: [/etc/cni/net.d]
    paths: [/var/lib/cni, /run/flannel]
    chain_prefixes: [KUBE-, FLANNEL-, cali-]
    links: [cni0, flannel.*, kube-ipvs0]
"""

RETURN = r"""
stopped:
  description: Units stopped or disabled.
  returned: always
  type: list
  elements: str
unmounted:
  description: Mount points unmounted.
  returned: always
  type: list
  elements: str
removed:
  description: Paths removed (for a directory of I(empty), each entry in it).
  returned: always
  type: list
  elements: str
netfilter:
  description: Rules and chains removed, one line each, C(<table>) then the rule deleted (C(-D ...)) or the chain (C(-X <chain>)); C(ip6) first for IPv6.
  returned: always
  type: list
  elements: str
links_deleted:
  description: Network links deleted.
  returned: always
  type: list
  elements: str
ipvs_cleared:
  description: Whether the IPVS table was cleared.
  returned: always
  type: bool
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils import node_cleanup as nc

UNIT_DIRS = ("/etc/systemd/", "/lib/systemd/", "/usr/lib/systemd/", "/run/systemd/")


def _services(module, names):
    """Units of names that are active or enabled (what disable --now would change)."""
    systemctl = module.get_bin_path("systemctl")
    found = []
    if not systemctl:
        return systemctl, found
    for name in names:
        dummy, active, dummy = module.run_command([systemctl, "is-active", name])
        dummy, enabled, dummy = module.run_command([systemctl, "is-enabled", name])
        if active.strip() in ("active", "activating", "reloading") or \
                enabled.strip() in ("enabled", "enabled-runtime", "linked", "linked-runtime"):
            found.append(name)
    return systemctl, found


def _netfilter(module, prefixes):
    """[(restore binary, plan)] for iptables and ip6tables."""
    out = []
    for family in ("iptables", "ip6tables"):
        save, restore = module.get_bin_path(f"{family}-save"), module.get_bin_path(f"{family}-restore")
        if not (prefixes and save and restore):
            continue
        rc, text, err = module.run_command([save])
        if rc != 0:
            continue   # no netfilter in this kernel / namespace for the family: nothing of ours
        plan = nc.netfilter_plan(text, prefixes)
        if plan:
            out.append((family, restore, plan))
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            services=dict(type="list", elements="str", default=[]),
            paths=dict(type="list", elements="path", default=[]),
            empty=dict(type="list", elements="path", default=[]),
            chain_prefixes=dict(type="list", elements="str", default=[]),
            links=dict(type="list", elements="str", default=[]),
            ipvs_clear=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    p = module.params
    systemctl, services = _services(module, p["services"])
    # what each directory to empty holds goes as a path of its own; the directory stays
    held = [os.path.join(d, name) for d in p["empty"] if os.path.isdir(d) for name in sorted(os.listdir(d))]
    paths = [x for x in p["paths"] if os.path.lexists(x)] + held
    try:
        with open("/proc/mounts") as f:
            mounts = nc.mounts_under(f.read(), p["paths"] + held)
    except OSError:
        mounts = []
    netfilter = _netfilter(module, p["chain_prefixes"])
    nf_lines = [("ip6: " if fam == "ip6tables" else "") + ln
                for fam, dummy, plan in netfilter for ln in nc.netfilter_summary(plan)]
    links = []
    ip = module.get_bin_path("ip")
    if p["links"] and ip:
        dummy, text, dummy = module.run_command([ip, "-o", "link", "show"])
        links = nc.links_matching(text, p["links"])
    ipvsadm = module.get_bin_path("ipvsadm") if p["ipvs_clear"] else None
    ipvs = False
    if ipvsadm:
        rc, text, dummy = module.run_command([ipvsadm, "-Sn"])
        ipvs = rc == 0 and bool(text.strip())

    changed = bool(services or paths or mounts or netfilter or links or ipvs)
    before = ([f"service {s}" for s in services] + [f"mount {m}" for m in mounts] + [f"path {x}" for x in paths]
              + [f"netfilter {ln}" for ln in nf_lines] + [f"link {ln}" for ln in links]
              + (["ipvs services"] if ipvs else []))
    result = dict(changed=changed, stopped=services, unmounted=mounts, removed=paths, netfilter=nf_lines,
                  links_deleted=links, ipvs_cleared=ipvs,
                  diff=dict(before="".join(f"{ln}\n" for ln in before), after=""))
    if module.check_mode or not changed:
        module.exit_json(**result)

    for name in services:
        module.run_command([systemctl, "disable", "--now", name], check_rc=True)
    for point in mounts:
        rc, dummy, err = module.run_command(["umount", point])
        if rc != 0:
            module.run_command(["umount", "-l", point], check_rc=True)
    for x in paths:
        if os.path.isdir(x) and not os.path.islink(x):
            shutil.rmtree(x)
        else:
            os.unlink(x)
    if systemctl and any(x.startswith(UNIT_DIRS) for x in paths):
        module.run_command([systemctl, "daemon-reload"], check_rc=True)
    for dummy, restore, plan in netfilter:
        for table, text in sorted(plan.items()):
            module.run_command([restore, "-w", "--noflush"], data=text, check_rc=True)
    for name in links:
        module.run_command([ip, "link", "delete", name], check_rc=True)
    if ipvs:
        module.run_command([ipvsadm, "-C"], check_rc=True)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
