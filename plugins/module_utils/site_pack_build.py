# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Build an offline site pack from a spec (site_pack_spec) into a staging directory and archive.

Re-building with nothing changed writes nothing: downloads are cached by sha256, a file is
(re)placed only when its content differs, registry blobs already stored are kept, the apt index
and the archive are remade only when what they cover changed. External tools (apt-get,
apt-ftparchive, dpkg-deb, createrepo_c, pip, tar, zstd) are called through `run`, a callable
(argv, cwd) -> (rc, stdout, stderr), so the module passes AnsibleModule.run_command.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import platform
import shutil
import tarfile
import tempfile

from ansible.module_utils.urls import open_url

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import (
    atomic_path, atomic_writer, copy_file, write_file, write_if_differs)
from ansible_collections.offline_pot.tke.plugins.module_utils import host_probe
from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images
from ansible_collections.offline_pot.tke.plugins.module_utils import pack_manifest as pm
from ansible_collections.offline_pot.tke.plugins.module_utils import registry_storage as rs
from ansible_collections.offline_pot.tke.plugins.module_utils import safe_tar
from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_bootstrap as bootstrap
from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_spec as sps

STATE = ".build-state.json"


class BuildError(Exception):
    pass


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
    except OSError:
        return False
    return pm.sha256_file(a) == pm.sha256_file(b)


def _collection_manifest(tarball: str) -> bytes:
    with tarfile.open(tarball, "r:gz") as t:
        f = t.extractfile("MANIFEST.json")
        return f.read() if f else b""


class Builder:
    def __init__(self, spec: dict, output_dir: str, cache_dir: str, run, which,
                 compression: str = "auto", archive: bool = True, sign=None):
        self.spec = spec
        self.name = str(spec["name"])
        self.version = str(spec["version"])
        self.out = os.path.abspath(output_dir)
        self.stage = os.path.join(self.out, f"{self.name}-{self.version}")
        self.cache = os.path.abspath(cache_dir)
        self.run = run
        self.which = which
        self.compression = compression
        self.make_archive = archive
        # sign(stage) -> bool: signs the written manifest (pack_signature.sign_pack), True if changed
        self.sign = sign
        self.keep: set[str] = set()      # pack-relative paths this build produced
        self.changed: list[str] = []     # what changed, for the result
        self.contents: dict = {"os_packages": {"deb": [], "rpm": []}, "binaries": [], "images": [],
                               "charts": [], "controller": {"collections": [], "wheels": []}}

    # --- sources ---------------------------------------------------------------------------
    def fetch(self, what: str, item: dict) -> str:
        """A local file for a url/path item, its sha256 checked; downloads cached by sha256."""
        sha = item.get("sha256")
        if item.get("path"):
            path = os.path.abspath(os.path.expanduser(str(item["path"])))
            if not os.path.isfile(path):
                raise BuildError(f"{what}: {path} does not exist")
            if sha and pm.sha256_file(path) != sha:
                raise BuildError(f"{what}: {path} does not match its sha256 "
                                 f"(is {pm.sha256_file(path)}, spec says {sha})")
            return path
        url = str(item["url"])
        dest = os.path.join(self.cache, "downloads", sha, sps.basename(item))
        if os.path.isfile(dest) and pm.sha256_file(dest) == sha:
            return dest
        h = hashlib.sha256()
        try:
            # ansible's open_url: the proxy environment, the system CA bundle, TLS verification
            with atomic_writer(dest) as f, open_url(url, timeout=60, http_agent="offline_pot.tke site_pack") as r:
                for chunk in iter(lambda: r.read(1 << 20), b""):
                    h.update(chunk)
                    f.write(chunk)
                if h.hexdigest() != sha:  # nothing lands in the cache
                    raise BuildError(f"{what}: {url} does not match its sha256 (is {h.hexdigest()}, spec says {sha})")
        except BuildError:
            raise
        except Exception as e:  # any failure of the download names the item
            raise BuildError(f"{what}: download of {url} failed: {e}") from e
        return dest

    # --- staging ---------------------------------------------------------------------------
    def place(self, src: str, rel: str, mode: int = 0o644) -> None:
        dest = os.path.join(self.stage, rel)
        self.keep.add(rel)
        if _same_file(src, dest):
            return
        copy_file(src, dest, mode)
        self.changed.append(rel)

    def write(self, rel: str, data: bytes) -> bool:
        self.keep.add(rel)
        if not write_if_differs(os.path.join(self.stage, rel), data):
            return False
        self.changed.append(rel)
        return True

    def _cmd(self, what: str, argv: list[str], cwd: str | None = None) -> str:
        rc, out, err = self.run(argv, cwd)
        if rc != 0:
            raise BuildError(f"{what}: {' '.join(argv)} failed ({rc}): {(err or out).strip()[-800:]}")
        return out

    # --- sections --------------------------------------------------------------------------
    def os_packages(self) -> None:
        osp = self.spec.get("os_packages") or {}
        folders = set()
        for i, item in enumerate(osp.get("deb") or []):
            what = sps.label("os_packages.deb", item, i)
            folder = sps.deb_dir(item)
            folders.add(folder)
            for path in self._deb_sources(what, item):
                # apt reads a file: URL's %3a (an epoch's colon) as ':' and then misses the file
                self.place(path, folder + os.path.basename(path).replace("%3a", "-"))
        for folder in sorted(folders):
            debs = sorted(p for p in self.keep if p.startswith(folder) and p.endswith(".deb"))
            for rel in debs:
                fields = self._cmd("deb", ["dpkg-deb", "-f", os.path.join(self.stage, rel), "Package", "Version"])
                kv = dict(line.split(": ", 1) for line in fields.splitlines() if ": " in line)
                self.contents["os_packages"]["deb"].append(
                    {"name": kv.get("Package"), "version": kv.get("Version"), "file": rel})
            self._index_deb(folder)
        for i, item in enumerate(osp.get("rpm") or []):
            what = sps.label("os_packages.rpm", item, i)
            path = self.fetch(what, item)
            self.place(path, "repo/rpm/" + sps.basename(item))
            self.contents["os_packages"]["rpm"].append({"file": "repo/rpm/" + sps.basename(item)})
        if osp.get("rpm"):
            self._index_rpm()

    def _deb_sources(self, what: str, item: dict) -> list[str]:
        if "apt" in item:
            mine = self.release()
            if item.get("release") and item["release"] != mine:
                raise BuildError(f"{what}: apt fetches this machine's release ({mine or 'unknown'}), not "
                                 f"{item['release']}: give {item['release']}'s packages with dir, path or url")
            arch, wanted = pm.deb_arch(platform.machine()), pm.binary_arch(item)
            if wanted != arch:
                raise BuildError(f"{what}: apt fetches this machine's architecture ({arch}), not "
                                 f"{wanted}: give {wanted}'s packages with dir, path or url")
            names = sorted(str(n) for n in item["apt"])
            d = os.path.join(self.cache, "apt", hashlib.sha256(" ".join(names).encode()).hexdigest()[:16])
            if not glob.glob(os.path.join(d, "*.deb")):
                tmp = d + ".part"
                shutil.rmtree(tmp, ignore_errors=True)
                os.makedirs(tmp)
                self._cmd(what, ["apt-get", "download", "-q", *names], cwd=tmp)
                shutil.rmtree(d, ignore_errors=True)
                os.replace(tmp, d)
            return sorted(glob.glob(os.path.join(d, "*.deb")))
        if "dir" in item:
            found = sorted(glob.glob(os.path.join(os.path.expanduser(str(item["dir"])), "*.deb")))
            if not found:
                raise BuildError(f"{what}: no .deb in {item['dir']}")
            return found
        return [self.fetch(what, item)]

    @staticmethod
    def release(os_release: str = "/etc/os-release") -> str:
        """This build machine's Debian release (VERSION_CODENAME), or ''."""
        return host_probe.os_release(os_release).get("VERSION_CODENAME", "")

    def _index_deb(self, folder: str) -> None:
        """folder's Packages and Release (apt-ftparchive, run in it: the other releases' folders are
        its siblings, not read)."""
        repo = os.path.join(self.stage, folder)
        for rel in (folder + "Packages", folder + "Release"):
            self.keep.add(rel)
        if not self.which("apt-ftparchive"):
            raise BuildError("os_packages.deb: apt-ftparchive (Debian package apt-utils) is needed to index the repository")
        packages = self._cmd("os_packages.deb", ["apt-ftparchive", "packages", "."], cwd=repo)
        if self.write(folder + "Packages", packages.encode()) or not os.path.exists(os.path.join(repo, "Release")):
            release = self._cmd("os_packages.deb", ["apt-ftparchive", "release", "."], cwd=repo)
            self.write(folder + "Release", release.encode())

    def _index_rpm(self) -> None:
        tool = self.which("createrepo_c") or self.which("createrepo")
        if not tool:
            raise BuildError("os_packages.rpm: createrepo_c (or createrepo) is needed to index the RPM repository")
        repo = os.path.join(self.stage, "repo", "rpm")
        stamp = os.path.join(repo, "repodata", "repomd.xml")
        if any(r.startswith("repo/rpm/") for r in self.changed) or not os.path.exists(stamp):
            self._cmd("os_packages.rpm", [tool, "--no-database", "."], cwd=repo)
            self.changed.append("repo/rpm/repodata")
        for path in pm.walk_files(os.path.join(repo, "repodata")):
            self.keep.add("repo/rpm/repodata/" + path)

    def binaries(self) -> None:
        items = self.spec.get("binaries") or []
        for i, item in enumerate(items):
            what = sps.label("binaries", item, i)
            # a binary in several versions (kubeadm, kubelet, kubectl of two Kubernetes versions, for an
            # upgrade) is kept per version: bin/<name>-<version>; one version: bin/<name> (another
            # architecture's under bin-<arch>/)
            folder = sps.binary_dir(item)
            pname = item["name"] if sum(1 for b in items if b.get("name") == item["name"]
                                        and pm.binary_arch(b) == pm.binary_arch(item)) == 1 \
                else f"{item['name']}-{item.get('version', '')}"
            path = self.fetch(what, item)
            entry = {"name": item["name"], "version": str(item.get("version", "")),
                     "install": item["install"], "groups": list(item.get("groups") or []),
                     "sha256": item["sha256"], "arch": pm.binary_arch(item)}
            if item.get("for_kubernetes") is not None:   # the Kubernetes minors this version serves
                entry["for_kubernetes"] = list(item["for_kubernetes"])
            if item.get("unpack"):
                entry["dir"] = f"{folder}{pname}/"
                with tempfile.TemporaryDirectory() as tmp:
                    try:
                        with tarfile.open(path) as t:
                            safe_tar.extract(t, tmp)
                    except (tarfile.TarError, OSError) as e:
                        raise BuildError(f"{what}: cannot unpack {path}: {e}") from e
                    for rel in pm.walk_files(tmp, exclude=()):
                        mode = 0o755 if os.stat(os.path.join(tmp, rel)).st_mode & 0o111 else 0o644
                        self.place(os.path.join(tmp, rel), entry["dir"] + rel, mode)
            else:
                entry["file"] = f"{folder}{pname}"
                self.place(path, entry["file"], 0o755)
            self.contents["binaries"].append(entry)

    def images(self) -> None:
        root = os.path.join(self.stage, "registry")
        image_bytes = 0
        images = self.image_sources()
        for i, item in enumerate(images):
            what = sps.label("images", item, i)
            path = item["path"]
            if os.path.isfile(path):
                path = self.fetch(what, {"path": path, "sha256": item.get("sha256")})
            try:
                res = rs.import_image(root, path, item["name"], str(item["tag"]))
            except rs.ImageError as e:
                raise BuildError(f"{what}: {e}") from e
            # an image the cluster pulls (derived: kubeadm's, the network's) serves every architecture the
            # pack's binaries are for (a site's own images may be for some nodes only; one that names
            # no architecture at all is taken as it is)
            lacking = sorted(set(self.arches()) - set(res["architectures"])) \
                if "source" in item and res["architectures"] else []
            if lacking:   # (the command writes the layout where the build looks first: <images_dir>/<name>_<tag>)
                layout = item["path"][:-4] if item["path"].endswith(".tar") else item["path"]
                raise BuildError(f"{what}: has no {', '.join(lacking)} image (it has {', '.join(res['architectures'])}), "
                                 f"and the pack's binaries are for {', '.join(self.arches())}; fetch it with: "
                                 f"{kube_images.fetch_command(item['source'], item['tag'], layout, True)}")
            if res["changed"]:
                self.changed.append(f"registry {item['name']}:{item['tag']}")
            image_bytes += res["image_bytes"]
            self.contents["images"].append({"name": item["name"], "tag": str(item["tag"]),
                                            "digest": res["digest"], "bytes": res["image_bytes"],
                                            "architectures": res["architectures"]})
        k8s = self.spec.get("kubernetes")
        if k8s:
            self.contents["kubernetes"] = {
                "versions": [str(v) for v in sps.as_list(k8s.get("versions"))],
                "network_plugins": sps.as_list(k8s.get("network_plugins", ["flannel"])),
                "namespace": str(k8s.get("namespace", "library"))}
        if self.contents["images"]:
            # keep exactly what the listed images reference: a blob or link of an image dropped
            # from the spec is pruned with everything else not produced by this build
            kept = self._registry_paths(root)
            for rel in kept:
                self.keep.add("registry/" + rel)
            stored = sum(os.path.getsize(os.path.join(root, rel)) for rel in kept if rel.endswith("/data"))
            self.contents["registry"] = {
                "image_bytes": image_bytes, "stored_blob_bytes": stored,
                "dedup_ratio": round(image_bytes / stored, 3) if stored else None}

    def arches(self) -> list[str]:
        """The architectures the spec's binaries are for (amd64 without any): every image must serve each."""
        return sorted({pm.binary_arch(b) for b in self.spec.get("binaries") or [] if isinstance(b, dict)} or {"amd64"})

    def image_sources(self) -> list[dict]:
        """The spec's images and the derived ones (site_pack_spec.pack_images), each with the
        absolute path of its OCI layout (a derived image: the directory <images_dir>/<name>_<tag>,
        else that name + .tar). Every missing one is named at once, a derived one with the command
        that fetches it on a connected machine, before anything is imported."""
        out, missing = [], []
        for i, item in enumerate(sps.pack_images(self.spec)):
            path = os.path.abspath(os.path.expanduser(str(item["path"])))
            if "source" in item and not os.path.exists(path) and os.path.isfile(path + ".tar"):
                path += ".tar"
            if not os.path.exists(path):
                if "source" in item:
                    missing.append(f"{item['name']}:{item['tag']} ({item['for']}): no OCI layout at {path} (or .tar); "
                                   "fetch it with: "
                                   f"{kube_images.fetch_command(item['source'], item['tag'], path, len(self.arches()) > 1)}")
                else:
                    missing.append(f"{sps.label('images', item, i)}: {path} does not exist")
                continue
            out.append(dict(item, path=path))
        if missing:
            raise BuildError(f"{len(missing)} image(s) missing:\n- " + "\n- ".join(missing))
        return out

    def _registry_paths(self, root: str) -> list[str]:
        paths = set()
        for img in self.contents["images"]:
            repo, tag, digest = img["name"], img["tag"], img["digest"]
            for kind in ("tag_current", "tag_index"):
                paths.add(rs.link_path(root, repo, kind, digest, tag))
            stack = [digest]
            while stack:
                d = stack.pop()
                paths.add(rs.blob_path(root, d))
                paths.add(rs.link_path(root, repo, "revision", d))
                with open(rs.blob_path(root, d), "rb") as f:
                    doc = json.load(f)
                stack += [m["digest"] for m in doc.get("manifests", [])]
                for blob in ([doc["config"]] if "config" in doc else []) + doc.get("layers", []):
                    paths.add(rs.blob_path(root, blob["digest"]))
                    paths.add(rs.link_path(root, repo, "layer", blob["digest"]))
        return sorted(os.path.relpath(p, root).replace(os.sep, "/") for p in paths)

    def plain_files(self, section: str, items: list, subdir: str, key: list[str]) -> None:
        for i, item in enumerate(items or []):
            path = self.fetch(sps.label(section, item, i), item)
            rel = f"{subdir}/{sps.basename(item)}"
            self.place(path, rel)
            target = self.contents
            for k in key:
                target = target[k]
            target.append({"file": rel, "sha256": item["sha256"]})

    def controller(self) -> None:
        ctl = self.spec.get("controller") or {}
        if not ctl:
            return
        self.plain_files("controller.collections", ctl.get("collections"), "collections", ["controller", "collections"])
        self.plain_files("controller.wheels", ctl.get("wheels"), "wheels", ["controller", "wheels"])
        req = ctl.get("requirements")
        if req:
            req = os.path.abspath(os.path.expanduser(str(req)))
            if not os.path.isfile(req):
                raise BuildError(f"controller.requirements: {req} does not exist")
            for d in self.controller_wheels(req, [str(v) for v in sps.as_list(ctl.get("python"))],
                                            sps.as_list(ctl.get("platform"))):
                for f in sorted(os.listdir(d)):
                    if "wheels/" + f not in self.keep:
                        self.place(os.path.join(d, f), "wheels/" + f)
                        self.contents["controller"]["wheels"].append({"file": "wheels/" + f})
            self.place(req, "wheels/requirements.txt")
        if ctl.get("collection"):
            self.controller_collection(str(ctl["collection"]))
        self.write(bootstrap.NAME, bootstrap.SCRIPT.encode())
        os.chmod(os.path.join(self.stage, bootstrap.NAME), 0o755)
        self.contents["controller"].update(bootstrap=bootstrap.NAME, requirements="wheels/requirements.txt",
                                           python=[str(v) for v in sps.as_list(ctl.get("python"))],
                                           platform=sps.as_list(ctl.get("platform")))

    def controller_wheels(self, req: str, pythons: list[str], platforms: list[str]) -> list[str]:
        """Cache directories holding the wheels of the requirements (and pip, which the bootstrap
        runs from its wheel): for each controller Python on the given platforms, binary wheels
        only (pip download --only-binary=:all:); without pythons, for the build machine's."""
        base = ["python3", "-m", "pip", "download", "-q", "--disable-pip-version-check"]
        targets = [[]] if not pythons else [
            ["--only-binary=:all:", "--implementation", "cp", "--python-version", py]
            + [arg for plat in platforms for arg in ("--platform", plat)] for py in pythons]
        dirs = []
        for target in targets:
            key = hashlib.sha256(json.dumps([pm.sha256_file(req), target]).encode()).hexdigest()[:16]
            d = os.path.join(self.cache, "pip", key)
            if not os.path.isdir(d):
                tmp = d + ".part"
                shutil.rmtree(tmp, ignore_errors=True)
                self._cmd("controller.requirements", base + target + ["-d", tmp, "-r", req, "pip"])
                os.replace(tmp, d)
            dirs.append(d)
        return dirs

    def controller_collection(self, src: str) -> None:
        """collections/<namespace>-<name>-<version>.tar.gz built from a collection source with
        ansible-galaxy; kept when its MANIFEST.json (which covers every file's sha256) is unchanged,
        since a new build differs in its timestamps alone."""
        src = os.path.abspath(os.path.expanduser(src))
        if not os.path.isfile(os.path.join(src, "galaxy.yml")):
            raise BuildError(f"controller.collection: {src} is not a collection source (no galaxy.yml)")
        galaxy = self.which("ansible-galaxy")
        if not galaxy:
            raise BuildError("controller.collection: ansible-galaxy not found on the build machine")
        with tempfile.TemporaryDirectory(prefix="tke-pack-collection-") as tmp:
            self._cmd("controller.collection", [galaxy, "collection", "build", "--output-path", tmp, src])
            (name,) = [f for f in os.listdir(tmp) if f.endswith(".tar.gz")]
            rel = "collections/" + name
            staged = os.path.join(self.stage, rel)
            if os.path.isfile(staged) and _collection_manifest(staged) == _collection_manifest(os.path.join(tmp, name)):
                self.keep.add(rel)
            else:
                self.place(os.path.join(tmp, name), rel)
        self.contents["controller"]["collections"].append({"file": rel, "sha256": pm.sha256_file(staged)})

    # --- whole build -----------------------------------------------------------------------
    def prune(self) -> None:
        for rel in pm.walk_files(self.stage):
            if rel not in self.keep:
                os.unlink(os.path.join(self.stage, rel))
                self.changed.append(f"removed {rel}")
        for dirpath, dummy, dummy in sorted(os.walk(self.stage), reverse=True):
            if dirpath != self.stage and not os.listdir(dirpath):
                os.rmdir(dirpath)

    def manifest(self) -> dict:
        state_file = os.path.join(self.out, f".{self.name}-{self.version}{STATE}")
        try:
            with open(state_file) as f:
                known = json.load(f)
        except (OSError, ValueError):
            known = {}
        files = pm.scan_tree(self.stage, known)
        write_file(state_file, json.dumps(files))
        m = pm.build_manifest(self.name, self.version, files, self.contents)
        if self.write(pm.MANIFEST_NAME, pm.dump_manifest(m).encode()):
            self.changed.append(pm.MANIFEST_NAME)
        return m

    def archive(self) -> str | None:
        if not self.make_archive:
            return None
        comp = self.compression
        if comp == "auto":
            comp = "zstd" if self.which("zstd") else "gzip"
        ext = {"zstd": ".tar.zst", "gzip": ".tar.gz", "none": ".tar"}[comp]
        path = os.path.join(self.out, f"{self.name}-{self.version}{ext}")
        stamp = path + ".manifest-sha256"
        # the manifest and its signature (a pack re-signed with another key is archived again)
        msha = "".join(pm.sha256_file(os.path.join(self.stage, n)) for n in (pm.MANIFEST_NAME, pm.SIGNATURE_NAME)
                       if os.path.exists(os.path.join(self.stage, n)))
        try:
            with open(stamp) as f:
                if f.read().strip() == msha and os.path.exists(path):
                    return path
        except OSError:
            pass
        base = os.path.basename(self.stage)
        tar = ["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "-C", self.out]
        with atomic_path(path) as tmp:
            if comp == "zstd":
                self._cmd("archive", tar + ["-I", "zstd -T0 -10", "-cf", tmp, base])
            elif comp == "gzip":
                self._cmd("archive", tar + ["-czf", tmp, base])
            else:
                self._cmd("archive", tar + ["-cf", tmp, base])
        write_file(stamp, msha + "\n")
        self.changed.append(os.path.basename(path))
        return path

    def build(self) -> dict:
        os.makedirs(self.stage, exist_ok=True)
        self.os_packages()
        self.binaries()
        self.images()
        self.charts_section()
        self.components_section()
        self.controller()
        self.prune()
        m = self.manifest()
        if self.sign and self.sign(self.stage):
            self.changed.append(pm.SIGNATURE_NAME)
        path = self.archive()
        return {"changed": bool(self.changed), "changes": self.changed, "pack_dir": self.stage,
                "archive": path, "contents": m["contents"], "files": len(m["files"]),
                "bytes": sum(f["size"] for f in m["files"])}

    def charts_section(self) -> None:
        self.plain_files("charts", self.spec.get("charts"), "charts", ["charts"])

    # --- components (docs/components.md) ------------------------------------------------------
    TEMPLATE_SUFFIXES = (".yml", ".yaml", ".yml.j2", ".yaml.j2")

    def components_section(self) -> None:
        """components/<name>/: each component's manifest templates; contents.components lists
        them with their files and images (the images themselves are in registry/, images())."""
        self.contents["components"] = []
        for i, item in enumerate(self.spec.get("components") or []):
            what = sps.label("components", item, i)
            if item.get("chart"):
                self.chart_component(what, item)
                continue
            src = os.path.abspath(os.path.expanduser(str(item["dir"])))
            if not os.path.isdir(src):
                raise BuildError(f"{what}: {src} is not a directory")
            files = [rel for rel in pm.walk_files(src, exclude=()) if rel.endswith(self.TEMPLATE_SUFFIXES)]
            if not files:
                raise BuildError(f"{what}: {src} has no manifest template ({', '.join(self.TEMPLATE_SUFFIXES)})")
            base = f"components/{item['name']}/"
            for rel in files:
                self.place(os.path.join(src, rel), base + rel)
            self.contents["components"].append({
                "name": item["name"], "dir": base, "files": [base + rel for rel in files],
                "images": [f"{img['name']}:{img['tag']}" for img in item.get("images") or []]})

    def chart_component(self, what: str, item: dict) -> None:
        """components/<name>/<chart file>: a Helm chart (helm 3: Chart.yaml apiVersion v2) with its
        name and version from its Chart.yaml, which contents.components records with its sha256."""
        path = self.fetch(what, {"path": item["chart"], "sha256": item.get("sha256")})
        meta = chart_metadata(what, path)
        rel = f"components/{item['name']}/{os.path.basename(path)}"
        self.place(path, rel)
        self.contents["components"].append({
            "name": item["name"], "dir": f"components/{item['name']}/", "files": [rel],
            "chart": {"file": rel, "name": meta["name"], "version": str(meta["version"]),
                      "sha256": pm.sha256_file(path)},
            "images": [f"{img['name']}:{img['tag']}" for img in item.get("images") or []]})


def chart_metadata(what: str, path: str) -> dict:
    """A packaged chart's Chart.yaml (<chart>/Chart.yaml in the archive): name, version and
    apiVersion v2 (helm 3) required."""
    import yaml   # the build machine's (the controller's requirements)
    try:
        with tarfile.open(path, "r:*") as t:
            member = next((m for m in t if m.isfile() and m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")),
                          None)
            meta = yaml.safe_load(t.extractfile(member)) if member else None
    except (tarfile.TarError, OSError, yaml.YAMLError) as e:
        raise BuildError(f"{what}: {path} is not a packaged Helm chart: {e}") from None
    if not isinstance(meta, dict):
        raise BuildError(f"{what}: {path} is not a packaged Helm chart (no <name>/Chart.yaml in it)")
    if meta.get("apiVersion") != "v2" or not meta.get("name") or not meta.get("version"):
        raise BuildError(f"{what}: {path}: its Chart.yaml needs apiVersion v2 (helm 3), a name and a version")
    return meta
