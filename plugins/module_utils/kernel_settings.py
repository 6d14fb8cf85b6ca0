# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""host_kernel's decisions as pure functions: desired file contents, what differs, fstab swap
lines, and what a host cannot do. Unit tests: tests/unit/plugins/module_utils/test_kernel_settings.py.
"""
from __future__ import annotations

HEADER = "# Managed by offline_pot.tke (host_init). Local changes are overwritten.\n"


def sysctl_content(settings):
    """The sysctl.d file: one `key = value` per line, sorted, after the header."""
    return HEADER + "".join(f"{k} = {normalize(v)}\n" for k, v in sorted(settings.items()))


def modules_content(modules):
    """The modules-load.d file: one module per line, in the order given, no duplicates."""
    seen = []
    for m in modules:
        if m not in seen:
            seen.append(m)
    return HEADER + "".join(f"{m}\n" for m in seen)


def normalize(value):
    """sysctl values compare whitespace-insensitively ('4096\t87380' == '4096 87380')."""
    if isinstance(value, bool):
        value = int(value)
    return " ".join(str(value).split())


def proc_path(key):
    return "/proc/sys/" + key.replace(".", "/")


def sysctl_differs(current, desired):
    return current is None or normalize(current) != normalize(desired)


def fstab_without_swap(text):
    """fstab text with every active swap line commented out; returns (new_text, lines_commented)."""
    out, commented = [], []
    for line in text.splitlines(keepends=True):
        fields = line.split()
        if fields and not fields[0].startswith("#") and len(fields) >= 3 and fields[2] == "swap":
            out.append("# " + line if line.endswith("\n") else "# " + line + "\n")
            commented.append(line.rstrip("\n"))
        else:
            out.append(line)
    return "".join(out), commented


def active_swaps(proc_swaps_text):
    """Devices/files listed in /proc/swaps."""
    lines = proc_swaps_text.splitlines()[1:]
    return [line.split()[0] for line in lines if line.strip()]


def module_available(name, loaded, builtin):
    """A module is there when loaded (/proc/modules, /sys/module) or built into the kernel."""
    n = name.replace("-", "_")
    return n in loaded or n in builtin
