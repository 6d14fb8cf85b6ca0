# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Certificates read on hosts -> report rows and a table."""
from __future__ import annotations

DOCUMENTATION = r"""
---
name: cert_report
short_description: One row per certificate found on the hosts, with days left and a status
version_added: 0.1.0
description:
  - Takes a mapping of host name to the C(certificates) returned by M(offline_pot.tke.pki_cert_info)
    (or to the output of the tke role's raw read of the certificates, C(tke_host_cert_script), whose
    lines are C(cert:<file>:<line>)) and returns one row per certificate - host, file, subject, issuer, SANs, not_after, days_left and
    status (C(ok), C(warn) under O(warn_days) days left, C(expired)), sorted by host and file.
  - Also the table form of such rows (O(table=true)), one fixed-width line each.
positional: _input, warn_days
options:
  _input:
    description: Host name -> list of C({path, pem}), or the text of the raw read.
    type: dict
    required: true
  warn_days:
    description: Rows with fewer days left than this are C(warn).
    type: int
    default: 30
  table:
    description: Return the rows as table lines (a header first) instead of dicts.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Show the certificates of every host
  ansible.builtin.debug:
    msg: "{{ found | offline_pot.tke.cert_report(30, table=true) }}"
"""

RETURN = r"""
_value:
  description: The rows (dicts) or the table lines.
  type: list
"""

import datetime

from ansible.errors import AnsibleFilterError

from ansible_collections.offline_pot.tke.plugins.module_utils.pki_pem import first_certificate
from ansible_collections.offline_pot.tke.plugins.plugin_utils import k8s_pki

CERT_PREFIX = "cert:"


def read_certificates(text):
    """[{path, pem}], as pki_cert_info returns them, from the `cert:<file>:<line>` lines of the tke
    role's raw read (roles/tke/vars/main.yml, tke_host_cert_script): the first certificate of each
    file, a kubeconfig's client certificate."""
    files = {}
    for line in (text or "").splitlines():
        if line.startswith(CERT_PREFIX):
            path, sep, rest = line[len(CERT_PREFIX):].partition(":")
            if sep:
                files.setdefault(path, []).append(rest)
    found = ((p, first_certificate("\n".join(files[p]) + "\n", kubeconfig=p.endswith(".conf"))) for p in sorted(files))
    return [{"path": p, "pem": pem} for p, pem in found if pem]


def report_rows(found, warn_days=30, now=None):
    try:
        k8s_pki.require_cryptography()
    except ImportError as e:
        raise AnsibleFilterError(f"cert_report: {e}") from e
    now = now or datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for host in sorted(found or {}):
        items = found[host]
        for item in read_certificates(items) if isinstance(items, str) else items or []:
            cert = k8s_pki.load_cert(item.get("pem", "").encode())
            if cert is None:
                rows.append({"host": host, "file": item.get("path"), "subject": "", "issuer": "", "sans": [],
                             "not_after": "", "days_left": None, "status": "unreadable"})
                continue
            d = k8s_pki.describe(cert, now)
            left = d["days_left"]
            status = "expired" if cert.not_valid_after_utc <= now else (
                "warn" if k8s_pki.within_window(cert, now, warn_days) else "ok")
            rows.append({"host": host, "file": item["path"], "subject": d["subject"], "issuer": d["issuer"],
                         "sans": d["sans"], "not_after": d["not_after"], "days_left": left, "status": status})
    return sorted(rows, key=lambda r: (r["host"], r["file"]))


def table_lines(rows):
    head = ("HOST", "FILE", "SUBJECT", "NOT AFTER", "DAYS", "STATUS", "SANS")
    body = [(r["host"], r["file"], r["subject"], r["not_after"], "" if r["days_left"] is None else str(r["days_left"]),
             r["status"].upper(), ",".join(r["sans"])) for r in rows]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head) - 1)]
    return ["  ".join(c.ljust(w) for c, w in zip(line[:-1], widths)) + "  " + line[-1] for line in [head] + body]


def cert_report(found, warn_days=30, table=False):
    try:
        rows = report_rows(found, int(warn_days))
    except (TypeError, ValueError, AttributeError) as e:
        raise AnsibleFilterError(f"cert_report: {e}")
    return table_lines(rows) if table else rows


class FilterModule:
    def filters(self):
        return {"cert_report": cert_report}
