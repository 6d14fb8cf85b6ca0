# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The cluster's PKI on the controller, one module per job (private to the collection):

- specs.py         which certificates and kubeconfigs exist (Cluster: the PKI's inputs; its
                   `endpoint` is where kubeconfigs point: tke_control_plane_endpoint, given by the pki role)
- certificates.py  keys and X.509 certificates with `cryptography`
- renewal.py       issuing and renewing: reconcile() decides, from the existing files, what to (re)issue
- kubeconfig.py    kubeconfig files in kubeadm's layout
- distribution.py  which host gets which file where, what to restart after a change
- replacement.py   why a host's file is replaced with the store's copy (pki_distribute)
- store.py         the PKI directory on the controller as relative path -> bytes, and back

Used by plugins/action/k8s_pki.py, the certs report and pki filters, and bench/. This module is the
package's interface: callers use `k8s_pki.<name>` for the names below.
"""
from __future__ import annotations

from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.certificates import (  # noqa: F401
    BACKDATE, HAS_CRYPTOGRAPHY, require_cryptography, cert_ekus, cert_is_ca, cert_sans, cert_to_pem, days_left, describe, issue, key_matches, key_to_pem,
    key_type_of, load_cert, load_key, new_key, not_after, public_to_pem, signed_by, subject_text, within_window)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.distribution import (  # noqa: F401
    consumers, host_files)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.kubeconfig import (  # noqa: F401
    kubeconfig_client_cert, render_kubeconfig)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.replacement import (  # noqa: F401
    replacement_reasons)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.renewal import (  # noqa: F401
    Action, changed_files, reconcile, regeneration_reason)
from ansible_collections.offline_pot.tke.plugins.plugin_utils.k8s_pki.specs import (  # noqa: F401
    CA_DAYS, CERT_DAYS, CLUSTER_ADMINS_GROUP, K8S_CONF, K8S_PKI, MASTERS_GROUP, RENEW_DAYS, TKE_PKI, CertSpec,
    Cluster, KubeconfigSpec, cluster_certs, first_service_ip, is_ip, kubeconfig_specs, split_sans,
    uses_super_admin, version_tuple)
