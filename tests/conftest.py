"""Make tests/harness importable and the collection's plugins importable as
ansible_collections.offline_pot.tke (through the collections/ symlink of the checkout)."""
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
for p in (str(TOP / "tests"), str(TOP / "collections")):
    if p not in sys.path:
        sys.path.insert(0, p)
