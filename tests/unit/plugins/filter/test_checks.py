from ansible_collections.offline_pot.tke.plugins.filter.install_phases_selected import install_phases_selected
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij


def test_install_phases_selected_follows_the_tags_and_never_names_validate():
    every = [n for n in ij.USER_PHASES if n != "validate"]
    assert install_phases_selected(["all"]) == every
    assert install_phases_selected(["validate"]) == [] and install_phases_selected(["hooks"]) == []
    assert install_phases_selected(["runtime", "registry"], ["registry"]) == ["runtime"]
    assert install_phases_selected(["all"], ["precheck"]) == every[1:]
    assert install_phases_selected(["all"], ["always"]) == every
