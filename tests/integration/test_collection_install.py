"""The built collection tarball installs and its playbook runs by FQCN against real hosts,
with no help from the checkout (no ansible.cfg, no collections/ symlink)."""
import os
import subprocess

import yaml

from harness.playbook import TOP, ansible_bin

VERSION = yaml.safe_load((TOP / "galaxy.yml").read_text())["version"]


def test_built_collection_runs_as_offline_pot_tke_install(testhosts, tmp_path):
    build = subprocess.run([ansible_bin("ansible-galaxy"), "collection", "build", "--output-path",
                            str(tmp_path), str(TOP)], capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    tarball = tmp_path / f"offline_pot-tke-{VERSION}.tar.gz"
    listing = subprocess.run(["tar", "-tzf", str(tarball)], capture_output=True, text=True, check=True).stdout
    names = {n.rstrip("/") for n in listing.split()}
    assert {"playbooks/install.yml", "plugins/modules/precheck.py", "meta/runtime.yml", "CHANGELOG.rst",
            "changelogs/changelog.yaml", "meta/execution-environment.yml", "meta/ee-requirements.txt",
            "bindep.txt", "requirements.txt"} <= names, listing
    # nothing of the repository's own: no tests (the kubeadm/kubelet doubles above all), benchmarks,
    # execution-environment definition, caches or the collections/ symlink
    shipped_dev = [n for n in names if n.split("/")[0] in ("tests", "bench", "ee", ".cache", "collections", ".ci")
                   or "kubeadm_double" in n or n == "requirements-dev.txt"]
    assert not shipped_dev, shipped_dev

    # as a user would: outside the checkout, so its ansible.cfg and collections/ play no part
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_NOCOLOR="1")
    colls = tmp_path / "colls"
    inst = subprocess.run([ansible_bin("ansible-galaxy"), "collection", "install", "-p", str(colls),
                           str(tarball)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert inst.returncode == 0, inst.stderr
    assert (colls / "ansible_collections/offline_pot/tke/playbooks/install.yml").is_file(), inst.stdout

    inv = testhosts.write_inventory(tmp_path / "inv" / "hosts.yml", groups={"masters": ["h1"], "workers": ["h2"]},
                                    group_vars={"precheck_disk": [{"path": "/var/lib", "min_free_gb": 1}]})
    env["ANSIBLE_COLLECTIONS_PATH"] = str(colls)
    run = subprocess.run([ansible_bin("ansible-playbook"), "offline_pot.tke.install", "-i", str(inv),
                          "--tags", "precheck"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "TASK [offline_pot.tke.precheck : Gather facts and evaluate the prerequisites" in run.stdout, run.stdout
    assert "h1                         : ok=" in run.stdout and "failed=0" in run.stdout
