# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Controller-side PKI authority (documentation: plugins/modules/k8s_pki.py)."""
from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import os
import tarfile

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki
from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_identity as si
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki import adoption
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.store import read_tree, write_pki_file


def summary(files: dict, name: str, now) -> str:
    cert = k8s_pki.load_cert(files.get(f"{name}.crt"))
    if cert is None:
        return f"{name}: (none)\n"
    d = k8s_pki.describe(cert, now)
    return f"{name}: subject={d['subject']} sans={','.join(d['sans'])} not_after={d['not_after']} serial={d['serial']}\n"


_LIST = dict(type="list", elements="dict", default=[])
_SANS = dict(type="list", elements="str", default=[])


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    # defaults as k8s_pki.Cluster's (tests/unit/plugins/action/test_argument_specs.py compares them)
    ARGUMENT_SPEC = dict(
        pki_dir=dict(type="path", required=True),
        cluster=dict(type="dict", required=True, options=dict(
            masters=dict(type="list", elements="dict", required=True),
            nodes=_LIST, etcd=_LIST, registry=_LIST, machines=_LIST,
            name=dict(type="str", default="kubernetes"),
            k8s_version=dict(type="str", default="1.30.4"),
            vip=dict(type="str", default=""),
            api_domain=dict(type="str", default="api.tke.com"),
            api_port=dict(type="int", default=6443),
            control_plane_endpoint=dict(type="str", required=True),
            service_cidr=dict(type="str", default="10.96.0.0/16"),
            dns_domain=dict(type="str", default="cluster.local"),
            registry_domain=dict(type="str", default="registry.tke.com"),
            gateway_domain=dict(type="str", default="console.tke.com"),
            apiserver_extra_sans=_SANS, etcd_extra_sans=_SANS, server_extra_sans=_SANS,
            ca_days=dict(type="int", default=k8s_pki.CA_DAYS),
            cert_days=dict(type="int", default=k8s_pki.CERT_DAYS),
            key_type=dict(type="str", choices=["rsa", "ecdsa"], default="rsa"),
            rsa_bits=dict(type="int", default=2048))),
        renew_days=dict(type="int", default=k8s_pki.RENEW_DAYS),
        force=dict(type="list", elements="str", default=[]),
        user_cas=dict(type="dict", default={}),
        adopt=dict(type="dict", no_log=True),
        adopt_ca_sha256=dict(type="str"),
    )
    _supports_check_mode = True
    _supports_async = False

    def run_action(self, args, result, task_vars):
        try:
            k8s_pki.require_cryptography()
        except ImportError as e:
            raise AnsibleActionFail(str(e)) from e
        pki_dir = os.path.abspath(args["pki_dir"])
        spec = args["cluster"]
        if not spec["masters"]:
            raise AnsibleActionFail("cluster.masters must list at least one master")
        for group in ("masters", "nodes", "etcd", "registry", "machines"):
            for h in spec[group]:
                if not h.get("name"):
                    raise AnsibleActionFail(f"cluster.{group}: every entry needs a name (got {h!r})")
        try:
            cluster = k8s_pki.Cluster(**spec)
            k8s_pki.first_service_ip(cluster.service_cidr)
        except (TypeError, ValueError) as e:
            raise AnsibleActionFail(f"invalid cluster settings: {e}")
        renew_days = args["renew_days"]
        force = [f.strip() for f in args["force"] if f.strip()]  # "ca, apiserver" from -e
        user_cas = {}
        for name, pair in args["user_cas"].items():
            if name not in ("ca", "front-proxy-ca", "etcd/ca"):
                raise AnsibleActionFail(f"user_cas: {name} is not a CA (ca, front-proxy-ca, etcd/ca)")
            try:
                user_cas[name] = {k: open(os.path.expanduser(pair[k]), "rb").read() for k in ("cert", "key")}
            except (OSError, KeyError, TypeError) as e:
                raise AnsibleActionFail(f"user_cas.{name}: needs readable cert and key files ({e})")

        existing = read_tree(pki_dir) if os.path.isdir(pki_dir) else {}
        now = datetime.datetime.now(datetime.timezone.utc)
        if args["adopt"] is not None:
            return self._adopt(args, result, cluster, pki_dir, existing, now, renew_days)
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
                write_pki_file(pki_dir, rel, to_bytes(files[rel]))

        touched = [a for a in actions if a.action != "reused"]
        result.update(
            changed=bool(changed),
            pki_dir=pki_dir,
            actions=[a.as_dict() for a in touched],
            reused=[a.name for a in actions if a.action == "reused"],
            report=[f"{a.name}: {a.action} ({a.reason})" for a in touched],
            changed_files=changed,
            # check mode: the store keeps its old copies; the new bytes, by sha256 (never the bytes:
            # keys), let pki_distribute tell a host that already has them from one that would change
            check_digests={rel: hashlib.sha256(to_bytes(files[rel])).hexdigest() for rel in changed}
            if self._task.check_mode else {},
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

    def _adopt(self, args, result, cluster, pki_dir, existing, now, renew_days):
        """playbooks/adopt.yml: the store rebuilt from what the hosts hold (k8s_pki/adoption.py), the
        CA checked against the site's identity the hosts record; what no host holds and the store
        can make (TKE's admin client certificate) is issued; nothing is written on any host."""
        if "ca.crt" in existing:
            raise AnsibleActionFail(f"{pki_dir} already holds a CA: adopt rebuilds a lost store only, it never "
                                    "replaces one (move the folder away first if it is not this site's)")
        reads = {}
        for host, text in args["adopt"].items():
            try:
                reads[host] = adoption.read_tar(base64.b64decode(text or ""))
            except (binascii.Error, tarfile.TarError, EOFError, OSError) as e:
                raise AnsibleActionFail(f"adopt: what {host} sent cannot be read ({e.__class__.__name__})")
        files, conflicts, missing = adoption.assemble(cluster, reads)
        if conflicts:
            raise AnsibleActionFail("adopt: the hosts do not hold one PKI, nothing was written: " + "; ".join(conflicts))
        ca = si.ca_fingerprint((files.get("ca.crt") or b"").decode())
        if not ca:
            raise AnsibleActionFail("adopt: no host holds the cluster CA (ca.crt), nothing was written")
        wanted = args["adopt_ca_sha256"]
        if wanted and ca != wanted:
            raise AnsibleActionFail(f"adopt: the hosts' cluster CA has SHA-256 {ca} but they record their site's CA as "
                                    f"{wanted}: not this site's certificates, nothing was written")
        held = adoption.host_sources(cluster, self._hosts(cluster))
        warnings = []
        try:
            desired, actions, warnings = k8s_pki.reconcile(cluster, files, now, renew_days)
        except ValueError as e:
            desired, actions = files, []
            warnings.append(str(e))
        # what only the controller holds and can make again (never a host's file: those are the hosts')
        made = {rel: data for rel, data in desired.items() if rel not in files and rel not in held}
        store = dict(files, **made)
        if not self._task.check_mode:
            os.makedirs(pki_dir, mode=0o700, exist_ok=True)
            os.chmod(os.path.dirname(pki_dir), 0o700)
            os.chmod(pki_dir, 0o700)
            for rel in sorted(store):
                write_pki_file(pki_dir, rel, to_bytes(store[rel]))
        later = [f"{a.name}: {a.reason}" for a in actions if a.action != "reused"
                 and not any(rel.startswith(a.name + ".") for rel in made)]
        result.update(
            changed=True, pki_dir=pki_dir, ca_sha256=ca, adopted=sorted(files), issued=sorted(made),
            missing=dict(sorted(missing.items())), warnings=warnings,
            report=[f"adopted {len(files)} files from {', '.join(sorted(reads))}; CA sha256 {ca}"]
            + ([f"issued (no host holds them): {', '.join(sorted(made))}"] if made else [])
            + [f"not on any host (the next pki phase issues them): {src} ({', '.join(hosts)})"
               for src, hosts in sorted(missing.items())]
            + ([f"the next pki phase would re-issue: {'; '.join(later)}"] if later else []))
        return result

    @staticmethod
    def _hosts(cluster):
        hosts = []
        for group in (cluster.masters, cluster.nodes, cluster.etcd, cluster.registry, cluster.machines):
            for h in group:
                if h["name"] not in hosts:
                    hosts.append(h["name"])
        return hosts
