#!/usr/bin/env python
"""registry_push against skopeo: the site pack's images into a registry the collection does not run.

Not a test (nothing here asserts a speed): the measurement behind docs/site_pack.md's answer to
"why not skopeo" (issue 25 item 6). Everything runs on this machine, on 127.0.0.1 only.

The images: --images images of two gzip layers each, a base layer of --base-mb MiB shared by all
and an own layer of --own-mb MiB (incompressible data in a tar), written into a registry
filesystem storage by the pack build's own registry_storage.import_image (what a pack's
registry/ holds). The destination: a fresh, empty CNCF distribution registry (Debian's
docker-registry binary) with TLS and htpasswd Basic auth (bcrypt cost 4, so that the bcrypt check
the registry makes on every request does not swamp what the clients do), started before the clock.

The ways, each timed as the whole step a site would run (wall, the clients' CPU and peak RSS, the
registries' CPU, the bytes the destination read: what it was sent):
  push       module_utils registry_push.push for every image, storage -> destination, in one Python
             process (as the registry_push module does; the interpreter's start is counted); a blob
             already sent to another repository in the run is mounted from there, as skopeo does;
  sync       skopeo cannot read the storage (no transport for it): a registry is started on the
             storage (plain HTTP on 127.0.0.1), `skopeo sync --src yaml --dest docker` copies every
             image, the registry is stopped; its start, its CPU and its stop are counted;
  oci        skopeo's own local format instead: an OCI layout made of symlinks into the storage's
             blobs (index.json naming every image), then one `skopeo copy oci:... docker://...` per
             image (skopeo sync has no oci source in Debian 12's 1.9.3); making the layout is counted.
Each way runs on a fresh destination ("fresh") and then again on it ("again": every image there).
After each fresh run every tag is checked to be at the storage's manifest digest. Rounds alternate
the order of the ways; the table gives medians.

Run from the checkout (root; needs skopeo: `apt-get install --no-install-recommends skopeo`; the
registry binary is docker-registry from PATH, else taken out of `apt-get download docker-registry`),
with a Python that has ansible-core (tests' venv):
  .cache/venv/bin/python bench/registry_push_bench.py [--images 6] [--base-mb 32] [--own-mb 8] [--rounds 3]
      [--ways push,sync,oci]
Work files (the storage, made once per parameters; the registries' storage, removed after each run)
go to .cache/registry-push-bench/. skopeo keeps its blob-info cache in /var/lib/containers/cache (as
root): it is what lets skopeo mount a blob it sent to another repository, also across processes.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TOP / "tests"), str(TOP / "collections")]

from ansible_collections.offline_pot.tke.plugins.module_utils import registry_push as rp  # noqa: E402
from ansible_collections.offline_pot.tke.plugins.module_utils import registry_storage as rs  # noqa: E402
from harness.certs import registry_tls  # noqa: E402

USER, PASSWORD = "admin", "bench-pw-123"
TICK = os.sysconf("SC_CLK_TCK")
WAYS = ("push", "sync", "oci")

# one Python process pushing every image, as the registry_push module does (argv[1]: JSON job).
PUSH = """
import json, sys
sys.path.insert(0, {collections!r})
from ansible_collections.offline_pot.tke.plugins.module_utils import registry_push as rp

job = json.loads(sys.argv[1])
reg = rp.Registry(job["base"], job["user"], job["password"], job["ca"])
print(json.dumps([rp.push(reg, job["root"], i["digest"], i["repo"], i["tag"]) for i in job["images"]]))
"""


# --- images and the storage -------------------------------------------------------------------
def _layer(rng: random.Random, name: str, mib: int) -> tuple[bytes, str]:
    """(gzip blob, diff_id) of a tar holding one file of incompressible data."""
    data = rng.randbytes(mib << 20)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo(f"data/{name}")
        info.size, info.mtime = len(data), 0
        tf.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    return gzip.compress(raw, compresslevel=1, mtime=0), "sha256:" + hashlib.sha256(raw).hexdigest()


def build_storage(work: Path, n: int, base_mb: int, own_mb: int) -> tuple[Path, list[dict]]:
    """The pack's registry/ with n images (made once per parameters), and the images' list."""
    root = work / f"storage-{n}x{base_mb}+{own_mb}"
    listing = root.with_suffix(".json")
    if listing.exists():
        return root, json.loads(listing.read_text())
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(25)
    base = _layer(rng, "base", base_mb)
    images = []
    for i in range(n):
        own = _layer(rng, f"own{i}", own_mb)
        layout = Path(tempfile.mkdtemp(prefix="bench-layout-", dir=work))
        blobs = layout / "blobs" / "sha256"
        blobs.mkdir(parents=True)

        def blob(data: bytes, media: str) -> dict:
            d = hashlib.sha256(data).hexdigest()
            (blobs / d).write_bytes(data)
            return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}
        layers = [blob(gz, "application/vnd.oci.image.layer.v1.tar+gzip") for gz, dummy in (base, own)]
        config = blob(json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                                  "rootfs": {"type": "layers", "diff_ids": [base[1], own[1]]}}).encode(),
                      "application/vnd.oci.image.config.v1+json")
        manifest = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                                    "config": config, "layers": layers}).encode(),
                        "application/vnd.oci.image.manifest.v1+json")
        (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
            dict(manifest, annotations={rs.REF_NAME: "1.0"})]}))
        got = rs.import_image(str(root), str(layout), f"library/img{i}", "1.0")
        shutil.rmtree(layout)
        images.append({"repo": f"library/img{i}", "tag": "1.0", "digest": got["digest"],
                       "bytes": got["image_bytes"]})
    listing.write_text(json.dumps(images))
    return root, images


# --- registries -------------------------------------------------------------------------------
def registry_binary(work: Path) -> str:
    found = shutil.which("docker-registry") or shutil.which("registry")
    if found:
        return found
    dest = work / "docker-registry" / "usr" / "bin" / "docker-registry"
    if not dest.exists():
        debs = work / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", "-q", "docker-registry"], cwd=debs, check=True, capture_output=True)
        subprocess.run(["dpkg-deb", "-x", str(sorted(debs.glob("docker-registry_*.deb"))[-1]),
                        str(work / "docker-registry")], check=True)
    return str(dest)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Registry:
    """A distribution registry on 127.0.0.1: TLS + htpasswd when tls is given, else plain HTTP."""

    def __init__(self, binary: str, root: Path, conf_dir: Path, tls: Path | None = None):
        self.port = free_port()
        conf_dir.mkdir(parents=True, exist_ok=True)
        lines = ["version: 0.1", "log: {level: error}",
                 "storage:", f"  filesystem: {{rootdirectory: {root}}}", "  delete: {enabled: false}",
                 "  cache: {blobdescriptor: inmemory}",
                 "http:", f"  addr: 127.0.0.1:{self.port}"]
        if tls:
            import bcrypt
            (conf_dir / "htpasswd").write_text(
                f"{USER}:{bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()}\n")
            lines += [f"  tls: {{certificate: {tls / 'registry.crt'}, key: {tls / 'registry.key'}}}",
                      "auth:", f"  htpasswd: {{realm: bench, path: {conf_dir / 'htpasswd'}}}"]
        (conf_dir / "config.yml").write_text("\n".join(lines) + "\n")
        self.tls = tls
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([binary, "serve", str(conf_dir / "config.yml")],
                                     stdout=subprocess.DEVNULL, stderr=open(conf_dir / "registry.log", "ab"))
        self.rusage = None
        self._wait_up()

    def _wait_up(self):
        import ssl
        ctx = ssl.create_default_context(cafile=str(self.tls / "ca.crt")) if self.tls else None
        for dummy in range(500):
            try:
                urllib.request.urlopen(self.url + "/v2/", timeout=2, context=ctx)
                return
            except urllib.error.HTTPError:   # 401: up
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise SystemExit(f"the registry on {self.url} exited")
                time.sleep(0.01)
        raise SystemExit(f"the registry on {self.url} did not answer")

    def cpu_s(self) -> float:
        if self.rusage:
            return self.rusage.ru_utime + self.rusage.ru_stime
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def rchar(self) -> int:
        """Bytes the registry has read (sockets and files): what it was sent, and its own reads."""
        with open(f"/proc/{self.proc.pid}/io") as f:
            return int(next(line for line in f if line.startswith("rchar:")).split()[1])

    def stop(self):
        if self.rusage is None:
            self.proc.send_signal(signal.SIGTERM)
            dummy, dummy, self.rusage = os.wait4(self.proc.pid, 0)


class Clients:
    """CPU seconds and peak memory of the client processes of a step (each waited for with wait4)."""

    def __init__(self):
        self.cpu, self.rss_mb = 0.0, 0.0

    def run(self, argv: list[str], env=None) -> None:
        # peak memory through GNU time: a child forked from this Python would count its RSS too
        with tempfile.NamedTemporaryFile("r") as peak:
            timed = ["/usr/bin/time", "-f", "%M", "-o", peak.name] if os.path.exists("/usr/bin/time") else []
            p = subprocess.Popen(timed + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            err = p.stderr.read().decode(errors="replace")
            dummy, status, ru = os.wait4(p.pid, 0)   # the rusage covers time's reaped child
            p.returncode = os.waitstatus_to_exitcode(status)
            self.cpu += ru.ru_utime + ru.ru_stime
            kib = peak.read().strip().splitlines()
            if kib and kib[-1].isdigit():
                self.rss_mb = max(self.rss_mb, int(kib[-1]) / 1024)
        if p.returncode:
            raise SystemExit(f"{argv[:2]} failed ({p.returncode}): {err[-2000:]}")


# --- the ways ---------------------------------------------------------------------------------
def way_push(ctx, dest) -> dict:
    job = {"base": dest.url, "user": USER, "password": PASSWORD, "ca": str(ctx["tls"] / "ca.crt"),
           "root": str(ctx["storage"]), "images": ctx["images"]}
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    c = Clients()
    c.run([sys.executable, "-c", PUSH.format(collections=str(TOP / "collections")), json.dumps(job)], env)
    return {"client_cpu_s": c.cpu, "client_rss_mb": c.rss_mb, "source_cpu_s": 0.0}


def _skopeo_dest(ctx) -> list[str]:
    return ["--dest-cert-dir", str(ctx["ca_dir"]), "--dest-creds", f"{USER}:{PASSWORD}"]


def way_sync(ctx, dest) -> dict:
    src = Registry(ctx["binary"], ctx["storage"], ctx["work"] / "conf-source")
    try:
        hostport = src.url.split("://", 1)[1]
        spec = ctx["work"] / "sync.yml"
        images = {}
        for i in ctx["images"]:
            images.setdefault(i["repo"], []).append(i["tag"])
        spec.write_text(json.dumps({hostport: {"tls-verify": False, "images": images}}))
        c = Clients()
        c.run(["skopeo", "sync", "--src", "yaml", "--dest", "docker", "--preserve-digests",
               *_skopeo_dest(ctx), str(spec), dest.url.split("://", 1)[1] + "/library"])
    finally:
        src.stop()
    return {"client_cpu_s": c.cpu, "client_rss_mb": c.rss_mb, "source_cpu_s": src.cpu_s()}


def way_oci(ctx, dest) -> dict:
    layout = ctx["work"] / "oci-layout"
    shutil.rmtree(layout, ignore_errors=True)
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    base = Path(ctx["storage"]) / rs.V2 / "blobs" / "sha256"
    for d in base.iterdir():
        for b in d.iterdir():
            (blobs / b.name).symlink_to(b / "data")
    index = []
    for n, i in enumerate(ctx["images"]):
        raw, media, dummy = rp.read_manifest(str(ctx["storage"]), i["digest"])
        index.append({"mediaType": media, "digest": i["digest"], "size": len(raw),
                      "annotations": {rs.REF_NAME: f"i{n}"}})
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": index}))
    c = Clients()
    for n, i in enumerate(ctx["images"]):
        c.run(["skopeo", "copy", "-q", "--preserve-digests", *_skopeo_dest(ctx), f"oci:{layout}:i{n}",
               f"docker://{dest.url.split('://', 1)[1]}/{i['repo']}:{i['tag']}"])
    return {"client_cpu_s": c.cpu, "client_rss_mb": c.rss_mb, "source_cpu_s": 0.0}


def verify(ctx, dest) -> None:
    reg = rp.Registry(dest.url, USER, PASSWORD, str(ctx["tls"] / "ca.crt"))
    for i in ctx["images"]:
        got = reg.manifest_digest(i["repo"], i["tag"])
        if got != i["digest"]:
            raise SystemExit(f"{i['repo']}:{i['tag']} is at {got} in the destination, not {i['digest']}")


def one(ctx, way: str, rnd: int) -> dict:
    root = ctx["work"] / f"dest-{way}-{rnd}"
    shutil.rmtree(root, ignore_errors=True)
    dest = Registry(ctx["binary"], root, ctx["work"] / f"conf-dest-{way}", ctx["tls"])
    out = {}
    try:
        for phase in ("fresh", "again"):
            cpu0, read0, t0 = dest.cpu_s(), dest.rchar(), time.monotonic()
            r = {"push": way_push, "sync": way_sync, "oci": way_oci}[way](ctx, dest)
            r["wall_s"] = time.monotonic() - t0
            r["dest_cpu_s"] = dest.cpu_s() - cpu0
            r["dest_read_mb"] = (dest.rchar() - read0) / 1e6
            if phase == "fresh":
                verify(ctx, dest)
            out[phase] = {k: round(v, 2) for k, v in r.items()}
    finally:
        dest.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=6)
    ap.add_argument("--base-mb", type=int, default=32, help="MiB of the base layer all images share")
    ap.add_argument("--own-mb", type=int, default=8, help="MiB of each image's own layer")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ways", default=",".join(WAYS))
    args = ap.parse_args()
    if not shutil.which("skopeo"):
        raise SystemExit("skopeo is missing: apt-get install --no-install-recommends skopeo")
    work = TOP / ".cache" / "registry-push-bench"
    work.mkdir(parents=True, exist_ok=True)
    storage, images = build_storage(work, args.images, args.base_mb, args.own_mb)
    ctx = {"work": work, "storage": storage, "images": images, "binary": registry_binary(work),
           "tls": registry_tls(work / "tls", ips=("127.0.0.1",)), "ca_dir": work / "tls-ca"}
    ctx["ca_dir"].mkdir(exist_ok=True)   # skopeo's cert dir: the CA alone (a *.key there wants its *.cert)
    shutil.copy(ctx["tls"] / "ca.crt", ctx["ca_dir"] / "ca.crt")
    ways = args.ways.split(",")
    results = {w: [] for w in ways}
    for rnd in range(args.rounds):
        for way in (ways if rnd % 2 == 0 else ways[::-1]):
            results[way].append(one(ctx, way, rnd))
            print(rnd, way, json.dumps(results[way][-1]), flush=True)
    stored = rs.stored_blob_bytes(str(storage))
    summary = {"images": len(images), "image_bytes": sum(i["bytes"] for i in images), "stored_blob_bytes": stored,
               "rounds": args.rounds, "skopeo": subprocess.run(["skopeo", "--version"], capture_output=True,
                                                               text=True, check=False).stdout.strip(), "medians": {}}
    print(f"\n{len(images)} images, {summary['image_bytes'] / 1e6:.0f} MB as images, "
          f"{stored / 1e6:.0f} MB stored; medians of {args.rounds} rounds\n")
    print("| way | run | wall s | client CPU s | client peak RSS MB | source registry CPU s | "
          "destination registry CPU s | destination read MB |")
    print("|---|---|---|---|---|---|---|---|")
    for way in ways:
        for phase in ("fresh", "again"):
            med = {k: round(statistics.median(r[phase][k] for r in results[way]), 2)
                   for k in results[way][0][phase]}
            summary["medians"][f"{way}/{phase}"] = med
            print(f"| {way} | {phase} | {med['wall_s']} | {med['client_cpu_s']} | {med['client_rss_mb']:.0f} | "
                  f"{med['source_cpu_s']} | {med['dest_cpu_s']} | {med['dest_read_mb']:.0f} |")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
