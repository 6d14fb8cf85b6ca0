"""Fixtures the unit tests of the kubeadm test double share (tests/kubeadm_double, loaded by
tests/harness/kubeadm_double.py): the double acting as each release it has a table for (d130 ...
d136: `kubeadm_double.load`, its per-release tables imported afresh), and the file the double records
its configuration and preflight warnings in, one per test (no unit test writes it outside its own tmp directory)."""
import pytest

from harness import kubeadm_double


@pytest.fixture(autouse=True)
def _kubeadm_double_warnings(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBEADM_DOUBLE_WARNINGS", str(tmp_path / "warnings.log"))
    monkeypatch.setenv("KUBEADM_DOUBLE_PREFLIGHT", str(tmp_path / "preflight.log"))


def _acting_as(version):
    @pytest.fixture(name="d" + version.replace(".", ""))
    def double(monkeypatch):
        return kubeadm_double.load(version, monkeypatch)
    return double


# d130, d131, ... one per release the double acts as (acting.ACTS_AS)
for _version in kubeadm_double.ACTS_AS:
    globals()["d" + _version.replace(".", "")] = _acting_as(_version)
