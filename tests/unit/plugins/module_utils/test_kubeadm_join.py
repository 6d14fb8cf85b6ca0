"""Token choice, certificate-key freshness, the certificate key in the init configuration."""
import datetime

import pytest

from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_join as kj

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


LIST = """{
    "kind": "BootstrapToken", "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
    "token": "aaaaaa.aaaaaaaaaaaaaaaa", "description": "other", "usages": ["authentication", "signing"],
    "groups": ["system:bootstrappers:kubeadm:default-node-token"]
}
{
    "kind": "BootstrapToken", "apiVersion": "output.kubeadm.k8s.io/v1alpha3",
    "token": "bbbbbb.bbbbbbbbbbbbbbbb", "description": "ours", "expires": "%s",
    "usages": ["authentication", "signing"], "groups": ["system:bootstrappers:kubeadm:default-node-token"]
}
"""


def test_token_list_parsing_and_choice():
    tokens = kj.parse_token_list(LIST % "2026-01-02T00:00:00Z")
    assert [t["token"] for t in tokens] == ["aaaaaa.aaaaaaaaaaaaaaaa", "bbbbbb.bbbbbbbbbbbbbbbb"]
    assert kj.usable_token(tokens, "ours", NOW) == "bbbbbb.bbbbbbbbbbbbbbbb"
    # expiring within the hour: not usable, a new one is created
    assert kj.usable_token(kj.parse_token_list(LIST % "2026-01-01T00:30:00Z"), "ours", NOW) is None
    assert kj.usable_token(tokens, "missing", NOW) is None
    never = [dict(tokens[1], expires=None)]
    assert kj.usable_token(never, "ours", NOW) == "bbbbbb.bbbbbbbbbbbbbbbb"
    assert kj.usable_token([dict(tokens[1], usages=["signing"])], "ours", NOW) is None
    assert kj.parse_token_list("") == []


@pytest.mark.parametrize("uploaded,now,fresh", [(None, 100, False), (0, 3600, True), (0, 7200 - 601, True),
                                                (0, 7200 - 599, False), (100, 50, False)])
def test_certificate_key_freshness(uploaded, now, fresh):
    assert kj.certificate_key_fresh(uploaded, now) is fresh


def test_certificate_key_goes_into_init_configuration():
    text = kc.HEADER + kc.dump_documents([{"apiVersion": "x", "kind": "InitConfiguration", "nodeRegistration": {}},
                                          {"apiVersion": "x", "kind": "ClusterConfiguration"}])
    out = kj.with_certificate_key(text, "c" * 64)
    docs = kc.load_documents(out)
    assert docs[0]["certificateKey"] == "c" * 64 and "certificateKey" not in docs[1]
    # a second key replaces the first one
    assert kc.load_documents(kj.with_certificate_key(out, "d" * 64))[0]["certificateKey"] == "d" * 64
    assert out.count("certificateKey") == 1
    with pytest.raises(ValueError):
        kj.with_certificate_key(kc.dump_documents([{"kind": "JoinConfiguration"}]), "c" * 64)
    with pytest.raises(ValueError, match="JSON documents"):
        kj.with_certificate_key("kind: InitConfiguration\n", "c" * 64)
