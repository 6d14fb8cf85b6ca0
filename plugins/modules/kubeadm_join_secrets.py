#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""On the first master: a valid join token, the cluster CA, a fresh certificate key."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_join_secrets
short_description: Ensure what nodes need to join a kubeadm cluster, creating only what is missing or expired
version_added: 0.2.0
description:
  - Runs on a master that is already initialised.
  - Returns the bootstrap token described by I(token_description), creating it with
    C(kubeadm token create) when it is missing or expires within an hour.
  - Returns the cluster CA certificate; its discovery hash is computed on the controller with the
    C(offline_pot.tke.kubeadm_ca_cert_hash) filter (hosts may lack the C(cryptography) library).
  - With I(certificate_key=true), returns a certificate key under which the control-plane
    certificates were uploaded (C(kubeadm init phase upload-certs --upload-certs)); a new key is
    generated and uploaded when none was recorded or the upload is older than the two hours
    kubeadm keeps it, less ten minutes. The key is recorded in I(state_dir) (mode 0600).
  - Secrets are never printed by the module; use C(no_log) on the task since the values are returned.
requirements:
  - kubeadm on the host (from the site pack)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
attributes:
  check_mode:
    details: Reports what would be created; returns an existing token or key, creates nothing.
options:
  config:
    description: The first master's kubeadm configuration (needed to upload the certificates).
    type: path
    default: /etc/kubernetes/kubeadm-config.yaml
  kubeconfig:
    description: Admin kubeconfig used to talk to the cluster.
    type: path
    default: /etc/kubernetes/admin.conf
  ca_cert:
    description: The cluster CA certificate.
    type: path
    default: /etc/kubernetes/pki/ca.crt
  kubeadm:
    description: Path of the kubeadm binary.
    type: path
    default: /usr/local/bin/kubeadm
  token_description:
    description: Description identifying the collection's join token.
    type: str
    default: offline_pot.tke join token
  token_ttl:
    description: TTL of a created token (C(0) never expires, as TKE does).
    type: str
    default: "0"
  certificate_key:
    description: Whether a certificate key (control-plane join) is needed.
    type: bool
    default: false
  state_dir:
    description: Where the certificate key and its upload time are recorded.
    type: path
    default: /etc/kubernetes/.offline_pot
"""

EXAMPLES = r"""
- name: Credentials for joining masters
  offline_pot.tke.kubeadm_join_secrets:
    certificate_key: true
  register: join_secrets
  no_log: true
"""

RETURN = r"""
token:
  description: The bootstrap token (empty in check mode when it would be created).
  returned: always
  type: str
ca_cert:
  description: The cluster CA certificate (PEM) read on the host.
  returned: always
  type: str
certificate_key:
  description: Certificate key of the uploaded control-plane certificates (empty unless asked).
  returned: always
  type: str
created:
  description: What was (or in check mode would be) created - C(token), C(certificate_key).
  returned: always
  type: list
  elements: str
"""

import datetime
import os
import secrets
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_join as kj
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases as kp


def _fail(module, what, rc, out, err):
    module.fail_json(msg=f"{what} failed (exit {rc}):\n{kp.tail(kp.redact((out or '') + (err or '')))}", rc=rc)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type="path", default="/etc/kubernetes/kubeadm-config.yaml"),
            kubeconfig=dict(type="path", default="/etc/kubernetes/admin.conf"),
            ca_cert=dict(type="path", default="/etc/kubernetes/pki/ca.crt"),
            kubeadm=dict(type="path", default="/usr/local/bin/kubeadm"),
            token_description=dict(type="str", default="offline_pot.tke join token", no_log=False),
            token_ttl=dict(type="str", default="0", no_log=False),
            certificate_key=dict(type="bool", default=False),
            state_dir=dict(type="path", default="/etc/kubernetes/.offline_pot"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    env = {"LANG": "C"}
    created = []
    try:
        with open(p["ca_cert"]) as f:
            ca_cert = f.read()
        if "-----BEGIN CERTIFICATE-----" not in ca_cert:
            raise ValueError("no PEM certificate in it")
    except (OSError, ValueError) as e:
        module.fail_json(msg=f"cannot read the cluster CA {p['ca_cert']}: {e}")

    rc, out, err = module.run_command([p["kubeadm"], "token", "list", "-o", "json", "--kubeconfig", p["kubeconfig"]],
                                      environ_update=env)
    if rc != 0:
        _fail(module, "kubeadm token list", rc, out, err)
    now = datetime.datetime.now(datetime.timezone.utc)
    token = kj.usable_token(kj.parse_token_list(out), p["token_description"], now) or ""
    if not token:
        created.append("token")
        if not module.check_mode:
            rc, out, err = module.run_command(
                [p["kubeadm"], "token", "create", "--ttl", p["token_ttl"], "--description", p["token_description"],
                 "--kubeconfig", p["kubeconfig"]], environ_update=env)
            if rc != 0:
                _fail(module, "kubeadm token create", rc, out, err)
            token = out.strip().splitlines()[-1].strip() if out.strip() else ""
            if not kj.TOKEN_FORMAT.match(token):
                module.fail_json(msg="kubeadm token create printed no token")

    key = ""
    if p["certificate_key"]:
        record = os.path.join(p["state_dir"], "certificate-key")
        uploaded_at = None
        try:
            with open(record) as f:
                key, stamp = f.read().split()
            uploaded_at = float(stamp)
        except (OSError, ValueError):
            key = ""
        if not kj.certificate_key_fresh(uploaded_at, time.time()):
            created.append("certificate_key")
            key = ""
            if not module.check_mode:
                key = secrets.token_hex(32)
                with open(p["config"]) as f:
                    cfg = kj.with_certificate_key(f.read(), key)
                os.makedirs(p["state_dir"], mode=0o700, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=p["state_dir"], prefix=".upload-certs-")
                try:
                    with os.fdopen(fd, "w") as f:
                        f.write(cfg)
                    rc, out, err = module.run_command(
                        [p["kubeadm"], "init", "phase", "upload-certs", "--upload-certs", "--config", tmp,
                         "--skip-certificate-key-print"], environ_update=env)
                finally:
                    os.unlink(tmp)
                if rc != 0:
                    _fail(module, "kubeadm init phase upload-certs", rc, out, err)
                write_file(record, f"{key} {time.time():.0f}\n", 0o600, dir_mode=0o700)
    module.exit_json(changed=bool(created), created=created, token=token, ca_cert=ca_cert, certificate_key=key)


if __name__ == "__main__":
    main()
