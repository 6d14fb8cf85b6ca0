# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The collection's Kubernetes API client, layered one concern per file (docs/architecture.md):

kubeconfig  reading a kubeconfig into connection settings (pure)
client      HTTPS requests over ansible.module_utils.urls; API Status errors as ApiError
resource    kind -> REST resource through discovery, cached for the module run
objects     desired-vs-live comparison, merge patches, last-applied, redaction (pure)
service     get / list / apply / delete / prune of objects
waiter      readiness rules (pure) and the polling wait
args        the connection options every k8s_* module shares
"""
