# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Start or finish a phase of install.yml against the install journal on the controller."""
from __future__ import annotations

# Documentation: plugins/modules/install_phase.py (ansible-doc reads it there).

import os
import time

from ansible import context
from ansible.errors import AnsibleActionFail, AnsibleUndefinedVariable
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_hooks
from ansible_collections.offline_pot.tke.plugins.plugin_utils import install_journal as ij
from ansible_collections.offline_pot.tke.plugins.plugin_utils import inventory_model
from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_identity as si
from ansible_collections.offline_pot.tke.plugins.plugin_utils import site_lock
from ansible_collections.offline_pot.tke.plugins.plugin_utils.action_module import ActionModuleBase
from ansible_collections.offline_pot.tke.plugins.plugin_utils._controller import (
    read_text, sync_tke_json_step, tree_digest, utc_now, write_private)


class ActionModule(ActionModuleBase):
    TRANSFERS_FILES = False
    ARGUMENT_SPEC = dict(
        phase=dict(type="str"),
        state=dict(type="str", choices=["start", "done", "forget", "lock", "versions", "plan", "adopt_check", "adopt"], required=True),
        journal=dict(type="path"),
        force=dict(type="raw"),
        skip=dict(type="raw"),
        resume=dict(type="bool"),
        hosts=dict(type="list", elements="str"),
        started=dict(type="float"),
    )
    REQUIRED_IF = [("state", "start", ["phase"]), ("state", "done", ["phase"])]

    def _input(self, hostvars, host, name):
        """An input as the phase will see it on the host; one naming a variable only the phase's
        roles define (a component's values may say "{{ components_image_prefix }}") as written:
        what it refers to is an input too, or a role default (the roles' code is in the
        fingerprint)."""
        try:
            return self._templar.template(hostvars[host][name])
        except AnsibleUndefinedVariable:
            return hostvars.raw_get(host)[name]

    def run_action(self, args, result, task_vars):
        args = {k: v for k, v in args.items() if v is not None}  # options not given fall back to variables
        phase, state = args.get("phase"), args["state"]
        if state == "forget":
            return self._forget(args, result, task_vars)
        if state == "lock":
            return self._lock(args, result, task_vars)
        if state == "versions":
            return self._versions(args, result, task_vars)
        if state in ("adopt_check", "adopt"):
            return self._adopt(state, result, task_vars)
        if state == "plan":
            return self._plan(args, result, task_vars)
        if phase not in ij.PHASE_NAMES:
            raise AnsibleActionFail(f"install_phase: unknown phase {phase!r}")

        var, path, journal, force, skip, resume = self._settings(args, task_vars)

        # in the inventory's order (the hosts that end a phase come in the order they finished)
        hosts = self._in_order(args.get("hosts") or task_vars.get("ansible_play_hosts") or [], task_vars)
        number, total = ij.phase_number(phase)
        title = f"phase {number}/{total} {phase}"

        state_dir = os.path.dirname(path)
        identity = self._identity(state_dir, var)
        if state == "start":
            # every host was read by install.yml's plan (roles/tke/tasks/plan.yml), the one read of the run
            hostvars = task_vars.get("hostvars", {})
            unread = [h for h in hosts if "skipped" in (hostvars.get(h, {}).get("__tke_host_read") or {"skipped": True})]
            if unread:
                raise AnsibleActionFail(
                    f"{phase}: {', '.join(unread)} not read this run: install.yml's plan play reads every host "
                    "before the first phase (it is tagged 'always': do not skip that tag)")
            # hosts of another site are refused before anything is written (the journal key included)
            machines, records = self._host_reads(hosts, task_vars)
            self._refuse_foreign(identity, state_dir, hosts, records, task_vars)
            fingerprints, names, inputs = (self._planned(phase, hosts, task_vars)
                                           or self._fingerprints(phase, hosts, task_vars))
            now = time.time()
            decision = ij.decide(journal, phase, fingerprints, force=force, skip=skip, resume=resume,
                                 machines=machines, records=records, names=names,
                                 drift=self._host_drift(hosts, task_vars), inputs=inputs)
            # the inputs as the phase starts are what it is recorded with (variables registered
            # during the phase must not count as inputs)
            journal.setdefault("running", {})[phase] = {"started": now, "fingerprints": fingerprints,
                                                        "machines": machines, "names": names, "inputs": inputs}
            # why each host runs (a node added or removed, inputs changed, reinstalled), unless it is
            # a fresh install; who skips it and why; where only the phase's names tasks run
            # (roles/tke/tasks/phase_names.yml: tke_phase_names_tasks)
            result.update(skip_hosts=decision["skip"], run_hosts=decision["run"], msg=ij.banner(phase, decision),
                          names_hosts=decision["names_only"] if ij.names_tasks(phase) else [],
                          started=now, estimate=ij.last_seconds(journal, phase, decision["run"]))
        else:
            # the phase's after-hook, where the phase ran, before it is recorded done (a failing
            # hook leaves it not done: the next run runs the phase, and the hook, again)
            if hosts and not self._hook(f"{phase}/after", result, task_vars):
                return result
            running = journal.get("running", {}).pop(phase, None) or {}
            if self._task.check_mode:   # check mode writes no `running` entry: one there is stale
                running = {}
            at_start, names, inputs = ((running["fingerprints"], running.get("names"), running.get("inputs"))
                                       if running.get("fingerprints") else self._fingerprints(phase, hosts, task_vars))
            machines = running.get("machines") or self._host_reads(hosts, task_vars)[0]
            done = {h: at_start[h] for h in hosts if h in at_start}
            started = args.get("started", running.get("started"))
            seconds = round(time.time() - started, 1) if started else None
            journal = ij.record(journal, phase, done, utc_now(), machines=machines, names=names, seconds=seconds,
                                inputs=inputs)
            elapsed = f" in {seconds:.1f} s" if seconds is not None else ""
            # what each host records beside the phase: the site it belongs to, and the Kubernetes
            # version whose kubeadm and kubelet the offline phase installed (site_identity.py)
            host_records = {si.HOST_FILE: si.host_text(identity)}
            if phase == "offline":
                host_records[si.VERSION_FILE] = str(var("tke_k8s_version", "")).lstrip("v")
            # the state the phase's roles keep on each host (__tke_phase_owns, set by the roles as they
            # run): its probes, run again at the start of every run (install_journal.parse_host_drift)
            hostvars = task_vars.get("hostvars", {})
            record_dir = self._templar.template(task_vars.get("tke_host_record_dir", ""))
            salt = os.path.join(record_dir, ij.SALT_NAME)
            try:
                probes = {h: ij.probe_script(((hostvars.get(h, {}).get("__tke_phase_owns") or {}).get(phase)) or {}, salt)
                          for h in done}
            except ValueError as exc:
                raise AnsibleActionFail(str(exc))
            # what phase_end.yml runs on each of them (raw): the records, the fingerprint, the probes
            records = {h: ij.record_script(record_dir, phase, host_records, done[h], probes[h], salt) for h in done}
            result.update(msg=f"{title}: done on {', '.join(hosts) or 'no host'}{elapsed}", fingerprints=done,
                          host_records=host_records, seconds=seconds, record_scripts=records)
        if not self._task.check_mode:
            if self._identity_new:  # made at the site's first install, completed when its CA exists
                write_private(os.path.join(state_dir, si.CONTROLLER_FILE), si.dump(self._identity_stored))
            write_private(path, ij.dump(journal))
            if state == "done":
                sync_tke_json_step(os.path.dirname(path), journal.get("step", 0))
        # msg, the banner, is the phase's line of output: shown by the default callback without -v
        # (as debug's msg is, folded alike), read by the progress callback (plugins/callback/progress.py)
        result.update(step=journal.get("step", 0), journal=path, phase=phase, _ansible_verbose_always=True)
        # the phase's before-hook, once the hosts that run the phase are known, when there are any
        if state == "start" and result["run_hosts"] and not self._hook(f"{phase}/before", result, task_vars):
            return result
        # the banner (msg) stays the phase's line; what a hook did is in `hooks`: changed when one changed something
        result["changed"] = any(ran["changed"] for ran in result.get("hooks", {}).values())
        return result

    def _settings(self, args, task_vars):
        """(var, the journal's path, the journal, force_phases, tke_skip_phases, tke_resume)."""
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
        return var, path, journal, force, skip, resume

    @staticmethod
    def _in_order(hosts, task_vars):
        order = list(task_vars.get("ansible_play_hosts_all") or [])
        return sorted(hosts, key=lambda h: order.index(h) if h in order else len(order))

    @staticmethod
    def _planned(phase, hosts, task_vars):
        """(fingerprints, names, inputs) of the phase as this run's plan computed them (__tke_plan:
        the inputs do not change during a run), when it did for every one of these hosts; else None."""
        planned = ((task_vars.get("__tke_plan") or {}).get("fingerprints") or {}).get(phase)
        if not isinstance(planned, dict) or not all(h in (planned.get("hosts") or {}) for h in hosts):
            return None
        return tuple({h: (planned.get(part) or {}).get(h) for h in hosts} for part in ("hosts", "names", "inputs"))

    def _plan(self, args, result, task_vars):
        """install.yml's plan, before its first phase: each phase's decision as its start will make
        it - the same inputs, host records, drift and rules, none of which a run changes (what runs
        register is no input; each host is read once per run) - for the hosts its play will have
        (its pattern, within this play's hosts: --limit). The phases with no host to run on are
        returned in `skip_phases`, with the line their start would say, and are not played
        (playbooks/phase.yml's hosts); the others start as always. Writes nothing; refuses hosts of
        another site as a start does."""
        var, path, journal, force, skip, resume = self._settings(args, task_vars)
        hosts = self._in_order(task_vars.get("ansible_play_hosts") or [], task_vars)
        groups = task_vars.get("groups", {})
        this_run = ij.selected(task_vars.get("ansible_run_tags"), task_vars.get("ansible_skip_tags"))
        state_dir = os.path.dirname(path)
        identity = self._identity(state_dir, var)
        machines, records = self._host_reads(hosts, task_vars)
        self._refuse_foreign(identity, state_dir, hosts, records, task_vars)
        drift = self._host_drift(hosts, task_vars)
        code = tree_digest("roles", "plugins", "playbooks")
        skipped, run, computed = [], {}, {}
        check, unchecked, unchecked_hosts, preview = self._task.check_mode, {}, {}, []
        for entry in ij.PHASES:
            if entry.name not in this_run or entry.name == "validate":
                continue
            named = ij.pattern_hosts(entry.hosts, groups)
            if named is None:
                run[entry.name] = "its play decides (host pattern " + entry.hosts + ")"
                continue
            mine = [h for h in hosts if h in named]
            fingerprints, names, inputs = self._fingerprints(entry.name, mine, task_vars, code=code)
            computed[entry.name] = {"hosts": fingerprints, "names": names, "inputs": inputs}
            decision = ij.decide(journal, entry.name, fingerprints, force=force, skip=skip, resume=resume,
                                 machines=machines, records=records, names=names, drift=drift, inputs=inputs)
            # check mode: where the phase cannot be checked, it is said, and its play leaves those hosts out
            cannot = ij.unchecked(entry.name, decision["run"], records, groups, skip, this_run) if check else {}
            for host in cannot:
                unchecked_hosts.setdefault(host, []).append(entry.name)
            if cannot:
                unchecked[entry.name] = list(cannot)
                preview.append(ij.banner(entry.name, decision, cannot))
            if len(cannot) < len(decision["run"]):
                run[entry.name] = [h for h in decision["run"] if h not in cannot]
            else:
                skipped.append({"phase": entry.name, "skip_hosts": {**decision["skip"], **cannot},
                                "msg": ij.banner(entry.name, decision, cannot)})
        # the phases' fingerprints, which their starts take from here (__tke_plan) rather than compute again
        # what each phase's play leaves out of its host pattern (playbooks/phase.yml): every host of a
        # phase no host runs, the hosts where check mode cannot check it
        leave_out = {x["phase"]: ":!all" for x in skipped}
        leave_out.update({p: "".join(f":!{h}" for h in hs) for p, hs in unchecked.items() if p not in leave_out})
        result.update(changed=False, skip_phases=[x["phase"] for x in skipped], plan=skipped, run_phases=run,
                      fingerprints=computed, unchecked=unchecked, leave_out=leave_out,
                      unchecked_hosts={h: f"would run {', '.join(p)} here; not checked (check mode: "
                                          "why, in each phase's line above)" for h, p in unchecked_hosts.items()},
                      msg=[x["msg"] for x in skipped if x["phase"] not in unchecked] + preview
                      + [f"phases with work: {', '.join(run) or 'none'}"],
                      _ansible_verbose_always=True)
        return result

    def _hook(self, name, result, task_vars):
        """Run the user's hook playbook <tke_hooks_dir>/<name>.yml when there is one (install_hooks);
        its result goes into result["hooks"][name]. False when it failed (result says why)."""
        hooks_dir = to_text(self._templar.template(task_vars.get("tke_hooks_dir", "hooks")))
        path = install_hooks.hook_path(hooks_dir, name)
        if not os.path.isfile(path):
            return True
        try:
            ran = install_hooks.run_hook(name, path, dict(context.CLIARGS), self._task.check_mode)
        except ValueError as exc:
            raise AnsibleActionFail(str(exc))
        hooks = result.setdefault("hooks", {})
        hooks[name] = ran
        if ran["failed"]:
            result.update(failed=True, msg=ran["msg"], stdout_lines=ran["stdout_lines"], hook=path,
                          changed=any(r["changed"] for r in hooks.values()))
            return False
        return True

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
            if not new.get("phases"):  # the whole site was reset: the next install makes a new site
                identity = os.path.join(os.path.dirname(path), si.CONTROLLER_FILE)
                if os.path.exists(identity):
                    os.unlink(identity)
        result.update(changed=changed, forgotten=had, step=new.get("step", 0), journal=path,
                      banner=f"journal: forgot {', '.join(had) or 'no host'} (step {new.get('step', 0)})")
        if self._task.diff:
            result["diff"] = dict(before=ij.dump(journal), after=ij.dump(new), before_header=path, after_header=path)
        return result

    def _adopt(self, state, result, task_vars):
        """playbooks/adopt.yml. adopt_check: the hosts agree on the site they belong to and this
        folder holds no site's state (nothing written). adopt: with the PKI store rebuilt (k8s_pki
        adopt), site.json and the journal (install_journal.rebuild) from what the hosts record;
        tke.json's step follows."""
        state_dir = to_text(self._templar.template(task_vars.get("tke_state_dir")))
        hosts = list(task_vars.get("ansible_play_hosts") or [])
        machines, records = self._host_reads(hosts, task_vars)
        theirs = {h: si.parse_host_text(f.get(si.HOST_FILE)) for h, f in self._host_files(hosts, task_vars).items()}
        recorded = {h: i for h, i in theirs.items() if i}
        sites = {(i["id"], i.get("ca_sha256")) for i in recorded.values()}
        if not recorded:
            raise AnsibleActionFail("adopt: no host of the inventory records a site, nothing to adopt (hosts that "
                                    "belong to no site are installed by install.yml)")
        if len(sites) > 1:
            raise AnsibleActionFail("adopt: the hosts record different sites, nothing was written: " + "; ".join(
                f"{h}: {si.describe(i)}" for h, i in sorted(recorded.items())))
        site_id, ca = sites.pop()
        identity = {"id": site_id, "ca_sha256": ca} if ca else {"id": site_id}
        path = os.path.join(state_dir, si.CONTROLLER_FILE)
        stored = read_text(path)
        if state == "adopt_check":
            if stored.strip():
                raise AnsibleActionFail(f"adopt: {path} exists: this folder holds a site's state already; adopt "
                                        "rebuilds a lost one only (nothing was written)")
            result.update(changed=False, identity=identity, hosts=sorted(recorded), _ansible_verbose_always=True,
                          msg=f"the hosts {', '.join(sorted(recorded))} record {si.describe(identity)}"
                          + (f"; {', '.join(sorted(set(hosts) - set(recorded)))} record none" if len(recorded) < len(hosts) else ""))
            return result
        pki_dir = to_text(self._templar.template(task_vars.get("pki_dir") or os.path.join(state_dir, "pki")))
        self._pki_dir = pki_dir
        store_ca = si.ca_fingerprint(read_text(os.path.join(pki_dir, "ca.crt")))
        if not self._task.check_mode and ca and store_ca != ca:
            raise AnsibleActionFail(f"adopt: the store's CA ({store_ca}) is not the one the hosts record ({ca})")
        fingerprints, names, inputs = {}, {}, {}
        code = tree_digest("roles", "plugins", "playbooks")   # once for every phase
        # a preview has no journal key yet (it comes back with the store, which a preview does not
        # write): the hosts' records are taken as they are, and compared when adopting for real
        unkeyed = self._task.check_mode and not os.path.isfile(os.path.join(pki_dir, ij.JOURNAL_KEY))
        for p in ij.PHASES:
            if not p.name.startswith("hook:"):
                with_it = [h for h in hosts if p.name in (records.get(h) or {})]
                fingerprints[p.name], names[p.name], inputs[p.name] = self._fingerprints(p.name, with_it, task_vars, code)
                if unkeyed:
                    fingerprints[p.name] = {h: records[h][p.name] for h in with_it}
        hooks_dir = to_text(self._templar.template(task_vars.get("tke_hooks_dir", "hooks")))
        hooks = {p.name: ij.hook_fingerprint(hooks_dir, p.name[len("hook:"):]) for p in ij.PHASES
                 if p.name.startswith("hook:")}
        journal, again = ij.rebuild(records, fingerprints, hooks, utc_now(), machines=machines, names=names,
                                    inputs=inputs)
        journal_path = os.path.join(state_dir, "journal.json")
        if not self._task.check_mode:
            write_private(path, si.dump(identity))
            write_private(journal_path, ij.dump(journal))
            sync_tke_json_step(state_dir, journal.get("step", 0))
        done = [n for n in ij.PHASE_NAMES if n in journal["phases"]]
        result.update(changed=True, identity=identity, journal=journal_path, step=journal.get("step", 0),
                      phases_done=done, runs_again=again, _ansible_verbose_always=True,
                      msg=f"adopted {si.describe(identity)}: journal rebuilt from the hosts' records, done: "
                      + (", ".join(done) or "none")
                      + "".join(f"; {p} runs again on {', '.join(h)} (its inputs differ from what they record)"
                                for p, h in again.items())
                      + ("; check mode: the inputs of the phases are compared with the records of the hosts when "
                         "adopting (the journal key comes back with the store)" if unkeyed else ""))
        return result

    def _identity(self, state_dir, var):
        """The site's identity as this run sees it: site.json's, made now when there is none (kept
        unless check mode), with the fingerprint of the CA in the controller's PKI store (when the
        store has a CA other than the one site.json names, or none while site.json names one, the
        store's, so that hosts installed with the site's CA see the difference)."""
        file = os.path.join(state_dir, si.CONTROLLER_FILE)
        try:
            stored = si.load(read_text(file))
        except ValueError as exc:
            raise AnsibleActionFail(f"{file}: {exc}")
        pki_dir = to_text(var("pki_dir") or os.path.join(state_dir, "pki"))
        self._pki_dir = pki_dir
        ca = si.ca_fingerprint(read_text(os.path.join(pki_dir, "ca.crt")))
        self._identity_stored = si.with_ca(stored, ca) if stored else si.new(ca)
        self._identity_new = self._identity_stored != stored
        self._identity_had = stored
        effective = dict(self._identity_stored)
        if effective.get("ca_sha256") and effective["ca_sha256"] != ca:
            effective["ca_sha256"] = ca or "none"
        return effective

    def _host_outputs(self, hosts, task_vars):
        """(the phase records' directory, host -> the output of its read this run (roles/tke/tasks/
        host_read.yml) for the hosts that answered); no host when the directory is not known."""
        hostvars = task_vars.get("hostvars", {})
        record_dir = self._templar.template(task_vars.get("tke_host_record_dir", ""))
        out = {}
        for host in hosts:
            read = hostvars.get(host, {}).get("__tke_host_read")
            if isinstance(read, dict) and read.get("rc") == 0 and record_dir:
                out[host] = read.get("stdout", "")
        return record_dir, out

    def _host_files(self, hosts, task_vars):
        """host -> the files it records beside its phase records (__tke_host_read: host_read.yml)."""
        record_dir, outputs = self._host_outputs(hosts, task_vars)
        base = os.path.dirname(record_dir.rstrip("/"))
        return {host: ij.parse_host_files(text, base) for host, text in outputs.items()}

    @staticmethod
    def _node_versions(records, files):
        """host -> the Kubernetes version its node runs (si.node_versions of its reads)."""
        versions = {h: f[si.VERSION_FILE] for h, f in files.items() if f.get(si.VERSION_FILE)}
        return si.node_versions({h: r for h, r in records.items() if r}, versions)

    def _version_problems(self, nodes, task_vars, playbook):
        """si.version_conflicts between the inventory's version and what the hosts' nodes run (nodes:
        _node_versions)."""
        wanted = self._templar.template(task_vars.get("tke_k8s_version"))
        return si.version_conflicts(wanted, nodes, playbook)

    def _versions(self, args, result, task_vars):
        """A day-2 playbook (roles/tke/tasks/versions.yml) refuses nodes of another Kubernetes version
        than the inventory's, before it touches anything."""
        hosts = list(args.get("hosts") or task_vars.get("ansible_play_hosts") or [])
        records = self._host_reads(hosts, task_vars)[1]
        given = site_lock.playbook_of(os.getppid()).split()   # the worker's parent: ansible-playbook
        playbook = os.path.basename(given[0]) if given else "this playbook"
        problems = self._version_problems(self._node_versions(records, self._host_files(hosts, task_vars)),
                                          task_vars, playbook)
        if problems:
            raise AnsibleActionFail("; ".join(problems) + " (nothing was touched)")
        result.update(changed=False, msg=f"every node runs the inventory's version ({', '.join(hosts) or 'no host'})")
        return result

    def _refuse_foreign(self, identity, state_dir, hosts, records, task_vars):
        """Nothing is written on any host when one belongs to another site, the controller's state
        has no identity (or another CA) while hosts record one, or the nodes run another Kubernetes
        version than the inventory's (site_identity.py). The controller's journal is not written
        either."""
        files = self._host_files(hosts, task_vars)
        theirs = {h: si.parse_host_text(f.get(si.HOST_FILE)) for h, f in files.items()}
        problems = si.conflicts(self._identity_had and identity, theirs, state_dir)
        if problems:
            raise AnsibleActionFail("this run would change hosts of another installation, nothing was written on "
                                    "any host: " + "; ".join(problems) + ". What to do: " + si.WHAT_TO_DO)
        nodes = self._node_versions(records, files)
        problems = self._version_problems(nodes, task_vars, "install.yml")
        if not problems and not self._identity_had:
            # a new site (the controller has no site identity, no node runs a version): at a supported
            # release only
            value = self._templar.template
            problems = si.end_of_life_install(
                value(task_vars.get("tke_k8s_version")), nodes, hosts,
                value(task_vars.get("tke_supported_k8s_versions")),
                value(task_vars.get("tke_upgrade_source_k8s_versions")),
                boolean(value(task_vars.get("tke_allow_eol_install", False)), strict=False))
        if problems:
            raise AnsibleActionFail("; ".join(problems) + " (nothing was written on any host)")

    def _lock(self, args, result, task_vars):
        """One run at a time per site (site_lock.py): taken here, held until ansible-playbook ends."""
        state_dir = (os.path.dirname(args["journal"]) if args.get("journal")
                     else to_text(self._templar.template(task_vars.get("tke_state_dir"))))
        owner = os.getppid()  # the worker running this task is a child of the ansible-playbook process
        # the run's --check (the lock task itself runs with check_mode: false, so that it is taken in
        # a preview of an installed site too)
        check_run = self._task.check_mode or boolean(task_vars.get("ansible_check_mode", False), strict=False)
        if check_run and not os.path.isdir(state_dir):
            # a preview of a site never installed from here: no state to protect, and check mode
            # writes nothing, not even on the controller
            result.update(changed=False, lock=None, banner=f"check mode: no site state in {state_dir}, no lock")
            return result
        info = {"playbook": site_lock.playbook_of(owner) or task_vars.get("ansible_play_name", ""),
                "started": utc_now(), "user": os.environ.get("USER", "")}
        try:
            fd, path = site_lock.acquire(state_dir, owner, info)
        except site_lock.Held as exc:
            raise AnsibleActionFail(str(exc))
        except OSError as exc:
            raise AnsibleActionFail(f"the site's lock in {state_dir}: {exc}")
        if fd is not None:
            site_lock.hold_until_exit(fd, owner)
        result.update(changed=False, lock=path, holder=dict(info, pid=owner),
                      banner=f"this run holds the site's lock {path} (pid {owner})")
        return result

    def _host_reads(self, hosts, task_vars):
        """host -> /etc/machine-id, and host -> {phase: fingerprint} the host records done, as
        roles/tke/tasks/phase_start.yml read them this run (None: not read)."""
        record_dir, outputs = self._host_outputs(hosts, task_vars)
        machines, records = {}, {}
        for host in hosts:
            machines[host], records[host] = (ij.parse_host_read(outputs[host], record_dir) if host in outputs
                                             else (None, None))
        return machines, records

    def _host_drift(self, hosts, task_vars):
        """host -> {phase: [state probes whose digest differs from the host's record]}, as
        host_read.yml read them this run (install_journal.parse_host_drift)."""
        record_dir, outputs = self._host_outputs(hosts, task_vars)
        return {host: ij.parse_host_drift(text, record_dir) for host, text in outputs.items()}

    def _fingerprints(self, phase, hosts, task_vars, code=None):
        """(host -> the fingerprint of the phase's inputs now, host -> the hosts its configuration
        names there, host -> the fingerprint of its inputs less those: install_journal.decide);
        code: the collection's code digest when the caller has it already."""
        options = ij.input_options(phase)
        code = code or tree_digest("roles", "plugins", "playbooks")
        if getattr(self, "_journal_key", None) is None:
            self._journal_key = ij.journal_key(self._pki_dir, make=not self._task.check_mode)
        hostvars = task_vars.get("hostvars", {})
        # what this run registered or set_fact'ed (earlier phases' results, this bookkeeping's own
        # __tke_phase_start) is not an input: only what the inventory and the command line say is
        variable_manager = getattr(hostvars, "_variable_manager", None)
        run_facts = getattr(variable_manager, "_nonpersistent_fact_cache", {}) if variable_manager else {}
        groups = task_vars.get("groups", {})
        named = {h: {k: self._templar.template(hostvars[h].get(k)) for k in ("ansible_host", "tke_node_ip")}
                 for h in groups.get("all", ()) if h in hostvars}
        out, names, inputs, sites = {}, {}, {}, {}
        for host in hosts:
            hv = hostvars.get(host, {})
            keys = ij.input_names(hv, options, exclude=set(run_facts.get(host, {})))
            values = {k: self._input(hostvars, host, k) for k in keys}
            wanted = ij.named_groups(phase, host, groups)
            if wanted not in sites:   # (the same for every host naming the same groups)
                sites[wanted] = ij.site_names(phase, named, groups, host)
            own = (phase, code, values, sorted(hv.get("group_names", [])), hv.get("ansible_host", host))
            out[host] = ij.fingerprint(self._journal_key, *own, sites[wanted])
            inputs[host] = ij.fingerprint(self._journal_key, *own)
            names[host] = [entry[0] for entry in sites[wanted]]
        return out, names, inputs
