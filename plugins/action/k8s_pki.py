# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Controller-side PKI authority (documentation: plugins/modules/k8s_pki.py)."""
from __future__ import annotations

import datetime
import os
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.action import ActionBase

from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki

CLUSTER_KEYS = set(k8s_pki.Cluster.__dataclass_fields__)
SECRET_SUFFIXES = (".key", ".conf")


def read_tree(root: str) -> dict:
    """Every regular file under root -> bytes, by path relative to root."""
    out = {}
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            full = os.path.join(dirpath, n)
            if n.startswith(".") or not os.path.isfile(full):
                continue
            with open(full, "rb") as fh:
                out[os.path.relpath(full, root)] = fh.read()
    return out


def write_file(root: str, rel: str, data: bytes) -> None:
    """Atomic write; directories 0700, keys and kubeconfigs 0600, certificates 0644."""
    path = os.path.join(root, rel)
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent, mode=0o700, exist_ok=True)
        # makedirs applies the mode to the last directory only (and through the umask)
        d = parent
        while os.path.abspath(d) != os.path.abspath(root):
            os.chmod(d, 0o700)
            d = os.path.dirname(d)
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o600 if rel.endswith(SECRET_SUFFIXES) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def summary(files: dict, name: str, now) -> str:
    cert = k8s_pki.load_cert(files.get(f"{name}.crt"))
    if cert is None:
        return f"{name}: (none)\n"
    d = k8s_pki.describe(cert, now)
    return f"{name}: subject={d['subject']} sans={','.join(d['sans'])} not_after={d['not_after']} serial={d['serial']}\n"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    # ActionBase.run refuses any other parameter
    _VALID_ARGS = frozenset(("pki_dir", "cluster", "renew_days", "force", "user_cas"))
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        try:
            k8s_pki.require_cryptography()
        except ImportError as e:
            raise AnsibleActionFail(str(e)) from e
        args = self._task.args
        pki_dir = args.get("pki_dir")
        if not pki_dir:
            raise AnsibleActionFail("pki_dir is required")
        pki_dir = os.path.abspath(os.path.expanduser(to_text(pki_dir)))
        spec = dict(args.get("cluster") or {})
        bad = set(spec) - CLUSTER_KEYS
        if bad:
            raise AnsibleActionFail("unknown cluster settings: " + ", ".join(sorted(bad)))
        if not spec.get("masters"):
            raise AnsibleActionFail("cluster.masters must list at least one master")
        for group in ("masters", "nodes", "etcd", "registry", "machines"):
            for h in spec.get(group) or []:
                if not isinstance(h, dict) or not h.get("name"):
                    raise AnsibleActionFail(f"cluster.{group}: every entry needs a name (got {h!r})")
        try:
            cluster = k8s_pki.Cluster(**spec)
            if cluster.key_type not in ("rsa", "ecdsa"):
                raise ValueError(f"key_type must be rsa or ecdsa, not {cluster.key_type!r}")
            k8s_pki.first_service_ip(cluster.service_cidr)
        except (TypeError, ValueError) as e:
            raise AnsibleActionFail(f"invalid cluster settings: {e}")
        renew_days = int(args.get("renew_days", k8s_pki.RENEW_DAYS))
        force = args.get("force") or []
        if isinstance(force, str):
            force = [f.strip() for f in force.split(",") if f.strip()]
        user_cas = {}
        for name, pair in (args.get("user_cas") or {}).items():
            if name not in ("ca", "front-proxy-ca", "etcd/ca"):
                raise AnsibleActionFail(f"user_cas: {name} is not a CA (ca, front-proxy-ca, etcd/ca)")
            try:
                user_cas[name] = {k: open(os.path.expanduser(pair[k]), "rb").read() for k in ("cert", "key")}
            except (OSError, KeyError, TypeError) as e:
                raise AnsibleActionFail(f"user_cas.{name}: needs readable cert and key files ({e})")

        existing = read_tree(pki_dir) if os.path.isdir(pki_dir) else {}
        now = datetime.datetime.now(datetime.timezone.utc)
        try:
            files, actions, warnings = k8s_pki.reconcile(cluster, existing, now, renew_days, force, user_cas)
        except ValueError as e:
            raise AnsibleActionFail(str(e))
        changed = k8s_pki.changed_files(existing, files)
        if changed and not self._task.check_mode:
            parent = os.path.dirname(pki_dir)
            if not os.path.isdir(parent):          # the site's state directory: private as well
                os.makedirs(parent, mode=0o700, exist_ok=True)
                os.chmod(parent, 0o700)
            os.makedirs(pki_dir, mode=0o700, exist_ok=True)
            os.chmod(pki_dir, 0o700)
            for rel in changed:
                write_file(pki_dir, rel, to_bytes(files[rel]))

        touched = [a for a in actions if a.action != "reused"]
        result.update(
            changed=bool(changed),
            pki_dir=pki_dir,
            actions=[a.as_dict() for a in touched],
            reused=[a.name for a in actions if a.action == "reused"],
            report=[f"{a.name}: {a.action} ({a.reason})" for a in touched],
            changed_files=changed,
            warnings=warnings,
            host_files={h: k8s_pki.host_files(cluster, h) for h in self._hosts(cluster)},
            certificates={s.name: k8s_pki.describe(k8s_pki.load_cert(files[f"{s.name}.crt"]), now)
                          for s in k8s_pki.cluster_certs(cluster) if f"{s.name}.crt" in files},
        )
        if self._task.diff and touched:
            names = [a.name for a in touched if a.name != "sa"]
            result["diff"] = {
                "before_header": f"{pki_dir} (certificates)", "after_header": f"{pki_dir} (certificates)",
                "before": "".join(summary(existing, n, now) for n in names),
                "after": "".join(f"{a.name}: {a.action} ({a.reason})\n" for a in touched)
                + "".join(summary(files, n, now) for n in names)}
        return result

    @staticmethod
    def _hosts(cluster):
        hosts = []
        for group in (cluster.masters, cluster.nodes, cluster.etcd, cluster.registry, cluster.machines):
            for h in group:
                if h["name"] not in hosts:
                    hosts.append(h["name"])
        return hosts
