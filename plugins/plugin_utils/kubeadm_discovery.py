# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""kubeadm's discovery hash of a cluster CA, on the controller (where `cryptography` is installed).

Private to the collection (used by the kubeadm_ca_cert_hash filter). Fact (kubeadm reference,
"kubeadm join", token-based discovery; kubernetes/kubernetes cmd/kubeadm/app/util/pubkeypin):
the hash is "sha256:" + the hex sha256 of the CA certificate's DER SubjectPublicKeyInfo.
"""
from __future__ import annotations

import hashlib

try:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
except ImportError:
    # the filter still loads (ansible-doc -l); require_cryptography() says what to install when called
    pass

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki import require_cryptography


def ca_cert_hash(pem: str | bytes) -> str:
    """Discovery hash (sha256:<hex>) of the first certificate of a PEM text; ValueError if none,
    ImportError saying what to install if the controller lacks cryptography."""
    require_cryptography()
    data = pem.encode() if isinstance(pem, str) else bytes(pem)
    try:
        cert = x509.load_pem_x509_certificate(data)
    except ValueError as e:
        raise ValueError(f"no PEM certificate found ({e})") from None
    spki = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(spki).hexdigest()
