#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the components_render action plugin (plugins/action/components_render.py);
it runs on the controller only, so there is no module code."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: components_render
short_description: Render the components' templates from the site pack and check the images they run
version_added: 0.2.0
description:
  - Runs on the controller only (no connection to any host is made).
  - A component that is a Helm chart (its C(chart), from the pack's manifest) is rendered by the pack's
    helm (C(helm template) on the controller, no cluster contacted, its C(values.schema.json)
    enforced), its namespaced objects given the component's namespace.
  - Renders every template file of each component of O(components) from the verified pack in
    O(pack_dir) with the run's variables, plus C(component) (the entry) and C(values), as
    C(ansible.builtin.template) does; returns the objects per component, the values of their
    Secrets (C(data), C(stringData)) apart, for M(offline_pot.tke.k8s_apply)'s C(no_log) option
    C(secrets).
  - Checks every image the objects run (containers, init and ephemeral containers of a pod
    template) against what the site pack carries for the component - its own images under
    O(prefix), and, with O(registry_domain), the site's images in that registry.
  - Does not fail on a problem (a template that does not render, an image the pack does not carry
    for the component) but returns them in RV(problems), each naming the component (and the object
    and image), so that the task may be C(no_log) - its result holds the components' values and
    Secrets - and a task after it fails on them before any component is applied.
requirements:
  - Runs on the controller (an action plugin); touches no host
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.INFO_MODULE
  - offline_pot.tke.attributes.ACTION
options:
  components:
    description: The components to render (the plan's, C(components_plan)), each with C(name),
      C(files) (paths in the pack), C(images) (the pack's, C(<namespace>/<name>:<tag>)) and C(values).
    type: list
    elements: dict
    required: true
  pack_dir:
    description: The verified site pack's directory on the controller.
    type: path
    required: true
  prefix:
    description: What an image of the pack is referenced with in the cluster, C(<registry>/<namespace>).
    type: str
    required: true
  removed:
    description: Components removed by the run, rendered only (their kinds are what the removal
      searches); their images are not checked.
    type: list
    elements: dict
    default: []
  kube_version:
    description: The Kubernetes release a chart is rendered for (C(.Capabilities.KubeVersion); empty - helm's default).
    type: str
    default: ""
  registry_domain:
    description: The site registry's name when the components' images are the site registry's
      (empty when they are pushed into another registry); the site's own images (the manifest's
      C(contents.images)) in it may be run too.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Objects of every component rendered, their images checked
  offline_pot.tke.components_render:
    components: "{{ components_run.apply }}"
    pack_dir: "{{ components_pack_dir }}"
    prefix: "{{ components_image_prefix }}"
  register: components_rendered
  no_log: true   # the result holds the Secrets' values

- name: Templates that do not render, images the pack lacks
  ansible.builtin.fail:
    msg: "{{ components_rendered.problems }}"
  when: components_rendered.problems | length > 0
"""

RETURN = r"""
objects:
  description: The rendered objects, per component name; Secrets without their values.
  returned: always
  type: dict
secrets:
  description: Per component name, the values of its Secrets by C(namespace/name) (k8s_apply's O(offline_pot.tke.k8s_apply#module:secrets)).
  returned: always
  type: dict
problems:
  description: One line per template that does not render and per image a component of O(components)
    runs that the pack does not carry for it.
  returned: always
  type: list
  elements: str
helm:
  description: The site pack's helm binary on the controller (empty - the pack carries none).
  returned: always
  type: str
helm_install:
  description: Where the offline phase installs the pack's helm on the hosts (empty - none).
  returned: always
  type: str
"""
