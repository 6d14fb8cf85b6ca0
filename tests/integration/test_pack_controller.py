"""The site pack carries its own controller: wheels fetched for the controller's Python and
platform (binary only), the collection built from source, and a `bootstrap` script that makes a
working controller from the pack with no network at all (run here in a network namespace of its
own: `unshare -n`, only a down loopback interface, no route, no resolver)."""
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_build as b
from harness.playbook import TOP

PY = "%d.%d" % sys.version_info[:2]
# glibc wheel tags a Debian 12 controller (glibc 2.36) installs
PLATFORMS = ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64"]


def run(argv, cwd=None):
    res = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.skipif(shutil.which("unshare") is None or os.geteuid() != 0, reason="needs root and unshare")
def test_bootstrap_makes_a_controller_from_the_pack_without_network(tmp_path):
    spec = {"name": "ctl", "version": "1", "controller": {
        "python": [PY], "platform": PLATFORMS, "requirements": str(TOP / "requirements.txt"), "collection": str(TOP)}}
    which = lambda name: shutil.which(name, path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])  # noqa: E731
    build = b.Builder(spec, str(tmp_path / "out"), str(tmp_path / "cache"), run, which, archive=False).build()
    pack = tmp_path / "out" / "ctl-1"
    ctl = build["contents"]["controller"]
    assert ctl["bootstrap"] == "bootstrap" and ctl["python"] == [PY] and ctl["platform"] == PLATFORMS
    wheels = sorted(p.name for p in (pack / "wheels").iterdir())
    assert not [w for w in wheels if not w.endswith(".whl") and w != "requirements.txt"], wheels   # binary only
    assert any(w.startswith("pip-") for w in wheels) and any(w.startswith("ansible_core-2.19") for w in wheels)
    assert any(w.startswith("cryptography-") and "manylinux" in w for w in wheels), wheels
    (coll,) = [c["file"] for c in ctl["collections"]]
    assert coll.startswith("collections/offline_pot-tke-") and (pack / coll).is_file()
    assert os.access(pack / "bootstrap", os.X_OK)

    # re-building changes nothing (the collection is rebuilt but kept: same MANIFEST.json)
    again = b.Builder(spec, str(tmp_path / "out"), str(tmp_path / "cache"), run, which, archive=False).build()
    assert again["changed"] is False, again["changes"]

    # the controller host: no network, only the pack and python3
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    def offline(code):
        return subprocess.run(["unshare", "-n", "python3", "-c", code], capture_output=True, text=True, env=env,
                              check=False)
    assert subprocess.run(["unshare", "-n", "ip", "route"], capture_output=True, text=True, check=True).stdout == ""
    no_route = offline("import socket; socket.create_connection(('1.1.1.1', 443), 3)")
    assert "Network is unreachable" in no_route.stderr, no_route.stderr
    no_resolver = offline("import socket; socket.getaddrinfo('pypi.org', 443)")
    assert "socket.gaierror" in no_resolver.stderr, no_resolver.stderr
    boot = subprocess.run(["unshare", "-n", "sh", str(pack / "bootstrap"), str(tmp_path / "controller")],
                          capture_output=True, text=True, env=env, check=False)
    assert boot.returncode == 0, boot.stdout + boot.stderr
    check = subprocess.run(["unshare", "-n", "sh", "-c", f". {tmp_path}/controller/activate && cd / && "
                            "ansible --version && ansible-doc -t module offline_pot.tke.precheck | head -1 && "
                            "python -c 'import cryptography, paramiko'"],
                           capture_output=True, text=True, env=env, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "core 2.19" in check.stdout and "offline_pot.tke.precheck" in check.stdout, check.stdout
