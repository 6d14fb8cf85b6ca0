"""Preflight checks: `join phase preflight` and the preflight of `upgrade apply|node` (v1.35).

cmd/kubeadm/app/preflight/checks.go (JoinNodeChecks, addCommonChecks, InitNodeChecks with
isSecondaryControlPlane, RunChecks, the checks' Name() and messages) and
cmd/kubeadm/app/cmd/phases/join/preflight.go (runPreflight: node checks, then discovery, then
for a control-plane node checkIfReadyForAdditionalControlPlane and the init node checks).

v1.35's checks: SystemVerification's cgroup rule (system-validators v1.12.1) and ContainerRuntimeVersion
(#134906): cli_v1_35.py has the facts and sources. They run where kubeadm 1.35 runs them among the checks
the double makes: join preflight (addCommonChecks: after the CRI check / Swap) and the upgrade preflight of
"upgrade apply|node" (RunUpgradeChecks). `init phase preflight` is not implemented (the collection does not
run it)."""
import ipaddress
import os
import re
import shutil
import socket
import subprocess
import sys

import cluster_api
import common
from common import CLI, STACK_HINT, Fail, out
import config_load
import host_cgroups


def _port_free(port):
    for family, addr in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind((addr, port))
            s.listen(1)
            return True
        except OSError:
            return False
        finally:
            s.close()
    return True


def _file_available(path):
    return [f"{path} already exists"] if os.path.exists(path) else []


def _check_name(kind, path):
    return f"{kind}-{path.replace('/', '-')}"


def _service_kubelet():
    """ServiceCheck{kubelet, CheckIfActive: false}: warnings only."""
    r = subprocess.run(["systemctl", "is-enabled", "kubelet.service"], capture_output=True, text=True, check=False)
    state = r.stdout.strip()
    if state in ("", "not-found") or "No such file" in r.stderr:
        return ["kubelet service does not exist"], []
    if state != "enabled":
        return ["kubelet service is not enabled, please run 'systemctl enable kubelet.service'"], []
    return [], []


def _swap():
    try:
        with open("/proc/swaps") as f:
            lines = f.read().splitlines()
    except OSError:
        return [], []
    if len(lines) > 1:
        return ["swap is supported for cgroup v2 only. The kubelet must be properly configured to use swap. Please "
                "refer to https://kubernetes.io/docs/concepts/architecture/nodes/#swap-memory, or disable swap on the "
                "node"], []
    return [], []


def _hostname(name):
    try:
        socket.getaddrinfo(name, None)
        return [], []
    except OSError as e:
        return [f'hostname "{name}" could not be reached', f'hostname "{name}": lookup {name}: {e}'], []


def _mem():
    with open("/proc/meminfo") as f:
        total_kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal:")))
    mb = total_kb // 1024
    return [], ([f"the system RAM ({mb} MB) is less than the minimum 1700 MB"] if mb < 1700 else [])


def _installed_version(binary, pattern):
    """(major, minor, patch) from `<binary> --version` (found on PATH, else in /usr/local/bin), None when the
    binary is not there or says no version."""
    path = shutil.which(binary) or f"/usr/local/bin/{binary}"
    try:
        run = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(pattern, getattr(run, "stdout", None) or "")
    return tuple(int(x) for x in m.groups()) if m else None


def kubelet_version():
    """The installed kubelet's version, as `kubelet --version` prints it ("Kubernetes v1.35.7")."""
    return _installed_version("kubelet", r"Kubernetes v(\d+)\.(\d+)\.(\d+)")


def containerd_version():
    """The installed containerd's version: `containerd --version` prints "containerd <module path> v2.0.0 <commit>"
    (Debian's build: "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1")."""
    return _installed_version("containerd", r"\sv?(\d+)\.(\d+)\.(\d+)")


def _validator_report():
    """The validators' report kubeadm flushes to stdout when SystemVerification has errors. Abridged: the real
    one also lists every kernel CONFIG_* option and each cgroup controller the KernelValidator and the
    CgroupsValidator check; the double prints the kernel release, the OS and the required v1 controllers."""
    lines = [f"KERNEL_VERSION: {os.uname().release}", "OS: Linux"]
    lines += [f"CGROUPS_{c}: enabled" for c in ("CPU", "CPUACCT", "CPUSET", "DEVICES", "FREEZER", "MEMORY", "PIDS")]
    return lines


def system_verification(kubelet):
    """SystemVerification's cgroup rule (CgroupsValidator of system-validators v1.12.1, cli_v1_35): on a cgroup
    v1 host one message, an error when the kubelet version is at least 1.35.0 (kubelet: (major, minor, patch) or
    None), else a warning; with an error kubeadm's check first prints the validators' report (checks.go
    SystemVerificationCheck: whether the error is then ignored or not). failCgroupV1 is not read."""
    if host_cgroups.unified():
        return [], []
    if kubelet is not None and tuple(kubelet) >= CLI.CGROUP_V1_ERROR_FROM:
        out("[preflight] The system verification failed. Printing the output from the verification:")
        for line in _validator_report():
            out(line)
        return [], [CLI.CGROUP_V1_MESSAGE]
    return [CLI.CGROUP_V1_MESSAGE], []


def container_runtime_version():
    """ContainerRuntimeVersion (1.35, a warning only): kubeadm asks the CRI for the RuntimeConfig RPC; the double
    has no CRI to ask and reads containerd's version instead (the RPC is there from containerd 2.0.0). No
    containerd found: the warning too. The CRI client's klog error line before it is not printed."""
    v = containerd_version()
    if v is None or v < CLI.CONTAINERD_RUNTIME_CONFIG_FROM:
        return [CLI.CONTAINER_RUNTIME_VERSION_WARNING], []
    return [], []


def run_checks(checks, ignore):
    """preflight.RunChecks: warnings (and ignored errors) printed, errors collected and fatal."""
    errs = ""
    for name, check in checks:
        warnings, errors = check()
        if "all" in ignore or name.lower() in ignore:
            warnings, errors = warnings + errors, []
        for w in warnings:
            print(f"\t[WARNING {name}]: {w}", file=sys.stderr, flush=True)
            common.keep_warning(f"[WARNING {name}]: {w}", preflight=True)
        for e in errors:
            errs += f"\t[ERROR {name}]: {e}\n"
    if errs:
        report = ("[preflight] Some fatal errors occurred:\n" + errs + "[preflight] If you know what you are doing, "
                  "you can make a check non-fatal with `--ignore-preflight-errors=...`")
        if CLI.PREFLIGHT_REPORT_IN_ERROR:
            raise Fail(report)
        print(report, file=sys.stderr, flush=True)
        raise Fail("preflight checks failed")


def join_preflight(join, node, ignore):
    cp = join.get("controlPlane")
    out("[preflight] Running pre-flight checks")
    run_checks([("IsPrivilegedUser", lambda: ([], [] if os.geteuid() == 0 else ["user is not running as root"]))],
               ignore)
    checks = [(_check_name("FileAvailable", p), lambda p=p: ([], _file_available(p)))
              for p in (f"{common.K8S}/kubelet.conf", f"{common.K8S}/bootstrap-kubelet.conf")]
    v135 = hasattr(CLI, "CGROUP_V1_MESSAGE")   # the 1.35 checks (addCommonChecks' order)
    checks += [("ContainerRuntimeVersion", container_runtime_version)] if v135 else []
    checks += [("Swap", _swap)]
    checks += [("SystemVerification", lambda: system_verification(kubelet_version()))] if v135 else []
    checks += [("Hostname", lambda: _hostname(node["name"])), ("Service-Kubelet", _service_kubelet),
               ("Port-10250", lambda: ([], [] if _port_free(10250) else ["Port 10250 is in use"]))]
    if not cp:
        ca = join.get("caCertPath", f"{common.PKI}/ca.crt")
        checks.append((_check_name("FileAvailable", ca), lambda: ([], _file_available(ca))))
    endpoint = ((join.get("discovery") or {}).get("bootstrapToken") or {}).get("apiServerEndpoint", "")
    host = endpoint.rsplit(":", 1)[0].strip("[]")
    if config_load.ip_ok(host):
        path = "/proc/sys/net/ipv4/ip_forward" if ipaddress.ip_address(host).version == 4 else \
            "/proc/sys/net/ipv6/conf/default/forwarding"

        def forwarding():
            try:
                with open(path) as f:
                    got = f.read(1)
            except OSError:
                return [], [f"{path} does not exist"]
            return [], [] if got == "1" else [f"{path} contents are not set to 1"]
        checks.append((_check_name("FileContent", path), forwarding))
    run_checks(checks, ignore)
    if not cp:
        return
    dummy, dummy, cluster, dummy = cluster_api.discover(join)
    if not cluster.get("controlPlaneEndpoint"):
        raise Fail("One or more conditions for hosting a new control plane instance is not satisfied.\n\n"
                   "unable to add a new control plane instance to a cluster that doesn't have a stable "
                   "controlPlaneEndpoint address\n\nPlease ensure that:\n* The cluster has a stable "
                   "controlPlaneEndpoint address.\n* The certificates that must be shared among control plane "
                   "instances are provided.\n")
    out("[preflight] Running pre-flight checks before initializing the new control plane instance")
    port = int(((cp.get("localAPIEndpoint") or {}).get("bindPort")) or 6443)
    checks = [("NumCPU", lambda: ([], [] if (os.cpu_count() or 1) >= 2 else
                                  [f"the number of available CPUs {os.cpu_count()} is less than the required 2"])),
              ("Mem", _mem)]
    ver = str(cluster.get("kubernetesVersion", ""))
    m = re.match(r"^v?1\.(\d+)\.", ver)
    kubeadm_minor = int(CLI.VERSION.split(".")[1])
    checks.append(("KubernetesVersion", lambda: ([f"Kubernetes version is greater than kubeadm version. Please "
                                                  f"consider to upgrade kubeadm. Kubernetes version: {ver.lstrip('v')}. "
                                                  f"Kubeadm version: 1.{kubeadm_minor}.x"]
                                                 if m and int(m.group(1)) > kubeadm_minor else [], [])))
    for p in (port, 10259, 10257):
        checks.append((f"Port-{p}", lambda p=p: ([], [] if _port_free(p) else [f"Port {p} is in use"])))
    for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"):
        path = f"{common.K8S}/manifests/{c}.yaml"
        checks.append((_check_name("FileAvailable", path), lambda path=path: ([], _file_available(path))))
    etcd = cluster.get("etcd") or {}
    if etcd.get("local") is not None and "external" not in etcd:
        for p in (2379, 2380):
            checks.append((f"Port-{p}", lambda p=p: ([], [] if _port_free(p) else [f"Port {p} is in use"])))
        data = (etcd.get("local") or {}).get("dataDir", "/var/lib/etcd")
        checks.append((_check_name("DirAvailable", data),
                       lambda: ([], [f"{data} is not empty"] if os.path.isdir(data) and os.listdir(data) else [])))
    elif etcd.get("external") and not cp.get("certificateKey"):
        for k in ("caFile", "certFile", "keyFile"):
            f = etcd["external"].get(k)
            if f:
                checks.append(("ExternalEtcdClientCertificates",
                               lambda f=f: ([], [] if os.path.exists(f) else [f"{f} doesn't exist"])))
    run_checks(checks, ignore)


def upgrade_preflight(fl):
    """The preflight phase of "upgrade apply|node" in 1.35 (RunUpgradeChecks): SystemVerification with the
    installed kubelet's minor + 1 ("the user will upgrade the kubelet too", PR #134744) and
    ContainerRuntimeVersion (the order of the two is not confirmed); --ignore-preflight-errors honoured."""
    ignore = config_load.ignore_preflight_errors(fl.get("ignore-preflight-errors") or [], {})
    out("[upgrade/preflight] Running preflight checks")
    installed = kubelet_version()
    assumed = None if installed is None else (installed[0], installed[1] + 1, 0)
    try:
        run_checks([("SystemVerification", lambda: system_verification(assumed)),
                    ("ContainerRuntimeVersion", container_runtime_version)], ignore)
    except Fail as e:
        raise Fail(f"error execution phase preflight: {e}" + STACK_HINT) from None
