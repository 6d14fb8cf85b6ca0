"""docs/architecture.md's Layout block names what the repository holds, and marks the rest planned."""
import re
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]


def layout():
    text = (TOP / "docs" / "architecture.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    entries, current = {}, None
    for line in block.splitlines():
        m = re.match(r"^(\S+/)\s+(.*)$", line)
        if m:
            current = m.group(1)
            entries[current] = m.group(2)
        elif current and line.startswith(" "):
            entries[current] += " " + line.strip()
    return block, entries


def _names(text):
    """Names in a layout entry, split into (present, planned): '(planned)' marks the names of its
    ';'-separated part; other parenthesised remarks are not names."""
    present, planned = set(), set()
    for part in text.split(";"):
        words = set(re.findall(r"[a-z][a-z0-9_]+", re.sub(r"\((?!planned\))[^)]*\)", "", part)))
        (planned if "(planned)" in part else present).update(words - {"planned"})
    return present, planned


@pytest.mark.parametrize("folder,suffix", [("roles/", ""), ("playbooks/", ".yml")])
def test_roles_and_playbooks_match_the_folders(folder, suffix):
    dummy, entries = layout()
    present, planned = _names(entries[folder])
    on_disk = {p.name[:-len(suffix)] if suffix else p.name for p in (TOP / folder).iterdir()
               if (p.name.endswith(suffix) if suffix else p.is_dir())}
    assert present == on_disk
    assert not planned & on_disk, "marked planned but exists"


def test_every_top_level_folder_and_plugin_folder_is_listed():
    block, entries = layout()
    for p in TOP.iterdir():
        if p.is_dir() and not p.name.startswith("."):
            assert re.search(rf"(^|\s){re.escape(p.name)}/", block, re.M), p.name
    for p in (TOP / "plugins").iterdir():
        if p.is_dir() and p.name != "__pycache__":
            assert f"plugins/{p.name}/" in entries and "(planned)" not in entries[f"plugins/{p.name}/"], p.name
    assert "progress" in entries["plugins/callback/"] and (TOP / "plugins" / "callback" / "progress.py").is_file()


def test_every_plugin_utils_module_is_named():
    dummy, entries = layout()
    for p in (TOP / "plugins" / "plugin_utils").iterdir():
        name = p.stem if p.suffix == ".py" else p.name
        if name.startswith("_") or name == "__pycache__":
            continue
        assert name in entries["plugins/plugin_utils/"], name


@pytest.mark.parametrize("folder", ["plugins/filter/", "plugins/module_utils/"])
def test_filters_and_module_utils_match_the_folders(folder):
    """The layout names exactly the filters (one per file) and the module_utils the folder holds."""
    dummy, entries = layout()
    present, planned = _names(entries[folder])
    on_disk = {p.stem if p.suffix == ".py" else p.name for p in (TOP / folder).iterdir()
               if p.name != "__pycache__" and not p.name.startswith("_")}
    assert present == on_disk
    assert not planned & on_disk, "marked planned but exists"
