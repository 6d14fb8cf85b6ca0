"""Concepts with one home stay there: roles and templates never re-derive a node's address (the tke
role's tke_node_address and the node_addresses filter do) nor read kubeadm_phase's bookkeeping
files (the module returns what a role needs)."""
import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]


def role_files():
    for path in sorted((TOP / "roles").rglob("*")):
        if path.is_file() and path.suffix in (".yml", ".j2") and path.name != "argument_specs.yml":
            yield path, path.read_text()


def test_no_role_derives_a_node_address_itself():
    home = TOP / "roles" / "tke" / "defaults" / "main.yml"
    offenders = [f"{p.relative_to(TOP)}:{n}" for p, text in role_files() if p != home
                 for n, line in enumerate(text.splitlines(), 1)
                 if not line.lstrip().startswith("#") and re.search(r"\b(ansible_host|ansible_ssh_host|tke_node_ip)\b", line)]
    assert offenders == []


def test_no_role_reads_kubeadm_phase_bookkeeping():
    offenders = [str(p.relative_to(TOP)) for p, text in role_files() if ".sha256" in text]
    assert offenders == []
