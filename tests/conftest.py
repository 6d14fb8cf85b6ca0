"""Make tests/harness importable and the collection's plugins importable as
ansible_collections.offline_pot.tke (harness/collection.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.collection import make_importable  # noqa: E402  pylint: disable=wrong-import-position

make_importable()
