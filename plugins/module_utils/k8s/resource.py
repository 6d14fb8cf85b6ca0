# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Kind -> REST resource through API discovery, the way kubectl finds it: GET /api/v1 for the
core group, /apis/<group>/<version> otherwise; each answer is an APIResourceList whose resources
have name, kind and namespaced (k8s.io/apimachinery/pkg/apis/meta/v1 types.go). Subresources
(pods/status) are skipped. Answers are cached for the module run; a miss is looked up once more
(a CustomResourceDefinition created earlier in the same run)."""
from __future__ import annotations

from urllib.parse import quote

from ansible_collections.offline_pot.tke.plugins.module_utils.k8s.client import ApiError


class Resource:
    def __init__(self, api_version, kind, name, namespaced):
        self.api_version, self.kind, self.name, self.namespaced = api_version, kind, name, namespaced

    def path(self, namespace=None, name=None):
        base = "/api/" + self.api_version if "/" not in self.api_version else "/apis/" + self.api_version
        if self.namespaced and namespace:
            base += "/namespaces/" + quote(namespace, safe="")
        base += "/" + self.name
        if name:
            base += "/" + quote(name, safe="")
        return base


def group_path(api_version):
    return "/api/" + api_version if "/" not in api_version else "/apis/" + api_version


class Discovery:
    def __init__(self, client):
        self.client = client
        self._lists = {}

    def _kinds(self, api_version, refresh=False):
        if refresh or api_version not in self._lists:
            try:
                answer = self.client.request("GET", group_path(api_version))
            except ApiError as e:
                if e.code == 404:
                    answer = {"resources": []}
                else:
                    raise
            self._lists[api_version] = {r["kind"]: r for r in answer.get("resources") or []
                                        if "/" not in r.get("name", "")}
        return self._lists[api_version]

    def resource(self, api_version, kind):
        found = self._kinds(api_version).get(kind) or self._kinds(api_version, refresh=True).get(kind)
        if not found:
            raise ApiError(404, {"reason": "NotFound",
                                 "message": f"the API serves no kind {kind} in {api_version}"})
        return Resource(api_version, kind, found["name"], bool(found.get("namespaced")))
