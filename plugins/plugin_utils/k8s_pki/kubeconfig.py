# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""kubeconfig files in kubeadm's layout: written from a client certificate, read back.

Private to the collection (package plugins/plugin_utils/k8s_pki). Which kubeconfigs exist is
specs.kubeconfig_specs.
"""
from __future__ import annotations

import base64


def render_kubeconfig(cluster: str, server: str, ca_pem: bytes, user: str, cert_pem: bytes, key_pem: bytes) -> str:
    """A kubeconfig exactly as kubeadm writes it (embedded data, context user@cluster)."""
    def b64(data):
        return base64.b64encode(data).decode()
    ctx = f"{user}@{cluster}"
    return (
        "apiVersion: v1\n"
        "clusters:\n"
        "- cluster:\n"
        f"    certificate-authority-data: {b64(ca_pem)}\n"
        f"    server: {server}\n"
        f"  name: {cluster}\n"
        "contexts:\n"
        "- context:\n"
        f"    cluster: {cluster}\n"
        f"    user: {user}\n"
        f"  name: {ctx}\n"
        f"current-context: {ctx}\n"
        "kind: Config\n"
        "preferences: {}\n"
        "users:\n"
        f"- name: {user}\n"
        "  user:\n"
        f"    client-certificate-data: {b64(cert_pem)}\n"
        f"    client-key-data: {b64(key_pem)}\n")


def kubeconfig_client_cert(text: str) -> bytes | None:
    """The PEM of the client certificate embedded in a kubeconfig (kubeadm layout), or None."""
    return _embedded(text, "client-certificate-data")


def kubeconfig_client_key(text: str) -> bytes | None:
    """The PEM of the client key embedded in a kubeconfig (kubeadm layout), or None."""
    return _embedded(text, "client-key-data")


def _embedded(text: str, field: str) -> bytes | None:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(field + ":"):
            try:
                return base64.b64decode(line.split(":", 1)[1].strip())
            except ValueError:
                return None
    return None
