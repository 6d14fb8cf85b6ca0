# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Why a host's PKI file is replaced with the store's copy (plugins/action/pki_distribute.py): from
what the host had (its state, its mode, the certificate it held - never a key) and the store's
copy, on the controller. Private to the collection (package plugins/plugin_utils/k8s_pki).

The reasons an operator acts on: missing; only the mode; signed by another CA than the store's
(an installation's certificates over another's); another key pair than the store's (key
mismatch); expired or expiring sooner than the store's copy; other SANs; else the bytes differ.
"""
from __future__ import annotations

import datetime

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.certificates import (
    cert_sans, days_left, load_cert, not_after, public_to_pem, signed_by, subject_text)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.kubeconfig import kubeconfig_client_cert


def store_certificate(dest: str, content: str):
    """The certificate of the store's copy of dest (a kubeconfig's client certificate), or None (a key)."""
    if dest.endswith(".conf"):
        return load_cert(kubeconfig_client_cert(content))
    return load_cert(content.encode()) if "-----BEGIN CERTIFICATE-----" in content else None


def _day(d: datetime.datetime) -> str:
    return d.strftime("%Y-%m-%d")


def reason(dest: str, previous: dict, content: str, new_mode: str, cas: list, now: datetime.datetime) -> str:
    """Why dest was (or would be) replaced: previous is the module's {state, mode, certificate}."""
    state = previous.get("state")
    if state == "absent":
        return "missing"
    if state == "mode":
        return f"mode {previous.get('mode')}, the store's is {new_mode}"
    new = store_certificate(dest, content)
    if new is None:
        return "another key than the store's (it does not match the store's certificate: key mismatch)"
    old = load_cert((previous.get("certificate") or "").encode())
    if old is None:
        return "no certificate in it" if not dest.endswith(".conf") else "no client certificate in it"
    why = []
    issuers = [ca for ca in cas if ca.subject == old.issuer]
    if not any(signed_by(old, ca) for ca in issuers):
        why.append(f"signed by another CA (issuer {subject_text(old.issuer)}, not the store's)")
    if public_to_pem(old.public_key()) != public_to_pem(new.public_key()):
        why.append("another key pair than the store's (key mismatch)")
    if not_after(old) < not_after(new):
        left = days_left(old, now)
        why.append(f"expired on {_day(not_after(old))}" if left < 0 else
                   f"expiring: {left} days left (until {_day(not_after(old))}), the store's copy until "
                   f"{_day(not_after(new))}")
    old_sans, new_sans = cert_sans(old), cert_sans(new)
    missing = [s for s in new_sans[0] + new_sans[1] if s not in old_sans[0] + old_sans[1]]
    if missing:
        why.append(f"missing SANs: {', '.join(missing)}")
    if not why:
        why.append("its certificate is another than the store's" if old != new else
                   "other content than the store's (server address, CA or key)")
    return "; ".join(why)


def replacement_reasons(host: str, previous: dict, contents: dict, modes: dict, cas: list, now: datetime.datetime) -> list:
    """One line per replaced file, "host: path: replaced - why" ("written - missing" for a missing
    one); none for a host that had none of its files (a fresh host: everything is new)."""
    if previous and all(p.get("state") == "absent" for p in previous.values()) and \
            len(previous) == len(contents):
        return []
    out = []
    for dest in sorted(previous):
        why = reason(dest, previous[dest], contents.get(dest, ""), modes.get(dest, ""), cas, now)
        out.append(f"{host}: {dest}: {'written' if why == 'missing' else 'replaced'} - {why}")
    return out
