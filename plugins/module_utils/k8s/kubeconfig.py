# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""A kubeconfig read into the settings one connection needs (pure, unit-tested in
tests/unit/plugins/module_utils/k8s/test_kubeconfig.py).

A kubeconfig is read as JSON, else as YAML with PyYAML: on the controller it comes with
ansible-core, on the masters (where the k8s_* modules read the admin kubeconfig) the control_plane
phase installs it from the site pack (python3-yaml). Field names are
client-go's (k8s.io/client-go/tools/clientcmd/api/v1/types.go): clusters[].cluster.server,
certificate-authority(-data), insecure-skip-tls-verify; users[].user.client-certificate(-data),
client-key(-data), token, tokenFile; contexts[].context.cluster/user; current-context.
"""
from __future__ import annotations

import base64
import json
import os


class KubeconfigError(Exception):
    pass


def load(text):
    """The kubeconfig document of text (JSON or YAML)."""
    try:
        data = json.loads(text)
    except ValueError:
        try:
            import yaml
        except ImportError:
            raise KubeconfigError(
                "it is YAML and this host's Python has no yaml module (PyYAML): the control_plane phase "
                "installs it on the masters from the site pack (control_plane_yaml_package, python3-yaml)") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise KubeconfigError(f"not YAML: {e}") from None
    if not isinstance(data, dict):
        raise KubeconfigError("not a kubeconfig (a mapping is expected)")
    return data


def _named(data, section, name, what):
    for item in data.get(section) or []:
        if isinstance(item, dict) and item.get("name") == name:
            return item.get(what) or {}
    raise KubeconfigError(f"{what} {name!r} is not in the kubeconfig's {section}")


def _data_or_file(entry, key, base_dir):
    """(bytes or None, path or None) for key-data / key in a kubeconfig entry."""
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(data, validate=True), None
        except ValueError:
            raise KubeconfigError(f"{key}-data is not base64") from None
    path = entry.get(key)
    if path:
        return None, path if os.path.isabs(path) else os.path.join(base_dir, path)
    return None, None


def connection(data, context=None, base_dir="/"):
    """{server, ca, cert, key, token, insecure} of the context (default current-context); each of
    ca/cert/key is {"data": bytes} or {"path": file} or None. Relative file paths are the
    kubeconfig's directory's (base_dir), as client-go resolves them."""
    ctx_name = context or data.get("current-context")
    if not ctx_name:
        raise KubeconfigError("the kubeconfig has no current-context and no context was given")
    ctx = _named(data, "contexts", ctx_name, "context")
    cluster = _named(data, "clusters", ctx.get("cluster"), "cluster")
    user = _named(data, "users", ctx.get("user"), "user") if ctx.get("user") else {}
    server = str(cluster.get("server") or "").rstrip("/")
    if not server.startswith("https://"):
        raise KubeconfigError(f"cluster {ctx.get('cluster')!r}: server {server!r} is not an https:// URL")
    out = {"server": server, "insecure": bool(cluster.get("insecure-skip-tls-verify")),
           "token": user.get("token")}
    if not out["token"] and user.get("tokenFile"):
        out["token_file"] = user["tokenFile"]
    for name, entry, key in (("ca", cluster, "certificate-authority"), ("cert", user, "client-certificate"),
                             ("key", user, "client-key")):
        blob, path = _data_or_file(entry, key, base_dir)
        out[name] = {"data": blob} if blob is not None else ({"path": path} if path else None)
    if bool(out["cert"]) != bool(out["key"]):
        raise KubeconfigError(f"user {ctx.get('user')!r}: a client certificate needs its key and the key its "
                              "certificate")
    return out


def read(path, context=None):
    """connection() of the kubeconfig file at path."""
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError as e:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {e.strerror}") from None
    return connection(load(text), context, os.path.dirname(os.path.abspath(path)))
