# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Rebuilding a lost PKI store from the files the site's hosts hold (playbooks/adopt.yml).

Private to the collection (package plugins/plugin_utils/k8s_pki; docs/install.md, "A lost
controller state"). Every file the pki phase gave a host (distribution.host_files) is mapped back
to its place in the store; a kubeconfig also gives back the client certificate and key it embeds
(the store keeps them as kubeconfig/<name>.crt/.key). The hosts are the truth: what they hold is
kept byte for byte, copies of one store file on several hosts must agree, and the CA must be the
one the hosts record as their site's. What no host holds (TKE's admin client certificate, the key
of an external etcd's CA) cannot come back: the first is issued anew, the second is reported
(renewal.reconcile keeps a CA without its key and refuses what it would have to sign).
"""
from __future__ import annotations

import io
import tarfile

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.distribution import host_files
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.kubeconfig import (
    kubeconfig_client_cert, kubeconfig_client_key)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.specs import (
    K8S_CONF, K8S_PKI, TKE_PKI, Cluster, kubeconfig_specs)

# What playbooks/adopt.yml reads on each host (tar, shell patterns relative to /): every place
# host_files writes to (tests/unit checks that they cover it and that the playbook reads them).
HOST_PATTERNS = (K8S_PKI.lstrip("/"), f"{K8S_CONF.lstrip('/')}/*.conf", TKE_PKI.lstrip("/"))


def read_tar(data: bytes) -> dict:
    """A host's read (a gzip tar of HOST_PATTERNS, paths relative to /) -> {absolute path: bytes};
    regular files only, nothing is extracted to disk."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            if member.isfile():
                out["/" + member.name.lstrip("./").lstrip("/")] = tar.extractfile(member).read()
    return out


def assemble(c: Cluster, reads: dict) -> tuple:
    """The store as the hosts hold it. reads: host -> {absolute path: bytes} (a host not read is
    left out). Returns (files: store path -> bytes, conflicts: [text], missing: {store path: [hosts]})."""
    files, first, conflicts, missing = {}, {}, [], {}
    for host in sorted(reads):
        held = reads[host]
        for f in host_files(c, host):
            data = held.get(f["dest"])
            if data is None:
                missing.setdefault(f["src"], []).append(host)
                continue
            src = f["src"]
            if src in files and files[src] != data:
                conflicts.append(f"{f['dest']} differs between {first[src]} and {host} (store file {src})")
                continue
            files.setdefault(src, data)
            first.setdefault(src, host)
    for kc in kubeconfig_specs(c):
        text = files.get(kc.path)
        if text is None:
            continue
        cert, key = kubeconfig_client_cert(text.decode()), kubeconfig_client_key(text.decode())
        for suffix, data in ((".crt", cert), (".key", key)):
            rel = kc.cert + suffix
            if data is None:
                # a kubeconfig that names its credential's files instead of embedding it (a kubelet's
                # after kubeadm moved it to its rotated certificate): the store has none to keep
                missing.setdefault(rel, []).append(first[kc.path])
            elif rel in files and files[rel] != data:
                conflicts.append(f"{rel}: the kubeconfigs that embed it differ ({first[kc.path]}'s {kc.path} among them)")
            else:
                files[rel] = data
    # a store file some host holds is not missing
    missing = {src: hosts for src, hosts in missing.items() if src not in files}
    return files, conflicts, missing


def host_sources(c: Cluster, hosts) -> set:
    """The store paths that some of these hosts hold (and the client certificates their kubeconfigs embed)."""
    out = {f["src"] for h in hosts for f in host_files(c, h)}
    out |= {kc.cert + s for kc in kubeconfig_specs(c) if kc.path in out for s in (".crt", ".key")}
    return out
