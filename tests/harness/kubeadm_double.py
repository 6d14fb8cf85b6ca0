"""Put the kubeadm/kubelet test doubles (tests/kubeadm_double) and the kube-apiserver test double
(tests/apiserver_double) on test hosts: the test's job, never a role's. The roles only know "the
kubeadm binary at tke_kubeadm_bin" (/usr/local/bin); the kubelet double starts the
kube-apiserver double for the kube-apiserver static pod manifest."""
from __future__ import annotations

import compileall
import functools
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import yaml

DOUBLE = Path(__file__).resolve().parent.parent / "kubeadm_double"
APISERVER = Path(__file__).resolve().parent.parent / "apiserver_double"
# the doubles' files as one read-only overlay layer per content (layer())
LAYERS = DOUBLE.parent.parent / ".cache" / "doubles-layer"
API_DIR, DOUBLE_DIR = "usr/local/lib/apiserver-double", "usr/local/lib/kubeadm-double"
STAMP = ".layer"   # in API_DIR: the digest of the layer the host has
# What the doubles run on a host that the host's OS does not bring (tests/kubeadm_double/host_deps.py):
# the kubeadm double's certificates (cryptography, and the cffi backend its OpenSSL bindings load)
# and etcdctl (the kubeadm double's stacked members, the API double's store). The packages of the
# hosts' apt repository (their Debian release and architecture), unpacked into DEPS_DIR of the
# layer, never installed: installed, they would be the host's, and the collection could come to
# rely on them unseen (it did: etcdctl on the masters of a stacked etcd).
DEPS_DIR = "usr/local/lib/doubles-deps"
DEPS_DEBS = ("python3-cryptography", "python3-cffi-backend", "etcd-client")


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
# rpds' compiled module for Debian 13's Python 3.13 too (its hosts run the API server double as well):
# the PyPI wheel of the controller's rpds-py (requirements-dev.txt pins it), fetched once into WHEELS
# and checked against its sha256; its extension module goes beside the 3.11 one in vendor/rpds/
# (Python loads the one whose ABI tag is its own)
RPDS_VERSION = "2026.9.1"
RPDS_WHEELS = {"3.13": ("rpds_py-2026.9.1-cp313-cp313-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                        "7868b85224291c6cb6759f9b5adb9745f486d226f62b16a614dd5a2a5ab2b35b")}
WHEELS = DOUBLE.parent.parent / ".cache" / "doubles-wheels"


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


def rpds_extensions() -> list[tuple[str, bytes]]:
    """(file name, content) of rpds' extension module for each Python of RPDS_WHEELS."""
    have = metadata.version("rpds-py")
    if have != RPDS_VERSION:
        raise RuntimeError(f"the controller has rpds-py {have}, RPDS_VERSION says {RPDS_VERSION} "
                           "(requirements-dev.txt and RPDS_WHEELS must name the same release)")
    found = []
    for python, (name, digest) in RPDS_WHEELS.items():
        wheel = WHEELS / name
        if not wheel.is_file() or hashlib.sha256(wheel.read_bytes()).hexdigest() != digest:
            # into a folder of this process's, then renamed: the scenario workers may fetch it at once
            part = WHEELS / f".{os.getpid()}"
            shutil.rmtree(part, ignore_errors=True)
            part.mkdir(parents=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            "--implementation", "cp", "--python-version", python,
                            "--platform", "manylinux_2_17_x86_64", f"rpds-py=={RPDS_VERSION}", "-d", str(part)],
                           check=True, capture_output=True)
            if hashlib.sha256((part / name).read_bytes()).hexdigest() != digest:
                raise RuntimeError(f"{part / name}: not the sha256 RPDS_WHEELS pins")
            (part / name).replace(wheel)
            shutil.rmtree(part, ignore_errors=True)
        with zipfile.ZipFile(wheel) as z:
            (member,) = [n for n in z.namelist() if n.startswith("rpds/") and n.endswith(".so")]
            found.append((member.split("/", 1)[1], z.read(member)))
    return found


def _skip(path: Path) -> bool:
    if "__pycache__" in path.parts:
        return True
    parts = path.parts
    if "kubernetes-json-schema" in parts:
        i = parts.index("kubernetes-json-schema")
        if len(parts) > i + 1 and not any(parts[i + 1].startswith(f"v{v}.") for v in SCHEMA_VERSIONS):
            return True
    return False


@functools.cache
def apiserver_tar() -> bytes:
    """/usr/local/lib/apiserver-double: the double and its vendored Python packages (58 MB, about
    9,900 files: kubernetes-validate's schemas of SCHEMA_VERSIONS)."""
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
        for name, data in rpds_extensions():
            info = tarfile.TarInfo(f"vendor/rpds/{name}")
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@functools.cache
def double_tar() -> bytes:
    """/usr/local/lib/kubeadm-double: the kubeadm and kubelet doubles, their modules and PyYAML."""
    yaml_pkg = Path(yaml.__file__).parent
    modules = sorted(p.name for p in DOUBLE.glob("*.py"))
    return subprocess.run(["tar", "-C", str(DOUBLE), "-cf", "-", "kubeadm", "kubelet", *modules,
                           "-C", str(yaml_pkg.parent), "--exclude=__pycache__", "--exclude=*.so", yaml_pkg.name],
                          check=True, capture_output=True).stdout


def deps_debs(repo: Path) -> tuple[Path, ...]:
    """The .deb of each of DEPS_DEBS in the hosts' apt repository (testhosts.sh repo)."""
    found = []
    for name in DEPS_DEBS:
        debs = sorted(Path(repo).glob(f"{name}_*.deb"))
        if len(debs) != 1:
            raise RuntimeError(f"{repo}: {len(debs)} packages {name}_*.deb, not one (tests/harness/packages.txt)")
        found.append(debs[0])
    return tuple(found)


@functools.cache
def layer_digest(repo: Path) -> str:
    """The doubles' content (both tars, 58 MB, and the packages of DEPS_DEBS hashed): once per
    process, as layer() and every install() ask for it."""
    h = hashlib.sha256(apiserver_tar() + double_tar())
    for deb in deps_debs(repo):
        h.update(deb.name.encode() + b"\0" + deb.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def layer(repo: Path) -> Path:
    """A directory with both doubles' files where install() puts them (API_DIR, DOUBLE_DIR), what
    they run that the hosts' OS lacks (DEPS_DIR: the packages of DEPS_DEBS from the hosts' apt
    repository `repo`, unpacked) and the layer's digest (STAMP), made once per content under
    .cache/doubles-layer/<digest> and never changed: TestHosts stacks it read-only over the rootfs
    of every host it starts (testhosts.sh's TH_LAYERS). Copied into each host instead, the files cost
    about 3 s of CPU per host (58 MB over SSH, 9,900 files written into the host's overlay), and
    the packages installed with apt about 1.8 s more. A host has the files from its start, but
    nothing uses them until install() links kubeadm and the kubelet into /usr/local/bin. Layers of
    other contents (older sources) are left to the hosts still on them and removed after a week."""
    digest = layer_digest(Path(repo))
    path = LAYERS / digest
    if not path.is_dir():
        LAYERS.mkdir(parents=True, exist_ok=True)
        tmp = LAYERS / f".{digest}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        for sub, data in ((API_DIR, apiserver_tar()), (DOUBLE_DIR, double_tar())):
            (tmp / sub).mkdir(parents=True)
            subprocess.run(["tar", "-C", str(tmp / sub), "--no-same-owner", "-xf", "-"], input=data, check=True)
        for deb in deps_debs(Path(repo)):
            subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp / DEPS_DIR)], check=True)
        # byte-compiled once here, not by every host at its first import (the controller's Python is
        # the hosts' minor, Debian 12's 3.11: the same cache tag; another minor ignores them)
        if not compileall.compile_dir(str(tmp), quiet=1):
            raise RuntimeError(f"{tmp}: a module of the doubles' layer does not compile")
        (tmp / API_DIR / STAMP).write_text(digest + "\n")
        for d in [tmp, *(p for p in tmp.rglob("*") if p.is_dir())]:
            d.chmod(0o755)   # readable by the hosts' services (the caller's umask may be 077)
        try:
            tmp.rename(path)
        except OSError:      # another process made it meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
        for old in LAYERS.iterdir():
            try:   # (another process's temporary directory may go meanwhile)
                if old != path and old.stat().st_mtime < path.stat().st_mtime - 7 * 86400:
                    shutil.rmtree(old, ignore_errors=True)
            except OSError:
                pass
    return path


def install(th, names=None, api_domain_ip: str | None = None, kubeadm_version: str = "1.30",
            file_store: bool = False) -> None:
    """The doubles of the hosts' layer (layer(): /usr/local/lib/kubeadm-double with a copy of PyYAML,
    /usr/local/lib/apiserver-double, /usr/local/lib/doubles-deps) put to work: kubeadm and the kubelet
    symlinked into /usr/local/bin; the host's package index fetched. A host that does not have this
    layer (started before the doubles' sources changed) is refused: TestHosts.up() and reset() start
    hosts with it.
    api_domain_ip: also resolve api.tke.com to it (when host_init does not run).
    kubeadm_version: the kubeadm the double acts as (acting.ACTS_AS; the file `version` beside it).
    file_store: a scenario that runs no etcd (the etcd phase not among its tags): the API double
    keeps its objects in a file on each host (the mark `file-store` beside it) instead of exiting
    for want of the etcd its flags name, as a real kube-apiserver would."""
    if kubeadm_version not in ACTS_AS:
        raise ValueError(f"the kubeadm double acts as kubeadm {', '.join(ACTS_AS)}, not {kubeadm_version}")
    for h in names or th.names:
        digest = layer_digest(Path(th.repos[th.release(h)]))   # the layer of the host's release
        hosts_line = (f" && (grep -q ' api.tke.com$' /etc/hosts || echo '{api_domain_ip} api.tke.com' >> /etc/hosts)"
                      if api_domain_ip else "")
        th.ssh(h, f"have=$(cat /{API_DIR}/{STAMP} 2>/dev/null); [ \"$have\" = {digest} ] || "
                  f"{{ echo \"{h} has the doubles' layer ${{have:-(none)}}, not {digest}: start it with TestHosts.up() "
                  "or reset()\" >&2; exit 3; }; "
                  f"echo {kubeadm_version} > /{DOUBLE_DIR}/version && "
                  f"ln -sf /{DOUBLE_DIR}/kubeadm /usr/local/bin/kubeadm && "
                  f"ln -sf /{DOUBLE_DIR}/kubelet /usr/local/bin/kubelet && "
                  + (f"touch /{API_DIR}/file-store && " if file_store else f"rm -f /{API_DIR}/file-store && ")
                  # the package index of the hosts' repository, as the site_repo phase leaves it: the
                  # scenarios that skip that phase install packages from there in later phases
                  + "apt-get update -qq" + hosts_line, timeout=300)
