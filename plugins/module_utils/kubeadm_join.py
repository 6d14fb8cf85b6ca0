# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""What nodes need to join: a valid bootstrap token and a fresh certificate key.

Private to the collection. Pure functions, no Ansible import (unit-tested in
tests/unit/plugins/module_utils/test_kubeadm_join.py).

Facts (kubeadm reference "kubeadm token", "kubeadm join" discovery, "upload-certs"):
- the discovery hash of the CA is computed on the controller (plugin_utils/kubeadm_discovery.py,
  with `cryptography`, which hosts may lack): this module returns the CA certificate itself;
- `kubeadm token list -o json` prints one JSON object per token (kind BootstrapToken,
  fields token, description, expires (absent when the TTL is 0), usages, groups);
- the kubeadm-certs Secret uploaded with a certificate key is deleted after two hours.
"""
from __future__ import annotations

import datetime
import json
import re

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc

DEFAULT_GROUP = "system:bootstrappers:kubeadm:default-node-token"
TOKEN_FORMAT = re.compile(r"^[a-z0-9]{6}\.[a-z0-9]{16}$")
CERTIFICATE_KEY_TTL = 2 * 3600


def parse_token_list(output: str) -> list[dict]:
    """Objects printed by `kubeadm token list -o json` (concatenated JSON objects)."""
    dec, pos, out = json.JSONDecoder(), 0, []
    text = output.strip()
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        obj, pos = dec.raw_decode(text, pos)
        out.append(obj)
    return out


def _expiry(value: str | None):
    if not value:
        return None
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


def usable_token(tokens: list[dict], description: str, now: datetime.datetime,
                 min_validity_s: int = 3600) -> str | None:
    """Our join token if it exists and stays valid for at least min_validity_s, else None."""
    for t in tokens:
        if t.get("description") != description or not TOKEN_FORMAT.match(t.get("token", "")):
            continue
        if not {"signing", "authentication"} <= set(t.get("usages") or []):
            continue
        if DEFAULT_GROUP not in (t.get("groups") or []):
            continue
        exp = _expiry(t.get("expires"))
        if exp is not None and (exp - now).total_seconds() < min_validity_s:
            continue
        return t["token"]
    return None


def certificate_key_fresh(uploaded_at: float | None, now: float, margin_s: int = 600) -> bool:
    """Whether certificate-key uploaded at uploaded_at (epoch s) can still be used for a join."""
    if uploaded_at is None:
        return False
    return 0 <= now - uploaded_at < CERTIFICATE_KEY_TTL - margin_s


def with_certificate_key(config_text: str, key: str) -> str:
    """The init configuration with InitConfiguration.certificateKey set (kubeadm refuses
    --certificate-key together with --config)."""
    docs = kc.load_documents(config_text)
    for doc in docs:
        if doc.get("kind") == "InitConfiguration":
            doc["certificateKey"] = key
            return kc.dump_documents(docs)
    raise ValueError("no InitConfiguration document in the configuration")
