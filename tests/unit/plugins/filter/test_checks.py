from ansible_collections.offline_pot.tke.plugins.filter.check_failure_lines import check_failure_lines


def test_lines_only_for_failures_in_host_order():
    data = {"h2": [{"check": "cpu", "status": "fail", "message": "1 is below the minimum 2"},
                   {"check": "swap", "status": "pass", "message": ""}],
            "h1": [{"check": "port 6443 free", "status": "fail", "message": "in use"},
                   {"check": "os", "status": "warn", "message": "old"}],
            "h3": None}
    assert check_failure_lines(data) == ["h2: cpu: 1 is below the minimum 2", "h1: port 6443 free: in use"]
