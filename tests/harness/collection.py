"""This checkout's collection importable as ansible_collections.offline_pot.tke (through the
collections/ symlink of the checkout), loaded by Ansible's own collection loader as
ansible-playbook and `ansible-test units` load it: harness code that imports the collection's
module_utils, and code under test that templates with its filters or lookups, find them.
tests/conftest.py calls it for pytest; every harness entry point run as a script calls it too."""
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent.parent


def make_importable() -> None:
    for p in (str(TOP / "tests"), str(TOP / "collections")):
        if p not in sys.path:
            sys.path.insert(0, p)
    if "ansible_collections" not in sys.modules:
        from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
        _AnsibleCollectionFinder(paths=[str(TOP / "collections")])._install()
