from ansible_collections.offline_pot.tke.plugins.filter.check_failure_lines import check_failure_lines
from ansible_collections.offline_pot.tke.plugins.filter.install_phases_selected import install_phases_selected
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij


def test_lines_only_for_failures_in_host_order():
    data = {"h2": [{"check": "cpu", "status": "fail", "message": "1 is below the minimum 2"},
                   {"check": "swap", "status": "pass", "message": ""}],
            "h1": [{"check": "port 6443 free", "status": "fail", "message": "in use"},
                   {"check": "os", "status": "warn", "message": "old"}],
            "h3": None}
    assert check_failure_lines(data) == ["h2: cpu: 1 is below the minimum 2", "h1: port 6443 free: in use"]


def test_install_phases_selected_follows_the_tags_and_never_names_validate():
    every = [n for n in ij.USER_PHASES if n != "validate"]
    assert install_phases_selected(["all"]) == every
    assert install_phases_selected(["validate"]) == [] and install_phases_selected(["hooks"]) == []
    assert install_phases_selected(["runtime", "registry"], ["registry"]) == ["runtime"]
    assert install_phases_selected(["all"], ["precheck"]) == every[1:]
    assert install_phases_selected(["all"], ["always"]) == every
