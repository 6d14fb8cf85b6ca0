#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Run one kubeadm init/join phase when its artifacts are missing or its configuration changed."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_phase
short_description: Run one C(kubeadm init phase) or C(kubeadm join phase) only when needed
version_added: 0.2.0
description:
  - Knows, per phase, the files the phase produces (certificates, kubeconfigs, static pod
    manifests, kubelet configuration) and records on the host a fingerprint (sha256) of the
    configuration file and arguments the phase ran with.
  - Runs C(kubeadm <command> phase <phase> --config <config> <args>) when a produced file is
    missing, when no fingerprint was recorded, or when the fingerprint differs; otherwise does
    nothing. Phases that only act on the cluster (upload-config, bootstrap-token, addon ...)
    run when their fingerprint is missing or differs.
  - Bootstrap tokens and certificate keys are masked in the fingerprint, the returned command
    and the returned output, and never returned.
  - On failure reports kubeadm's exit code and the tail of its output.
  - Refuses to run a phase whose prerequisite phases (for example C(certs all) before
    C(kubeconfig all)) have not completed on this host, so a failed phase stops the ones after it.
requirements:
  - kubeadm on the host (from the site pack)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Reports whether the phase would run and why; runs nothing and records nothing.
  diff_mode:
    details: The recorded fingerprint and the missing files, before and after.
options:
  command:
    description: The kubeadm command the phase belongs to.
    type: str
    choices: [init, join]
    required: true
  phase:
    description: The phase and sub-phase, as given to kubeadm, for example C(certs all) or C(kubelet-start).
    type: str
    required: true
  config:
    description: Path of the kubeadm configuration file on the host.
    type: path
    required: true
  version:
    description: Kubernetes version of the cluster (selects the files a phase writes, for example super-admin.conf from 1.29).
    type: str
    required: true
  args:
    description: Further arguments (kubeadm allows only C(--skip-*), C(--upload-certs), C(--node-name), C(-v) and a few more with C(--config)).
    type: list
    elements: str
    default: []
  stacked_etcd:
    description: Whether etcd runs as a static pod on the masters (kubeadm then writes the etcd certificates and manifest).
    type: bool
    default: true
  kubeadm:
    description: Path of the kubeadm binary.
    type: path
    default: /usr/local/bin/kubeadm
  kubernetes_dir:
    description: kubeadm's directory of kubeconfigs, pki/ and manifests/.
    type: path
    default: /etc/kubernetes
  state_dir:
    description: Directory of the recorded fingerprints.
    type: path
    default: /etc/kubernetes/.offline_pot
  force:
    description: Run the phase even if nothing changed.
    type: bool
    default: false
  timeout:
    description: Seconds kubeadm may run.
    type: int
    default: 600
"""

EXAMPLES = r"""
- name: Generate the certificates kubeadm needs (keeps the PKI files already present)
  offline_pot.tke.kubeadm_phase:
    command: init
    phase: certs all
    config: /etc/kubernetes/kubeadm-config.yaml
    version: 1.30.4
"""

RETURN = r"""
cmd:
  description: The command that ran (or would run), secrets masked.
  returned: always
  type: list
  elements: str
ran:
  description: Whether kubeadm ran.
  returned: always
  type: bool
reason:
  description: Why the phase ran or did not run.
  returned: always
  type: str
fingerprint:
  description: sha256 of the configuration (secrets masked) and arguments.
  returned: always
  type: str
artifacts:
  description: Files the phase produces.
  returned: always
  type: list
  elements: str
missing:
  description: Produced files that were missing before the run.
  returned: always
  type: list
  elements: str
rc:
  description: kubeadm's exit code (absent when it did not run).
  returned: when kubeadm ran
  type: int
output_tail:
  description: Last lines of kubeadm's output, tokens and keys redacted.
  returned: when kubeadm ran
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases as kp


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            command=dict(type="str", required=True, choices=["init", "join"]),
            phase=dict(type="str", required=True),
            config=dict(type="path", required=True),
            version=dict(type="str", required=True),
            args=dict(type="list", elements="str", default=[]),
            stacked_etcd=dict(type="bool", default=True),
            kubeadm=dict(type="path", default="/usr/local/bin/kubeadm"),
            kubernetes_dir=dict(type="path", default="/etc/kubernetes"),
            state_dir=dict(type="path", default="/etc/kubernetes/.offline_pot"),
            force=dict(type="bool", default=False),
            timeout=dict(type="int", default=600),
        ),
        supports_check_mode=True,
    )
    p = module.params
    phase = " ".join(p["phase"].split())
    try:
        artifacts = kp.absolute(kp.phase_artifacts(p["command"], phase, p["version"], p["stacked_etcd"]),
                                p["kubernetes_dir"])
    except ValueError as e:
        module.fail_json(msg=str(e))
    config_text = _read(p["config"])
    if config_text is None:
        module.fail_json(msg=f"kubeadm configuration {p['config']} does not exist")
    desired = kp.fingerprint(p["command"], phase, config_text, p["args"])
    record = os.path.join(p["state_dir"], kp.state_name(p["command"], phase))
    recorded = _read(record)
    missing = [a for a in artifacts if not os.path.exists(a)]
    run, reason = kp.decide(missing, recorded, desired, p["force"],
                            once=(p["command"], phase) in kp.RUN_ONCE)
    argv = kp.argv(p["kubeadm"], p["command"], phase, p["config"], p["args"])
    result = dict(changed=run, ran=False, reason=reason, fingerprint=desired, artifacts=artifacts,
                  missing=missing, cmd=kp.mask_args(argv))
    if module._diff:
        result["diff"] = dict(before=dict(fingerprint=(recorded or "").strip(), missing=missing),
                              after=dict(fingerprint=desired, missing=[]),
                              before_header=record, after_header=record)
    if not run or module.check_mode:
        module.exit_json(**result)
    pending = [q for q in kp.prerequisites(p["command"], phase)
               if not os.path.exists(os.path.join(p["state_dir"], kp.state_name(p["command"], q)))]
    if pending:
        result.update(changed=False)
        module.fail_json(msg=f"kubeadm {p['command']} phase {phase} not run: it needs "
                             f"{', '.join(pending)} to have completed first", **result)

    if not os.path.exists(p["kubeadm"]):
        module.fail_json(msg=f"kubeadm not found at {p['kubeadm']}", **result)
    limit = ["timeout", str(p["timeout"])] if module.get_bin_path("timeout") else []
    rc, out, err = module.run_command(limit + argv, environ_update={"LANG": "C"})
    output = kp.redact((out or "") + (err or ""))
    result.update(ran=True, rc=rc, output_tail=kp.tail(output))
    if rc != 0:
        module.fail_json(msg=f"kubeadm {p['command']} phase {phase} failed (exit {rc}):\n{kp.tail(output)}", **result)
    still = [a for a in artifacts if not os.path.exists(a)]
    if still:
        module.fail_json(msg=f"kubeadm {p['command']} phase {phase} succeeded but did not write: {', '.join(still)}",
                         **result)
    write_file(record, desired + "\n", 0o600, dir_mode=0o700)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
