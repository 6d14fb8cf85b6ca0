# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Filter: what an upgrade reached, from the API and the nodes' records (plugin_utils/kubeadm_upgrade.py)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: kubeadm_upgrade_summary
short_description: What an upgrade reached, read from the API and the nodes' records at the end of the run
version_added: 0.4.0
description:
  - Takes the target version and returns C(done), C(at_target), C(behind) (the hosts whose kubelet,
    as the API reports it, or whose upgrade record is not at the target) and C(lines), the summary.
  - The summary never says more than the API and the hosts report - a failed run's summary names the
    nodes not upgraded, their kubelet's version and what to do.
positional: _input, started_from, cluster_configuration, nodes, records, hosts, not_answering
options:
  _input:
    description: The target version.
    type: str
    required: true
  started_from:
    description: The cluster's version when the run started.
    type: str
    required: true
  cluster_configuration:
    description: The C(ClusterConfiguration) text of the kube-system/kubeadm-config ConfigMap, read at the end.
    type: str
    required: true
  nodes:
    description: The cluster's Node objects read at the end, or C(None) when the API could not be read.
    type: list
    elements: dict
    required: true
  records:
    description:
      - The results of M(ansible.builtin.slurp) of each host's upgrade record, in a loop over the
        hosts (C(item) the host; no C(content) - a record absent, or not read when C(unreachable)).
    type: list
    elements: dict
    required: true
  hosts:
    description: The inventory's nodes (masters, then workers), named as their Nodes.
    type: list
    elements: str
    required: true
  not_answering:
    description: The hosts that failed or did not answer in this run.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Where the cluster is
  ansible.builtin.debug:
    msg: "{{ (tke_k8s_version | offline_pot.tke.kubeadm_upgrade_summary('v1.30.4', config_text, nodes, records,
              hosts, [])).lines }}"
"""

RETURN = r"""
_value:
  description: C(done), C(at_target), C(behind), C(lines).
  type: dict
"""

import base64

from ansible_collections.offline_pot.tke.plugins.plugin_utils import kubeadm_upgrade


def records_of(results):
    """{host: record text, '' when absent, None when the host did not answer}."""
    out = {}
    for r in results or []:
        if r.get("unreachable"):
            out[r.get("item")] = None
        elif r.get("content"):
            out[r.get("item")] = base64.b64decode(r["content"]).decode("utf-8", "replace")
        else:
            out[r.get("item")] = ""
    return out


def kubeadm_upgrade_summary(target, started_from, cluster_configuration, nodes, records, hosts, not_answering=()):
    return kubeadm_upgrade.summary(target, started_from, cluster_configuration, nodes, records_of(records),
                                   list(hosts), list(not_answering or ()))


class FilterModule:
    def filters(self):
        return {"kubeadm_upgrade_summary": kubeadm_upgrade_summary}
