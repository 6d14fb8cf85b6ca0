#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Run kubeadm init/join phases, in order, each when its artifacts are missing or its configuration changed."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_phase
short_description: Run C(kubeadm init phase) or C(kubeadm join phase) phases in order, each only when needed
version_added: 0.2.0
description:
  - Knows, per phase, the files the phase produces (certificates, kubeconfigs, static pod
    manifests, kubelet configuration) and records on the host a fingerprint (sha256) of the
    configuration file and arguments the phase ran with.
  - Runs the I(phases) in order; each runs (C(kubeadm <command> phase <phase> --config <config>
    <args>)) when a produced file is missing, when no fingerprint was recorded, or when the
    fingerprint differs; otherwise it does nothing. Phases that only act on the cluster
    (upload-config, bootstrap-token, addon ...) run when their fingerprint is missing or differs.
  - Stops at the first phase that fails, naming it; the phases after it do not run. The role that
    calls it runs a list of phases in one task (the one kubeadm phase runner of control_plane and nodes).
  - With I(state=recorded) runs nothing and returns which of the I(phases) this host records done
    (for example whether a node has joined), so roles never read the fingerprint files themselves.
  - With I(state=adopted), for a node that C(kubeadm upgrade) brought to the release of I(config), runs
    nothing and records the phases as made from I(config) - each phase recorded done (its files present)
    gets the fingerprint of I(config); a phase of a node's way in (C(preflight), C(local-mode), C(etcd-join),
    C(kubelet-wait-bootstrap)) that the node never ran, because its join was of an earlier release, is
    recorded done once another phase of I(phases) is; a phase never recorded otherwise, or with a file
    missing, is left to run at the next install. So an install at the release the upgrade reached finds
    the node's phases done instead of running kubeadm's init or join phases again on a running node.
  - Bootstrap tokens and certificate keys are masked in the fingerprint, the returned command
    and the returned output, and never returned.
  - On failure reports kubeadm's exit code and the tail of its output.
  - Refuses to run a phase whose prerequisite phases (for example C(certs all) before
    C(kubeconfig all)) have not completed on this host.
requirements:
  - kubeadm on the host (from the site pack)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  check_mode:
    details: Reports whether each phase would run and why; runs nothing and records nothing. A
      configuration that does not exist yet (an earlier task would write it) is no error in check
      mode, its phases would run (those that run only before a first join and are recorded aside).
  diff_mode:
    details: The recorded fingerprints and the missing files, before and after.
options:
  command:
    description: The kubeadm command the phases belong to.
    type: str
    choices: [init, join]
    required: true
  phases:
    description:
      - The phases and sub-phases, in order, as given to kubeadm, for example C(certs all) or C(kubelet-start).
      - For C(join), the last one marks a completed join (as does the last one of an earlier release's list, for a
        node that joined under that release); once it is recorded, the phases that belong to a node's way in only
        (C(preflight), C(local-mode), C(etcd-join), C(kubelet-wait-bootstrap)) do not run again.
      - C(local-mode) (a join of Kubernetes 1.33 and 1.34) is the local mode's hidden phases C(check-etcd), C(etcd-join)
        and C(kubelet-wait-bootstrap), which kubeadm runs only inside C(kubeadm join) (a hidden phase has no C(join phase)
        command); the module runs C(kubeadm join --config ... --skip-phases) with every other phase skipped. From 1.35
        C(etcd-join) and C(kubelet-wait-bootstrap) are phases of their own.
      - The join phases of a release come from the filter P(offline_pot.tke.kubeadm_join_phases#filter).
    type: list
    elements: str
    required: true
  state:
    description:
      - C(run) runs the phases that need it; C(recorded) only reports which phases this host records done;
        C(adopted) records the phases a C(kubeadm upgrade) made as made from I(config) (see above).
    type: str
    choices: [run, recorded, adopted]
    default: run
  config:
    description: Path of the kubeadm configuration file on the host. Required with I(state=run) and I(state=adopted).
    type: path
  version:
    description:
      - Kubernetes version of the cluster (selects the files a phase writes, for example super-admin.conf from 1.29).
      - Required with I(state=run) and I(state=adopted).
    type: str
  phase_args:
    description:
      - Further arguments per phase (phase -> list). kubeadm allows only C(--skip-*), C(--upload-certs),
        C(--node-name), C(-v) and a few more with C(--config).
    type: dict
    default: {}
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
    description: Run the phases even if nothing changed.
    type: bool
    default: false
  timeout:
    description: Seconds kubeadm may run, per phase.
    type: int
    default: 600
"""

EXAMPLES = r"""
- name: Generate the certificates and kubeconfigs kubeadm needs (keeps the files already present)
  offline_pot.tke.kubeadm_phase:
    command: init
    phases: [certs all, kubeconfig all]
    config: /etc/kubernetes/kubeadm-config.yaml
    version: 1.30.4

- name: Whether this node has joined
  offline_pot.tke.kubeadm_phase:
    command: join
    phases: [kubelet-start]
    state: recorded
  register: joined

- name: After kubeadm upgrade node, the worker's join phases of the new release recorded done
  offline_pot.tke.kubeadm_phase:
    command: join
    phases: [preflight, kubelet-start, kubelet-wait-bootstrap]
    config: /etc/kubernetes/kubeadm-join.yaml
    version: 1.36.3
    state: adopted
"""

RETURN = r"""
results:
  description: One entry per phase that was considered, in order (the failing one last).
  returned: state=run or state=adopted
  type: list
  elements: dict
  contains:
    phase:
      description: The phase.
      type: str
    cmd:
      description: The command that ran (or would run), secrets masked.
      type: list
      elements: str
    ran:
      description: Whether kubeadm ran.
      type: bool
    reason:
      description: Why the phase ran or did not run (with I(state=adopted), why it was recorded or left).
      type: str
    adopted:
      description: With I(state=adopted), whether its record was (or in check mode would be) written.
      type: bool
    fingerprint:
      description: sha256 of the configuration (secrets masked) and arguments.
      type: str
    artifacts:
      description: Files the phase produces.
      type: list
      elements: str
    missing:
      description: Produced files that were missing before the run.
      type: list
      elements: str
    rc:
      description: kubeadm's exit code (absent when it did not run).
      type: int
    output_tail:
      description: Last lines of kubeadm's output, tokens and keys redacted.
      type: str
ran:
  description: The phases kubeadm ran (or would run, in check mode).
  returned: state=run
  type: list
  elements: str
adopted:
  description: The phases whose record was written (or would be, in check mode) with I(state=adopted).
  returned: state=adopted
  type: list
  elements: str
recorded:
  description: Phase -> whether this host records it done.
  returned: always
  type: dict
all_recorded:
  description: Whether this host records every one of I(phases) done (a node that has joined).
  returned: always
  type: bool
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


class _Failed(Exception):
    pass


def _recorded(p, phases):
    return {ph: os.path.exists(os.path.join(p["state_dir"], kp.state_name(p["command"], ph))) for ph in phases}


def _facts(p, phase, config_text):
    """A phase's arguments, the files it produces, the fingerprint of this configuration (None: not
    written yet), its record file and what it holds (None: none), its files missing; raises _Failed."""
    args = list(p["phase_args"].get(phase) or [])
    try:
        artifacts = kp.absolute(kp.phase_artifacts(p["command"], phase, p["version"], p["stacked_etcd"]),
                                p["kubernetes_dir"])
    except ValueError as e:
        raise _Failed(str(e), dict(phase=phase))
    desired = None if config_text is None else kp.fingerprint(p["command"], phase, config_text, args)
    record = os.path.join(p["state_dir"], kp.state_name(p["command"], phase))
    missing = [a for a in artifacts if not os.path.exists(a)]
    return args, artifacts, desired, record, _read(record), missing


def _one(module, p, phase, config_text, joined=""):
    """Decide and (unless check mode) run one phase; returns its result, raises _Failed."""
    args, artifacts, desired, record, recorded, missing = _facts(p, phase, config_text)
    key = (p["command"], phase)
    run, reason = kp.decide(missing, recorded, desired, p["force"], once=key in kp.RUN_ONCE,
                            joined=joined if key in kp.JOIN_ONLY else "")
    argv = kp.argv(p["kubeadm"], p["command"], phase, p["config"], args)
    result = dict(phase=phase, ran=False, would_run=run, reason=reason, fingerprint=desired, artifacts=artifacts,
                  missing=missing, cmd=kp.mask_args(argv),
                  before=dict(fingerprint=(recorded or "").strip(), missing=missing))
    if not run or module.check_mode:
        return result
    pending = [q for q in kp.prerequisites(p["command"], phase) if not _recorded(p, [q])[q]]
    if pending:
        raise _Failed(f"kubeadm {p['command']} phase {phase} not run: it needs {', '.join(pending)} "
                      "to have completed first", result)
    if not os.path.exists(p["kubeadm"]):
        raise _Failed(f"kubeadm not found at {p['kubeadm']}", result)
    limit = ["timeout", str(p["timeout"])] if module.get_bin_path("timeout") else []
    rc, out, err = module.run_command(limit + argv, environ_update={"LANG": "C"})
    output = kp.redact((out or "") + (err or ""))
    result.update(ran=True, rc=rc, output_tail=kp.tail(output))
    if rc != 0:
        raise _Failed(f"kubeadm {p['command']} phase {phase} failed (exit {rc}):\n{kp.tail(output)}", result)
    still = [a for a in artifacts if not os.path.exists(a)]
    if still:
        raise _Failed(f"kubeadm {p['command']} phase {phase} succeeded but did not write: {', '.join(still)}", result)
    write_file(record, desired + "\n", 0o600, dir_mode=0o700)
    return result


def _adopt(module, p, phases, config_text):
    """state=adopted: record the phases a kubeadm upgrade made as made from this configuration."""
    recorded = _recorded(p, phases)
    begun = any(recorded.values())
    results = []
    for phase in phases:
        try:
            dummy, artifacts, desired, record, before, missing = _facts(p, phase, config_text)
        except _Failed as e:
            module.fail_json(msg=e.args[0], phase=phase)
        before = (before or "").strip()
        if missing:
            adopt, reason = False, "left to run: missing " + ", ".join(missing)
        elif recorded[phase]:
            adopt, reason = before != desired, ("recorded as made from this configuration" if before != desired
                                                else "recorded with this configuration already")
        elif (p["command"], phase) in kp.JOIN_ONLY and begun:
            adopt, reason = True, "the node joined under an earlier release, before this phase was one of its way in"
        else:
            adopt, reason = False, "left to run: never recorded"
        if adopt and not module.check_mode:
            write_file(record, desired + "\n", 0o600, dir_mode=0o700)
        results.append(dict(phase=phase, adopted=adopt, reason=reason, fingerprint=desired, artifacts=artifacts,
                            missing=missing, before=dict(fingerprint=before, missing=missing)))
    adopted = [r["phase"] for r in results if r["adopted"]]
    recorded = _recorded(p, phases) if not module.check_mode else {ph: recorded[ph] or ph in adopted for ph in phases}
    out = dict(changed=bool(adopted), results=results, adopted=adopted, recorded=recorded,
               all_recorded=all(recorded.values()))
    if module._diff:
        out["diff"] = [dict(before=r["before"], after=dict(fingerprint=r["fingerprint"], missing=r["missing"]),
                            before_header=os.path.join(p["state_dir"], kp.state_name(p["command"], r["phase"])),
                            after_header=os.path.join(p["state_dir"], kp.state_name(p["command"], r["phase"])))
                       for r in results if r["adopted"]]
    for r in results:
        r.pop("before")
    module.exit_json(**out)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            command=dict(type="str", required=True, choices=["init", "join"]),
            phases=dict(type="list", elements="str", required=True),
            state=dict(type="str", default="run", choices=["run", "recorded", "adopted"]),
            config=dict(type="path"),
            version=dict(type="str"),
            phase_args=dict(type="dict", default={}),
            stacked_etcd=dict(type="bool", default=True),
            kubeadm=dict(type="path", default="/usr/local/bin/kubeadm"),
            kubernetes_dir=dict(type="path", default="/etc/kubernetes"),
            state_dir=dict(type="path", default="/etc/kubernetes/.offline_pot"),
            force=dict(type="bool", default=False),
            timeout=dict(type="int", default=600),
        ),
        required_if=[("state", "run", ("config", "version")), ("state", "adopted", ("config", "version"))],
        supports_check_mode=True,
    )
    p = module.params
    phases = [" ".join(ph.split()) for ph in p["phases"]]
    p["phase_args"] = {" ".join(k.split()): v for k, v in (p["phase_args"] or {}).items()}
    if p["state"] == "recorded":
        recorded = _recorded(p, phases)
        module.exit_json(changed=False, recorded=recorded, all_recorded=all(recorded.values()))
    config_text = _read(p["config"])
    if config_text is None and (p["state"] == "adopted" or not module.check_mode):
        module.fail_json(msg=f"kubeadm configuration {p['config']} does not exist")
    if p["state"] == "adopted":
        _adopt(module, p, phases, config_text)
    results, failure = [], None
    # a join whose final phase is recorded (this release's or an earlier one's) has completed: its
    # join-only phases stay behind it
    final = phases[-1] if phases else ""
    proofs = sorted(kp.join_completed_by(phases)) if p["command"] == "join" and final else []
    joined = next((ph for ph, done in _recorded(p, proofs).items() if done), "")
    for phase in phases:
        try:
            results.append(_one(module, p, phase, config_text, "" if phase == final else joined))
        except _Failed as e:
            failure = e.args[0]
            results.append(e.args[1])
            break
    ran = [r["phase"] for r in results if r.get("ran") or (module.check_mode and r.get("would_run"))]
    recorded = _recorded(p, phases)
    out = dict(changed=bool(ran), results=results, ran=ran, recorded=recorded, all_recorded=all(recorded.values()))
    if module._diff:
        out["diff"] = [dict(before=r.pop("before"), after=dict(fingerprint=r.get("fingerprint") or "", missing=[]),
                            before_header=os.path.join(p["state_dir"], kp.state_name(p["command"], r["phase"])),
                            after_header=os.path.join(p["state_dir"], kp.state_name(p["command"], r["phase"])))
                       for r in results if "before" in r]
    for r in results:
        r.pop("before", None)
        r.pop("would_run", None)
    if failure:
        module.fail_json(msg=failure, **out)
    module.exit_json(**out)


if __name__ == "__main__":
    main()
