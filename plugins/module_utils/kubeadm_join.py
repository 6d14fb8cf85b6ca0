# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""What nodes need to join: discovery CA hash, a valid bootstrap token, a fresh certificate key.

Private to the collection. Pure functions, no Ansible import (unit-tested in
tests/unit/plugins/module_utils/test_kubeadm_join.py).

Facts (kubeadm reference "kubeadm token", "kubeadm join" discovery, "upload-certs"):
- the discovery hash is "sha256:" + hex sha256 of the CA certificate's DER SubjectPublicKeyInfo;
- `kubeadm token list -o json` prints one JSON object per token (kind BootstrapToken,
  fields token, description, expires (absent when the TTL is 0), usages, groups);
- the kubeadm-certs Secret uploaded with a certificate key is deleted after two hours.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import json
import re

DEFAULT_GROUP = "system:bootstrappers:kubeadm:default-node-token"
TOKEN_FORMAT = re.compile(r"^[a-z0-9]{6}\.[a-z0-9]{16}$")
CERTIFICATE_KEY_TTL = 2 * 3600


def _tlv(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER element at pos."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(data[pos:pos + n], "big")
        pos += n
    return tag, pos, pos + length


def spki_der(pem: str) -> bytes:
    """DER SubjectPublicKeyInfo of the first certificate of a PEM text."""
    m = re.search(r"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", pem, re.S)
    if not m:
        raise ValueError("no PEM certificate found")
    der = base64.b64decode("".join(m.group(1).split()))
    dummy, cert, dummy = _tlv(der, 0)            # Certificate ::= SEQUENCE
    dummy, tbs, tbs_end = _tlv(der, cert)    # tbsCertificate ::= SEQUENCE
    pos = tbs
    fields = []
    while pos < tbs_end:
        tag, start, end = _tlv(der, pos)
        fields.append((tag, pos, end))
        pos = end
    if fields and fields[0][0] == 0xA0:  # [0] version
        fields = fields[1:]
    # serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo
    dummy, begin, end = fields[5]
    return der[begin:end]


def ca_cert_hash(pem: str) -> str:
    return "sha256:" + hashlib.sha256(spki_der(pem)).hexdigest()


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
    out, done = [], False
    for line in config_text.splitlines():
        if done is False and line.strip() == "certificateKey:" or line.startswith("certificateKey:"):
            continue
        out.append(line)
        if not done and line.strip() == "kind: InitConfiguration":
            out.append(f'certificateKey: "{key}"')
            done = True
    if not done:
        raise ValueError("no InitConfiguration document in the configuration")
    return "\n".join(out) + "\n"
