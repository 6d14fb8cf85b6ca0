#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Collect the certificates (never the keys) found on a host."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: pki_cert_info
short_description: Read the certificates on a host (certificate files and kubeconfig client certificates)
version_added: 0.1.0
description:
  - Returns the PEM of every certificate file (C(*.crt), C(*.pem) holding a certificate) under the given
    directories, and of the client certificate embedded in every kubeconfig (C(*.conf) with
    C(client-certificate-data)). Keys are never read. Needs nothing but Python on the host; the
    controller parses the result (filter P(offline_pot.tke.cert_report#filter)).
requirements:
  - Python 3 on the host (the controller parses what it returns)
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
options:
  paths:
    description: Directories (searched recursively) or files to read.
    type: list
    elements: path
    default: [/etc/kubernetes, /etc/tke/pki]
"""

EXAMPLES = r"""
- name: Read the certificates
  offline_pot.tke.pki_cert_info:
  register: found
"""

RETURN = r"""
certificates:
  description: One entry per certificate found, sorted by path.
  returned: always
  type: list
  elements: dict
  contains:
    path: {description: File the certificate was read from., type: str}
    pem: {description: The certificate (the first one of the file)., type: str}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.offline_pot.tke.plugins.module_utils.pki_pem import first_certificate


def read_one(path):
    """The first certificate PEM of a file, or None."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(1024 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
    return first_certificate(text, kubeconfig=path.endswith(".conf"))


def candidates(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
        elif os.path.isdir(p):
            for dirpath, _dirs, names in os.walk(p):
                for n in names:
                    if n.endswith((".crt", ".pem", ".conf")):
                        yield os.path.join(dirpath, n)


def main():
    module = AnsibleModule(
        argument_spec=dict(paths=dict(type="list", elements="path", default=["/etc/kubernetes", "/etc/tke/pki"])),
        supports_check_mode=True,
    )
    found = {}
    for path in candidates(module.params["paths"]):
        pem = read_one(path)
        if pem:
            found[path] = pem
    module.exit_json(changed=False, certificates=[{"path": p, "pem": found[p]} for p in sorted(found)])


if __name__ == "__main__":
    main()
