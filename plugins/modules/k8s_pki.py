#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the k8s_pki action plugin (plugins/action/k8s_pki.py does the work)."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_pki
short_description: The cluster's certificate authority, on the controller
version_added: 0.1.0
description:
  - Keeps the whole PKI of a cluster in one directory on the controller - kubeadm's set (C(ca),
    C(apiserver), C(apiserver-kubelet-client), C(front-proxy-ca), C(front-proxy-client), C(etcd/ca),
    per-member C(etcd/server) and C(etcd/peer), C(etcd/healthcheck-client), C(apiserver-etcd-client),
    C(sa.key)/C(sa.pub)), kubeadm's kubeconfigs (admin, super-admin from 1.29, controller-manager,
    scheduler, kubelet per node) and TKE's extras (registry/gateway server certificate, admin and
    webhook client certificates).
  - Decides before it acts. An existing certificate is kept unless it is missing, its key does not
    match, it is not signed by the current CA, its subject or usages differ, it misses a required SAN,
    it is within the renewal window, or it is forced; every re-issued certificate is reported with
    its reason. Renewal keeps the existing key. CAs are never renewed for their age (a warning is
    returned instead); name a CA in O(force) to replace it.
  - Writes only files whose bytes change; directories 0700, keys and kubeconfigs 0600. Never returns
    a key. This is an action plugin - it runs on the controller whatever the task's host.
  - Returns, per host, the files that host needs (see RV(host_files)); M(offline_pot.tke.pki_distribute)
    writes them.
requirements:
  - cryptography (Python, on the controller)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_HOST
  - offline_pot.tke.attributes.ACTION
attributes:
  diff_mode:
    details: The diff lists the re-issued certificates with subject, SANs, expiry and serial before and after.
options:
  pki_dir:
    description: Controller directory holding the PKI (created 0700).
    type: path
    required: true
  cluster:
    description: What the certificates are for.
    type: dict
    required: true
    suboptions:
      masters:
        description: Control-plane hosts, each C({name, ip}).
        type: list
        elements: dict
        required: true
      nodes:
        description: Every host running a kubelet (masters are added automatically).
        type: list
        elements: dict
        default: []
      etcd:
        description: External etcd members; empty means etcd is stacked on the masters.
        type: list
        elements: dict
        default: []
      registry:
        description: Registry hosts (they receive the server certificate as registry.crt).
        type: list
        elements: dict
        default: []
      machines:
        description: Every host of the site; their names and addresses go into the TKE server certificate.
        type: list
        elements: dict
        default: []
      name:
        description: Cluster name in the kubeconfigs (kubeadm's clusterName).
        type: str
        default: kubernetes
      k8s_version:
        description: Kubernetes version; 1.29 and later get super-admin.conf and C(kubeadm:cluster-admins).
        type: str
        default: "1.30.4"
      vip:
        description: VIP or load balancer address (apiserver and server certificate SAN).
        type: str
        default: ""
      api_domain:
        description: DNS name of the API endpoint.
        type: str
        default: api.tke.com
      api_port:
        description: Port of each API server (controller-manager and scheduler kubeconfigs).
        type: int
        default: 6443
      control_plane_endpoint:
        description: host:port written into admin, super-admin and kubelet kubeconfigs (the tke role's C(tke_control_plane_endpoint)).
        type: str
        required: true
      service_cidr:
        description: Service network; its first address is an apiserver SAN.
        type: str
        default: 10.96.0.0/16
      dns_domain:
        description: Cluster DNS domain.
        type: str
        default: cluster.local
      registry_domain:
        description: Registry domain (SAN with its wildcard).
        type: str
        default: registry.tke.com
      gateway_domain:
        description: Gateway (console) domain.
        type: str
        default: console.tke.com
      apiserver_extra_sans:
        description: More apiserver SANs (names or addresses).
        type: list
        elements: str
        default: []
      etcd_extra_sans:
        description: More etcd server and peer SANs.
        type: list
        elements: str
        default: []
      server_extra_sans:
        description: More SANs of the TKE server certificate.
        type: list
        elements: str
        default: []
      ca_days:
        description: Validity of newly issued CAs in days.
        type: int
        default: 3650
      cert_days:
        description: Validity of newly issued leaf certificates in days.
        type: int
        default: 365
      key_type:
        description: Key algorithm of new keys.
        type: str
        choices: [rsa, ecdsa]
        default: rsa
      rsa_bits:
        description: RSA key size.
        type: int
        default: 2048
  renew_days:
    description: Re-issue a leaf certificate that has fewer than this many days left.
    type: int
    default: 30
  force:
    description: Certificate names to re-issue whatever their state (for example C(apiserver),
      C(etcd/members/h1/server), C(sa)), or C(all) for every leaf certificate (not the CAs).
    type: list
    elements: str
    default: []
  user_cas:
    description: CAs to import instead of generating, by name (C(ca), C(front-proxy-ca), C(etcd/ca)),
      each C({cert, key}) paths on the controller.
    type: dict
    default: {}
  adopt:
    description:
      - Rebuild a lost store from the site's hosts instead (V(playbooks/adopt.yml)), from host name -> the
        base64 of a gzip tar of what the host holds under C(/etc/kubernetes/pki),
        C(/etc/kubernetes/*.conf) and C(/etc/tke/pki). Every file the pki phase gave a host goes back
        to its place in the store byte for byte (a kubeconfig also gives back its client certificate
        and key); copies on several hosts must agree. What no host holds and the store can make is
        issued (TKE's admin client certificate); nothing is written on any host.
      - Refused when the store already holds a CA. The whole option is C(no_log).
    type: dict
  adopt_ca_sha256:
    description: With O(adopt), the SHA-256 fingerprint the hosts record as their site's CA; the
      adopted C(ca.crt) must have it.
    type: str
"""

EXAMPLES = r"""
- name: Issue or check the cluster's certificates
  offline_pot.tke.k8s_pki:
    pki_dir: "{{ tke_state_dir }}/pki"
    cluster:
      masters: [{name: m1, ip: 10.0.0.11}]
      nodes: [{name: w1, ip: 10.0.0.21}]
      vip: 10.0.0.100
  run_once: true
  register: pki

- name: Renew the apiserver certificate now
  offline_pot.tke.k8s_pki:
    pki_dir: "{{ tke_state_dir }}/pki"
    cluster: "{{ pki_cluster }}"
    force: [apiserver]
"""

RETURN = r"""
pki_dir:
  description: Absolute path of the PKI directory.
  returned: always
  type: str
actions:
  description: The certificates issued, renewed or imported, each with the reason.
  returned: without O(adopt)
  type: list
  elements: dict
  sample: [{name: apiserver, action: renewed, reason: "missing SANs: 10.0.0.200"}]
report:
  description: "One line per issued, renewed or imported certificate: C(<name>: <action> (<reason>))."
  returned: always
  type: list
  elements: str
  sample: ["apiserver: renewed (missing SANs: 10.0.0.200)"]
reused:
  description: Names of the certificates kept as they were.
  returned: without O(adopt)
  type: list
  elements: str
changed_files:
  description: PKI files (relative paths) written, or that would be written in check mode.
  returned: without O(adopt)
  type: list
  elements: str
check_digests:
  description:
    - In check mode, the sha256 (hex) of the new bytes of each of RV(changed_files), which the store does not
      get in check mode; empty otherwise. M(offline_pot.tke.pki_distribute) compares a host's files with them
      (O(offline_pot.tke.pki_distribute#module:pending_digests)). A digest, never the bytes (keys).
  returned: without O(adopt)
  type: dict
warnings:
  description: CAs close to expiry (not renewed automatically), a CA whose key is not in the store.
  returned: always
  type: list
  elements: str
host_files:
  description: Per host, the files it needs - C(src) (relative to pki_dir), C(dest) on the host, C(mode).
  returned: without O(adopt)
  type: dict
certificates:
  description: Per certificate, subject, issuer, SANs, not_after, days_left, serial (nothing secret).
  returned: without O(adopt)
  type: dict
adopted:
  description: With O(adopt), the store files taken from the hosts (relative paths).
  returned: with O(adopt)
  type: list
  elements: str
issued:
  description: With O(adopt), the store files no host holds, made anew.
  returned: with O(adopt)
  type: list
  elements: str
missing:
  description: With O(adopt), store files no host holds and the next pki phase issues, with the hosts that lack them.
  returned: with O(adopt)
  type: dict
ca_sha256:
  description: With O(adopt), the SHA-256 fingerprint of the adopted cluster CA.
  returned: with O(adopt)
  type: str
"""
