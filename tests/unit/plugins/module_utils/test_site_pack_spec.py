import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import site_pack_spec as s

SHA = "a" * 64
GOOD = {"name": "site", "version": "1.0",
        "os_packages": {"deb": [{"apt": ["socat"]}, {"dir": "/debs"}, {"url": "http://x/a.deb", "sha256": SHA}]},
        "binaries": [{"name": "runc", "path": "/b/runc", "sha256": SHA, "install": "/usr/local/sbin/runc"}],
        "images": [{"name": "library/busybox", "tag": "1.35", "path": "/img"}],
        "charts": [{"path": "/c.tgz", "sha256": SHA}],
        "controller": {"collections": [{"path": "/c.tar.gz", "sha256": SHA}], "requirements": "/r.txt"}}


def test_good_spec():
    assert s.validate(GOOD) == []


@pytest.mark.parametrize("change,error", [
    ({"name": ""}, "name is required"),
    ({"extra": 1}, "unknown key 'extra'"),
    ({"binaries": [{"name": "runc", "path": "/b/runc", "install": "/x"}]}, "binaries runc: sha256 is required"),
    ({"binaries": [{"name": "runc", "path": "/b", "url": "http://x", "sha256": SHA, "install": "/x"}]},
     "binaries runc: give exactly one of url or path"),
    ({"binaries": [{"name": "runc", "path": "/b", "sha256": "ABC", "install": "/x"}]}, "sha256 must be 64"),
    ({"binaries": [{"name": "runc", "path": "/b", "sha256": SHA, "install": "relative"}]}, "install must be an absolute"),
    ({"binaries": [{"name": "runc", "path": "/b", "sha256": SHA, "install": "/a"}] * 2}, "name and version are used twice"),
    ({"images": [{"name": "Library/X", "tag": "1", "path": "/i"}]}, "repository name"),
    ({"images": [{"name": "a", "path": "/i"}]}, "images a: tag is required"),
    ({"os_packages": {"rpm": [{"apt": ["x"]}]}}, "apt takes"),
    ({"controller": {"other": 1}}, "controller takes"),
])
def test_errors_name_the_item(change, error):
    errors = s.validate({**GOOD, **change})
    assert any(error in e for e in errors), errors


def test_label_and_basename():
    assert s.label("images", {"name": "a/b", "tag": "1"}, 0) == "images a/b:1"
    assert s.label("charts", {"url": "http://h/x/c.tgz?y=1"}, 3) == "charts c.tgz?y=1"
    assert s.basename({"url": "http://h/x/c.tgz?y=1"}) == "c.tgz"
