"""install_journal.forget: what a reset leaves of the install journal."""
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij


def _journal():
    j = ij.empty()
    for phase, hosts in (("precheck", ["h1", "h2", "h3"]), ("nodes", ["h3"]), ("control_plane", ["h1", "h2"])):
        j = ij.record(j, phase, {h: "fp-" + h for h in hosts}, "2026-11-23T00:00:00Z")
    return ij.record(j, "hook:post-install", {"controller": "fp"}, "2026-11-23T00:00:00Z")


def test_forget_one_worker():
    j = _journal()
    new, had = ij.forget(j, ["h3"])
    assert had == ["h3"]
    assert set(new["phases"]["precheck"]) == {"h1", "h2"}
    assert "nodes" not in new["phases"]                    # no host left in it
    assert new["phases"]["hook:post-install"] == j["phases"]["hook:post-install"]
    assert new["step"] == ij.step(new) and new["step"] == j["step"]   # the hooks still count
    assert "nodes" in j["phases"]                            # the input is not changed


def test_forget_the_whole_site_empties_the_journal_hooks_included():
    new, had = ij.forget(_journal(), ["h1", "h2", "h3"])
    assert had == ["h1", "h2", "h3"] and new["phases"] == {} and new["step"] == 0


def test_forget_twice_changes_nothing():
    once, dummy = ij.forget(_journal(), ["h3"])
    twice, had = ij.forget(once, ["h3"])
    assert twice == once and had == []


def test_forget_drops_a_running_phase_of_those_hosts():
    j = _journal()
    j["running"] = {"nodes": {"started": 1, "fingerprints": {"h3": "x"}},
                    "network": {"started": 1, "fingerprints": {"h1": "y"}}}
    new, dummy = ij.forget(j, ["h3"])
    assert set(new["running"]) == {"network"}
