# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Read-only probes of the host a module runs on: one call gathers every fact precheck needs.

Each probe reads /proc, /etc or the file system directly (no subprocesses) so a whole
precheck is one quick module call per host.
"""
from __future__ import annotations

import os
import platform
import shutil


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def meminfo():
    """MemTotal and SwapTotal in MiB from /proc/meminfo."""
    values = {}
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                key, rest = line.split(":", 1)
                values[key] = int(rest.split()[0]) // 1024
    except OSError:
        pass
    return values.get("MemTotal"), values.get("SwapTotal", 0)


def os_release(path="/etc/os-release"):
    data = {}
    try:
        with open(path) as fh:
            for line in fh:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    data[k] = v.strip('"')
    except OSError:
        pass
    return data


def disk_free_gb(path):
    """Free GiB on the file system that holds path (its nearest existing parent)."""
    probe = path
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe.rstrip("/")) or "/"
    try:
        return round(shutil.disk_usage(probe).free / 2**30, 1)
    except OSError:
        return None


def _proc_net_listeners(proc_file):
    """Listening TCP ports -> socket inode, from /proc/net/tcp{,6}."""
    ports = {}
    try:
        with open(proc_file) as fh:
            next(fh)
            for line in fh:
                f = line.split()
                if f[3] == "0A":  # TCP_LISTEN
                    ports[int(f[1].rsplit(":", 1)[1], 16)] = f[9]
    except OSError:
        pass
    return ports


def _inode_owners():
    owners = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            with open(f"/proc/{pid}/comm") as fh:
                comm = fh.read().strip()
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                owners[target[8:-1]] = f"{comm}[{pid}]"
    return owners


def listening_ports():
    """{'22': 'sshd[123]', ...} for every TCP port something listens on."""
    inodes = {**_proc_net_listeners("/proc/net/tcp6"), **_proc_net_listeners("/proc/net/tcp")}
    owners = _inode_owners() if inodes else {}
    return {str(port): owners.get(inode, "unknown process") for port, inode in inodes.items()}


def gather(paths=(), commands=()):
    mem, swap = meminfo()
    release = os_release()
    return {
        "hostname": platform.node(),
        "cpu_count": cpu_count(),
        "memory_mb": mem,
        "swap_mb": swap,
        "os_id": release.get("ID"),
        "os_version": release.get("VERSION_ID"),
        "os_pretty": release.get("PRETTY_NAME"),
        "kernel": platform.release(),
        "arch": platform.machine(),
        "disk_free_gb": {p: disk_free_gb(p) for p in paths},
        "commands_found": sorted(c for c in commands if shutil.which(c)),
        "listening_ports": listening_ports(),
    }
