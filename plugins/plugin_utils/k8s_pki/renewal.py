# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Issuing and renewing: the desired PKI files from the existing ones (reconcile).

Private to the collection (package plugins/plugin_utils/k8s_pki). The controller-side action reads
the PKI directory into a dict of relative path -> bytes (store.read_tree), calls reconcile(), and
writes back the files whose bytes differ (changed_files, store.write_pki_file).
"""
from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.certificates import (
    _ext_key_usages, _name, cert_ekus, cert_is_ca, cert_sans, cert_to_pem, days_left, issue, key_matches,
    key_to_pem, key_type_of, load_cert, load_key, new_key, public_to_pem, signed_by, subject_text, within_window)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.kubeconfig import render_kubeconfig
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.store import JOURNAL_KEY, journal_key_ok, new_journal_key
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.specs import (
    RENEW_DAYS, CertSpec, Cluster, cluster_certs, kubeconfig_specs)


def regeneration_reason(spec: CertSpec, cert, key, signer_cert, now: datetime.datetime,
                        renew_days: int, key_type: str, forced: bool = False) -> str | None:
    """Why spec's certificate must be (re)issued, or None when the existing one is good.

    A CA is kept while it exists and matches its key: it is never renewed for its age (renewing
    a CA re-keys the whole cluster); force it by name to replace it. A CA certificate without its
    key (an adopted site whose external etcd's CA key was kept only on the lost controller: its
    hosts hold the certificate alone) is kept too: replacing it silently would re-key a live
    cluster; what it must sign is refused instead (reconcile).
    """
    if forced:
        return "forced"
    if cert is None:
        return "missing"
    if key is None:
        return None if spec.is_ca and cert_is_ca(cert) else "key missing"
    if not key_matches(cert, key):
        return "key does not match the certificate"
    if spec.is_ca:
        if not cert_is_ca(cert):
            return "not a CA certificate"
        return None
    if key_type_of(key) != key_type:
        return f"key type is {key_type_of(key)}, wanted {key_type}"
    if signer_cert is None or not signed_by(cert, signer_cert):
        return f"not signed by the current {spec.signer}"
    if cert.subject != _name(spec.cn, spec.orgs):
        return f"subject is {subject_text(cert.subject)}, wanted {subject_text(_name(spec.cn, spec.orgs))}"
    if cert_ekus(cert) != set(_ext_key_usages(spec)):
        return "extended key usages differ"
    dns, ips = cert_sans(cert)
    have = set(dns) | {str(ipaddress.ip_address(i)) for i in ips}
    missing = [s for s in spec.sans if s not in have]
    if missing:
        return "missing SANs: " + ", ".join(missing)
    if within_window(cert, now, renew_days):
        left = days_left(cert, now)
        if left < 0:
            return f"expired {-left} days ago"
        return f"expires in {left} days (renewal window {renew_days} days)"
    return None


@dataclass
class Action:
    name: str
    action: str          # issued | renewed | reused | imported
    reason: str = ""

    def as_dict(self) -> dict:
        return {"name": self.name, "action": self.action, "reason": self.reason}


def reconcile(c: Cluster, existing: dict, now: datetime.datetime, renew_days: int = RENEW_DAYS,
              force=(), user_cas: dict | None = None, keygen=None) -> tuple:
    """Desired PKI files from the existing ones.

    existing: relative path -> bytes of what the PKI directory holds now.
    force: certificate names to re-issue whatever their state, or "all" (every leaf; CAs only by name).
    user_cas: CA name -> {"cert": bytes, "key": bytes} imported instead of generated.
    Returns (files, actions, warnings): files is the complete desired content (relative path ->
    bytes; unchanged files keep their exact bytes), actions one Action per certificate.
    """
    keygen = keygen or (lambda: new_key(c.key_type, c.rsa_bits))
    user_cas = user_cas or {}
    files = dict(existing)
    actions, warnings = [], []
    loaded = {}        # name -> (cert, key)
    names = {s.name for s in cluster_certs(c)}
    force_all = force == "all" or (not isinstance(force, str) and "all" in force)
    forced_names = set() if isinstance(force, str) else set(force) - {"all"}
    unknown = forced_names - names
    if unknown:
        raise ValueError("unknown certificate names to renew: " + ", ".join(sorted(unknown)))

    for spec in cluster_certs(c):
        crt_path, key_path = f"{spec.name}.crt", f"{spec.name}.key"
        cert, key = load_cert(files.get(crt_path)), load_key(files.get(key_path))
        if spec.is_ca and spec.name in user_cas:
            ucert, ukey = load_cert(user_cas[spec.name]["cert"]), load_key(user_cas[spec.name]["key"])
            if ucert is None or ukey is None or not key_matches(ucert, ukey) or not cert_is_ca(ucert):
                raise ValueError(f"the provided {spec.name} certificate and key are not a matching CA pair")
            if cert is not None and cert_to_pem(cert) == cert_to_pem(ucert) and key is not None \
                    and key_matches(cert, key):
                actions.append(Action(spec.name, "reused"))
            else:
                files[crt_path], files[key_path] = cert_to_pem(ucert), key_to_pem(ukey)
                actions.append(Action(spec.name, "imported", "user-provided CA"))
                cert, key = ucert, ukey
            loaded[spec.name] = (cert, key)
            _warn_ca_age(spec, cert, now, renew_days, warnings)
            continue
        forced = spec.name in forced_names or (force_all and not spec.is_ca)
        signer_cert = loaded[spec.signer][0] if spec.signer else None
        reason = regeneration_reason(spec, cert, key, signer_cert, now, renew_days, c.key_type, forced)
        if reason is None:
            actions.append(Action(spec.name, "reused"))
            loaded[spec.name] = (cert, key)
            if spec.is_ca:
                _warn_ca_age(spec, cert, now, renew_days, warnings)
                if key is None:
                    warnings.append(f"CA {spec.name}: its key is not in the store (an adopted site: the hosts hold "
                                    "its certificate only); the certificates it signs are kept, none can be issued "
                                    f"or renewed: restore {spec.name}.key from a backup of the site's state, or "
                                    f"replace the CA with pki_force: [{spec.name}] (docs/pki.md)")
            continue
        signer = loaded.get(spec.signer, (None, None))
        if spec.signer and signer[1] is None:
            raise ValueError(f"{spec.name} must be {'issued' if reason == 'missing' else 'renewed'} ({reason}) but "
                             f"its signer {spec.signer} has no key in the store (an adopted site: the hosts hold "
                             f"the CA's certificate only): restore {spec.signer}.key from a backup of the site's "
                             f"state, or replace the CA with pki_force: [{spec.signer}], which re-issues everything "
                             "it signs (docs/pki.md)")
        # keep a good existing key (kubeadm's renew keeps keys); make one when there is none,
        # it does not match, or the key type changed
        if key is None or key_type_of(key) != c.key_type or (cert is not None and not key_matches(cert, key)) \
                or (spec.is_ca and forced):
            key = keygen()
            files[key_path] = key_to_pem(key)
        cert = issue(spec, key, now, *signer)
        files[crt_path] = cert_to_pem(cert)
        loaded[spec.name] = (cert, key)
        actions.append(Action(spec.name, "issued" if reason == "missing" else "renewed", reason))

    _service_account_keys(files, actions, keygen, "sa" in forced_names)
    if not journal_key_ok(files.get(JOURNAL_KEY)):   # a store the site's first phase did not make (store.py)
        files[JOURNAL_KEY] = new_journal_key()
    for kc in kubeconfig_specs(c):
        cert, key = loaded[kc.cert]
        files[kc.path] = render_kubeconfig(c.name, kc.server, files["ca.crt"], kc.user,
                                           cert_to_pem(cert), key_to_pem(key)).encode()
    return files, actions, warnings


def _warn_ca_age(spec, cert, now, renew_days, warnings):
    if within_window(cert, now, renew_days):
        warnings.append(f"CA {spec.name} expires in {days_left(cert, now)} days; CAs are not renewed "
                        "automatically (renewing a CA re-keys the cluster): plan a CA rotation")


def _service_account_keys(files, actions, keygen, forced):
    key = load_key(files.get("sa.key"))
    if key is not None and not forced and files.get("sa.pub") == public_to_pem(key.public_key()):
        actions.append(Action("sa", "reused"))
        return
    reason = "forced" if forced else ("missing" if key is None else "sa.pub does not match sa.key")
    if key is None or forced:
        key = keygen()
        files["sa.key"] = key_to_pem(key)
    files["sa.pub"] = public_to_pem(key.public_key())
    actions.append(Action("sa", "issued" if reason == "missing" else "renewed", reason))


def changed_files(before: dict, after: dict) -> list:
    return sorted(p for p, data in after.items() if before.get(p) != data)
