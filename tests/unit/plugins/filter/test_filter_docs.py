"""One filter per file, named after it, and ansible-doc shows every filter its own documentation
(a file holding several filters made ansible-doc print another filter's docs)."""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
FILTERS = HERE.parents[4] / "plugins" / "filter"
# the checkout's collections/ symlink, or (ansible-test's copy) the directory above ansible_collections/
COLLECTIONS = HERE.parents[4] / "collections"
if not (COLLECTIONS / "ansible_collections").is_dir():
    COLLECTIONS = HERE.parents[7]


def provided():
    """file stem -> the filter names its FilterModule provides, for every filter file."""
    out = {}
    for path in sorted(FILTERS.glob("*.py")):
        if path.name.startswith("_"):
            continue
        mod = importlib.import_module(f"ansible_collections.offline_pot.tke.plugins.filter.{path.stem}")
        out[path.stem] = sorted(mod.FilterModule().filters())
    return out


def test_one_filter_per_file_named_after_it():
    files = provided()
    assert files, FILTERS
    assert {stem: names for stem, names in files.items() if names != [stem]} == {}
    assert not list(FILTERS.glob("*.yml")), "documentation lives in the filter's own file"


def test_ansible_doc_shows_each_filter_its_own_documentation():
    names = [f"offline_pot.tke.{name}" for names in provided().values() for name in names]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS), ANSIBLE_NOCOLOR="1")
    run = subprocess.run([sys.executable, "-m", "ansible.cli.doc", "-t", "filter", "--json", *names],
                         capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stderr
    docs = json.loads(run.stdout)
    assert sorted(docs) == sorted(names)
    for fqcn, entry in docs.items():
        doc = entry["doc"]
        assert doc["name"] == fqcn.rsplit(".", 1)[1], (fqcn, doc["name"])
        assert doc["collection"] == "offline_pot.tke", fqcn
        assert entry.get("examples") and entry.get("return"), fqcn
