#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Kernel settings of a Kubernetes node in one call: modules, sysctls, swap off."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: host_kernel
short_description: Kernel modules, sysctls and swap of a Kubernetes node in one call
version_added: 0.2.0
description:
  - Loads kernel modules and persists them in a modules-load.d file; writes a sysctl.d file and
    applies every key whose running value differs; turns swap off now and comments swap lines
    out of /etc/fstab. Modules come first so that keys such as C(net.bridge.*) exist.
  - Detects what a host cannot do and skips that item with a warning instead of failing, naming
    the reason; only these cases are skipped, any other error fails.
  - "Skipped: a key not writable (a read-only C(/proc/sys) in a container, where only C(net.*) is
    writable, or a key read-only in a network namespace); a module that is not built in on a kernel
    without loadable module support (no C(/proc/modules)); swapoff refused with EPERM."
  - The files are written in any case, so the settings hold when the same host boots a full kernel.
  - C(changed) is true only when a file was written, a value set, a module loaded or swap turned off.
requirements:
  - modprobe (kmod) and swapoff (util-linux) on the host
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
options:
  sysctl:
    description: Key -> value.
    type: dict
    default: {}
  sysctl_file:
    description: The sysctl.d file holding them.
    type: path
    default: /etc/sysctl.d/90-offline-pot-tke.conf
  modules:
    description: Kernel modules to load and persist.
    type: list
    elements: str
    default: []
  modules_file:
    description: The modules-load.d file listing them.
    type: path
    default: /etc/modules-load.d/offline-pot-tke.conf
  swap_off:
    description: Turn swap off now and comment swap entries out of fstab.
    type: bool
    default: true
  fstab:
    description: The fstab file.
    type: path
    default: /etc/fstab
"""

EXAMPLES = r"""
- name: Kernel settings
  offline_pot.tke.host_kernel:
    modules: [br_netfilter, overlay]
    sysctl:
      net.ipv4.ip_forward: 1
      net.bridge.bridge-nf-call-iptables: 1
      vm.swappiness: 0
"""

RETURN = r"""
applied:
  description: What was done (or would be, in check mode), one line each.
  returned: always
  type: list
  elements: str
not_possible:
  description: What this host cannot do, with the reason (also shown as warnings).
  returned: always
  type: list
  elements: str
host:
  description: What the rest of host_init needs to know about the host, read in the same call.
  returned: always
  type: dict
  contains:
    can_set_clock: {description: The process has CAP_SYS_TIME in its bounding set., type: bool}
    selinux: {description: "SELinux mode: V(enforcing), V(permissive) or V(disabled) (also when SELinux is absent).", type: str}
    firewalld: {description: firewalld is installed., type: bool}
    ufw: {description: ufw is installed., type: bool}
"""

import errno
import os
import platform

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils import kernel_settings as ks


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


class HostKernel:
    def __init__(self, module):
        self.m = module
        self.check = module.check_mode
        self.applied, self.skipped, self.diffs = [], [], []
        self.pending_modules, self.missing_modules = [], []

    def skip(self, text):
        self.skipped.append(text)
        self.m.warn(text)

    def ensure_file(self, path, content):
        before = read(path)
        if before == content:
            return
        self.diffs.append({"before_header": path, "after_header": path, "before": before or "", "after": content})
        self.applied.append(f"wrote {path}")
        if not self.check:
            write_file(path, content, 0o644)

    def modules(self, names):
        if not names:
            return
        self.ensure_file(self.m.params["modules_file"], ks.modules_content(names))
        release = platform.release()
        builtin = set()
        text = read(f"/lib/modules/{release}/modules.builtin") or ""
        builtin.update(os.path.basename(line.strip())[:-3].replace("-", "_") for line in text.splitlines() if line.strip())
        proc = read("/proc/modules")
        loaded = set(os.listdir("/sys/module")) if os.path.isdir("/sys/module") else set()
        if proc is not None:
            loaded.update(line.split()[0] for line in proc.splitlines() if line.strip())
        for name in names:
            if ks.module_available(name, loaded, builtin):
                continue
            if proc is None:
                self.missing_modules.append(name)
                self.skip(f"module {name}: this kernel has no loadable module support (no /proc/modules) and "
                          f"{name} is not built in; skipped (persisted in {self.m.params['modules_file']})")
                continue
            self.applied.append(f"loaded module {name}")
            self.pending_modules.append(name)
            if not self.check:
                rc, _out, err = self.m.run_command(["modprobe", name])
                if rc != 0:
                    self.m.fail_json(msg=f"modprobe {name} failed: {err.strip()}", applied=self.applied)

    def sysctls(self, settings):
        if not settings:
            return
        self.ensure_file(self.m.params["sysctl_file"], ks.sysctl_content(settings))
        for key, value in sorted(settings.items()):
            path = ks.proc_path(key)
            current = read(path)
            if current is None:
                if self.pending_modules and self.check:
                    self.applied.append(f"would set {key} = {ks.normalize(value)} once modules are loaded")
                    continue
                if self.missing_modules:
                    self.skip(f"sysctl {key}: does not exist on this kernel and module(s) "
                              f"{', '.join(self.missing_modules)} could not be loaded here; skipped")
                    continue
                self.m.fail_json(msg=f"sysctl {key}: {path} does not exist on this kernel (a module missing?)",
                                 applied=self.applied)
            if not ks.sysctl_differs(current, value):
                continue
            if not os.access(path, os.W_OK):
                why = ("/proc/sys is read-only here (a container)" if os.statvfs(path).f_flag & os.ST_RDONLY
                       else "the key is read-only in this namespace (a container)")
                self.skip(f"sysctl {key}: {why}; skipped, current "
                          f"{ks.normalize(current)}, wanted {ks.normalize(value)} (persisted in "
                          f"{self.m.params['sysctl_file']})")
                continue
            self.applied.append(f"set {key} = {ks.normalize(value)} (was {ks.normalize(current)})")
            if not self.check:
                try:
                    with open(path, "w") as fh:
                        fh.write(ks.normalize(value))
                except OSError as exc:
                    self.m.fail_json(msg=f"sysctl {key}: cannot set {ks.normalize(value)}: {exc}", applied=self.applied)

    def swap(self):
        swaps = ks.active_swaps(read("/proc/swaps") or "")
        if swaps:
            self.applied.append(f"swapoff {', '.join(swaps)}")
            if not self.check:
                rc, _out, err = self.m.run_command(["swapoff", "-a"])
                if rc != 0:
                    if "Operation not permitted" in err or str(errno.EPERM) in err:
                        self.applied.pop()
                        self.skip(f"swap: swapoff is not permitted here (a container); swap stays on: {err.strip()}")
                    else:
                        self.m.fail_json(msg=f"swapoff -a failed: {err.strip()}", applied=self.applied)
        fstab = self.m.params["fstab"]
        text = read(fstab)
        if text is not None:
            new, commented = ks.fstab_without_swap(text)
            if commented:
                self.ensure_file(fstab, new)


def host_facts():
    cap_bnd = 0
    for line in (read("/proc/self/status") or "").splitlines():
        if line.startswith("CapBnd:"):
            cap_bnd = int(line.split()[1], 16)
    selinux = "disabled"
    enforce = read("/sys/fs/selinux/enforce")
    if enforce is not None:
        selinux = "enforcing" if enforce.strip() == "1" else "permissive"
    return {"can_set_clock": bool(cap_bnd & (1 << 25)), "selinux": selinux,
            "firewalld": os.path.exists("/usr/sbin/firewalld"), "ufw": os.path.exists("/usr/sbin/ufw")}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysctl=dict(type="dict", default={}),
            sysctl_file=dict(type="path", default="/etc/sysctl.d/90-offline-pot-tke.conf"),
            modules=dict(type="list", elements="str", default=[]),
            modules_file=dict(type="path", default="/etc/modules-load.d/offline-pot-tke.conf"),
            swap_off=dict(type="bool", default=True),
            fstab=dict(type="path", default="/etc/fstab"),
        ),
        supports_check_mode=True,
    )
    hk = HostKernel(module)
    hk.modules(module.params["modules"])
    hk.sysctls(module.params["sysctl"])
    if module.params["swap_off"]:
        hk.swap()
    result = dict(changed=bool(hk.applied), applied=hk.applied, not_possible=hk.skipped, host=host_facts())
    if module._diff:
        result["diff"] = hk.diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
