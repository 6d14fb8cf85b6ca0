# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Which site a host belongs to, and which Kubernetes version its node runs (docs/install.md,
"Site identity"). Pure functions on plain data; the action plugin install_phase does the I/O.
Private to the collection.

A site's identity is made at its first install: a random site id, and the SHA-256 fingerprint of
the cluster CA once the pki phase has it (<tke_state_dir>/site.json on the controller, beside the
journal). Every host records the identity of the site it belongs to (HOST_FILE, one line
`id=<site id> ca_sha256=<fingerprint>`, written with each phase's record; no secret in it).
The first read of the hosts in a run (roles/tke/tasks/phase_start.yml) brings it back; a host that
records another site, or hosts that record a site while the controller's state has none, stop the
run before anything is written on any host.

The Kubernetes version a node runs: what upgrade.yml recorded there (its upgrade record), else
the version the offline phase installed its kubeadm and kubelet of (VERSION_FILE).
"""
from __future__ import annotations

import json
import re
import ssl
import hashlib
import uuid

# Beside the phase records (tke_host_record_dir, /var/lib/offline-pot/phases), relative to its parent.
HOST_FILE = "site"
VERSION_FILE = "kubernetes"
# The upgrade record (roles/upgrade, upgrade_record) is a phase record named so.
UPGRADE_RECORD = "upgrade"
CONTROLLER_FILE = "site.json"

WHAT_TO_DO = ("run from the folder that holds this site's state (its .tke/ directory, beside the inventory it was "
              "installed with), or restore that folder from its backup; hosts that must join a new site are "
              "reset first (playbooks/reset.yml). docs/install.md, \"Site identity\"")


def new(ca_sha256=None):
    """A new site identity: a random site id (and the CA's fingerprint when known)."""
    out = {"id": uuid.uuid4().hex}
    if ca_sha256:
        out["ca_sha256"] = ca_sha256
    return out


def load(text):
    """The controller's identity (site.json) or None (none yet)."""
    if not text or not text.strip():
        return None
    data = json.loads(text)
    if not isinstance(data, dict) or not data.get("id"):
        raise ValueError("not an offline_pot.tke site identity (no id)")
    return data


def dump(identity):
    return json.dumps(identity, indent=2, sort_keys=True) + "\n"


def ca_fingerprint(pem):
    """SHA-256 over the DER of the (first) certificate of a PEM text, lower-case hex; None without one."""
    if not pem or "-----BEGIN CERTIFICATE-----" not in pem:
        return None
    first = pem[pem.index("-----BEGIN CERTIFICATE-----"):]
    first = first[:first.index("-----END CERTIFICATE-----") + len("-----END CERTIFICATE-----")]
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(first)).hexdigest()


def with_ca(identity, ca_sha256):
    """The identity, completed with the CA's fingerprint when it has none yet (a copy)."""
    out = dict(identity)
    if ca_sha256 and not out.get("ca_sha256"):
        out["ca_sha256"] = ca_sha256
    return out


def host_text(identity):
    """The line a host records (HOST_FILE)."""
    parts = [f"id={identity['id']}"]
    if re.fullmatch(r"[0-9a-f]{64}", identity.get("ca_sha256") or ""):
        parts.append(f"ca_sha256={identity['ca_sha256']}")
    return " ".join(parts)


def parse_host_text(text):
    """A host's HOST_FILE line -> {"id", "ca_sha256"?}, or None (belongs to no site)."""
    fields = dict(p.split("=", 1) for p in (text or "").split() if "=" in p)
    return fields if fields.get("id") else None


def describe(identity):
    if not identity:
        return "none"
    return f"site {identity['id']}" + (f", CA sha256 {identity['ca_sha256']}" if identity.get("ca_sha256") else "")


def conflicts(controller, hosts, state_dir):
    """Problems between the controller's identity (None: none yet) and the hosts' ({host: identity
    or None}); [] when the run may go on. A host that records no site belongs to none: it installs
    as a new one (it gets the controller's identity)."""
    out = []
    for host in sorted(hosts):
        there = hosts[host]
        if not there:
            continue
        if not controller:
            why = f"the controller's state ({state_dir}) has no site identity"
        elif there["id"] != controller["id"]:
            why = "it belongs to another site"
        elif there.get("ca_sha256") and controller.get("ca_sha256") and there["ca_sha256"] != controller["ca_sha256"]:
            why = "it was installed with another cluster CA than the controller's"
        else:
            continue
        out.append(f"host {host} records {describe(there)} but the controller has {describe(controller)}: {why}")
    return out


def node_versions(records, versions):
    """host -> the Kubernetes version its node runs (no leading v), from the upgrade record (phase
    records, parse_host_read) else the installed version (VERSION_FILE); hosts without either are left
    out."""
    out = {}
    for host in set(records) | set(versions):
        value = ((records.get(host) or {}).get(UPGRADE_RECORD) or versions.get(host) or "").strip().lstrip("v")
        if value:
            out[host] = value
    return out


def version_conflicts(wanted, nodes, playbook="install.yml"):
    """Problems between the inventory's tke_k8s_version and the versions the nodes run (playbook:
    the one refused, named in the message)."""
    wanted = str(wanted or "").strip().lstrip("v")
    differ = {h: v for h, v in nodes.items() if v != wanted}
    if not wanted or not differ:
        return []
    running = ", ".join(f"{h}: v{v}" for h, v in sorted(differ.items()))
    newest = max(differ.values(), key=_key)
    if _key(wanted) > _key(newest):
        todo = (f"to move the cluster to v{wanted} run playbooks/upgrade.yml (it upgrades node by node); to keep "
                f"v{newest}, set tke_k8s_version: \"{newest}\" in the inventory")
    else:
        todo = (f"a cluster is never downgraded: set tke_k8s_version: \"{newest}\" in the inventory (upgrade.yml "
                "brought the nodes there)")
    return [f"tke_k8s_version: the inventory says v{wanted} but the cluster's nodes run {running}; {playbook} "
            f"does not change the version a cluster runs: {todo}"]


def end_of_life_install(wanted, nodes, hosts, supported, sources, allowed=False):
    """Problems of a new cluster (no node runs a version yet: nodes empty) at a version past upstream's
    end of life (one of sources, tke_upgrade_source_k8s_versions): install.yml starts new clusters
    at supported ones only, unless allowed (tke_allow_eol_install). A cluster that runs such a
    version is not refused: day-2 runs and upgrade.yml act on it."""
    wanted = str(wanted or "").strip().lstrip("v")
    sources = [str(v).lstrip("v") for v in sources or []]
    if nodes or allowed or wanted not in sources:
        return []
    supported = ", ".join(str(v).lstrip("v") for v in supported or [])
    return [f"tke_k8s_version: {wanted} is past upstream's end of life and no node of {', '.join(sorted(hosts))} runs "
            f"Kubernetes yet: install.yml starts a new cluster at a supported release only ({supported}: "
            f"tke_supported_k8s_versions); {wanted} is kept for the clusters that run it, which upgrade.yml moves on "
            "one minor at a time. Set tke_k8s_version to a supported release, or tke_allow_eol_install: true "
            f"to install {wanted} anyway (a lab that reproduces a site)"]


def _key(version):
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))
