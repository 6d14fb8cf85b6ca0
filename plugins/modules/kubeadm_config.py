#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Write the kubeadm configuration file of a node from the cluster settings."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeadm_config
short_description: Write a node's kubeadm configuration (init or join) for Kubernetes 1.28-1.36
version_added: 0.2.0
description:
  - Renders the kubeadm configuration documents for the Kubernetes version (kubeadm API
    v1beta3 up to 1.30, v1beta4 from 1.31) and writes them to I(path) (mode 0600) only when
    the content differs.
  - I(kind=init) writes InitConfiguration, ClusterConfiguration (stacked or external etcd),
    KubeletConfiguration and KubeProxyConfiguration; I(kind=join) writes a JoinConfiguration
    (worker or control plane).
  - The settings are checked first (CIDRs, endpoint, addresses); a bad value fails naming it.
  - The bootstrap token and the certificate key are masked in the diff and never returned.
requirements:
  - Python 3 on the host (kubeadm itself is not run)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
attributes:
  diff_mode:
    details: Secrets are shown as C(<secret>).
options:
  path:
    description: Where to write the configuration.
    type: path
    required: true
  kind:
    description: C(init) for the first master, C(join) for the other nodes.
    type: str
    choices: [init, join]
    required: true
  version:
    description: Kubernetes version (1.28-1.36).
    type: str
    required: true
  cluster:
    description:
      - Cluster settings (used by I(kind=init)). Keys - C(name), C(control_plane_endpoint) (host:port),
        C(api_port), C(image_repository), C(pod_cidr), C(service_cidr), C(dns_domain), C(node_cidr_mask),
        C(max_pods), C(proxy_mode) (ipvs or iptables), C(proxy_exclude_cidrs), C(apiserver_cert_sans),
        C(allow_cgroup_v1) (a boolean; true from 1.35 - the kubelet's failCgroupV1 false),
        C(apiserver_extra_args), C(controller_manager_extra_args), C(scheduler_extra_args),
        C(kube_reserved), C(system_reserved), C(etcd) (C(local) with C(data_dir), C(extra_args),
        C(server_cert_sans), C(peer_cert_sans); or C(external) with C(endpoints), C(ca_file),
        C(cert_file), C(key_file)).
    type: dict
    default: {}
  node:
    description:
      - This node. Keys - C(name), C(advertise_address), C(cri_socket), C(kubelet_extra_args),
        C(taints) (omitted - the control-plane taint on masters, none on workers).
    type: dict
    required: true
  join:
    description:
      - How to join (I(kind=join)). Keys - C(api_server_endpoint), C(token), C(ca_cert_hash),
        C(control_plane) (bool), C(certificate_key).
    type: dict
    default: {}
  refresh_secrets:
    description:
      - Rewrite the file when only the join credentials (token, certificate key) differ. When false,
        a file that differs only in credentials is kept (a node that has joined needs none).
    type: bool
    default: true
  mode:
    description: File mode of the configuration.
    type: raw
    default: "0600"
"""

EXAMPLES = r"""
- name: Write the first master's configuration
  offline_pot.tke.kubeadm_config:
    path: /etc/kubernetes/kubeadm-config.yaml
    kind: init
    version: 1.30.4
    cluster:
      control_plane_endpoint: api.tke.com:6443
      image_repository: registry.tke.com/library
      pod_cidr: 10.244.0.0/16
      service_cidr: 10.96.0.0/16
    node:
      name: master-1
      advertise_address: 192.0.2.11
"""

RETURN = r"""
path:
  description: The file written.
  returned: always
  type: str
api_version:
  description: kubeadm configuration API used.
  returned: always
  type: str
kinds:
  description: Kinds of the documents written.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.atomic_file import write_file
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_config as kc
from ansible_collections.offline_pot.tke.plugins.module_utils import kubeadm_phases as kp


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            kind=dict(type="str", required=True, choices=["init", "join"]),
            version=dict(type="str", required=True),
            cluster=dict(type="dict", default={}),
            node=dict(type="dict", required=True),
            join=dict(type="dict", default={}, no_log=True),
            refresh_secrets=dict(type="bool", default=True),
            mode=dict(type="raw", default="0600"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        docs = kc.build(p["kind"], p["version"], p["cluster"], p["node"], p["join"])
    except (ValueError, KeyError) as e:
        module.fail_json(msg=f"kubeadm configuration for {p['node'].get('name', '?')}: {e}")
    content = kc.HEADER + kc.dump_documents(docs)
    path = p["path"]
    try:
        with open(path) as f:
            before = f.read()
    except FileNotFoundError:
        before = ""
    if p["refresh_secrets"]:
        changed = before != content
    else:
        changed = kp.strip_secrets(before) != kp.strip_secrets(content)
    result = dict(changed=changed, path=path, api_version=docs[0]["apiVersion"], kinds=[d["kind"] for d in docs])
    if module._diff:
        result["diff"] = dict(before=kp.mask_config(before), after=kp.mask_config(content),
                              before_header=path, after_header=path)
    if changed and not module.check_mode:
        write_file(path, content, 0o600)
    file_args = module.load_file_common_arguments(dict(path=path, mode=p["mode"]))
    if not module.check_mode or os.path.exists(path):
        result["changed"] = module.set_fs_attributes_if_different(file_args, result["changed"])
    module.exit_json(**result)


if __name__ == "__main__":
    main()
