# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Start or finish a phase of install.yml against the install journal on the controller."""
from __future__ import annotations

# Documentation: plugins/modules/install_phase.py (ansible-doc reads it there).

import os
import time

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import (
    read_text, sync_tke_json_step, tree_digest, utc_now, write_private)


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    ARGUMENT_SPEC = dict(
        phase=dict(type="str"),
        state=dict(type="str", choices=["start", "done", "forget"], required=True),
        journal=dict(type="path"),
        force=dict(type="raw"),
        skip=dict(type="raw"),
        resume=dict(type="bool"),
        hosts=dict(type="list", elements="str"),
    )
    REQUIRED_IF = [("state", "start", ["phase"]), ("state", "done", ["phase"])]

    def run_action(self, args, result, task_vars):
        args = {k: v for k, v in args.items() if v is not None}  # options not given fall back to variables
        phase, state = args.get("phase"), args["state"]
        if state == "forget":
            return self._forget(args, result, task_vars)
        if phase not in ij.PHASE_NAMES:
            raise AnsibleActionFail(f"install_phase: unknown phase {phase!r}")

        def var(name, default=None):
            value = task_vars.get(name, default)
            return self._templar.template(value) if isinstance(value, str) else value

        path = args.get("journal") or os.path.join(to_text(var("tke_state_dir")), "journal.json")
        try:
            force = ij.parse_phase_list(args.get("force", var("force_phases")), "force_phases")
            skip = ij.parse_phase_list(args.get("skip", var("tke_skip_phases")), "tke_skip_phases")
            journal = ij.load(read_text(path))
        except ValueError as exc:
            raise AnsibleActionFail(f"{path}: {exc}" if "journal" in str(exc) else str(exc))
        # -e tke_resume=false is a string: typed by the tke role's spec, as install_hook does
        resume = args.get("resume", inventory_model.tke_setting("tke_resume", var("tke_resume", True)))

        hosts = list(args.get("hosts") or task_vars.get("ansible_play_hosts") or [])
        number, total = ij.phase_number(phase)
        title = f"phase {number}/{total} {phase}"

        if state == "start":
            fingerprints, names = self._fingerprints(phase, hosts, task_vars)
            machines, records = self._host_reads(hosts, task_vars)
            decision = ij.decide(journal, phase, fingerprints, force=force, skip=skip, resume=resume,
                                 machines=machines, records=records, names=names)
            # the inputs as the phase starts are what it is recorded with (variables registered
            # during the phase must not count as inputs)
            journal.setdefault("running", {})[phase] = {"started": time.time(), "fingerprints": fingerprints,
                                                        "machines": machines, "names": names}
            parts = [f"{title}: running on {', '.join(decision['run']) or 'no host'}"]
            # why each host runs (a node added or removed, inputs changed, reinstalled), unless it is
            # a fresh install
            if decision["run"] and (decision["skip"] or {decision["why"][h] for h in decision["run"]} != {"new"}):
                parts[0] += f" ({ij.explain(decision)})"
            if decision["skip"]:
                reasons = sorted(set(decision["skip"].values()))
                for reason in reasons:
                    names = [h for h, r in decision["skip"].items() if r == reason]
                    parts.append(f"skipping {', '.join(names)} ({reason})")
            result.update(skip_hosts=decision["skip"], run_hosts=decision["run"], banner="; ".join(parts))
            if self._task.check_mode:
                this_run = ij.selected(task_vars.get("ansible_run_tags"), task_vars.get("ansible_skip_tags"))
                result["check_pending"] = {h: ij.not_done(records.get(h), skip, this_run) for h in hosts}
        else:
            running = journal.get("running", {}).pop(phase, None) or {}
            at_start, names = ((running["fingerprints"], running.get("names")) if running.get("fingerprints")
                               else self._fingerprints(phase, hosts, task_vars))
            machines = running.get("machines") or self._host_reads(hosts, task_vars)[0]
            done = {h: at_start[h] for h in hosts if h in at_start}
            journal = ij.record(journal, phase, done, utc_now(), machines=machines, names=names)
            elapsed = f" in {time.time() - running['started']:.1f} s" if "started" in running else ""
            result.update(banner=f"{title}: done on {', '.join(hosts) or 'no host'}{elapsed}", fingerprints=done)
        if not self._task.check_mode:
            write_private(path, ij.dump(journal))
            if state == "done":
                sync_tke_json_step(os.path.dirname(path), journal.get("step", 0))
        result.update(changed=False, step=journal.get("step", 0), journal=path)
        return result

    def _forget(self, args, result, task_vars):
        """A reset: the journal forgets the hosts, tke.json's step follows; changed when the
        journal had them (a second reset changes nothing)."""
        state_dir = to_text(self._templar.template(task_vars.get("tke_state_dir")))
        path = args.get("journal") or os.path.join(state_dir, "journal.json")
        hosts = list(args.get("hosts") or task_vars.get("ansible_play_hosts") or [])
        try:
            journal = ij.load(read_text(path))
        except ValueError as exc:
            raise AnsibleActionFail(f"{path}: {exc}")
        new, had = ij.forget(journal, hosts)
        changed = new != journal
        if changed and not self._task.check_mode:
            write_private(path, ij.dump(new))
            sync_tke_json_step(os.path.dirname(path), new.get("step", 0))
        result.update(changed=changed, forgotten=had, step=new.get("step", 0), journal=path,
                      banner=f"journal: forgot {', '.join(had) or 'no host'} (step {new.get('step', 0)})")
        if self._task.diff:
            result["diff"] = dict(before=ij.dump(journal), after=ij.dump(new), before_header=path, after_header=path)
        return result

    def _host_reads(self, hosts, task_vars):
        """host -> /etc/machine-id, and host -> {phase: fingerprint} the host records done, as
        roles/tke/tasks/phase_start.yml read them this run (None: not read)."""
        hostvars = task_vars.get("hostvars", {})
        record_dir = self._templar.template(task_vars.get("tke_host_record_dir", ""))
        machines, records = {}, {}
        for host in hosts:
            read = hostvars.get(host, {}).get("tke_host_read")
            if isinstance(read, dict) and read.get("rc") == 0 and record_dir:
                machines[host], records[host] = ij.parse_host_read(read.get("stdout", ""), record_dir)
            else:
                machines[host], records[host] = None, None
        return machines, records

    def _fingerprints(self, phase, hosts, task_vars):
        options = ij.input_options(phase)
        code = tree_digest("roles", "plugins", "playbooks")
        hostvars = task_vars.get("hostvars", {})
        # what this run registered or set_fact'ed (earlier phases' results, this bookkeeping's own
        # tke_phase_start) is not an input: only what the inventory and the command line say is
        variable_manager = getattr(hostvars, "_variable_manager", None)
        run_facts = getattr(variable_manager, "_nonpersistent_fact_cache", {}) if variable_manager else {}
        groups = task_vars.get("groups", {})
        named = {h: {k: self._templar.template(hostvars[h].get(k)) for k in ("ansible_host", "tke_node_ip")}
                 for h in groups.get("all", ()) if h in hostvars}
        site = ij.site_names(phase, named, groups)
        out = {}
        for host in hosts:
            hv = hostvars.get(host, {})
            keys = ij.input_names(hv, options, exclude=set(run_facts.get(host, {})))
            inputs = {k: self._templar.template(hv[k]) for k in keys}
            out[host] = ij.fingerprint(phase, code, inputs, sorted(hv.get("group_names", [])),
                                       hv.get("ansible_host", host), site)
        return out, [entry[0] for entry in site]
