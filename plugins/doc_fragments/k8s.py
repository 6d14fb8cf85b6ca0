# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The connection options of the k8s_* modules (plugins/module_utils/k8s/args.py) and their action group."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - The kubeconfig on the host the module runs on. The default is the admin kubeconfig of a
        master (run the task with C(delegate_to) the first master, so no key leaves it); on the
        controller give the site's admin kubeconfig.
      - Inline keys are written to 0600 files in a private temporary directory for the TLS
        context and removed when the module ends; nothing from the kubeconfig is returned.
    type: path
    default: /etc/kubernetes/admin.conf
  context:
    description: The kubeconfig context to use; default its current-context.
    type: str
  request_timeout:
    description: Seconds one API request may take.
    type: int
    default: 30
requirements:
  - Python 3 where the module runs; no Kubernetes client library (the collection's own REST client)
notes:
  - Talks the standard Kubernetes REST protocol with ansible's own HTTP client; nothing to install
    on the host beyond Python 3.
  - "The k8s_* modules form the action group C(offline_pot.tke.k8s) (C(meta/runtime.yml)): set the
    connection options once for a block or a play with
    C(module_defaults: {group/offline_pot.tke.k8s: {kubeconfig: ...}})."
attributes:
  action_group:
    description: Use C(group/offline_pot.tke.k8s) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - offline_pot.tke.k8s
"""
