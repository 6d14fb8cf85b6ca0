"""kubeadm and kubelet 1.35 in the test doubles: the release's gates (WaitForAllControlPlaneComponents gone,
ControlPlaneKubeletLocalMode locked on), join phases (kubelet-wait-bootstrap a command, control-plane-join etcd
hidden), etcd.external.httpEndpoints, kubeadm-flags.env without --pod-infra-container-image (and the
post-upgrade cleanup), the preflight checks SystemVerification (cgroup v1) and ContainerRuntimeVersion at join
and upgrade, and the kubelet's side (--version, the removed flag, failCgroupV1). The facts and their sources
are in tests/kubeadm_double/cli_v1_35.py. On the controller, no test hosts: the host's cgroup version and the
installed kubelet's and containerd's versions are replaced with monkeypatch."""
import os

import pytest
import yaml

from harness.kubeadm_double import (CRI, init_config, join_config, joining_host, load_kubelet,
                                    main_error as _fail)

NEEDS_CONFIG = "the double needs --config (the collection always passes one)"
STACK_HINT = "\nTo see the stack trace of this error execute with --v=5 or higher"
CGROUP_V1 = ("cgroups v1 support is deprecated and will be removed in a future release. Please migrate to cgroups v2. "
             "To explicitly enable cgroups v1 support for kubelet v1.35 or newer, you must set the kubelet "
             "configuration option 'FailCgroupV1' to 'false'. You must also explicitly skip this validation. For more "
             "information, see https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1")
RUNTIME_CONFIG = ("You must update your container runtime to a version that supports the CRI method RuntimeConfig. "
                  "Falling back to using cgroupDriver from kubelet config will be removed in 1.36. For more "
                  "information, see https://git.k8s.io/enhancements/keps/sig-node/4033-group-driver-detection-over-cri")
FATAL_TAIL = ("[preflight] If you know what you are doing, you can make a check non-fatal with "
              "`--ignore-preflight-errors=...`\n")
KUBELET_REFUSAL = ('E kubelet: "command failed" err="failed to validate kubelet configuration, error: kubelet is '
                   "configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be "
                   'removed in a future release, path: &TypeMeta{Kind:,APIVersion:,}"\n')


def _init(tmp_path, version="v1.35.7", **kw):
    return init_config(tmp_path, version, **kw)


# ---------------------------------------------------------------- the release's table
def test_the_1_35_table(d135):
    cli = d135.CLI
    assert (cli.VERSION, cli.ETCD_TAG, cli.MIN_CONTROL_PLANE) == ("v1.35.7", "3.6.6-0", (1, 34))
    assert cli.FEATURE_GATES == {"ControlPlaneKubeletLocalMode", "NodeLocalCRISocket", "RootlessControlPlane"}
    assert cli.GATE_DEFAULTS == {"ControlPlaneKubeletLocalMode": True, "NodeLocalCRISocket": True}
    assert cli.JOIN_WORKFLOW == ("preflight", "control-plane-prepare", "check-etcd", "kubelet-start", "etcd-join",
                                 "kubelet-wait-bootstrap", "control-plane-join", "wait-control-plane")
    assert "1.35" in d135.acting.ACTS_AS
    # apply and node take --ignore-preflight-errors (their 1.35 preflight honours it)
    assert "ignore-preflight-errors" in cli.UPGRADE["apply"] and "ignore-preflight-errors" in cli.UPGRADE["node"]


def test_wait_for_all_control_plane_components_is_an_unknown_gate_of_1_35(d134, d135, tmp_path):
    path = _init(tmp_path, featureGates={"WaitForAllControlPlaneComponents": True})
    with pytest.raises(d135.Fail) as e:
        d135.config_load.load_config(path, "init")
    assert str(e.value) == ('featureGates: Invalid value: map[string]bool{"WaitForAllControlPlaneComponents":true}: '
                            "WaitForAllControlPlaneComponents is not a valid feature name." + STACK_HINT)
    assert d134.config_load.load_config(_init(tmp_path, "v1.34.10", featureGates={"WaitForAllControlPlaneComponents": True}),
                                        "init")["ClusterConfiguration"]["featureGates"] == {"WaitForAllControlPlaneComponents": True}
    with pytest.raises(d135.Fail, match="control plane version >= 1.34.0. Current version: v1.33.13"):
        d135.config_load.load_config(_init(tmp_path, "v1.33.13"), "init")


def test_the_local_mode_gate_is_locked_on_in_1_35(d134, d135):
    off = {"featureGates": {"ControlPlaneKubeletLocalMode": False}}
    assert d135.config_load.local_mode(off) is True
    assert d134.config_load.local_mode(off) is False
    assert d135.config_load.gate_on({}, "WaitForAllControlPlaneComponents") is False    # no such gate: never on, no crash


def test_etcd_external_http_endpoints_are_a_field_of_1_35(d134, d135, tmp_path):
    external = {"external": {"endpoints": ["https://192.0.2.30:2379"], "httpEndpoints": ["http://192.0.2.30:2381"],
                             "caFile": "/etc/etcd/ca.crt", "certFile": "/etc/etcd/c.crt", "keyFile": "/etc/etcd/c.key"}}
    warnings = tmp_path / "warnings.log"
    docs = d135.config_load.load_config(_init(tmp_path, etcd=external), "init")
    assert docs["ClusterConfiguration"]["etcd"]["external"]["httpEndpoints"] == ["http://192.0.2.30:2381"]
    assert not warnings.exists()
    docs = d134.config_load.load_config(_init(tmp_path, "v1.34.10", etcd=external), "init")
    assert "httpEndpoints" not in docs["ClusterConfiguration"]["etcd"]["external"]
    assert ('error unmarshaling configuration schema.GroupVersionKind{Group:"kubeadm.k8s.io", Version:"v1beta4", '
            'Kind:"ClusterConfiguration"}: strict decoding error: unknown field "etcd.external.httpEndpoints"') \
        in warnings.read_text()
    with pytest.raises(d135.Fail, match="json: cannot unmarshal string into Go struct field ExternalEtcd"):
        d135.config_load.load_config(_init(tmp_path, etcd={"external": {"endpoints": ["https://e:2379"], "httpEndpoints": "x"}}),
                                     "init")


# ---------------------------------------------------------------- join phases
def test_kubelet_wait_bootstrap_is_a_join_phase_command_of_1_35(d134, d135):
    argv = ["join", "phase", "kubelet-wait-bootstrap", "--cri-socket", CRI, "--dry-run"]
    assert _fail(d134, argv) == 'unknown command "kubelet-wait-bootstrap" for "kubeadm join phase"'
    assert _fail(d135, argv) == NEEDS_CONFIG
    assert _fail(d135, ["join", "phase", "kubelet-wait-bootstrap", "--node-name", "w1"]) == \
        "unknown flag: --node-name" + STACK_HINT


def test_control_plane_join_etcd_is_hidden_in_1_35_but_named_in_skip_phases(d134, d135):
    argv = ["join", "phase", "control-plane-join", "etcd", "--control-plane"]
    assert _fail(d134, argv) == NEEDS_CONFIG
    assert _fail(d135, argv) == 'unknown command "etcd" for "kubeadm join phase control-plane-join"'
    assert _fail(d135, ["join", "phase", "control-plane-join", "all", "--control-plane"]) == NEEDS_CONFIG
    skip = ["join", "--config", "/nonexistent.yaml", "--skip-phases"]
    assert _fail(d135, skip + ["control-plane-join/etcd,preflight"]).startswith(
        'unable to read config from "/nonexistent.yaml"')
    assert _fail(d135, skip + ["control-plane-join/bogus"]) == "invalid phase name: control-plane-join/bogus"


def _discovered(d, monkeypatch, **cluster):
    monkeypatch.setattr(d.cluster_api, "discover", lambda join: ("https://api.tke.com:6443", b"CA", {
        "kubernetesVersion": "v1.35.7", "controlPlaneEndpoint": "api.tke.com:6443", **cluster}, {}))


def test_kubelet_wait_bootstrap_runs_and_control_plane_join_adds_no_member_in_1_35(d135, tmp_path, monkeypatch):
    """With the gate set to false in the cluster's configuration: locked on, so still the local mode."""
    _discovered(d135, monkeypatch, featureGates={"ControlPlaneKubeletLocalMode": False})
    ran = []
    monkeypatch.setattr(d135.cmd_join, "wait_bootstrap", lambda: ran.append("wait-bootstrap"))
    monkeypatch.setattr(d135.cmd_join, "join_stacked_etcd", lambda *a: ran.append("member added"))
    monkeypatch.setattr(d135.cmd_init, "mark_control_plane", lambda *a: ran.append("marked"))
    docs = d135.config_load.load_config(join_config(tmp_path, control_plane=True), "join")
    d135.main(["join", "phase", "kubelet-wait-bootstrap", "--config", join_config(tmp_path, control_plane=True)])
    assert ran == ["wait-bootstrap"]
    d135.cmd_join.run_join("control-plane-join all", {}, docs)
    assert ran == ["wait-bootstrap", "marked"]
    d135.cmd_join.run_join("etcd-join", {}, docs)
    assert ran == ["wait-bootstrap", "marked", "member added"]


def test_join_wait_control_plane_of_1_35_waits_on_masters_only(d135, tmp_path, monkeypatch, capsys):
    def no_discovery(join):
        raise AssertionError("a worker's wait-control-plane discovers nothing")
    monkeypatch.setattr(d135.cluster_api, "discover", no_discovery)
    d135.cmd_join.run_join("wait-control-plane", {}, d135.config_load.load_config(join_config(tmp_path), "join"))
    assert capsys.readouterr().out == ""
    _discovered(d135, monkeypatch)
    with pytest.raises(d135.Fail) as e:
        d135.cmd_join.run_join("wait-control-plane", {}, d135.config_load.load_config(join_config(tmp_path, control_plane=True), "join"))
    assert str(e.value) == "the double does not wait for the control-plane components (the collection waits itself)"


# ---------------------------------------------------------------- kubeadm-flags.env
@pytest.fixture
def kubelet_dir(tmp_path, monkeypatch):
    def prepare(d):
        k = tmp_path / "kubelet"
        k.mkdir(exist_ok=True)
        monkeypatch.setattr(d.common, "KUBELET_DIR", str(k))
        monkeypatch.setattr(d.kubelet_files.subprocess, "run", lambda *a, **kw: d.kubelet_files.subprocess.CompletedProcess(a, 1))  # no systemd
        return k
    return prepare


def _node(**kubelet_args):
    return {"name": "w1", "address": "192.0.2.21", "port": 6443, "cri": CRI, "kubelet_args": kubelet_args}


def test_kubeadm_flags_env_has_no_pod_infra_container_image_from_1_35(d134, d135, kubelet_dir):
    k = kubelet_dir(d135)
    d135.kubelet_files.write_kubelet_files({}, _node(), "registry.tke.com/library", {"kubernetesVersion": "v1.35.7"})
    assert (k / "kubeadm-flags.env").read_text() == 'KUBELET_KUBEADM_ARGS=""\n'
    d135.kubelet_files.write_kubelet_files({}, _node(**{"node-ip": "192.0.2.21", "register-with-taints": "a=b:NoSchedule"}),
                                           "registry.tke.com/library", {"kubernetesVersion": "v1.35.7"})
    assert (k / "kubeadm-flags.env").read_text() == \
        'KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.21 --register-with-taints=a=b:NoSchedule"\n'
    k = kubelet_dir(d134)
    d134.kubelet_files.write_kubelet_files({}, _node(), "registry.tke.com/library", {"kubernetesVersion": "v1.34.10"})
    assert (k / "kubeadm-flags.env").read_text() == \
        'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.tke.com/library/pause:3.9"\n'


# ---------------------------------------------------------------- the host's cgroups, the installed versions
def _mountinfo(tmp_path, *mounts):
    path = tmp_path / "mountinfo"
    path.write_text("".join(f"{30 + i} 1 0:{20 + i} / {point} rw,nosuid - {fstype} {fstype} rw\n"
                            for i, (point, fstype) in enumerate(mounts)))
    return str(path)


def test_the_cgroup_version_is_read_from_the_mount_at_sys_fs_cgroup(d135, tmp_path):
    unified = d135.host_cgroups.unified
    none = str(tmp_path / "absent")
    assert unified(_mountinfo(tmp_path, ("/sys", "sysfs"), ("/sys/fs/cgroup", "cgroup2")), none) is True
    assert unified(_mountinfo(tmp_path, ("/sys/fs/cgroup", "tmpfs"), ("/sys/fs/cgroup/cpu", "cgroup"),
                              ("/sys/fs/cgroup/unified", "cgroup2")), none) is False
    # the mount visible there is the last one listed
    assert unified(_mountinfo(tmp_path, ("/sys/fs/cgroup", "cgroup2"), ("/sys/fs/cgroup", "tmpfs")), none) is False
    assert unified(_mountinfo(tmp_path, ("/sys", "sysfs")), none) is False
    mounts = tmp_path / "mounts"
    mounts.write_text("sysfs /sys sysfs rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n")
    assert unified(none, str(mounts)) is True          # no mountinfo: /proc/mounts
    mounts.write_text("tmpfs /sys/fs/cgroup tmpfs ro 0 0\ncgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n")
    assert unified(none, str(mounts)) is False
    assert unified(none, none) is False


def test_installed_versions_come_from_the_binaries_on_path(d135, tmp_path, monkeypatch):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, text in (("kubelet", "Kubernetes v1.34.10"),
                       ("containerd", "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1")):
        (bin_ / name).write_text(f"#!/bin/sh\necho '{text}'\n")
        (bin_ / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    assert d135.preflight.kubelet_version() == (1, 34, 10)
    assert d135.preflight.containerd_version() == (1, 6, 20)
    (bin_ / "containerd").write_text("#!/bin/sh\necho 'containerd github.com/containerd/containerd/v2 v2.1.4 75cb2b7'\n")
    assert d135.preflight.containerd_version() == (2, 1, 4)
    # Debian's 2.1.9 (the fixture pack's containerd for 1.35), as it prints itself
    (bin_ / "containerd").write_text("#!/bin/sh\necho 'containerd github.com/containerd/containerd/v2 2.1.9+unknown '\n")
    assert d135.preflight.containerd_version() == (2, 1, 9)
    (bin_ / "kubelet").write_text("#!/bin/sh\nexit 1\n")
    assert d135.preflight.kubelet_version() is None


# ---------------------------------------------------------------- preflight: SystemVerification, ContainerRuntimeVersion
@pytest.fixture
def host(d135, tmp_path, monkeypatch):
    """A joining worker whose every other check passes: cgroup v1, kubelet 1.35.7, containerd 1.7.24 unless
    set otherwise."""
    return joining_host(d135, tmp_path, monkeypatch, unified=False, kubelet=(1, 35, 7), containerd=(1, 7, 24))


REPORT = ("[preflight] The system verification failed. Printing the output from the verification:\n"
          "KERNEL_VERSION: 6.1.0-40-amd64\nOS: Linux\nCGROUPS_CPU: enabled\nCGROUPS_CPUACCT: enabled\n"
          "CGROUPS_CPUSET: enabled\nCGROUPS_DEVICES: enabled\nCGROUPS_FREEZER: enabled\nCGROUPS_MEMORY: enabled\n"
          "CGROUPS_PIDS: enabled\n")


def test_join_preflight_of_1_35_refuses_cgroup_v1_for_a_1_35load_kubelet(d135, host, tmp_path, capsys):
    path = join_config(tmp_path)
    assert _fail(d135, ["join", "phase", "preflight", "--config", path]) == \
        "error execution phase preflight: preflight checks failed" + STACK_HINT
    out, err = capsys.readouterr()
    assert out == "[preflight] Running pre-flight checks\n" + REPORT
    assert err == (f"\t[WARNING ContainerRuntimeVersion]: {RUNTIME_CONFIG}\n"
                   "[preflight] Some fatal errors occurred:\n"
                   f"\t[ERROR SystemVerification]: {CGROUP_V1}\n" + FATAL_TAIL)


@pytest.mark.parametrize("how", ["flag", "configuration", "all"])
def test_system_verification_is_ignorable_by_name(d135, host, tmp_path, capsys, how):
    argv = ["join", "phase", "preflight", "--config"]
    if how == "flag":
        d135.main(argv + [join_config(tmp_path), "--ignore-preflight-errors=SystemVerification"])
    elif how == "configuration":
        d135.main(argv + [join_config(tmp_path, ignore=["systemverification"])])
    else:
        d135.main(argv + [join_config(tmp_path), "--ignore-preflight-errors=all"])
    out, err = capsys.readouterr()
    # the check itself printed its report (it has an error); RunChecks made the error a warning
    assert out == "[preflight] Running pre-flight checks\n" + REPORT
    assert err == (f"\t[WARNING ContainerRuntimeVersion]: {RUNTIME_CONFIG}\n"
                   f"\t[WARNING SystemVerification]: {CGROUP_V1}\n")


@pytest.mark.parametrize("kubelet", [(1, 34, 10), None])
def test_an_older_or_unknown_kubelet_gets_a_warning(d135, host, tmp_path, capsys, kubelet):
    host.update(kubelet=kubelet, containerd=(2, 0, 0))
    d135.main(["join", "phase", "preflight", "--config", join_config(tmp_path)])
    out, err = capsys.readouterr()
    assert out == "[preflight] Running pre-flight checks\n"
    assert err == f"\t[WARNING SystemVerification]: {CGROUP_V1}\n"


def test_a_cgroup_v2_host_with_containerd_2_passes_silently(d135, host, tmp_path, capsys):
    host.update(unified=True, containerd=(2, 1, 4))
    d135.main(["join", "phase", "preflight", "--config", join_config(tmp_path)])
    assert capsys.readouterr() == ("[preflight] Running pre-flight checks\n", "")


def test_containerd_missing_is_the_runtime_warning_too(d135, host, tmp_path, capsys):
    host.update(unified=True, containerd=None)
    d135.main(["join", "phase", "preflight", "--config", join_config(tmp_path)])
    assert capsys.readouterr().err == f"\t[WARNING ContainerRuntimeVersion]: {RUNTIME_CONFIG}\n"


def test_kubeadm_join_whole_runs_the_1_35_preflight(d135, host, tmp_path, capsys):
    skip = "control-plane-prepare,check-etcd,kubelet-start,etcd-join,kubelet-wait-bootstrap,control-plane-join," \
           "wait-control-plane"
    assert _fail(d135, ["join", "--config", join_config(tmp_path), "--skip-phases", skip]) == \
        "error execution phase preflight: preflight checks failed" + STACK_HINT
    assert f"\t[ERROR SystemVerification]: {CGROUP_V1}\n" in capsys.readouterr().err


def test_join_preflight_of_1_34_has_neither_check(d134, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(d134.common, "K8S", str(tmp_path / "k8s"))
    monkeypatch.setattr(d134.common, "PKI", str(tmp_path / "k8s" / "pki"))
    monkeypatch.setattr(d134.os, "geteuid", lambda: 0)
    for name in ("_swap", "_service_kubelet"):
        monkeypatch.setattr(d134.preflight, name, lambda: ([], []))
    monkeypatch.setattr(d134.preflight, "_hostname", lambda name: ([], []))
    monkeypatch.setattr(d134.preflight, "_port_free", lambda port: True)
    monkeypatch.setattr(d134.host_cgroups, "unified", lambda: False)
    d134.main(["join", "phase", "preflight", "--config", join_config(tmp_path)])
    assert capsys.readouterr() == ("[preflight] Running pre-flight checks\n", "")


# ---------------------------------------------------------------- upgrade: preflight and post-upgrade
@pytest.fixture
def worker_upgrade(tmp_path, monkeypatch, kubelet_dir):
    """`kubeadm upgrade node` on a worker: the cluster's configuration and kubelet-config answered here."""
    def prepare(d, version, env):
        k = kubelet_dir(d)
        (k / "kubeadm-flags.env").write_text(env)
        (k / "instance-config.yaml").write_text(f'containerRuntimeEndpoint: "{CRI}"\n')
        monkeypatch.setattr(d.common, "K8S", str(tmp_path / "k8s"))
        (tmp_path / "k8s").mkdir(exist_ok=True)
        monkeypatch.setattr(d.cmd_upgrade, "cluster_configuration", lambda kubeconfig: {"kubernetesVersion": version})
        monkeypatch.setattr(d.cluster_api, "cluster_get", lambda *a: {"data": {"kubelet": yaml.safe_dump(
            {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "failCgroupV1": False})}})
        return k
    return prepare


ENV_1_34 = 'KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.21 --pod-infra-container-image=r/pause:3.10 --provider-id=x"\n'


def test_upgrade_node_to_1_35_refuses_cgroup_v1_for_the_installed_kubelets_next_minor(
        d135, host, worker_upgrade, capsys):
    k = worker_upgrade(d135, "v1.35.7", ENV_1_34)
    host.update(kubelet=(1, 34, 10), containerd=(2, 0, 1))
    assert _fail(d135, ["upgrade", "node"]) == "error execution phase preflight: preflight checks failed" + STACK_HINT
    out, err = capsys.readouterr()
    assert out.endswith("[upgrade/preflight] Running preflight checks\n" + REPORT)
    assert err == "[preflight] Some fatal errors occurred:\n" f"\t[ERROR SystemVerification]: {CGROUP_V1}\n" + FATAL_TAIL
    assert (k / "kubeadm-flags.env").read_text() == ENV_1_34          # nothing done


def test_upgrade_node_to_1_35_ignoring_the_check_removes_pod_infra_container_image(
        d135, host, worker_upgrade, tmp_path, capsys):
    k = worker_upgrade(d135, "v1.35.7", ENV_1_34)
    host.update(kubelet=(1, 34, 10))
    d135.main(["upgrade", "node", "--ignore-preflight-errors=SystemVerification"])
    out, err = capsys.readouterr()
    assert (k / "kubeadm-flags.env").read_text() == 'KUBELET_KUBEADM_ARGS="--node-ip=192.0.2.21 --provider-id=x"\n'
    backups = list((tmp_path / "k8s" / "tmp").glob("kubeadm-kubelet-env*"))
    assert len(backups) == 1 and (backups[0] / "kubeadm-flags.env").read_text() == ENV_1_34
    assert out.endswith(f'[kubelet-start] Writing kubelet configuration to file "{k}/config.yaml"\n'
                        f"[upgrade] Backing up kubelet env file to {backups[0]}/kubeadm-flags.env\n"
                        f'[kubelet-start] Writing kubelet environment file with flags to file "{k}/kubeadm-flags.env"\n'
                        "[upgrade] The configuration for this node was successfully updated!\n"
                        "[upgrade] Now you should go ahead and upgrade the kubelet package using your package "
                        "manager.\n")
    assert err.startswith(f"\t[WARNING SystemVerification]: {CGROUP_V1}\n"
                          f"\t[WARNING ContainerRuntimeVersion]: {RUNTIME_CONFIG}\nW")
    assert err.endswith(f"kubeadm-double] Using temporary directory {backups[0]} for kubelet env file. To override it "
                        "set the environment variable KUBEADM_UPGRADE_DRYRUN_DIR\n")
    assert not (tmp_path / "warnings.log").exists()     # no configuration warning
    # the preflight's warnings, kept for the tests
    assert (tmp_path / "preflight.log").read_text() == (f"[WARNING SystemVerification]: {CGROUP_V1}\n"
                                                        f"[WARNING ContainerRuntimeVersion]: {RUNTIME_CONFIG}\n")
    # an env file without the flag (a node made by 1.35) is rewritten as it was
    (k / "kubeadm-flags.env").write_text('KUBELET_KUBEADM_ARGS=""\n')
    host.update(unified=True, containerd=(2, 0, 0))
    d135.main(["upgrade", "node"])
    assert (k / "kubeadm-flags.env").read_text() == 'KUBELET_KUBEADM_ARGS=""\n'
    assert len(list((tmp_path / "k8s" / "tmp").glob("kubeadm-kubelet-env*"))) == 2


def test_upgrade_apply_takes_its_preflight_and_ignore_all_alone(d135, host, worker_upgrade):
    worker_upgrade(d135, "v1.34.10", ENV_1_34)
    assert _fail(d135, ["upgrade", "apply", "v1.35.7", "--ignore-preflight-errors=all,SystemVerification"]) == \
        ('ignore-preflight-errors: Invalid value: "all,systemverification": don\'t specify individual checks if '
         "'all' is used" + STACK_HINT)
    host.update(kubelet=(1, 35, 7))
    assert _fail(d135, ["upgrade", "apply", "v1.35.7", "--yes"]) == \
        "error execution phase preflight: preflight checks failed" + STACK_HINT


def test_upgrade_node_of_1_34_has_no_preflight_and_keeps_the_flag(d134, worker_upgrade, monkeypatch, capsys):
    k = worker_upgrade(d134, "v1.34.10", ENV_1_34)
    monkeypatch.setattr(d134.host_cgroups, "unified", lambda: False)
    d134.main(["upgrade", "node"])
    assert "preflight" not in capsys.readouterr().out
    assert (k / "kubeadm-flags.env").read_text() == ENV_1_34


# ---------------------------------------------------------------- the kubelet double
def _exit(kubelet, argv):
    with pytest.raises(SystemExit) as e:
        kubelet.main(argv)
    return e.value.code


@pytest.mark.parametrize("version,text", [("1.35", "Kubernetes v1.35.7\n"), ("1.34", "Kubernetes v1.34.10\n")])
def test_kubelet_version(version, text, monkeypatch, capsys):
    assert _exit(load_kubelet(version, monkeypatch), ["--version"]) == 0
    assert capsys.readouterr() == (text, "")


def test_the_1_35_kubelet_refuses_pod_infra_container_image(monkeypatch, capsys):
    assert _exit(load_kubelet("1.35", monkeypatch), ["--config=/x", "--pod-infra-container-image=r/pause:3.10.1"]) == 1
    assert capsys.readouterr().err == ('E kubelet: "command failed" err="failed to parse kubelet flag: unknown flag: '
                                       '--pod-infra-container-image"\n')
    assert load_kubelet("1.34", monkeypatch).parse(["--pod-infra-container-image=r/pause:3.10"]) == \
        {"pod-infra-container-image": "r/pause:3.10"}


@pytest.fixture
def kubelet_config(tmp_path):
    def write(**fields):
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                                        **fields}))
        return [f"--config={path}", f"--kubeconfig={tmp_path}/none.conf",
                f"--bootstrap-kubeconfig={tmp_path}/none-bootstrap.conf"]
    return write


NO_KUBECONFIG = "E kubelet: failed to run Kubelet: unable to load bootstrap kubeconfig: stat "


def test_the_1_35_kubelet_refuses_cgroup_v1_unless_fail_cgroup_v1_is_false(monkeypatch, capsys, kubelet_config,
                                                                           tmp_path):
    kubelet = load_kubelet("1.35", monkeypatch)
    monkeypatch.setattr(kubelet.host_cgroups, "unified", lambda: False)
    for fields in ({}, {"failCgroupV1": True}):
        assert _exit(kubelet, kubelet_config(**fields)) == 1
        assert capsys.readouterr().err == KUBELET_REFUSAL
    # failCgroupV1: false: past the validation (it stops next at the missing kubeconfig), with the warning
    assert _exit(kubelet, kubelet_config(failCgroupV1=False)) == 1
    assert capsys.readouterr().err == (
        "W kubelet: cgroup v1 support is unsupported and will be removed in a future release. Please migrate to "
        "cgroup v2. More information at https://git.k8s.io/enhancements/keps/sig-node/5573-remove-cgroup-v1\n"
        f"{NO_KUBECONFIG}{tmp_path}/none-bootstrap.conf: no such file or directory\n")
    monkeypatch.setattr(kubelet.host_cgroups, "unified", lambda: True)
    assert _exit(kubelet, kubelet_config()) == 1
    assert capsys.readouterr().err == f"{NO_KUBECONFIG}{tmp_path}/none-bootstrap.conf: no such file or directory\n"


def test_the_1_34_kubelet_runs_on_cgroup_v1(monkeypatch, capsys, kubelet_config, tmp_path):
    kubelet = load_kubelet("1.34", monkeypatch)
    monkeypatch.setattr(kubelet.host_cgroups, "unified", lambda: False)
    assert _exit(kubelet, kubelet_config()) == 1
    assert capsys.readouterr().err == f"{NO_KUBECONFIG}{tmp_path}/none-bootstrap.conf: no such file or directory\n"
