"""Make tests/harness importable and the collection's plugins importable as
ansible_collections.offline_pot.tke (through the collections/ symlink of the checkout), loaded by
Ansible's own collection loader (as ansible-playbook and `ansible-test units` load them), so code
under test that templates with the collection's filters or lookups finds them."""
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
for p in (str(TOP / "tests"), str(TOP / "collections")):
    if p not in sys.path:
        sys.path.insert(0, p)

if "ansible_collections" not in sys.modules:
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
    _AnsibleCollectionFinder(paths=[str(TOP / "collections")])._install()
