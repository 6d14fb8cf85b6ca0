# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The certificate a PKI file on a host holds (a PEM file, or a kubeconfig's client certificate):
public, so a module may return it; a key is never read out. Shipped to hosts (pki_cert_info, pki_files)."""
from __future__ import annotations

import base64
import binascii
import re

PEM = re.compile(r"-----BEGIN CERTIFICATE-----\s.*?-----END CERTIFICATE-----", re.S)


def first_certificate(text, kubeconfig=False):
    """The first certificate PEM of a file's text (of a kubeconfig: its client-certificate-data), or None."""
    if kubeconfig:
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("client-certificate-data:"):
                try:
                    text = base64.b64decode(line.split(":", 1)[1].strip()).decode("utf-8", "replace")
                except (ValueError, binascii.Error):
                    return None
                break
        else:
            return None
    m = PEM.search(text)
    return m.group(0) + "\n" if m else None
