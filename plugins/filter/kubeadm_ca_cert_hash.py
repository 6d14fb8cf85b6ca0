# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: kubeadm's discovery hash of a CA certificate."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: kubeadm_ca_cert_hash
short_description: kubeadm's discovery hash (sha256 of the public key info) of a CA certificate
version_added: 0.2.0
description:
  - Returns C(sha256:) followed by the hex sha256 of the DER SubjectPublicKeyInfo of the first
    certificate of a PEM text, the value kubeadm's C(caCertHashes) and
    C(--discovery-token-ca-cert-hash) take.
  - Runs on the controller (it needs the Python C(cryptography) library, which hosts may lack).
positional: _input
options:
  _input:
    description: The CA certificate, PEM.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Discovery hash of the CA the first master returned
  ansible.builtin.debug:
    msg: "{{ secrets.ca_cert | offline_pot.tke.kubeadm_ca_cert_hash }}"
"""

RETURN = r"""
_value:
  description: The discovery hash, C(sha256:<64 hex digits>).
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.plugin_utils.kubeadm_discovery import ca_cert_hash


def kubeadm_ca_cert_hash(pem):
    try:
        return ca_cert_hash(str(pem))
    except (ValueError, ImportError) as exc:
        raise AnsibleFilterError(f"kubeadm_ca_cert_hash: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"kubeadm_ca_cert_hash": kubeadm_ca_cert_hash}
