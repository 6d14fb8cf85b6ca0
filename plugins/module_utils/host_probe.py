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


# --- probes added for the full precheck (issue 3) ----------------------------------------------
import json  # noqa: E402  (kept next to the probes that use it)
import math  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402


def hostname_resolves(name):
    """The addresses the host's own resolver gives for its hostname ([] when it does not resolve)."""
    try:
        return sorted({ai[4][0] for ai in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)})
    except (OSError, UnicodeError):
        return []


def selinux_state():
    """enforcing, permissive or disabled (no SELinux in the kernel or not mounted)."""
    try:
        with open("/sys/fs/selinux/enforce") as fh:
            return "enforcing" if fh.read().strip() == "1" else "permissive"
    except OSError:
        return "disabled"


def cgroup_version(mounts="/proc/self/mounts"):
    """2 when /sys/fs/cgroup is the unified hierarchy (a cgroup2 mount), else 1 (cgroup v1 or hybrid):
    the kubelet's test (libcontainer IsCgroup2UnifiedMode: the statfs type of /sys/fs/cgroup)."""
    try:
        with open(mounts) as fh:
            for line in fh:
                fields = line.split()
                if len(fields) > 2 and fields[1] == "/sys/fs/cgroup" and fields[2] == "cgroup2":
                    return 2
    except OSError:
        pass
    return 1


def _unit_active(name):
    """Whether a systemd unit is running, from systemd's runtime state (no subprocess)."""
    return os.path.exists(f"/run/systemd/units/invocation:{name}.service")


def firewall_state():
    """Which host firewall manager is active: firewalld, ufw or none."""
    if _unit_active("firewalld") or os.path.exists("/run/firewalld/firewalld.pid"):
        return "firewalld"
    try:
        with open("/etc/ufw/ufw.conf") as fh:
            if any(line.strip().lower() == "enabled=yes" for line in fh):
                return "ufw"
    except OSError:
        pass
    return "none"


def tcp_reachable(address, port, timeout=1.5):
    """'open' (accepted), 'closed' (refused: the path works, nothing listens yet) or
    'blocked' (timeout or unreachable: a firewall or the network drops it)."""
    try:
        with socket.create_connection((address, int(port)), timeout=timeout):
            return "open"
    except ConnectionRefusedError:
        return "closed"
    except OSError:
        return "blocked"


def reachability(peers, timeout=1.5):
    """{"name:port": state} for every peer {name, address, ports}, probed in parallel."""
    jobs = [(p["name"], p["address"], port) for p in peers for port in p.get("ports", [])]
    if not jobs:
        return {}
    with ThreadPoolExecutor(max_workers=min(32, len(jobs))) as pool:
        states = list(pool.map(lambda j: tcp_reachable(j[1], j[2], timeout), jobs))
    return {f"{name}:{port}": state for (name, _a, port), state in zip(jobs, states)}


def fsync_latency(path, samples=200, block=2300):
    """etcd's disk test done in Python: `samples` writes of `block` bytes, each followed by
    fdatasync, in a scratch file next to path (its nearest existing parent); returns
    {"p99_ms", "max_ms", "dir"}. The scratch file is removed, the directory's times restored."""
    probe = path
    while probe and not os.path.isdir(probe):
        probe = os.path.dirname(probe.rstrip("/")) or "/"
    # the probe leaves no trace: the scratch file goes and the directory keeps its times (precheck
    # is read-only, in check mode too: docs/install.md, "Preview with --check")
    times = os.stat(probe)
    fd, scratch = tempfile.mkstemp(dir=probe, prefix=".tke-fsync-")
    lat = []
    try:
        data = os.urandom(block)
        for dummy in range(samples):
            t0 = time.perf_counter()
            os.write(fd, data)
            os.fdatasync(fd)
            lat.append((time.perf_counter() - t0) * 1000)
    finally:
        os.close(fd)
        os.unlink(scratch)
        os.utime(probe, ns=(times.st_atime_ns, times.st_mtime_ns))
    lat.sort()
    p99 = lat[max(0, math.ceil(0.99 * len(lat)) - 1)]
    return {"p99_ms": round(p99, 2), "max_ms": round(lat[-1], 2), "dir": probe}


def address_interfaces(links=None):
    """Every address of the host -> the interface holding it, from iproute2's JSON listing
    (`ip -j addr show`; links: that listing parsed, for tests). {} when ip cannot say."""
    if links is None:
        try:
            links = json.loads(subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True,
                                              timeout=10, check=True).stdout or "[]")
        except (OSError, ValueError, subprocess.SubprocessError):
            return {}
    out = {}
    for link in links:
        for info in link.get("addr_info") or ():
            if info.get("local") and link.get("ifname"):
                out.setdefault(info["local"], link["ifname"])
    return out


def node_interface(address, interfaces):
    """The interface holding the node's address (None: no interface has it), or False when the
    address is not an IP address (a name: not checked here)."""
    import ipaddress
    try:
        wanted = ipaddress.ip_address(address)
    except ValueError:
        return False
    for addr, iface in interfaces.items():
        try:
            if ipaddress.ip_address(addr.split("%", 1)[0]) == wanted:
                return iface
        except ValueError:
            continue
    return None


def gather_more(hostname=None, peers=(), fsync_path=None, fsync_samples=200, node_address=None):
    """The facts of the full precheck beyond gather(): name resolution, SELinux, firewall,
    reachability of the other nodes, etcd disk latency, the interface holding the node's address,
    and the host's clock."""
    name = hostname or platform.node()
    facts = {"hostname_addresses": hostname_resolves(name), "selinux": selinux_state(),
             "firewall": firewall_state(), "reachability": reachability(list(peers)), "cgroup": cgroup_version()}
    if node_address:
        iface = node_interface(node_address, address_interfaces())
        if iface is not False:
            facts["node_address"], facts["node_interface"] = node_address, iface
    if fsync_path:
        facts["fsync"] = fsync_latency(fsync_path, fsync_samples)
    facts["time"] = time.time()
    return facts
