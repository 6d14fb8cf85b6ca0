# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Which host gets which PKI file where, and what to restart after one changed.

Private to the collection (package plugins/plugin_utils/k8s_pki; the on-host layout is documented in
docs/pki.md).
"""
from __future__ import annotations

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.specs import (
    K8S_CONF, K8S_PKI, TKE_PKI, Cluster, uses_super_admin)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.store import JOURNAL_KEY


def _f(src, dest, mode):
    return {"src": src, "dest": dest, "mode": mode}


def _pair(src, dest):
    return [_f(f"{src}.crt", f"{dest}.crt", "0644"), _f(f"{src}.key", f"{dest}.key", "0600")]


def host_files(c: Cluster, host: str) -> list:
    """The files one host needs, as {src (PKI dir relative), dest (absolute), mode}, sorted by dest.

    every node: CA certificate and its kubelet.conf; masters: the kubeadm set and kubeconfigs (+ etcd
    server/peer when etcd is stacked) and the site's journal key; etcd members: their etcd certificates; registry
    hosts: the TKE server certificate as registry.crt/key with the CA.
    """
    def names(hosts):
        return {h["name"] for h in hosts}

    masters, nodes = names(c.masters), names(c.masters) | names(c.nodes)
    etcd_hosts = names(c.etcd_members)
    out = {}

    def add(items):
        for it in items:
            out[it["dest"]] = it

    if host in nodes:
        add([_f("ca.crt", f"{K8S_PKI}/ca.crt", "0644"),
             _f(f"kubeconfigs/{host}/kubelet.conf", f"{K8S_CONF}/kubelet.conf", "0600")])
    if host in masters:
        for n in ("ca", "front-proxy-ca", "apiserver", "apiserver-kubelet-client", "front-proxy-client",
                  "apiserver-etcd-client"):
            add(_pair(n, f"{K8S_PKI}/{n}"))
        add([_f("etcd/ca.crt", f"{K8S_PKI}/etcd/ca.crt", "0644"),
             _f("sa.key", f"{K8S_PKI}/sa.key", "0600"), _f("sa.pub", f"{K8S_PKI}/sa.pub", "0644"),
             _f("kubeconfigs/admin.conf", f"{K8S_CONF}/admin.conf", "0600"),
             _f(f"kubeconfigs/{host}/controller-manager.conf", f"{K8S_CONF}/controller-manager.conf", "0600"),
             _f(f"kubeconfigs/{host}/scheduler.conf", f"{K8S_CONF}/scheduler.conf", "0600"),
             _f("ca.crt", f"{TKE_PKI}/ca.crt", "0644"),
             # the site's journal key, kept here so that adopt.yml brings it back (store.py)
             _f(JOURNAL_KEY, f"{TKE_PKI}/journal.key", "0600")])
        add(_pair("tke/server", f"{TKE_PKI}/gateway") + _pair("tke/webhook", f"{TKE_PKI}/webhook"))
        if uses_super_admin(c.k8s_version):
            add([_f("kubeconfigs/super-admin.conf", f"{K8S_CONF}/super-admin.conf", "0600")])
        if c.stacked_etcd:
            add([_f("etcd/ca.key", f"{K8S_PKI}/etcd/ca.key", "0600")])
    if host in etcd_hosts:
        add([_f("etcd/ca.crt", f"{K8S_PKI}/etcd/ca.crt", "0644")])
        add(_pair(f"etcd/members/{host}/server", f"{K8S_PKI}/etcd/server")
            + _pair(f"etcd/members/{host}/peer", f"{K8S_PKI}/etcd/peer")
            + _pair("etcd/healthcheck-client", f"{K8S_PKI}/etcd/healthcheck-client"))
    if host in names(c.registry):
        add([_f("ca.crt", f"{TKE_PKI}/ca.crt", "0644")] + _pair("tke/server", f"{TKE_PKI}/registry"))
    return [out[d] for d in sorted(out)]


# What uses a file on a host, to restart after it changed (static pod manifest names and services)
_CONSUMERS = [
    (f"{K8S_PKI}/etcd/server.", ["etcd"]), (f"{K8S_PKI}/etcd/peer.", ["etcd"]),
    (f"{K8S_PKI}/etcd/ca.", ["etcd", "kube-apiserver"]),
    (f"{K8S_PKI}/etcd/healthcheck-client.", []),
    (f"{K8S_PKI}/apiserver", ["kube-apiserver"]),
    (f"{K8S_PKI}/front-proxy-ca.", ["kube-apiserver", "kube-controller-manager"]),
    (f"{K8S_PKI}/front-proxy-client.", ["kube-apiserver"]),
    (f"{K8S_PKI}/ca.", ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"]),
    (f"{K8S_PKI}/sa.", ["kube-apiserver", "kube-controller-manager"]),
    (f"{K8S_CONF}/controller-manager.conf", ["kube-controller-manager"]),
    (f"{K8S_CONF}/scheduler.conf", ["kube-scheduler"]),
    (f"{K8S_CONF}/kubelet.conf", ["kubelet"]),
    (f"{TKE_PKI}/registry.", ["registry"]),
]


def consumers(paths) -> list:
    """Sorted names of what must be restarted after the given host paths changed."""
    out = set()
    for p in paths:
        for prefix, who in _CONSUMERS:
            if p.startswith(prefix):
                out.update(who)
                break
    return sorted(out)
