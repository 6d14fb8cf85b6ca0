"""ansible-builder makes the build context of an execution environment (the container image AWX
and Ansible Automation Platform run playbooks in) from the repository. The image is built with
podman and runs a preview of a fresh site in test_check_mode.py (tests/harness/ee_image.py)."""
import shutil
import subprocess
import sys

import yaml

from harness.playbook import TOP, ansible_bin

VERSION = yaml.safe_load((TOP / "galaxy.yml").read_text())["version"]


def test_ansible_builder_create_makes_a_build_context(tmp_path):
    ee = tmp_path / "ee"
    shutil.copytree(TOP / "ee", ee)
    subprocess.run([ansible_bin("ansible-galaxy"), "collection", "build", "--output-path", str(ee / "dist"), str(TOP)],
                   capture_output=True, text=True, check=True)
    ctx = tmp_path / "context"
    res = subprocess.run([ansible_bin("ansible-builder"), "create", "-f", str(ee / "execution-environment.yml"),
                          "-c", str(ctx), "--output-filename", "Containerfile"], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    containerfile = (ctx / "Containerfile").read_text()
    assert "ansible-galaxy collection install" in containerfile and "introspect" in containerfile
    req = yaml.safe_load((ctx / "_build" / "requirements.yml").read_text())
    (entry,) = req["collections"]
    # the tarball the galaxy stage installs is in the context, under the name the requirements use
    assert entry["type"] == "file" and (ctx / "_build" / entry["name"]).is_file(), entry
    assert entry["name"].endswith(f"offline_pot-tke-{VERSION}.tar.gz"), "ee/execution-environment.yml names another version"

    # what ansible-builder's introspection will add for the collection once installed
    colls = tmp_path / "colls"
    subprocess.run([ansible_bin("ansible-galaxy"), "collection", "install", "--offline", "--force", "-p", str(colls),
                    str(ctx / "_build" / entry["name"])], capture_output=True, text=True, check=True)
    intro = subprocess.run([sys.executable, str(ctx / "_build" / "scripts" / "introspect.py"),
                            "introspect", str(colls)], capture_output=True, text=True, check=True).stdout
    deps = yaml.safe_load(intro)
    assert any(line.startswith("cryptography>=") for line in deps["python"]), intro
    assert any(line.startswith("zstd") for line in deps["system"]), intro
