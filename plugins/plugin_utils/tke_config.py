# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""tke.json (TKEStack installer state form) from the inventory model: pure functions.

context() turns the inventory model (plugin_utils.inventory_model.build) and the machines'
secrets into the flat `tke` dict templates/tke.json.j2 renders; canonical() gives the stable
text written to disk, so an unchanged inventory re-renders byte for byte (changed=0).
Unit tests: tests/unit/plugins/plugin_utils/test_tke_config.py.
"""
from __future__ import annotations

import base64
import json

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.offline_pot.tke.plugins.module_utils.kubeadm_config import EXTERNAL_ETCD_FILES
from ansible_collections.offline_pot.tke.plugins.module_utils.vrrp import derive_router_id


def b64(text):
    """TKE stores []byte fields (passwords, private keys) base64-encoded."""
    if text is None or text == "":
        return ""
    data = text if isinstance(text, bytes) else str(text).encode("utf-8")
    return base64.b64encode(data).decode("ascii")


def vrid(vip, configured=0):
    """keepalived virtual_router_id: the one rule (module_utils/vrrp.derive_router_id)."""
    return derive_router_id(str(vip), int(configured or 0))


def master_schedule(settings, groups):
    """TKE's enableMasterSchedule: tke_master_schedule (the tke role derives it: true exactly when
    the site has no workers; the control_plane role taints the masters from the same value)."""
    value = settings.get("tke_master_schedule")
    if value is None or value == "":
        return not groups.get("workers")
    return boolean(value, strict=True)


def machine(host, secrets):
    """One spec.machines entry: TKE's Machine {ip, port, username, password, privateKey}."""
    entry = {"ip": host["address"], "port": host.get("port", 22), "username": host.get("user", "root")}
    if secrets.get("password"):
        entry["password"] = b64(secrets["password"])
    if secrets.get("private_key"):
        entry["privateKey"] = b64(secrets["private_key"])
    return entry


INTERFACES_FILE = "interfaces.json"


def load_interfaces(text):
    """The interfaces record (host -> interface holding its node address) or {}."""
    if not text or not text.strip():
        return {}
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError("not a record of host interfaces")
    return data


def dump_interfaces(interfaces):
    return json.dumps(interfaces, indent=2, sort_keys=True) + "\n"


def merge_interfaces(recorded, read, hosts):
    """What earlier prechecks recorded, updated with what this one read (a host read without an
    interface is forgotten), for the inventory's hosts only."""
    out = dict(recorded)
    for host, iface in (read or {}).items():
        if iface:
            out[host] = str(iface)
        else:
            out.pop(host, None)
    return {h: out[h] for h in sorted(out) if h in hosts}


def network_device(settings, masters, interfaces):
    """TKE's networkDevice: tke_network_interface when the inventory sets it (the network plugins
    and keepalived use it), else the interface the masters' node addresses are on (each host's own
    otherwise: the plugins detect it), the first master's when they differ; "" until a precheck
    has read the hosts. Returns (device, warnings)."""
    if settings.get("tke_network_interface"):
        return settings["tke_network_interface"], []
    seen = {h: interfaces[h] for h in masters if interfaces.get(h)}
    if not seen:
        return "", []
    first = seen[next(h for h in masters if h in seen)]
    if len(set(seen.values())) > 1:
        return first, [f"networkDevice records {first}, but the masters' node addresses are on different interfaces ("
                       + ", ".join(f"{h}: {i}" for h, i in seen.items())
                       + "); TKE has one setting for all: set tke_network_interface if one name fits every node"]
    return first, []


def context(model, secrets=None, step=0, registry=None, interfaces=None):
    """The `tke` variable of templates/tke.json.j2.

    secrets: {host: {"password": ..., "private_key": ...}} read on the controller.
    registry: {"user": ..., "password": ...}: the credential the site's registry accepts (the
    registry role's registry_user / registry_password, which default to the admin's); Config.
    registry.tke records it, as TKE logs in to its registry with it.
    step: TKE's resume point (the install journal sets it; 0 = from the start).
    interfaces: host -> the interface holding its node address, as prechecks read it (network_device).
    """
    s, groups, hosts = model["settings"], model["groups"], model["hosts"]
    secrets = secrets or {}
    registry = registry or {}
    masters = groups.get("masters", [])
    mode = s.get("tke_ha_mode", "none")
    vip = str(s.get("tke_vip") or "")
    etcd_members = groups.get("etcd")
    if etcd_members:
        # TKE's ExternalEtcd needs the client files with https endpoints (tke_rules.py)
        etcd = {"external": {"endpoints": [f"https://{hosts[h]['node_address']}:2379" for h in etcd_members],
                             **EXTERNAL_ETCD_FILES}}
    else:
        etcd = {"local": {"dataDir": "/var/lib/etcd"}}
    device, device_warnings = network_device(s, masters, interfaces or {})
    alt = [s.get("tke_api_domain", "api.tke.com")] + ([vip] if vip and mode in ("keepalived", "thirdparty") else [])
    return {
        "cluster_name": s.get("tke_cluster_name", "global"),
        "version": str(s.get("tke_k8s_version", "")).lstrip("v"),
        "network_device": device,
        "network_device_warnings": device_warnings,
        "pod_cidr": s["tke_pod_cidr"],
        "service_cidr": s["tke_service_cidr"],
        "dns_domain": s.get("tke_dns_domain", "cluster.local"),
        "alt_names": alt,
        "ipvs": s.get("tke_proxy_mode", "ipvs") == "ipvs",
        "master_schedule": master_schedule(s, groups),
        "ha_mode": mode,
        "vip": vip,
        "vport": int(s.get("tke_vport") or 6443),
        "vrid": vrid(vip, s.get("tke_vrid") or 0) if mode == "keepalived" and vip else 0,
        "skip_conditions": [],
        "max_pods": int(s.get("tke_max_pods", 256)),
        "machines": [machine(hosts[h], secrets.get(h, {})) for h in masters],
        "etcd": etcd,
        "replicas": 1 if len(masters) < 2 else 2,
        "admin_user": s.get("tke_admin_user", "admin"),
        "admin_password_b64": b64(s.get("tke_admin_password", "")),
        "registry_user": registry.get("user") or s.get("tke_admin_user", "admin"),
        "registry_password_b64": b64(registry.get("password") or s.get("tke_admin_password", "")),
        "registry_domain": s.get("tke_registry_domain", "registry.tke.com"),
        "registry_namespace": s.get("tke_registry_namespace", "library"),
        "gateway_domain": s.get("tke_gateway_domain", "console.tke.com"),
        "skip_steps": [],
        "step": int(step),
    }


def canonical(text_or_obj):
    """Stable on-disk text: parsed, keys kept in template order, 2-space indent, final newline."""
    obj = json.loads(text_or_obj) if isinstance(text_or_obj, str) else text_or_obj
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def existing_step(text):
    """The step recorded in an existing tke.json, 0 when there is none or it cannot be read."""
    try:
        step = json.loads(text).get("step", 0)
        return step if isinstance(step, int) and step >= 0 else 0
    except (ValueError, AttributeError):
        return 0
