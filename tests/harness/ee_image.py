"""The execution environment image, built here with ansible-builder and podman from
ee/execution-environment.yml, and run with ansible-runner's process isolation (what AWX does).

The definition in ee/ keeps its public base image (ubi9-minimal, which no registry here serves);
the image built here swaps in a base made on this machine: the test hosts' Debian 12 root
filesystem (tests/harness/testhosts.sh's debootstrap tarball) imported into podman, plus Debian's
python3-pip. The swap also says what differs between that base and ubi9 (Debian's interpreter
path, apt-get instead of microdnf, pip already there, the system Python's PEP 668 marker), and
gives pip a wheelhouse downloaded here (the image build itself reaches no package index: the
registries here are behind a proxy whose certificate the image does not trust). The rest is
ee/'s own definition: ansible-core, ansible-runner, the collection's tarball, and what
ansible-builder's introspection of the installed collection adds (meta/ee-requirements.txt's
Python packages, bindep.txt's system packages, installed with apt-get).

podman runs with its own configuration under .cache/podman (the machine's is not touched): runc,
which tests/run_all.sh installs beside podman (crun, podman's other runtime, was found to refuse
this machine's hybrid cgroups); no default ulimits (runc fails "error setting rlimit type 7:
operation not permitted" with them here); overlay storage on a file system that takes it, vfs
otherwise (vfs copies every layer whole: the same build took 6 minutes)."""
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import ansible_runner
import yaml

from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_build
from harness.playbook import TOP, ansible_bin
from harness.testhosts import SCRIPT as TESTHOSTS_SH

STATE = TOP / ".cache" / "podman"
ROOTFS_TAR = TOP / ".cache" / "testhosts" / "rootfs.tar.zst"
TAG = "localhost/offline_pot-tke-ee:test"
# the EE's Python packages beyond requirements.txt's pins: ansible-builder's builder stage
# installs bindep (and pyyaml, packaging) to read the system needs; its final stage dumb-init
EXTRA_WHEELS = ["ansible-runner==2.4.3", "bindep==2.14.0", "packaging", "dumb-init==1.2.5"]
# the base: the test hosts' root filesystem, with pip (ansible-builder's stages run pip)
BASE_RECIPE = """FROM {rootfs}
RUN rm -f /etc/apt/sources.list.d/local.list && echo "deb {mirror} bookworm main" > /etc/apt/sources.list \\
 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
"""


def _storage_driver() -> str:
    fs = subprocess.run(["stat", "-f", "-c", "%T", str(STATE)], capture_output=True, text=True, check=True)
    return "overlay" if fs.stdout.strip() in ("ext2/ext3", "xfs", "btrfs") else "vfs"


def env() -> dict:
    """The environment podman (and ansible-builder, ansible-runner calling it) runs with."""
    STATE.mkdir(parents=True, exist_ok=True)
    conf, storage = STATE / "containers.conf", STATE / "storage.conf"
    conf.write_text('[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n')
    storage.write_text(f'[storage]\ndriver = "{_storage_driver()}"\nrunroot = "{STATE / "run"}"\n'
                       f'graphroot = "{STATE / "graph"}"\n')
    return dict(os.environ, CONTAINERS_CONF=str(conf), CONTAINERS_STORAGE_CONF=str(storage))


def podman(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], env=env(), capture_output=True, text=True, check=True, **kw)


def _mirror() -> str:
    """The machine's Debian mirror, as testhosts.sh's debootstrap takes it."""
    return subprocess.run(["bash", str(TESTHOSTS_SH), "mirror"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _exists(tag: str) -> bool:
    return subprocess.run(["podman", "image", "exists", tag], env=env(), check=False).returncode == 0


def base_image() -> str:
    """localhost/tke-ee-base:<key>: the test hosts' rootfs imported, python3-pip added; made once
    per rootfs tarball and recipe."""
    key = hashlib.sha256(ROOTFS_TAR.read_bytes() + BASE_RECIPE.encode()).hexdigest()[:12]
    rootfs, base = f"localhost/tke-testhost-rootfs:{key}", f"localhost/tke-ee-base:{key}"
    if _exists(base):
        return base
    if not _exists(rootfs):
        with subprocess.Popen(["zstd", "-dc", str(ROOTFS_TAR)], stdout=subprocess.PIPE) as unz:
            podman("import", "-q", "-", rootfs, stdin=unz.stdout)
    with tempfile.TemporaryDirectory(prefix="tke-ee-base-") as ctx:
        Path(ctx, "Containerfile").write_text(BASE_RECIPE.format(rootfs=rootfs, mirror=_mirror()))
        podman("build", "-q", "--network=host", "-t", base, ctx, timeout=600)
    return base


def wheelhouse() -> Path:
    """requirements.txt's pinned packages and EXTRA_WHEELS as wheels for this machine's Python (3.11,
    as the base's), downloaded as the site pack's controller wheels are (site_pack_build's
    controller_wheels: pip download, cached per requirement list)."""
    STATE.mkdir(parents=True, exist_ok=True)
    req = STATE / "ee-requirements.txt"
    req.write_text((TOP / "requirements.txt").read_text() + "".join(f"{w}\n" for w in EXTRA_WHEELS))

    def run(argv, cwd):
        res = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, timeout=600)
        return res.returncode, res.stdout, res.stderr

    builder = site_pack_build.Builder({"name": "ee", "version": "0"}, str(STATE), str(STATE), run, shutil.which)
    (d,) = builder.controller_wheels(str(req), [], [])
    return Path(d)


def definition(ee: Path, base: str, wheels: str) -> dict:
    """ee/execution-environment.yml with this machine's base (see the module's docstring)."""
    d = yaml.safe_load((ee / "execution-environment.yml").read_text())
    d["images"]["base_image"]["name"] = base
    d["dependencies"]["python_interpreter"] = {"python_path": "/usr/bin/python3"}
    d["options"] = {**d.get("options", {}), "package_manager_path": "/usr/bin/apt-get", "skip_pip_install": True}
    d["additional_build_files"] = d.get("additional_build_files", []) + [{"src": wheels, "dest": "wheels"}]
    d["additional_build_steps"] = {
        "prepend_base": ["COPY _build/wheels/ /wheels/",
                         "ENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/wheels PIP_BREAK_SYSTEM_PACKAGES=1"],
        "append_final": ["RUN rm -rf /wheels"]}
    return d


def build(workdir: Path) -> subprocess.CompletedProcess:
    """ansible-builder build of the definition above into TAG; the collection tarball built from
    this checkout as ee/'s instructions say (docs/testing.md, "The execution environment")."""
    ee = workdir / "ee"
    shutil.copytree(TOP / "ee", ee)
    subprocess.run([ansible_bin("ansible-galaxy"), "collection", "build", "--output-path", str(ee / "dist"), str(TOP)],
                   capture_output=True, text=True, check=True)
    shutil.copytree(wheelhouse(), ee / "wheels")
    (ee / "local.yml").write_text(yaml.safe_dump(definition(ee, base_image(), "wheels"), sort_keys=False))
    return subprocess.run([ansible_bin("ansible-builder"), "build", "-f", str(ee / "local.yml"),
                           "-c", str(workdir / "context"), "-t", TAG, "--container-runtime", "podman",
                           "--extra-build-cli-args=--network=host", "-v", "2"],
                          env=env(), capture_output=True, text=True, check=False, timeout=1200)


def run(pdd: Path, playbook: str, inventory: Path, mounts: list[Path], *args: str):
    """ansible-runner's run of a playbook in TAG, as AWX runs a job: process isolation with podman,
    the inventory in the private data dir's inventory/ (where ansible-runner always points a
    container), the host's network (the test hosts' bridge), as root in the container (the private
    data dir is root's). The site's folder (the inventory's) is mounted read-write at its own path
    and named by tke_site_dir, as an AWX job needs (docs/install.md, "From AWX or Ansible Automation
    Platform"); the mounts (the pack, the SSH key) read-only at their paths. pdd: the private data
    dir, kept (its artifacts/ hold the job's events and output). Returns ansible-runner's Runner
    (rc, status, stats, events) with the job's output."""
    keep = {k: os.environ.get(k) for k in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF")}
    os.environ.update({k: env()[k] for k in keep})
    try:
        (pdd / "inventory").mkdir(parents=True)
        shutil.copy(inventory, pdd / "inventory" / "hosts.yml")
        runner = ansible_runner.run(
            private_data_dir=str(pdd), playbook=playbook, cmdline=" ".join(args),
            extravars={"tke_site_dir": str(inventory.parent)},
            process_isolation=True, process_isolation_executable="podman", container_image=TAG,
            container_options=["--network=host", "--user=0"],
            container_volume_mounts=[f"{inventory.parent}:{inventory.parent}:rw"] + [f"{m}:{m}:ro" for m in mounts],
            envvars={"ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_NOCOLOR": "1"}, quiet=True, timeout=900)
        runner.output = runner.stdout.read()
    finally:
        for k, v in keep.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return runner
