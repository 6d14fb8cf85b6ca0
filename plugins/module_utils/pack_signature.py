# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The site pack's signature: Ed25519 over the exact bytes of manifest.json.

The manifest lists the size and sha256 of every file of the pack, so one signature over it
covers them all: a file changed with its manifest entry edited to match no longer matches the
signature. The site owner holds the private key (PEM, PKCS#8, as `openssl genpkey -algorithm
ed25519` writes it) and gives it to the build; the inventory carries the public key (PEM,
SubjectPublicKeyInfo, `openssl pkey -pubout`). The signature file is base64 text.

Used by the site_pack (build: sign) and site_pack_verify (controller: check, before anything
else) modules. Needs the `cryptography` package (on the controller, requirements.txt).
"""
from __future__ import annotations

import base64
import binascii
import os

from ansible_collections.offline_pot.tke.plugins.module_utils.pack_manifest import MANIFEST_NAME, SIGNATURE_NAME


class SignatureError(Exception):
    """The pack cannot be trusted; the message says why."""


def _crypto():
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as exc:  # pragma: no cover - requirements.txt installs it
        raise SignatureError(f"the Python package cryptography is needed for pack signatures ({exc})") from None
    return InvalidSignature, serialization, ed25519


def sign(manifest: bytes, private_key_pem: bytes) -> bytes:
    """The signature file's content (base64 of the Ed25519 signature, newline)."""
    dummy, serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_private_key(private_key_pem, password=None)
    except (ValueError, TypeError) as exc:
        raise SignatureError(f"the signing key is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise SignatureError("the signing key is not an Ed25519 key (openssl genpkey -algorithm ed25519)")
    # Ed25519 is deterministic: the same key and manifest give the same signature (a rebuild with
    # nothing changed rewrites nothing)
    return base64.b64encode(key.sign(manifest)) + b"\n"


def public_key(pem: str | bytes):
    """The Ed25519 public key of a PEM text; SignatureError naming what is wrong."""
    dummy, serialization, ed25519 = _crypto()
    data = pem.encode() if isinstance(pem, str) else pem
    try:
        key = serialization.load_pem_public_key(data.strip() + b"\n")
    except (ValueError, TypeError):
        raise SignatureError("not a PEM public key (-----BEGIN PUBLIC KEY-----, as openssl pkey -pubout "
                             "writes it)") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise SignatureError("not an Ed25519 public key")
    return key


def sign_pack(pack_dir: str, private_key_path: str) -> bool:
    """Write pack_dir/manifest.json.sig; True when it changed."""
    with open(private_key_path, "rb") as fh:
        key_pem = fh.read()
    with open(os.path.join(pack_dir, MANIFEST_NAME), "rb") as fh:
        sig = sign(fh.read(), key_pem)
    path = os.path.join(pack_dir, SIGNATURE_NAME)
    try:
        with open(path, "rb") as fh:
            if fh.read() == sig:
                return False
    except FileNotFoundError:
        pass
    with open(path + ".tmp", "wb") as fh:
        fh.write(sig)
    os.replace(path + ".tmp", path)
    return True


def check_pack(pack_dir: str, public_key_pem: str, allow_unsigned: bool) -> str:
    """Check pack_dir's manifest signature against the public key. Returns "signed" or, when
    allow_unsigned lets an unverifiable pack through, the reason it is unverified; raises
    SignatureError naming why the pack is refused."""
    hint = " (set tke_site_pack_allow_unsigned: true to install it anyway)"
    sig_path = os.path.join(pack_dir, SIGNATURE_NAME)
    try:
        with open(sig_path, "rb") as fh:
            sig_text = fh.read()
    except FileNotFoundError:
        sig_text = None
    if not public_key_pem:
        reason = "tke_site_pack_pubkey is not set: the pack's signature cannot be checked"
        if allow_unsigned:
            return reason
        raise SignatureError(reason + hint)
    try:
        key = public_key(public_key_pem)
    except SignatureError as exc:
        raise SignatureError(f"tke_site_pack_pubkey: {exc}") from None
    if sig_text is None:
        reason = f"the pack {pack_dir} is not signed (no {SIGNATURE_NAME})"
        if allow_unsigned:
            return reason
        raise SignatureError(reason + hint)
    invalid, dummy, dummy = _crypto()
    try:
        sig = base64.b64decode(sig_text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError(f"{SIGNATURE_NAME}: not base64 text") from None
    with open(os.path.join(pack_dir, MANIFEST_NAME), "rb") as fh:
        manifest = fh.read()
    try:
        key.verify(sig, manifest)
    except invalid:
        # an unverifiable signature is never let through, allow_unsigned or not: it means tampering
        # or another key
        raise SignatureError(f"{SIGNATURE_NAME} does not match {MANIFEST_NAME} and tke_site_pack_pubkey: "
                             "the manifest was changed after signing, or another key signed it") from None
    return "signed"
