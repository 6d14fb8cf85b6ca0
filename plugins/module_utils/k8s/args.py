# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The connection options every k8s_* module takes (documented by the K8S_CONNECTION doc
fragment), the client they build, and their one run (run_module)."""
from __future__ import annotations

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s import kubeconfig
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError, Client
from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.service import ObjectError, Objects

CONNECTION_SPEC = dict(
    kubeconfig=dict(type="path", default="/etc/kubernetes/admin.conf"),
    context=dict(type="str"),
    request_timeout=dict(type="int", default=30),
)


# An object, or the objects of a kind matching a label selector (k8s_wait, k8s_delete).
OBJECT_REF_OPTIONS = dict(
    api_version=dict(type="str", default="v1"),
    kind=dict(type="str", required=True),
    name=dict(type="str"),
    namespace=dict(type="str"),
    label_selector=dict(type="str"),
)


def object_refs(**extra):
    """The list-of-object-references option, with extra sub-options (or overrides)."""
    options = {k: dict(v) for k, v in OBJECT_REF_OPTIONS.items()}
    options.update(extra)
    return dict(type="list", elements="dict", required=True, options=options)


def argument_spec(**extra):
    spec = dict(CONNECTION_SPEC)
    spec.update(extra)
    return spec


def client(module):
    """A Client for the module's kubeconfig; fails the module naming the kubeconfig otherwise."""
    try:
        conn = kubeconfig.read(module.params["kubeconfig"], module.params.get("context"))
    except kubeconfig.KubeconfigError as e:
        module.fail_json(msg=f"kubeconfig {module.params['kubeconfig']}: {e}")
    return Client(conn, timeout=module.params["request_timeout"])


def run_module(module, work, done=None, prefix="", errors=(), **service):
    """The one run of every k8s_* module: work(svc), svc the Objects service (module_utils
    k8s/service.py; its options: service) over the client of the module's kubeconfig, returns
    exit_json's keywords. An API error, an object's error or one of errors fails the module with
    its message after prefix, and with done: what work had done by then (a dict it fills in)."""
    done = {} if done is None else done
    with client(module) as c:
        try:
            result = work(Objects(c, module.check_mode, **service))
        except (ObjectError, ApiError, *errors) as e:
            module.fail_json(msg=f"{prefix}{e}", **done)
    module.exit_json(**result)
