"""The code digest every phase fingerprint holds (plugin_utils/_controller.tree_digest): the
collection's code, never a site's state that a run leaves inside the collection's folders (a
components.yml run whose state folder fell back to playbooks/ changed the digest under a parallel
run, so every phase of that run looked changed)."""
from ansible_collections.offline_pot.tke.plugins.plugin_utils import _controller


def test_the_digest_follows_code_and_ignores_hidden_and_bytecode_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(_controller, "COLLECTION_ROOT", str(tmp_path))
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks" / "install.yml").write_text("- hosts: all\n")
    first = _controller.tree_digest("playbooks")
    (tmp_path / "playbooks" / ".tke").mkdir()
    (tmp_path / "playbooks" / ".tke" / "run.lock").write_text('{"pid": 1}')
    (tmp_path / "playbooks" / ".install.yml.swp").write_text("x")
    (tmp_path / "playbooks" / "__pycache__").mkdir()
    (tmp_path / "playbooks" / "__pycache__" / "x.pyc").write_text("x")
    assert _controller.tree_digest("playbooks") == first
    (tmp_path / "playbooks" / "install.yml").write_text("- hosts: masters\n")
    assert _controller.tree_digest("playbooks") != first
    (tmp_path / "playbooks" / "install.yml").write_text("- hosts: all\n")
    (tmp_path / "playbooks" / "hooks.yml").write_text("")
    assert _controller.tree_digest("playbooks") != first
