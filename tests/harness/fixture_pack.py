"""Inputs of a small but real site pack, made on this machine (used by tests and bench/).

- binaries taken out of Debian's .debs (dpkg-deb -x): containerd, containerd-shim-runc-v2, ctr,
  runc, the CNCF distribution registry (docker-registry), etcd, CNI plugins (as a .tgz);
- OS packages fetched with apt (apt-get download, by the pack build itself);
- tiny OCI images written in pure Python from Debian's static busybox: busybox, hello and pause
  share the busybox layer (de-duplicated in the pack's registry storage); so do stand-ins named
  and tagged as the network role's images (flannel, calico: roles/network/defaults/main.yml),
  which only sleep: the site's registry serves every image the network manifests name;
- a tiny Helm chart and this checkout's collection tarball.
Debian has no crictl, kubeadm, kubelet or helm: the spec supports them (url/path + sha256). The
fixture carries kubeadm and kubelet as a real pack does, in two versions (the upgrade needs both):
each a launcher of the test doubles acting as that version (DOUBLE_VERSIONS; the doubles
themselves are put on the hosts by tests/harness/kubeadm_double.py, never by the pack).
"""
from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent
DEBS = {"containerd": ["usr/bin/containerd", "usr/bin/containerd-shim-runc-v2", "usr/bin/ctr"],
        "runc": ["usr/sbin/runc"], "docker-registry": ["usr/bin/docker-registry"],
        "etcd-server": ["usr/bin/etcd"], "containernetworking-plugins": [], "busybox-static": ["bin/busybox"]}
CNI = ["bridge", "host-local", "loopback", "portmap"]
INSTALL = {"containerd": "/usr/local/bin/containerd", "containerd-shim-runc-v2": "/usr/local/bin/containerd-shim-runc-v2",
           "ctr": "/usr/local/bin/ctr", "runc": "/usr/local/sbin/runc", "registry": "/usr/local/bin/registry",
           "etcd": "/usr/local/bin/etcd"}
GROUPS = {"registry": ["registry"], "etcd": ["etcd", "masters"]}
# kubeadm and kubelet of these Kubernetes versions (the versions the doubles act as: cli_v1_30/31.VERSION)
DOUBLE_VERSIONS = ("1.30.4", "1.31.1")


def double_launchers(bindir: Path, work: Path) -> list[dict]:
    """The pack's kubeadm and kubelet per version: a launcher running the double (installed on the
    test host under /usr/local/lib/kubeadm-double) as that version."""
    out = []
    for version in DOUBLE_VERSIONS:
        minor = version.rsplit(".", 1)[0]
        for name in ("kubeadm", "kubelet"):
            dest = bindir / f"{name}-{version}"
            dest.write_text(f"#!/bin/sh\n# {name} {version} of the fixture site pack: the {name} test double acting as "
                            f"{minor}\nKUBEADM_DOUBLE_VERSION={minor} exec /usr/local/lib/kubeadm-double/{name} \"$@\"\n")
            out.append({"name": name, "path": str(work / "bin" / dest.name), "sha256": sha256(dest), "version": version,
                        "install": f"/usr/local/bin/{name}", "groups": ["masters", "workers"]})
    return out


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for c in iter(lambda: f.read(1 << 20), b""):
            h.update(c)
    return h.hexdigest()


def _deb(name: str, repo: Path | None, dl: Path) -> Path:
    for d in ([repo] if repo else []) + [dl]:
        found = sorted(Path(d).glob(f"{name}_*.deb"))
        if found:
            return found[-1]
    dl.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", "-q", name], cwd=dl, check=True, capture_output=True)
    return sorted(dl.glob(f"{name}_*.deb"))[-1]


# --- OCI images --------------------------------------------------------------------------
def _tar_layer(files: dict[str, bytes | str], modes: dict[str, int] | None = None) -> bytes:
    """A reproducible layer tar: files maps path -> bytes, or '->target' for a symlink."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        dirs = sorted({str(Path(p).parent) for p in files} - {"."})
        for d in dirs:
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 0
            t.addfile(ti)
        for path in sorted(files):
            data = files[path]
            ti = tarfile.TarInfo(path)
            ti.mtime = 0
            if isinstance(data, str) and data.startswith("->"):
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, data[2:], 0o777
                t.addfile(ti)
            else:
                ti.size, ti.mode = len(data), (modes or {}).get(path, 0o644)
                t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


class Layout:
    def __init__(self, path: Path):
        self.path = path
        (path / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
        (path / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
        self.manifests = []

    def blob(self, data: bytes) -> dict:
        d = hashlib.sha256(data).hexdigest()
        (self.path / "blobs" / "sha256" / d).write_bytes(data)
        return {"digest": "sha256:" + d, "size": len(data)}

    def image(self, tag: str, layers: list[bytes], cmd: list[str]) -> str:
        descs, diff_ids = [], []
        for raw in layers:
            diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
            gz = gzip.compress(raw, mtime=0)
            descs.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **self.blob(gz)})
        config = {"architecture": "amd64", "os": "linux",
                  "config": {"Cmd": cmd, "Env": ["PATH=/bin"], "WorkingDir": "/"},
                  "rootfs": {"type": "layers", "diff_ids": diff_ids}}
        cdesc = {"mediaType": "application/vnd.oci.image.config.v1+json",
                 **self.blob(json.dumps(config, sort_keys=True).encode())}
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": cdesc, "layers": descs}
        mdesc = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
                 **self.blob(json.dumps(manifest, sort_keys=True).encode()),
                 "annotations": {"org.opencontainers.image.ref.name": tag}}
        self.manifests.append(mdesc)
        (self.path / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": self.manifests}))
        return mdesc["digest"]


def busybox_layer(busybox: bytes) -> bytes:
    links = {f"bin/{a}": "->busybox" for a in ("sh", "cat", "echo", "sleep", "ls", "wget")}
    return _tar_layer({"bin/busybox": busybox, **links}, {"bin/busybox": 0o755})


NETWORK_DEFAULTS = TOP / "roles" / "network" / "defaults" / "main.yml"


def network_images() -> list[tuple[str, str]]:
    """(repository, tag) of every network image, from the network role's defaults (its one home):
    network_*_image values are "{{ network_image_prefix }}/<name>:<tag>" in the platform namespace."""
    defaults = yaml.safe_load(NETWORK_DEFAULTS.read_text())
    out = []
    for key, value in sorted(defaults.items()):
        if key.startswith("network_") and key.endswith("_image"):
            name, tag = str(value).split("}}/", 1)[1].rsplit(":", 1)
            out.append((f"library/{name}", tag))
    return out


def make_images(dest: Path, busybox: bytes, extra_mb: int = 0) -> list[dict]:
    """Three images sharing the busybox layer (each in its own OCI layout). extra_mb adds a
    shared layer of that many MiB of incompressible data (bench: realistic sizes)."""
    base = [busybox_layer(busybox)]
    if extra_mb:
        rnd = hashlib.sha256(b"seed").digest()
        chunks, h = [], rnd
        for dummy in range(extra_mb * 1024 * 1024 // 32):
            h = hashlib.sha256(h).digest()
            chunks.append(h)
        base.append(_tar_layer({"opt/data.bin": b"".join(chunks)}))
    hello = _tar_layer({"hello.txt": b"hello from the offline site pack\n"})
    images = [("library/busybox", "1.35", base, ["/bin/sh"]),
              ("library/hello", "1.0", base + [hello], ["/bin/cat", "/hello.txt"]),
              ("library/pause", "3.9", base, ["/bin/sleep", "2147483647"])]
    images += [(name, tag, base, ["/bin/sleep", "2147483647"]) for name, tag in network_images()]
    out = []
    for name, tag, layers, cmd in images:
        lay = Layout(dest / f"{name.replace('/', '_')}-{tag}")
        lay.image(tag, layers, cmd)
        out.append({"name": name, "tag": tag, "path": str(lay.path)})
    return out


# --- the whole fixture -------------------------------------------------------------------
# glibc wheel tags a Debian 12 controller (glibc 2.36, x86_64) installs: the pack's controller section
CONTROLLER_PLATFORMS = ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64",
                        "manylinux_2_34_x86_64"]


def run_cmd(argv, cwd=None):
    """The `run` callable site_pack_build.Builder takes: (rc, stdout, stderr)."""
    res = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    return res.returncode, res.stdout, res.stderr


def venv_which(name):
    """A command of this virtualenv (ansible-galaxy ...) first, then the system's."""
    return shutil.which(name, path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def build_inputs(work: Path, repo: Path | None = None, extra_mb: int = 0) -> Path:
    """Make every input and the spec under work/; returns the spec path. Cached: a complete
    work/ (spec.yml present) is reused."""
    spec_path = work / "spec.yml"
    if spec_path.exists():
        return spec_path
    tmp = work.with_name(work.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "bin").mkdir(parents=True)
    dl = TOP / ".cache" / "fixture-debs"
    files: dict[str, Path] = {}
    versions: dict[str, str] = {}
    for pkg, members in DEBS.items():
        x = tmp / "x" / pkg
        x.mkdir(parents=True)
        deb = str(_deb(pkg, repo, dl))
        subprocess.run(["dpkg-deb", "-x", deb, str(x)], check=True)
        version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], check=True, capture_output=True,
                                 text=True).stdout.strip().split(":")[-1].split("+")[0].split("~")[0]
        for m in members:
            files[Path(m).name] = x / m
            versions[Path(m).name] = version
        versions[pkg] = version
    cni = tmp / "bin" / "cni-plugins.tgz"
    with tarfile.open(cni, "w:gz") as t:
        for p in CNI:
            t.add(tmp / "x" / "containernetworking-plugins" / "usr/lib/cni" / p, arcname=p)
    binaries = []
    for name, src in files.items():
        if name == "busybox":
            continue
        pname = "registry" if name == "docker-registry" else name
        dest = tmp / "bin" / pname
        shutil.copy2(src, dest)
        b = {"name": pname, "path": str(work / "bin" / pname), "sha256": sha256(dest), "install": INSTALL[pname],
             "version": versions[name]}
        if pname in GROUPS:
            b["groups"] = GROUPS[pname]
        binaries.append(b)
    binaries.append({"name": "cni-plugins", "path": str(work / "bin" / "cni-plugins.tgz"), "sha256": sha256(cni),
                     "unpack": True, "install": "/opt/cni/bin",
                     "version": versions["containernetworking-plugins"]})
    binaries += double_launchers(tmp / "bin", work)
    images = make_images(tmp / "images", files["busybox"].read_bytes(), extra_mb)
    for img in images:
        img["path"] = img["path"].replace(str(tmp), str(work))
    chart = tmp / "hello-0.1.0.tgz"
    with tarfile.open(chart, "w:gz") as t:
        for name, text in {"hello/Chart.yaml": "apiVersion: v2\nname: hello\nversion: 0.1.0\n",
                           "hello/values.yaml": "image: registry.tke.com/library/hello:1.0\n"}.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(text)
            t.addfile(ti, io.BytesIO(text.encode()))
    coll = tmp / "collections"
    coll.mkdir()
    subprocess.run([str(Path(sys.executable).parent / "ansible-galaxy"), "collection", "build", "--force",
                    "--output-path", str(coll), str(TOP)], check=True, capture_output=True, cwd=TOP)
    ctar = sorted(coll.glob("*.tar.gz"))[0]
    shutil.rmtree(tmp / "x")
    spec = {"name": "fixture", "version": "1.0.0",
            "os_packages": {"deb": [{"apt": ["socat", "conntrack", "python3-bcrypt", "python3-cffi-backend"]}]},
            "binaries": binaries, "images": images,
            "charts": [{"path": str(work / chart.name), "sha256": sha256(chart)}],
            "controller": {"collections": [{"path": str(work / "collections" / ctar.name), "sha256": sha256(ctar)}]}}
    # a real wheel that is on every CPython: the one ensurepip carries
    import ensurepip
    bundled = Path(ensurepip.__file__).parent / "_bundled"
    wheels = sorted(bundled.glob("setuptools-*.whl"))[:1]
    if wheels:
        (tmp / "wheels").mkdir()
        shutil.copy2(wheels[0], tmp / "wheels" / wheels[0].name)
        spec["controller"]["wheels"] = [{"path": str(work / "wheels" / wheels[0].name),
                                         "sha256": sha256(wheels[0])}]
    (tmp / "spec.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    shutil.rmtree(work, ignore_errors=True)
    os.replace(tmp, work)
    return spec_path


# The test site owner's Ed25519 key: the fixture pack is signed with it, and every test inventory
# (testhosts.write_inventory) carries its public key as tke_site_pack_pubkey. Made once per
# checkout (never committed).
SIGNING_KEY = TOP / ".cache" / "fixture-pack" / "site-pack-test.key"


@contextlib.contextmanager
def _building():
    """One builder at a time across processes (pytest-xdist workers share .cache): the signing key,
    the downloaded debs and the packs are made once, never half-written under another's feet."""
    lock = TOP / ".cache" / "fixture-pack.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def signing_key() -> Path:
    if SIGNING_KEY.is_file():
        return SIGNING_KEY
    with _building():
        return _make_signing_key()


def _make_signing_key() -> Path:
    if not SIGNING_KEY.is_file():
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
        SIGNING_KEY.parent.mkdir(parents=True, exist_ok=True)
        pem = ed25519.Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        tmp = SIGNING_KEY.with_suffix(".tmp")
        tmp.write_bytes(pem)
        tmp.chmod(0o600)
        os.replace(tmp, SIGNING_KEY)
        SIGNING_KEY.with_suffix(".pub").write_text(public_key_pem())   # (the sandbox inventory reads it)
    return SIGNING_KEY


def public_key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    key = serialization.load_pem_private_key(signing_key().read_bytes(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def ensure_pack(cache: Path, repo: Path | None) -> Path:
    """The fixture site pack, built under cache (packs/fixture-1.0.0, its inputs in pack-inputs)
    and reused while this recipe and the pack format's code are unchanged (cache/recipe holds
    their hash; another hash builds inputs and pack anew)."""
    signing_key()
    with _building():
        return _ensure_pack(cache, repo)


def _ensure_pack(cache: Path, repo: Path | None) -> Path:
    from harness.playbook import run_playbook
    recipe = [Path(__file__), NETWORK_DEFAULTS, *sorted((TOP / "plugins" / "module_utils").glob("*pack*.py"))]
    key = hashlib.sha256(b"".join(f.read_bytes() for f in [*recipe, signing_key()])).hexdigest()[:12]
    stamp, out = cache / "recipe", cache / "packs"
    pack = out / "fixture-1.0.0"
    if (pack / "manifest.json").is_file() and stamp.is_file() and stamp.read_text() == key:
        return pack
    for old in (out, cache / "pack-inputs"):
        shutil.rmtree(old, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    spec = build_inputs(cache / "pack-inputs", repo)
    local = cache / "local.yml"
    local.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    run = run_playbook(TOP / "playbooks" / "site_pack.yml", local, "-e", f"pack_spec={spec}",
                       "-e", f"pack_output_dir={out}", "-e", f"pack_cache_dir={cache / 'pack-cache'}",
                       "-e", f"pack_signing_key={signing_key()}")
    if run.rc != 0:
        raise RuntimeError("the fixture site pack did not build:\n" + run.explain())
    stamp.write_text(key)
    return pack


if __name__ == "__main__":
    # python tests/harness/fixture_pack.py CACHE [HOSTS_APT_REPO]: the fixture pack built (or reused)
    # under CACHE; prints its directory
    print(ensure_pack(Path(sys.argv[1]).resolve(), Path(sys.argv[2]) if len(sys.argv) > 2 else None))
