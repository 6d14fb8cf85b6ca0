# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Cross-field inventory rules: pure functions from an inventory model to a list of problems.

The validate_inventory action plugin builds the model from the inventory (groups, per-host
connection facts, cluster-wide tke_* settings) and calls check(); every rule runs, so one run
reports ALL problems at once. Each problem names where it is (``all``, ``group etcd``,
``host h2``) and the variable at fault. No Ansible and no I/O here
(tests/unit/plugins/plugin_utils/test_inventory_rules.py).
"""
from __future__ import annotations

import ipaddress
import re

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal, tke_rules
from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images, pack_signature
from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import OCTAL_MODE

# Phases of playbooks/install.yml, in order (tke_skip_phases must name these): the journal's list.
PHASES = install_journal.USER_PHASES
# Phases a user cannot skip: nothing may run on an unchecked inventory.
UNSKIPPABLE = ("validate",)
HA_MODES = ("none", "keepalived", "thirdparty", "local_lb")
# Pod network MTU when set (0 = derived from the node interface): 1280 is the smallest link MTU
# IPv6 allows (RFC 8200 section 5), 9000 a jumbo frame.
NETWORK_MTU = (1280, 9000)
# calico IPPool blockSize (docs.tigera.io calico reference, resources/ippool: "20 to 32 (inclusive) for
# IPv4 and 116 to 128 (inclusive) for IPv6")
CALICO_BLOCK_SIZES = {4: (20, 32), 6: (116, 128)}
MIN_PASSWORD = 8
_DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def problem(scope, variable, message):
    return {"scope": scope, "variable": variable, "message": message}


def format_problem(p):
    return f"{p['scope']}: {p['variable']}: {p['message']}"


def is_dns_name(name):
    """A DNS name of at least two labels (registry.tke.com), lower case, no trailing dot."""
    if not isinstance(name, str) or not name or len(name) > 253 or "." not in name:
        return False
    return all(_DNS_LABEL.match(label) for label in name.split("."))


def is_node_name(name):
    """A Kubernetes node name: DNS-1123 subdomain (lower case labels joined by dots)."""
    return isinstance(name, str) and 0 < len(name) <= 253 and all(
        _DNS_LABEL.match(label) for label in name.split("."))


def parse_ip(value):
    try:
        return ipaddress.ip_address(str(value).strip())
    except ValueError:
        return None


def parse_net(value):
    try:
        return ipaddress.ip_network(str(value).strip(), strict=True)
    except ValueError:
        return None


def node_networks(settings, master_ips):
    """The node networks: tke_node_networks, or the /24 around every master when not given."""
    given = settings.get("tke_node_networks") or []
    if given:
        return [n for n in (parse_net(x) for x in given) if n is not None]
    return sorted({ipaddress.ip_network(f"{ip}/24", strict=False) for ip in master_ips if ip.version == 4},
                  key=str)


def _int_or_none(value):
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def check(model):
    """Return every problem of the inventory model, in a stable order.

    model: {
      "groups": {"masters": [...], "workers": [...], "etcd": [...] (absent = stacked), "registry": [...]},
      "hosts": {name: {"address": ansible_host or the name, "node_address": tke_node_ip or the address,
                       "node_address_var": "tke_node_ip" or "ansible_host", "connection": ...,
                       "password_set": bool}},
      "settings": {tke_* cluster-wide values},
    }
    """
    groups, hosts, s = model["groups"], model["hosts"], model["settings"]
    out = []
    out += _check_groups(groups, hosts)
    ips = _check_hosts(hosts, groups, out)
    master_ips = [ips[h] for h in groups.get("masters", []) if h in ips]
    out += _check_etcd(groups)
    out += _check_ha(s, groups, ips, master_ips)
    out += _check_networks(s, ips, master_ips)
    out += _check_pod_network(s, groups)
    out += _check_names_and_versions(s)
    out += _check_site_pack(s)
    return out


def _check_site_pack(s):
    """A site pack is installed only when its signature can be checked (or that is waived)."""
    if not s.get("tke_site_pack"):
        return []
    pubkey = s.get("tke_site_pack_pubkey") or ""
    if not pubkey:
        if s.get("tke_site_pack_allow_unsigned") is True:
            return []
        return [problem("all", "tke_site_pack_pubkey", "not set: the site pack's signature cannot be checked "
                        "(give the site owner's Ed25519 public key, PEM; or set tke_site_pack_allow_unsigned: true)")]
    try:
        pack_signature.public_key(pubkey)
    except pack_signature.SignatureError as exc:
        return [problem("all", "tke_site_pack_pubkey", str(exc))]
    return []


def _check_groups(groups, hosts):
    out = []
    masters = groups.get("masters", [])
    if not masters:
        out.append(problem("group masters", "masters", "the inventory has no host in group masters; "
                           "at least one master is required"))
    known = set(masters) | set(groups.get("workers", [])) | set(groups.get("etcd") or []) | \
        set(groups.get("registry", []))
    for name in sorted(set(hosts) - known):
        out.append(problem(f"host {name}", "groups", "host is in none of the groups masters, workers, "
                           "etcd, registry"))
    registry = groups.get("registry", [])
    if len(registry) > 1:
        out.append(problem("group registry", "registry", f"{len(registry)} hosts ({', '.join(registry)}); "
                           "the registry group takes one host"))
    return out


def _check_hosts(hosts, groups, out):
    """Per-host address and name rules on each node's address (tke_node_ip, else ansible_host: the
    one every phase uses, inventory_model.node_address); return {host: ip} for hosts with a valid
    one. The VIP and network rules compare these addresses."""
    ips, seen_ip, seen_name = {}, {}, {}
    for name in sorted(hosts):
        address = hosts[name].get("node_address") or hosts[name].get("address") or name
        var = hosts[name].get("node_address_var") or "ansible_host"
        ip = parse_ip(address)
        if ip is None:
            out.append(problem(f"host {name}", var, f"{address!r} is not an IP address; " + (
                "tke_node_ip must be the node's cluster IP" if var == "tke_node_ip" else
                "each node's ansible_host must be its cluster IP (or set tke_node_ip to it)")))
        else:
            if ip in seen_ip:
                out.append(problem(f"host {name}", var,
                                   f"{ip} is also the address of host {seen_ip[ip]}; host IPs must be unique"))
            else:
                seen_ip[ip] = name
            ips[name] = ip
        if not is_node_name(name.lower()):
            out.append(problem(f"host {name}", "inventory_hostname",
                               f"{name!r} is not a valid node name (lower-case DNS labels: a-z, 0-9, '-')"))
        key = name.lower()
        if key in seen_name:
            out.append(problem(f"host {name}", "inventory_hostname",
                               f"{name!r} is the same node name as host {seen_name[key]}; "
                               "hostnames must be unique"))
        else:
            seen_name[key] = name
        if hosts[name].get("connection") == "paramiko" and not hosts[name].get("password_set") \
                and not hosts[name].get("key_set"):
            out.append(problem(f"host {name}", "ansible_password",
                               "ansible_connection is paramiko but neither ansible_password nor "
                               "ansible_ssh_private_key_file is set"))
    return ips


def _check_etcd(groups):
    if "etcd" in groups and groups["etcd"] is not None:
        members, scope, what = groups["etcd"], "group etcd", "external etcd"
    else:
        members, scope, what = groups.get("masters", []), "group masters", "stacked etcd (one member per master)"
    n = len(members)
    if n == 0 and scope == "group etcd":
        return [problem(scope, "etcd", "the etcd group is defined but has no member; remove it for stacked "
                        "etcd or list 1, 3 or 5 hosts")]
    if n and n % 2 == 0:
        return [problem(scope, "etcd", f"{what} would have {n} members; etcd needs an odd number "
                        "(1, 3, 5) to keep quorum")]
    return []


def _check_ha(s, groups, ips, master_ips):
    out = []
    mode = s.get("tke_ha_mode", "none")
    n_masters = len(groups.get("masters", []))
    if mode not in HA_MODES:
        return [problem("all", "tke_ha_mode", f"{mode!r} is not one of {', '.join(HA_MODES)}")]
    if mode == "none" and n_masters > 1:
        out.append(problem("group masters", "tke_ha_mode",
                           f"none with {n_masters} masters: set keepalived, thirdparty or local_lb so the "
                           "API survives a master"))
    if mode != "none" and n_masters < 2:
        out.append(problem("group masters", "tke_ha_mode",
                           f"{mode} needs at least 2 masters, the inventory has {n_masters}"))
    if mode in ("keepalived", "thirdparty"):
        vip_text = str(s.get("tke_vip") or "").strip()
        vip = parse_ip(vip_text)
        if not vip_text:
            out.append(problem("all", "tke_vip", f"missing: tke_ha_mode {mode} needs the VIP"))
        elif vip is None:
            out.append(problem("all", "tke_vip", f"{vip_text!r} is not an IP address"))
        else:
            for host, ip in sorted(ips.items()):
                if ip == vip:
                    out.append(problem(f"host {host}", "tke_vip",
                                       f"{vip} is the address of host {host}; the VIP must be a free address"))
            if mode == "keepalived":
                nets = node_networks(s, master_ips)
                outside = [h for h in groups.get("masters", []) if h in ips and
                           not any(vip in n and ips[h] in n for n in nets)]
                if outside:
                    out.append(problem("group masters", "tke_vip",
                                       f"{vip} is not in the subnet of master(s) {', '.join(outside)} "
                                       f"({', '.join(map(str, nets)) or 'none'}); keepalived can only hold "
                                       "a VIP on the masters' own subnet"))
    # every mode: host_init opens tke_vport in every host's firewall (the load balancer's port in
    # thirdparty mode, where tke.json's ha.thirdParty.vport must be a port number too)
    vport = _int_or_none(s.get("tke_vport"))
    if vport is None or not 1 <= vport <= 65535:
        out.append(problem("all", "tke_vport", f"{s.get('tke_vport')!r} is not a TCP port (1-65535)"))
    if mode == "keepalived":
        vrid = _int_or_none(s.get("tke_vrid", 0))
        if vrid is None or not 0 <= vrid <= 255:
            out.append(problem("all", "tke_vrid", f"{s.get('tke_vrid')!r} is not a virtual_router_id (1-255, "
                               "0 = derived from the VIP)"))
    return out


def _check_networks(s, ips, master_ips):
    out = []
    nets = {}
    for var in ("tke_pod_cidr", "tke_service_cidr"):
        net = parse_net(s.get(var, ""))
        if net is None:
            out.append(problem("all", var, f"{s.get(var)!r} is not a network in CIDR form (e.g. 10.96.0.0/16, "
                               "host bits zero)"))
        else:
            nets[var] = net
    for raw in s.get("tke_node_networks") or []:
        if parse_net(raw) is None:
            out.append(problem("all", "tke_node_networks", f"{raw!r} is not a network in CIDR form"))
    pod, svc = nets.get("tke_pod_cidr"), nets.get("tke_service_cidr")
    if pod and svc and pod.version == svc.version and pod.overlaps(svc):
        out.append(problem("all", "tke_service_cidr", f"{svc} overlaps the pod network tke_pod_cidr {pod}"))
    node_nets = node_networks(s, master_ips)
    for var, net in sorted(nets.items()):
        what = "service" if var == "tke_service_cidr" else "pod"
        for nn in node_nets:
            if nn.version == net.version and nn.overlaps(net):
                out.append(problem("all", var, f"{net} overlaps the node network {nn}"))
                break
        else:
            inside = [h for h, ip in sorted(ips.items()) if ip.version == net.version and ip in net]
            if inside:
                out.append(problem("all", var, f"{net} contains the address of host(s) {', '.join(inside)}; "
                                   f"the {what} network must not overlap the node network"))
    mask = _int_or_none(s.get("tke_node_cidr_mask"))
    if pod and mask is not None and not pod.prefixlen < mask <= (32 if pod.version == 4 else 128):
        out.append(problem("all", "tke_node_cidr_mask", f"{mask} must be longer than the pod network's "
                           f"/{pod.prefixlen} and at most /{32 if pod.version == 4 else 128}"))
    return out


def _check_pod_network(s, groups):
    """The network phase's inputs: the plugin, MTU range, and room in the pod network for every node."""
    out = []
    # the plugins are the image table's (roles/network/plugins/<name>/ each, docs/network.md)
    plugin = s.get("tke_network_plugin", "flannel")
    if plugin not in kube_images.NETWORK_PLUGINS + ("none",):
        out.append(problem("all", "tke_network_plugin", f"{plugin!r} is not a network plugin: "
                           f"{', '.join(kube_images.NETWORK_PLUGINS)} or none"))
    mtu = _int_or_none(s.get("tke_network_mtu", 0))
    low, high = NETWORK_MTU
    if mtu is None or (mtu != 0 and not low <= mtu <= high):
        out.append(problem("all", "tke_network_mtu", f"{s.get('tke_network_mtu')!r} is not an MTU: 0 (from the "
                           f"node interface) or {low}-{high}"))
    pod, mask = parse_net(s.get("tke_pod_cidr", "")), _int_or_none(s.get("tke_node_cidr_mask"))
    # calico takes its IP pool's blockSize from tke_node_cidr_mask (CALICO_IPV4POOL_BLOCK_SIZE);
    # calico accepts 20 to 32 for IPv4, 116 to 128 for IPv6 (IPPool reference, "blockSize"), and
    # calico-node exits at start with another one
    if s.get("tke_network_plugin") == "calico" and pod and mask is not None:
        low, high = CALICO_BLOCK_SIZES[pod.version]
        if not low <= mask <= high:
            out.append(problem("all", "tke_node_cidr_mask", f"{mask} is not a calico IP pool block size: "
                               f"calico takes {low} to {high} for an IPv{pod.version} pod network"))
    nodes = sorted(set(groups.get("masters", [])) | set(groups.get("workers", [])))
    if pod and mask is not None and pod.prefixlen < mask <= pod.max_prefixlen:
        room = 2 ** (mask - pod.prefixlen)
        if room < len(nodes):
            out.append(problem("all", "tke_pod_cidr", f"{pod} holds {room} node subnet(s) of /{mask} "
                               f"(tke_node_cidr_mask) but the inventory has {len(nodes)} nodes; widen "
                               "tke_pod_cidr or lengthen tke_node_cidr_mask"))
    return out


def _check_names_and_versions(s):
    out = []
    for var in ("tke_registry_domain", "tke_api_domain", "tke_gateway_domain"):
        value = s.get(var)
        if not is_dns_name(value):
            out.append(problem("all", var, f"{value!r} is not a DNS name (lower-case labels joined by dots, "
                               "e.g. registry.tke.com)"))
    max_pods = _int_or_none(s.get("tke_max_pods"))
    if max_pods not in tke_rules.MAX_NODE_POD_NUM:   # tke.json's maxNodePodNum takes only these
        out.append(problem("all", "tke_max_pods", f"{s.get('tke_max_pods')!r} is not one of TKE's maxNodePodNum "
                           f"values ({', '.join(map(str, tke_rules.MAX_NODE_POD_NUM))})"))
    version = str(s.get("tke_k8s_version", "")).lstrip("v")
    known = [str(v).lstrip("v") for var in ("tke_upgrade_source_k8s_versions", "tke_supported_k8s_versions")
             for v in s.get(var) or []]
    if version not in known:
        out.append(problem("all", "tke_k8s_version", f"{version!r} is not a supported version "
                           f"({', '.join(known)})"))
    password = s.get("tke_admin_password") or ""
    if len(str(password)) < MIN_PASSWORD:
        what = "not set" if not password else f"{len(str(password))} characters"
        out.append(problem("all", "tke_admin_password", f"{what}; at least {MIN_PASSWORD} characters "
                           "are required (keep it in ansible-vault)"))
    skip = s.get("tke_skip_phases") or []
    if not isinstance(skip, list):
        out.append(problem("all", "tke_skip_phases", f"{skip!r} is not a list of phase names"))
        skip = []
    for phase in skip:
        if phase not in PHASES:
            out.append(problem("all", "tke_skip_phases", f"unknown phase {phase!r} (phases: {', '.join(PHASES)})"))
        elif phase in UNSKIPPABLE:
            out.append(problem("all", "tke_skip_phases", f"phase {phase!r} cannot be skipped"))
    return out


def mode_problems(options, provided):
    """[(variable, message)] for the file modes among a role's options as given (before the argument
    spec's conversion): every option whose entries have a `mode` (host_init_data_dirs) takes an octal
    mode in a string, as host_files does. A symbolic mode would be refused only on the host, in its
    phase; an unquoted 0644 is the YAML integer 420, which the spec would turn into the string
    "420", a valid but other mode (0755 -> "493" would be refused on the host), so a number is
    refused here. Other types are the argument spec's to report."""
    out = []
    for name, spec in sorted(options.items()):
        if "mode" not in (spec.get("options") or {}) or name not in provided:
            continue
        value = provided[name]
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("mode") is None:
                continue   # the argument spec reports what is not a dict or lacks a mode
            mode, where = entry["mode"], entry.get("path", "an entry")
            if isinstance(mode, int) and not isinstance(mode, bool):
                out.append((name, f"{where}: mode {mode!r} is a number; write it quoted, in octal (mode: \"0755\")"))
            elif isinstance(mode, str) and not OCTAL_MODE.fullmatch(mode):
                out.append((name, f"{where}: mode {mode!r} is not an octal mode such as \"0755\" "
                                  "(symbolic modes are not taken)"))
    return out
