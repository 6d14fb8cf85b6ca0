"""The collection tarball users install (ansible-galaxy collection build) carries no sample secret:
neither the sample vault password nor any password an inventory of the repository sets in plain text."""
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

TOP = Path(__file__).resolve().parents[2]


def sample_secrets():
    """The sample vault password and every plain-text *password* value of the inventories."""
    secrets = {(TOP / "inventories" / "vault-password.sample").read_text().strip()}
    for path in (TOP / "inventories").rglob("*.yml"):
        text = path.read_text()
        if text.lstrip().startswith("$ANSIBLE_VAULT"):
            continue
        for key, value in re.findall(r"^\s*([a-z_]*password[a-z_]*):[ \t]*(\S.*)$", text, re.M):
            value = yaml.safe_load(value) if not value.startswith("!") else None
            if isinstance(value, str) and "{{" not in value and len(value) >= 6:
                secrets.add(value)
    return {s for s in secrets if s}


def test_the_built_collection_carries_no_sample_secret(tmp_path):
    secrets = sample_secrets()
    assert "offline-pot-sample-vault-password" in secrets or len(secrets) > 1, secrets
    env = dict(os.environ, ANSIBLE_NOCOLOR="1")
    subprocess.run([sys.executable, "-m", "ansible.cli.galaxy", "collection", "build", "--output-path",
                    str(tmp_path), str(TOP)], check=True, capture_output=True, env=env)
    (artifact,) = tmp_path.glob("offline_pot-tke-*.tar.gz")
    found = []
    with tarfile.open(artifact) as tar:
        for member in tar.getmembers():
            assert not member.name.endswith(".sample") or not member.name.startswith("inventories/"), member.name
            if not member.isfile():
                continue
            data = tar.extractfile(member).read().decode("utf-8", "replace")
            found += [(member.name, s) for s in secrets if s in data]
    assert found == []
