# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Which kubeadm phase produces which files, and whether a phase must run.

Private to the collection. Pure functions, no Ansible import: unit-tested in
tests/unit/plugins/module_utils/test_kubeadm_phases.py.

Facts (kubeadm reference "kubeadm init phase" / "kubeadm join phase" for v1.28-v1.36 and
cmd/kubeadm/app/cmd/phases/{init,join}): file names below are the ones kubeadm writes under
/etc/kubernetes (kubeconfigs, pki/, manifests/) and /var/lib/kubelet.

The kubelet's local mode (kubeadm feature gate ControlPlaneKubeletLocalMode, beta and on by default
from 1.33, GA from 1.35, no gate from 1.36 - kubeadm's only behaviour, kubernetes#135773; KEP-4471 and
phases/join/{kubelet,controlplanejoin}.go, docs/kubernetes_releases.md):
the kubelet of a master talks to its own API server (init, join and upgrade write that into
kubelet.conf), and a join splits: kubelet-start no longer waits for the TLS bootstrap, the stacked
etcd member joins in the phase etcd-join (control-plane-join's etcd sub-phase runs only with the gate
off) and kubelet-wait-bootstrap waits for the kubelet afterwards. Up to 1.34 kubelet-wait-bootstrap
(and, before the backports of kubernetes#135481/#135482, etcd-join) is a hidden phase, and kubeadm
makes no `join phase` command of a hidden phase (workflow/runner.go BindToCommand): they run inside
`kubeadm join` only, so the collection runs them as `kubeadm join --skip-phases <every other phase>`
(the pseudo-phase LOCAL_MODE_PHASES; Cluster API does the same, kubernetes-sigs/cluster-api#10983).
From 1.35 both are visible phases (kubernetes#134106: kubelet-wait-bootstrap no longer experimental,
control-plane-join's etcd sub-phase hidden): the collection runs them one by one, as every other.
1.36 keeps that order; its control-plane-join has no etcd sub-phase at all (controlplanejoin.go after
kubernetes#135773, docs/kubernetes_releases.md section 10): the collection never names it.

Removed kubeadm feature gates (REMOVED_GATES): a kubeadm from the release that removed a gate refuses a
configuration naming it ("<gate> is not a valid feature name."); the collection writes no featureGates,
but a cluster's stored ClusterConfiguration might carry one, so an upgrade checks (removed_gates).

cgroup v1 (KEP-5573, kubernetes#134298 and #134744; docs/kubernetes_releases.md section 9): from 1.35
the kubelet refuses to start on a cgroup v1 host unless its configuration sets failCgroupV1: false,
and kubeadm's SystemVerification preflight check fails there (init and join: for an installed kubelet
of 1.35 or later; upgrade: for the installed kubelet's minor + 1) unless ignored. Both have to be
done, they are independent: CGROUP_V1_REFUSED_FROM and cgroup_v1_refusal.
"""
from __future__ import annotations

import hashlib
import re

SUPPORTED_MINORS = (28, 29, 30, 31, 32, 33, 34, 35, 36)
# the first minor whose kubeadm runs with ControlPlaneKubeletLocalMode on (a cluster upgraded from an
# older one has no featureGates in its kubeadm-config, so its upgrades and joins follow the default too)
LOCAL_MODE_FROM = 33
# The pseudo-phase of the local mode's hidden join phases (check-etcd, etcd-join, kubelet-wait-bootstrap):
# `kubeadm join` with every phase but those skipped (a skipped parent skips its sub-phases;
# wait-control-plane too: the roles wait for the API server themselves)
LOCAL_MODE_PHASES = "local-mode"
LOCAL_MODE_SKIP = ("preflight", "control-plane-prepare", "kubelet-start", "control-plane-join", "wait-control-plane")
# the first minor whose join phases etcd-join and kubelet-wait-bootstrap are `join phase` commands
VISIBLE_JOIN_PHASES_FROM = 35
# the first minor whose kubelet refuses cgroup v1 by default (failCgroupV1 true) and whose kubeadm
# fails SystemVerification there
CGROUP_V1_REFUSED_FROM = 35
# the kubeadm preflight check that refuses cgroup v1 (kubeadm --ignore-preflight-errors names it so)
CGROUP_V1_CHECK = "SystemVerification"

# kubeadm feature gates by the minor whose kubeadm no longer knows them: WaitForAllControlPlaneComponents
# (kubernetes#134781, 1.35) and ControlPlaneKubeletLocalMode (kubernetes#135773, 1.36); NodeLocalCRISocket
# is GA and locked in 1.36 (#135742), still a name kubeadm knows
REMOVED_GATES = {35: ("WaitForAllControlPlaneComponents",), 36: ("ControlPlaneKubeletLocalMode",)}

# certificate pairs written by "certs all" (relative to the cert dir)
_CA_PAIRS = ("ca", "front-proxy-ca")
_LEAF_PAIRS = ("apiserver", "apiserver-kubelet-client", "front-proxy-client")
_ETCD_PAIRS = ("etcd/ca", "etcd/server", "etcd/peer", "etcd/healthcheck-client", "apiserver-etcd-client")


def minor(version: str) -> int:
    """Minor number of a Kubernetes version such as "1.30.4" or "v1.30.4"."""
    m = re.match(r"^v?1\.(\d+)\.\d+$", str(version).strip())
    if not m:
        raise ValueError(f"not a Kubernetes version: {version!r}")
    return int(m.group(1))


def kubeadm_api_version(version: str) -> str:
    """kubeadm configuration API for a Kubernetes version: v1beta3 up to 1.30, v1beta4 from 1.31."""
    m = minor(version)
    if m not in SUPPORTED_MINORS:
        raise ValueError(f"Kubernetes {version} is not supported (1.{SUPPORTED_MINORS[0]}-1.{SUPPORTED_MINORS[-1]})")
    return "kubeadm.k8s.io/v1beta4" if m >= 31 else "kubeadm.k8s.io/v1beta3"


def kubelet_local_mode(version: str) -> bool:
    """Whether kubeadm of this release points a master's kubelet at the master's own API server."""
    return minor(version) >= LOCAL_MODE_FROM


def removed_gates(version: str, gates) -> list[str]:
    """The kubeadm feature gates among `gates` (a featureGates mapping, or names) that the kubeadm of this
    release no longer knows (removed in it or before): it refuses a configuration naming them."""
    m = minor(version)
    gone = {g for removed_in, names in REMOVED_GATES.items() if removed_in <= m for g in names}
    return sorted(str(g) for g in (gates or ()) if str(g) in gone)


def cgroup_v1_refused(version: str) -> bool:
    """Whether the kubelet and kubeadm of this release refuse a cgroup v1 host by default."""
    return minor(version) >= CGROUP_V1_REFUSED_FROM


def cgroup_v1_reason(version: str) -> str:
    """Why a host on cgroup v1 cannot run this release (a release that refuses it), and the ways out."""
    return (f"cgroup v1 (/sys/fs/cgroup is not a cgroup2 mount); the kubelet of Kubernetes {version} does not start "
            f"on cgroup v1 (failCgroupV1 defaults to true from 1.35, KEP-5573) and kubeadm's {CGROUP_V1_CHECK} "
            "preflight check fails there: boot the host with cgroup v2 (systemd.unified_cgroup_hierarchy=1 on the "
            "kernel command line), or set tke_allow_cgroup_v1: true to run the deprecated cgroup v1 (the kubelet "
            "with failCgroupV1: false, the check ignored)")


def cgroup_v1_refusal(version: str, hosts: list[str], allowed: bool) -> str:
    """The refusal of a release that does not run on cgroup v1 for the hosts that have it ("" when
    there is none: the release runs there, or the site allows it with tke_allow_cgroup_v1)."""
    if not hosts or allowed or not cgroup_v1_refused(version):
        return ""
    return f"{', '.join(hosts)}: {cgroup_v1_reason(version)}"


def preflight_ignores(version: str, allow_cgroup_v1: bool) -> list[str]:
    """kubeadm's preflight checks the join and upgrade commands ignore: SystemVerification where the
    release refuses cgroup v1 and the site allows it (what the host really runs is the precheck's)."""
    return [CGROUP_V1_CHECK] if allow_cgroup_v1 and cgroup_v1_refused(version) else []


def join_phases(version: str, control_plane: bool) -> list[str]:
    """The kubeadm join phases a node runs, in kubeadm's order for its release (TKE's order: the
    phases one by one, each recorded; wait-control-plane is left out: the roles wait themselves).
    In the local mode up to 1.34 the hidden phases run together between kubelet-start and
    control-plane-join (LOCAL_MODE_PHASES); from 1.35 they are phases of their own."""
    if minor(version) >= VISIBLE_JOIN_PHASES_FROM:
        if control_plane:
            return ["preflight", "control-plane-prepare all", "kubelet-start", "etcd-join", "kubelet-wait-bootstrap",
                    "control-plane-join all"]
        return ["preflight", "kubelet-start", "kubelet-wait-bootstrap"]
    if kubelet_local_mode(version):
        if control_plane:
            return ["preflight", "control-plane-prepare all", "kubelet-start", LOCAL_MODE_PHASES, "control-plane-join all"]
        return ["preflight", "kubelet-start", LOCAL_MODE_PHASES]
    if control_plane:
        return ["preflight", "control-plane-prepare all", "kubelet-start", "control-plane-join all"]
    return ["preflight", "kubelet-start"]


def _pairs(names):
    out = []
    for n in names:
        out += [f"pki/{n}.crt", f"pki/{n}.key"]
    return out


def phase_artifacts(command: str, phase: str, version: str, stacked_etcd: bool = True) -> list[str]:
    """Files a phase produces, relative to /etc/kubernetes unless absolute.

    An empty list means the phase acts on the cluster only (its result lives in the API
    server): it runs when its fingerprint is missing or differs.
    """
    m = minor(version)
    local_mode = m >= LOCAL_MODE_FROM
    etcd_manifest = ["manifests/etcd.yaml"] if stacked_etcd else []
    # NodeLocalCRISocket (beta, on from 1.34, KEP-4656): kubelet-start writes the node's own kubelet
    # configuration (its CRI endpoint) and merges it into config.yaml
    kubelet = ["/var/lib/kubelet/config.yaml", "/var/lib/kubelet/kubeadm-flags.env"] + \
        (["/var/lib/kubelet/instance-config.yaml"] if m >= 34 else [])
    control_plane = [f"manifests/{c}.yaml" for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")]
    etcd_pairs = _pairs(_ETCD_PAIRS) if stacked_etcd else []
    table = {
        ("init", "kubelet-start"): kubelet,
        ("init", "certs all"): _pairs(_CA_PAIRS + _LEAF_PAIRS) + etcd_pairs + ["pki/sa.key", "pki/sa.pub"],
        ("init", "kubeconfig all"): ["admin.conf", "kubelet.conf", "controller-manager.conf", "scheduler.conf"]
        + (["super-admin.conf"] if m >= 29 else []),
        ("init", "control-plane all"): control_plane,
        ("init", "etcd local"): ["manifests/etcd.yaml"],
        ("init", "upload-config all"): [],
        ("init", "upload-certs"): [],
        ("init", "mark-control-plane"): [],
        ("init", "bootstrap-token"): [],
        ("init", "addon all"): [],
        ("join", "preflight"): [],
        ("join", "control-plane-prepare all"): _pairs(_LEAF_PAIRS)
        + [p for p in etcd_pairs if not p.startswith("pki/etcd/ca")]
        + ["admin.conf", "controller-manager.conf", "scheduler.conf"] + control_plane,
        # the local mode's kubelet-start leaves kubelet.conf to the bootstrap kubelet-wait-bootstrap waits for
        ("join", "kubelet-start"): ([] if local_mode else ["kubelet.conf"]) + kubelet,
        ("join", "control-plane-join all"): [] if local_mode else etcd_manifest,
    }
    if local_mode:
        # etcd-join writes the member's manifest (a master with stacked etcd), kubelet-wait-bootstrap
        # waits for kubelet.conf (a worker passes stacked_etcd false: it runs no member)
        table[("join", LOCAL_MODE_PHASES)] = etcd_manifest + ["kubelet.conf"]
        table[("join", "etcd-join")] = etcd_manifest
        table[("join", "kubelet-wait-bootstrap")] = ["kubelet.conf"]
    try:
        return list(table[(command, phase)])
    except KeyError:
        known = ", ".join(f"{c} phase {p}" for c, p in table)
        raise ValueError(f"unknown phase 'kubeadm {command} phase {phase}' (known: {known})") from None


# Phases that must have completed (fingerprint recorded) before a phase may run, so that a
# failed phase stops the ones after it even when they are looped over in one task.
_PREREQUISITES = {
    ("init", "kubeconfig all"): ["certs all"],
    ("init", "control-plane all"): ["certs all"],
    ("init", "etcd local"): ["certs all"],
    ("init", "upload-config all"): ["control-plane all"],
    ("init", "mark-control-plane"): ["upload-config all"],
    ("init", "bootstrap-token"): ["upload-config all"],
    ("init", "addon all"): ["bootstrap-token"],
    ("join", "control-plane-prepare all"): ["preflight"],
    ("join", "kubelet-start"): ["preflight"],
    ("join", "control-plane-join all"): ["control-plane-prepare all", "kubelet-start"],
    ("join", LOCAL_MODE_PHASES): ["kubelet-start"],
    ("join", "etcd-join"): ["kubelet-start"],
    ("join", "kubelet-wait-bootstrap"): ["kubelet-start"],
}


def prerequisites(command: str, phase: str) -> list[str]:
    """Phases of the same command that must have completed before this one."""
    return list(_PREREQUISITES.get((command, phase), []))


def absolute(paths: list[str], kubernetes_dir: str = "/etc/kubernetes") -> list[str]:
    return [p if p.startswith("/") else f"{kubernetes_dir.rstrip('/')}/{p}" for p in paths]


# --- secrets: never in fingerprints, diffs or returned output ------------------------------
_SECRET_KEYS = ("token", "tlsBootstrapToken", "certificateKey")
# One key per line, YAML (`token: x`) or the JSON kubeadm_config writes (`"token": "x",`).
_SECRET_LINE = re.compile(r'^(\s*-?\s*"?(?:%s)"?:\s*)(\S.*?)(,?)$' % "|".join(_SECRET_KEYS), re.M)
_SECRET_WHOLE_LINE = re.compile(r'^\s*-?\s*"?(?:%s)"?:.*(?:\n|$)' % "|".join(_SECRET_KEYS), re.M)
_TRAILING_COMMA = re.compile(r",$", re.M)
_SECRET_FLAGS = ("--certificate-key", "--token", "--discovery-token", "--tls-bootstrap-token")
TOKEN_RE = re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b")
KEY_RE = re.compile(r"\b[a-f0-9]{64}\b")


def mask_config(text: str) -> str:
    """The configuration with secret values (bootstrap token, certificate key) replaced."""
    return _SECRET_LINE.sub(lambda m: m.group(1) + '"<secret>"' + m.group(3), text)


def strip_secrets(text: str) -> str:
    """The configuration without the lines holding secrets (for comparisons and fingerprints:
    whether a join credential is present, rotated or absent does not change the result). A line's
    final comma is dropped too: in JSON it only depends on whether a (secret) key follows."""
    return _TRAILING_COMMA.sub("", _SECRET_WHOLE_LINE.sub("", text))


def mask_args(args: list[str]) -> list[str]:
    out, hide = [], False
    for a in args:
        if hide:
            out.append("<secret>")
            hide = False
            continue
        name, eq, dummy = a.partition("=")
        if name in _SECRET_FLAGS:
            if eq:
                out.append(f"{name}=<secret>")
            else:
                out.append(a)
                hide = True
            continue
        out.append(a)
    return out


def redact(text: str) -> str:
    """kubeadm output with bootstrap tokens and certificate keys blanked out."""
    return KEY_RE.sub("<redacted>", TOKEN_RE.sub("<redacted>", text or ""))


def fingerprint(command: str, phase: str, config_text: str, args: list[str]) -> str:
    """sha256 over what a phase runs with: command, phase, config (secrets masked), arguments.

    Join credentials (token, certificate key) are not configuration of the result: a rotated
    token must not re-run the phases of a node that has joined.
    """
    h = hashlib.sha256()
    for part in (command, phase, strip_secrets(config_text or ""), "\0".join(mask_args(list(args)))):
        h.update(part.encode())
        h.update(b"\0\0")
    return h.hexdigest()


# Phases that check a node before its first join only: once recorded they never run again
# (kubeadm's join preflight fails on a node that has joined: its kubelet.conf exists).
RUN_ONCE = {("join", "preflight")}
# Phases that belong to a node's way in only: on a node whose join completed (the last phase of its
# list recorded) they do not run, also when never recorded: a master that joined under 1.32 has no
# record of the local mode's phases, and its etcd member exists (etcd-join would add it again).
JOIN_ONLY = {("join", "preflight"), ("join", LOCAL_MODE_PHASES), ("join", "etcd-join"), ("join", "kubelet-wait-bootstrap")}


def join_completed_by(phases: list[str]) -> set[str]:
    """The phases whose record proves that a node completed its join, for a node about to run this
    list: the final phase of the list of any supported release (a worker joined under 1.34 recorded
    local-mode, under 1.35 kubelet-wait-bootstrap), but none this list runs before its own end (a
    worker's kubelet-start was the final phase up to 1.32; in a later list it only starts a join)."""
    control_plane = "control-plane-join all" in phases
    finals = {join_phases(f"1.{m}.0", control_plane)[-1] for m in SUPPORTED_MINORS}
    return finals - set(phases[:-1])


def decide(missing: list[str], recorded: str | None, desired: str | None, force: bool = False,
           once: bool = False, joined: str = "") -> tuple[bool, str]:
    """Whether a phase must run, and why (pure: the module gathers the facts). desired None: the
    configuration is not written yet (check mode: an earlier task would write it). joined: for a
    JOIN_ONLY phase, the recorded final phase of a join that completed ("" when it did not)."""
    if force:
        return True, "forced"
    if joined:
        return False, f"the node completed its join ({joined} recorded)"
    if once and recorded is not None and not missing:
        return False, "runs only before the node's first join (recorded)"
    if missing:
        return True, "missing: " + ", ".join(missing)
    if recorded is None:
        return True, "never ran with this tool (no fingerprint recorded)"
    if desired is None:
        return True, "its configuration is not written yet (check mode: an earlier task would write it)"
    if recorded.strip() != desired:
        return True, "configuration changed (fingerprint differs)"
    return False, "artifacts present and configuration unchanged"


def argv(kubeadm: str, command: str, phase: str, config: str, args: list[str]) -> list[str]:
    if (command, phase) == ("join", LOCAL_MODE_PHASES):
        return [kubeadm, "join", "--config", config, "--skip-phases", ",".join(LOCAL_MODE_SKIP), *args]
    return [kubeadm, command, "phase", *phase.split(), "--config", config, *args]


def tail(text: str, lines: int = 25) -> str:
    return "\n".join((text or "").rstrip().splitlines()[-lines:])


def state_name(command: str, phase: str) -> str:
    """File name (under the fingerprint directory) recording a phase's fingerprint."""
    return f"{command}-{phase.replace(' ', '-')}.sha256"
