"""A network plugin is a folder, roles/network/plugins/<name>/ (docs/network.md, "Adding a network
plugin"), and its entry in the image table, kube_images.NETWORK_IMAGES, the registry of the names:
the two name the same plugins, each folder has its files and facts, and each template pulls
exactly its plugin's images."""
import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.offline_pot.tke.plugins.module_utils import kube_images

PLUGINS = Path(__file__).resolve().parents[2] / "roles" / "network" / "plugins"
FOLDERS = sorted(p.name for p in PLUGINS.iterdir() if p.is_dir())


def test_the_folders_are_the_image_tables_plugins():
    assert FOLDERS == sorted(kube_images.NETWORK_PLUGINS)
    assert "none" not in FOLDERS  # validation's word for "no plugin", not a folder


@pytest.mark.parametrize("name", FOLDERS)
def test_a_plugin_folder_holds_its_files_and_facts(name):
    folder = PLUGINS / name
    assert {"plugin.yml", "cni.conflist.j2", "objects.yml.j2"} <= {p.name for p in folder.iterdir()}
    facts = yaml.safe_load((folder / "plugin.yml").read_text())
    assert set(facts) == {"cni_files", "workloads", "namespace", "pod_selector", "reset"}
    assert facts["cni_files"] and all(re.fullmatch(r"[\w.-]+", f) for f in facts["cni_files"])
    assert facts["workloads"] and all({"api_version", "kind", "namespace", "name"} <= set(w) for w in facts["workloads"])
    assert facts["namespace"] and facts["pod_selector"]
    assert set(facts["reset"]) == {"paths", "chain_prefixes", "links"}


@pytest.mark.parametrize("name", FOLDERS)
def test_a_plugins_objects_pull_exactly_its_pinned_images(name):
    text = (PLUGINS / name / "objects.yml.j2").read_text()
    used = set(re.findall(r"image: \{\{ network_image_prefix \}\}/\{\{ '([\w-]+)' \| offline_pot\.tke\.pinned_image \}\}", text))
    assert used == {i["name"] for i in kube_images.network_images(name)}
    assert len(re.findall(r"^\s*image:", text, re.M)) == text.count("offline_pot.tke.pinned_image")


def test_the_filter_reads_every_folder_and_refuses_a_folder_the_table_lacks(tmp_path):
    from ansible.errors import AnsibleFilterError
    from ansible_collections.offline_pot.tke.plugins.filter.network_plugins import network_plugins

    facts = network_plugins(PLUGINS.parent)
    assert sorted(facts) == FOLDERS and facts["flannel"]["cni_files"] == ["10-flannel.conflist"]
    (tmp_path / "plugins" / "flannel").mkdir(parents=True)
    (tmp_path / "plugins" / "flannel" / "plugin.yml").write_text("cni_files: [a]\n")
    with pytest.raises(AnsibleFilterError, match=r"the folders in .* \(flannel\) are not the image table's"):
        network_plugins(tmp_path)
