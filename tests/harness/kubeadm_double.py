"""Put the kubeadm/kubelet test doubles (tests/kubeadm_double) and the kube-apiserver test double
(tests/apiserver_double) on test hosts: the test's job, never a role's. The roles only know "the
kubeadm binary at tke_kubeadm_bin" (/usr/local/bin); the kubelet double starts the
kube-apiserver double for the kube-apiserver static pod manifest."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import subprocess
import tarfile
from pathlib import Path

import yaml

DOUBLE = Path(__file__).resolve().parent.parent / "kubeadm_double"
APISERVER = Path(__file__).resolve().parent.parent / "apiserver_double"


def _acting():
    """tests/kubeadm_double/acting.py (the releases the double acts as: ACTS_AS), loaded by path."""
    spec = importlib.util.spec_from_file_location("kubeadm_double_acting", DOUBLE / "acting.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ACTS_AS = _acting().ACTS_AS
# kubernetes-validate ships the schemas of 26 Kubernetes versions (22 MB): the hosts get only these
# (the versions the kubeadm double can deploy), both the strict and the plain set
SCHEMA_VERSIONS = ACTS_AS
# what kubernetes_validate imports, and what jsonschema imports (the controller's venv: same Python
# 3.11 and architecture as the hosts' Debian 12, so rpds' compiled module loads there too)
VENDOR = ("kubernetes_validate", "jsonschema", "jsonschema_specifications", "referencing", "rpds", "attr", "attrs",
          "typing_extensions", "importlib_resources", "packaging")


def load(version: str, monkeypatch):
    """The kubeadm double's program as a Python module acting as kubeadm `version` (1.30 ... 1.36),
    for unit tests on the controller. The modules beside it (the per-version tables, and the
    sub-commands' modules that read them) are imported afresh each time, and each is an attribute of
    the returned module (double.<module>.<name>: where a unit test reads or monkeypatches a name)."""
    import sys
    monkeypatch.setenv("KUBEADM_DOUBLE_VERSION", version)
    sys.path.insert(0, str(DOUBLE))
    names = sorted(p.stem for p in DOUBLE.glob("*.py"))
    for name in names:
        sys.modules.pop(name, None)
    loader = importlib.machinery.SourceFileLoader(f"kubeadm_double_{version}", str(DOUBLE / "kubeadm"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    for name in names:
        if name in sys.modules:
            setattr(mod, name, sys.modules[name])
    return mod


def main_error(double, argv: list[str]) -> str:
    """The message of the double's failure for this command line (a module from load()); a command
    that does not fail is an AssertionError."""
    try:
        double.main(argv)
    except double.Fail as e:
        return str(e)
    raise AssertionError(f"kubeadm {' '.join(argv)}: did not fail")


# ---------------------------------------------------------------- what the per-release unit tests share
CRI = "unix:///run/containerd/containerd.sock"


def config_file(path: Path, docs: list[dict]) -> str:
    """A kubeadm configuration file of these documents (each after `---`); its path."""
    path.write_text("".join("---\n" + yaml.safe_dump(d, sort_keys=False) for d in docs))
    return str(path)


def cluster_doc(version: str, **kw) -> dict:
    """A v1beta4 ClusterConfiguration of kubernetesVersion `version`, more fields from kw."""
    return {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration", "kubernetesVersion": version,
            "controlPlaneEndpoint": "api.tke.com:6443", "networking": {"serviceSubnet": "10.96.0.0/16"}, **kw}


def init_config(tmp_path: Path, version: str, **cluster) -> str:
    """init.yaml under tmp_path: the first master m1's InitConfiguration and cluster_doc(version, **cluster)."""
    return config_file(tmp_path / "init.yaml", [
        {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "InitConfiguration",
         "nodeRegistration": {"name": "m1", "criSocket": CRI}, "localAPIEndpoint": {"advertiseAddress": "192.0.2.11"}},
        cluster_doc(version, **cluster)])


def join_config(tmp_path: Path, control_plane: bool = False, ignore: list | None = None) -> str:
    """join.yaml under tmp_path: w1 joining by bootstrap token (as a control-plane node with
    control_plane), with nodeRegistration.ignorePreflightErrors when ignore is given."""
    reg = {"name": "w1", "criSocket": CRI, **({"ignorePreflightErrors": ignore} if ignore else {})}
    doc = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "JoinConfiguration", "nodeRegistration": reg,
           "discovery": {"bootstrapToken": {"token": "abcdef.0123456789abcdef", "apiServerEndpoint": "api.tke.com:6443",
                                            "caCertHashes": ["sha256:" + "a" * 64]}}}
    if control_plane:
        doc["controlPlane"] = {"localAPIEndpoint": {"advertiseAddress": "192.0.2.12"}, "certificateKey": "b" * 64}
    return config_file(tmp_path / "join.yaml", [doc])


def joining_host(double, tmp_path: Path, monkeypatch, **state) -> dict:
    """A joining worker (for a module from load()) whose every preflight check passes but those read from
    the returned state, which a test may update: unified (cgroup v2), kubelet and containerd (versions as
    tuples)."""
    import os
    monkeypatch.setattr(double.common, "K8S", str(tmp_path / "k8s"))
    monkeypatch.setattr(double.common, "PKI", str(tmp_path / "k8s" / "pki"))
    monkeypatch.setattr(double.os, "geteuid", lambda: 0)
    monkeypatch.setattr(double.os, "uname", lambda: os.uname_result(("Linux", "w1", "6.1.0-40-amd64", "#1", "x86_64")))
    monkeypatch.setattr(double.preflight, "_swap", lambda: ([], []))
    monkeypatch.setattr(double.preflight, "_hostname", lambda name: ([], []))
    monkeypatch.setattr(double.preflight, "_service_kubelet", lambda: ([], []))
    monkeypatch.setattr(double.preflight, "_port_free", lambda port: True)
    monkeypatch.setattr(double.host_cgroups, "unified", lambda: state["unified"])
    monkeypatch.setattr(double.preflight, "kubelet_version", lambda: state["kubelet"])
    monkeypatch.setattr(double.preflight, "containerd_version", lambda: state["containerd"])
    return state


def load_kubelet(version: str, monkeypatch):
    """The kubelet double's program as a Python module acting as kubelet `version` (1.30 ... 1.36)."""
    monkeypatch.setenv("KUBEADM_DOUBLE_VERSION", version)
    monkeypatch.syspath_prepend(str(DOUBLE.parent / "apiserver_double"))
    monkeypatch.syspath_prepend(str(DOUBLE))
    loader = importlib.machinery.SourceFileLoader(f"kubelet_double_{version}", str(DOUBLE / "kubelet"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def ssh_argv(th, name: str) -> list[str]:
    return th.ssh_argv(name)


def _skip(path: Path) -> bool:
    if "__pycache__" in path.parts:
        return True
    parts = path.parts
    if "kubernetes-json-schema" in parts:
        i = parts.index("kubernetes-json-schema")
        if len(parts) > i + 1 and not any(parts[i + 1].startswith(f"v{v}.") for v in SCHEMA_VERSIONS):
            return True
    return False


def apiserver_tar() -> bytes:
    """/usr/local/lib/apiserver-double: the double and its vendored Python packages."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(src: Path, arc: str):
            if src.is_dir():
                for p in sorted(src.rglob("*")):
                    if p.is_file() and not _skip(p.relative_to(src.parent)):
                        tar.add(p, f"{arc}/{p.relative_to(src)}")
            else:
                tar.add(src, arc)
        add(APISERVER / "kube-apiserver", "kube-apiserver")
        add(APISERVER / "apiserver_double", "apiserver_double")
        for mod in VENDOR:
            spec = importlib.util.find_spec(mod)
            if spec is None or spec.origin is None and not spec.submodule_search_locations:
                raise RuntimeError(f"{mod} is not installed on the controller (requirements-dev.txt)")
            if spec.submodule_search_locations:
                src = Path(list(spec.submodule_search_locations)[0])
                add(src, f"vendor/{src.name}")
            else:
                add(Path(spec.origin), f"vendor/{Path(spec.origin).name}")
    return buf.getvalue()


def install(th, names=None, api_domain_ip: str | None = None, kubeadm_version: str = "1.30",
            file_store: bool = False) -> None:
    """The doubles (with a copy of PyYAML) under /usr/local/lib/kubeadm-double, symlinked into
    /usr/local/bin, the kube-apiserver double under /usr/local/lib/apiserver-double, and
    python3-cryptography from the hosts' apt repository (the double makes real certificates).
    api_domain_ip: also resolve api.tke.com to it (when host_init does not run).
    kubeadm_version: the kubeadm the double acts as (acting.ACTS_AS; the file `version` beside it).
    file_store: a scenario that runs no etcd (the etcd phase not among its tags): the API double
    keeps its objects in a file on each host (the mark `file-store` beside it) instead of exiting
    for want of the etcd its flags name, as a real kube-apiserver would."""
    yaml_pkg = Path(yaml.__file__).parent
    if kubeadm_version not in ACTS_AS:
        raise ValueError(f"the kubeadm double acts as kubeadm {', '.join(ACTS_AS)}, not {kubeadm_version}")
    modules = sorted(p.name for p in DOUBLE.glob("*.py"))
    tar = subprocess.run(["tar", "-C", str(DOUBLE), "-cf", "-", "kubeadm", "kubelet", *modules,
                          "-C", str(yaml_pkg.parent), "--exclude=__pycache__", "--exclude=*.so", yaml_pkg.name],
                         check=True, capture_output=True).stdout
    api_tar = apiserver_tar()
    for h in names or th.names:
        subprocess.run(ssh_argv(th, h) + [
            "mkdir -p /usr/local/lib/kubeadm-double && tar -C /usr/local/lib/kubeadm-double -xf - && "
            f"echo {kubeadm_version} > /usr/local/lib/kubeadm-double/version && "
            "ln -sf /usr/local/lib/kubeadm-double/kubeadm /usr/local/bin/kubeadm && "
            "ln -sf /usr/local/lib/kubeadm-double/kubelet /usr/local/bin/kubelet"], input=tar, check=True, timeout=120)
        subprocess.run(ssh_argv(th, h) + [
            "rm -rf /usr/local/lib/apiserver-double && mkdir -p /usr/local/lib/apiserver-double && "
            "tar -C /usr/local/lib/apiserver-double -xf -"
            + (" && touch /usr/local/lib/apiserver-double/file-store" if file_store else "")],
            input=api_tar, check=True, timeout=300)
        hosts_line = (f" && (grep -q ' api.tke.com$' /etc/hosts || echo '{api_domain_ip} api.tke.com' >> /etc/hosts)"
                      if api_domain_ip else "")
        th.ssh(h, "(apt-get update -qq && apt-get install -y -qq python3-cryptography etcd-client) >/dev/null 2>&1; "
                  "python3 -c 'import cryptography' && command -v etcdctl >/dev/null && "
                  "python3 -c 'import sys; sys.path[:0] = [\"/usr/local/lib/apiserver-double/vendor\", \"/usr/local/lib/kubeadm-double\"]; "
                  "import kubernetes_validate'" + hosts_line, timeout=300)
