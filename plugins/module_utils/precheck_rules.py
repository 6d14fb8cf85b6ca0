# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Precheck rules: pure functions from gathered host facts and limits to check results.

No Ansible and no I/O here, so every rule is unit-tested on plain dicts
(tests/unit/plugins/module_utils/test_precheck_rules.py). host_probe gathers the facts.
"""
from __future__ import annotations

from ansible_collections.offline_pot.tke.plugins.module_utils.kubeadm_phases import cgroup_v1_reason, cgroup_v1_refused

PASS, WARN, FAIL = "pass", "warn", "fail"


# The precheck module's options (used by the module and by the action plugin that runs it).
ARGUMENT_SPEC = dict(
    min_cpu=dict(type="int", default=2),
    min_memory_mb=dict(type="int", default=3800),
    disk=dict(type="list", elements="dict", default=[], options=dict(
        path=dict(type="path", required=True),
        min_free_gb=dict(type="float", required=True))),
    supported_os=dict(type="list", elements="dict", default=[], options=dict(
        id=dict(type="str", required=True),
        versions=dict(type="list", elements="str", required=True))),
    min_kernel=dict(type="str", default="4.19"),
    arch=dict(type="list", elements="str", default=["x86_64", "aarch64"]),
    commands=dict(type="list", elements="str", default=[]),
    ports=dict(type="list", elements="int", default=[]),
    port_owners=dict(type="dict", default={}),
    swap=dict(type="str", choices=["fail", "warn", "ignore"], default="fail"),
    peers=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True), address=dict(type="str", required=True),
        ports=dict(type="list", elements="int", required=True))),
    fsync_path=dict(type="path"),
    fsync_samples=dict(type="int", default=200),
    max_fsync_ms=dict(type="float", default=10),
    max_time_skew_s=dict(type="float", default=1),
    node_address=dict(type="str"),
    k8s_version=dict(type="str"),
    allow_cgroup_v1=dict(type="bool", default=False),
)


def _result(check, value, limit, status, message=""):
    return {"check": check, "value": value, "limit": limit, "status": status, "message": message}


def version_tuple(text):
    """'6.1.0-18-amd64' -> (6, 1, 0); '12' -> (12,). Non-numeric tails are ignored."""
    parts = []
    for piece in str(text).replace("-", ".").split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def num(value):
    """30.0 -> '30', 29.9 -> '29.9': numbers as an operator writes them."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_min(check, value, minimum, unit=""):
    limit = f">= {num(minimum)}{unit}"
    if value is None:
        return _result(check, None, limit, FAIL, "could not be read")
    status = PASS if value >= minimum else FAIL
    msg = "" if status == PASS else f"{num(value)}{unit} is below the minimum {num(minimum)}{unit}"
    return _result(check, value, limit, status, msg)


def evaluate(facts, limits):
    """Evaluate every rule; return a list of results in a stable order.

    facts: the dict host_probe.gather() returns.
    limits: min_cpu, min_memory_mb, disk (list of {path, min_free_gb}), supported_os
    (list of {id, versions}), min_kernel, arch (list), commands (list), ports (list),
    port_owners (port -> process names of the services this install runs there: such a port
    counts as free, so a re-run on an installed site passes),
    swap ('fail' | 'warn' | 'ignore').
    """
    results = [check_min("cpu", facts.get("cpu_count"), limits["min_cpu"]),
               check_min("memory", facts.get("memory_mb"), limits["min_memory_mb"], " MiB")]

    for item in limits.get("disk", []):
        path, minimum = item["path"], item["min_free_gb"]
        free = facts.get("disk_free_gb", {}).get(path)
        results.append(check_min(f"disk free {path}", free, minimum, " GiB"))

    os_id, os_version = facts.get("os_id"), facts.get("os_version")
    supported = {s["id"]: [str(v) for v in s["versions"]] for s in limits.get("supported_os", [])}
    ok = os_id in supported and str(os_version) in supported[os_id]
    limit = ", ".join(f"{k} {'/'.join(v)}" for k, v in sorted(supported.items()))
    results.append(_result("os", f"{os_id} {os_version}", limit, PASS if ok else FAIL,
                           "" if ok else f"{os_id} {os_version} is not a supported OS (supported: {limit})"))

    kernel = facts.get("kernel", "")
    kernel_ok = version_tuple(kernel) >= version_tuple(limits["min_kernel"])
    results.append(_result("kernel", kernel, f">= {limits['min_kernel']}", PASS if kernel_ok else FAIL,
                           "" if kernel_ok else f"kernel {kernel} is older than {limits['min_kernel']}"))

    arch = facts.get("arch")
    arch_ok = arch in limits.get("arch", [])
    arches = "/".join(limits.get("arch", []))
    results.append(_result("arch", arch, arches, PASS if arch_ok else FAIL,
                           "" if arch_ok else f"architecture {arch} is not supported (supported: {arches})"))

    missing = sorted(c for c in limits.get("commands", []) if c not in facts.get("commands_found", []))
    results.append(_result("commands", "missing: " + ", ".join(missing) if missing else "all found",
                           ", ".join(limits.get("commands", [])), FAIL if missing else PASS,
                           f"required commands not found: {', '.join(missing)}" if missing else ""))

    listening = facts.get("listening_ports", {})
    ours = {str(k): set(v) for k, v in (limits.get("port_owners") or {}).items()}
    for port in sorted(limits.get("ports", [])):
        owner = listening.get(str(port))
        if owner and owner.split("[", 1)[0] in ours.get(str(port), ()):
            # the service this install puts there (a re-run on an installed site)
            results.append(_result(f"port {port} free", f"in use by {owner} (ours)", "free or ours", PASS))
            continue
        results.append(_result(f"port {port} free", f"in use by {owner}" if owner else "free", "free",
                               FAIL if owner else PASS,
                               f"port {port} is already in use by {owner}" if owner else ""))

    swap_mb, swap_rule = facts.get("swap_mb", 0), limits.get("swap", "fail")
    if swap_mb and swap_rule != "ignore":
        results.append(_result("swap", f"{swap_mb} MiB", "off", FAIL if swap_rule == "fail" else WARN,
                               f"swap is on ({swap_mb} MiB); kubelet needs it off"))
    else:
        results.append(_result("swap", f"{swap_mb} MiB", "off", PASS))
    results += evaluate_more(facts, limits)
    return results


def evaluate_more(facts, limits):
    """Checks on the facts host_probe.gather_more() adds; each only when its fact was gathered."""
    results = []
    if "hostname_addresses" in facts:
        name, addrs = facts.get("hostname"), facts["hostname_addresses"]
        results.append(_result("hostname resolvable", ", ".join(addrs) or "does not resolve", "resolves",
                               PASS if addrs else WARN,
                               "" if addrs else f"hostname {name} does not resolve here; host_init adds the "
                               "nodes to /etc/hosts"))
    if "selinux" in facts:
        enforcing = facts["selinux"] == "enforcing"
        results.append(_result("selinux", facts["selinux"], "permissive/disabled", WARN if enforcing else PASS,
                               "SELinux is enforcing; host_init sets it permissive" if enforcing else ""))
    if "firewall" in facts:
        active = facts["firewall"] != "none"
        results.append(_result("firewall", facts["firewall"], "none or ports opened", WARN if active else PASS,
                               f"{facts['firewall']} is active; host_init disables it or opens the ports "
                               "(host_init_firewall)" if active else ""))
    peers = {}
    for key, state in sorted((facts.get("reachability") or {}).items(), key=lambda kv: _peer_key(kv[0])):
        peer, port = key.rsplit(":", 1)
        peers.setdefault(peer, []).append((int(port), state))
    for peer, states in peers.items():
        blocked = [str(p) for p, st in states if st == "blocked"]
        value = ", ".join(f"{p} {'ok' if st != 'blocked' else 'blocked'}" for p, st in states)
        results.append(_result(f"reach {peer}", value, "every port reachable", FAIL if blocked else PASS,
                               f"cannot reach {peer} on port(s) {', '.join(blocked)} (dropped or no route)"
                               if blocked else ""))
    if "node_address" in facts:
        addr, iface = facts["node_address"], facts.get("node_interface")
        results.append(_result("node address", f"{addr} on {iface}" if iface else f"{addr} on no interface",
                               "an address of this host", PASS if iface else FAIL,
                               "" if iface else f"{addr} (tke_node_ip, else ansible_host) is no address of this "
                               "host: kubelet and etcd would advertise an address it does not have; set "
                               "tke_node_ip to one of its addresses"))
    if "cgroup" in facts and limits.get("k8s_version"):
        version, allowed = limits["k8s_version"], bool(limits.get("allow_cgroup_v1"))
        refused = facts["cgroup"] == 1 and cgroup_v1_refused(version)
        status = PASS if not refused else WARN if allowed else FAIL
        message = "" if not refused else cgroup_v1_reason(version) if not allowed else \
            (f"cgroup v1, allowed by tke_allow_cgroup_v1 (the kubelet of {version} runs with failCgroupV1: false, "
             "kubeadm's SystemVerification check is ignored); cgroup v1 is deprecated upstream: move to cgroup v2")
        results.append(_result("cgroup", f"v{facts['cgroup']}", f"v2 for Kubernetes {version}" if refused else "v1 or v2",
                               status, message))
    if "fsync" in facts:
        p99, limit = facts["fsync"]["p99_ms"], limits.get("max_fsync_ms", 10)
        ok = p99 <= limit
        results.append(_result("etcd disk fsync p99", f"{num(p99)} ms ({facts['fsync']['dir']})",
                               f"<= {num(limit)} ms", PASS if ok else FAIL,
                               "" if ok else f"fdatasync p99 {num(p99)} ms is above {num(limit)} ms; etcd needs a "
                               "faster disk for its data dir"))
    return results


def _peer_key(key):
    peer, port = key.rsplit(":", 1)
    return peer, int(port)


def check_time_skew(skew_s, uncertainty_s, max_skew_s):
    """Clock difference host - controller, measured around one module call: the host's clock is
    compared with the midpoint of the call, and the half round trip is the uncertainty."""
    excess = max(0.0, abs(skew_s) - uncertainty_s)
    value = f"{skew_s:+.2f} s (+/- {uncertainty_s:.2f})"
    ok = excess <= max_skew_s
    return _result("time skew", value, f"<= {num(float(max_skew_s))} s", PASS if ok else FAIL,
                   "" if ok else f"clock differs from the controller by {abs(skew_s):.2f} s (limit "
                   f"{num(float(max_skew_s))} s); fix time sync before installing")


def duplicate_hostnames(hostnames):
    """{host: hostname} -> {host: result} of the "hostname unique" check for every host."""
    by_name = {}
    for host, name in hostnames.items():
        by_name.setdefault(str(name).lower(), []).append(host)
    out = {}
    for host, name in hostnames.items():
        others = [h for h in by_name[str(name).lower()] if h != host]
        out[host] = _result("hostname unique", name, "unique", FAIL if others else PASS,
                            f"hostname {name} is also the hostname of {', '.join(others)}" if others else "")
    return out


def failures(results):
    return [r for r in results if r["status"] == FAIL]


def report_by_host(results_by_host, hostnames):
    """{host: its results} and {host: its hostname} -> {host: its results and its "hostname unique"
    check, last}: what the controller's precheck report holds."""
    unique = duplicate_hostnames(hostnames)
    return {host: list(results or []) + [unique[host]] for host, results in results_by_host.items()}


def failure_lines(results_by_host):
    """{host: results} -> one line per failing check, "<host>: <check>: <message>", host by host."""
    return [f"{host}: {r['check']}: {r.get('message') or r.get('value')}"
            for host, results in results_by_host.items()
            for r in results or [] if r.get("status") == FAIL]


def format_table(results):
    """A fixed-width text table: check | value | limit | status."""
    rows = [("CHECK", "VALUE", "LIMIT", "STATUS")]
    rows += [(r["check"], str(r["value"]), str(r["limit"]), r["status"].upper()) for r in results]
    widths = [min(max(len(row[i]) for row in rows), 48) for i in range(4)]
    lines = []
    for row in rows:
        cells = [cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "~" for i, cell in enumerate(row)]
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)).rstrip())
    return lines
