#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""Documentation of the install_phase action plugin (plugins/action/install_phase.py), which does the work
on the controller; there is no module code to run on a host."""
from __future__ import annotations

DOCUMENTATION = r"""
---
module: install_phase
short_description: Journal a phase of install.yml - decide which hosts still need it, record it done
version_added: 0.1.0
description:
  - Runs on the controller, once per phase (C(run_once)). With I(state=start) it computes, for every
    host of the play, a keyed fingerprint of the phase's inputs (the options the phase's roles and the
    C(tke) role declare in their argument specs, the host's groups and address, the names, groups
    and addresses of the hosts the phase's configuration names, and the code of the collection) and
    returns the hosts whose phase is already done with the same fingerprint (C(skip_hosts)), so the
    play can end them at once. A host whose machine id changed, or that does not itself record the
    phase done with that fingerprint (C(__tke_host_read), read by the tke role's phase_start tasks),
    runs it again.
  - The phases, their roles and how they resume are the entries of C(playbooks/install.yml).
  - With I(state=done) it records the phase done on the given hosts, with the time it took, and
    returns the fingerprints for the hosts to record.
  - The phase's hooks (C(<tke_hooks_dir>/<phase>/before.yml) and C(after.yml), docs/install.md, "Hooks") run
    in these calls, on the controller with the run's inventory and options - the before-hook when
    I(state=start) finds hosts that run the phase, the after-hook at I(state=done) before the phase is
    recorded (a failing after-hook leaves it not done). The result is changed when a hook changed something.
  - Hosts new to a phase that runs together (added to the inventory) do not bring along the hosts that
    have it done with unchanged inputs; the banner says why each host runs (new, reinstalled, its
    configuration names an added or removed host, inputs changed, runs together with ...).
  - With I(state=forget) (a reset, C(playbooks/reset.yml)) the journal forgets the given hosts in every
    phase (no host left in any phase - a whole site reset - empties it, hooks included) and C(tke.json)'s
    C(step) follows; this reports C(changed) when the journal had the hosts, and shows the journal
    before and after with C(--diff).
  - Site identity (docs/install.md, "Site identity"). I(state=start) compares the site identity each host
    records (C(/var/lib/offline-pot/site), read in the same C(__tke_host_read)) with the controller's
    (C(<tke_state_dir>/site.json), a random site id made at the site's first install and the SHA-256
    fingerprint of the cluster CA of the controller's PKI store) and fails, before the journal or any
    host is written, when a host belongs to another site, or records a site while the controller's
    state has none, or was installed with another CA; the message names the host, both identities and
    what to do. Hosts that record no site install as a new part of this one. It fails the same way
    when the Kubernetes version the nodes run (their upgrade record, else the version the offline
    phase installed, C(/var/lib/offline-pot/kubernetes)) differs from C(tke_k8s_version), naming both
    and the command that reconciles them. I(state=done) returns what each host records beside the
    phase (C(host_records)).
  - With I(state=lock) (the first controller step of install.yml, the day-2 playbooks and
    components.yml, the tke role's C(lock) tasks) it takes the site's lock, an C(fcntl.flock) on
    C(<tke_state_dir>/run.lock) held until the ansible-playbook process ends (by a small process it
    forks, as the task's own process ends with the task); when another run holds it the task fails at
    once naming that run (what the lock file says of it, its pid, playbook, start time and user).
  - The journal is C(<tke_state_dir>/journal.json), mode 0600. Its C(step) is TKE's resume point. The
    journal is bookkeeping on the controller, so I(state=start) and I(state=done) never report
    C(changed). In check mode nothing is written.
requirements:
  - Runs on the controller (an action plugin); the hosts need only Python 3 and a shell to report their records
  - I(state=lock) needs Linux's C(flock) and C(/proc) on the controller
author:
  - offline_pot.tke developers (!UNKNOWN)
extends_documentation_fragment:
  - offline_pot.tke.attributes.CHANGES_NO_DIFF
  - offline_pot.tke.attributes.ACTION
options:
  phase:
    description: Name of the phase (one of the phases of install.yml). Required unless I(state=forget).
    type: str
  state:
    description: >-
      C(start) decides which hosts run the phase; C(done) records it; C(forget) removes hosts from the
      journal (and, when none is left, the site identity); C(lock) takes the site's lock for this run;
      C(versions) fails, naming both and what to do, when the nodes of the play's hosts run another
      Kubernetes version than C(tke_k8s_version) (what each host records, read by the tke role's
      host_read.yml; a day-2 playbook's check before it touches anything). C(adopt_check) and
      C(adopt) are playbooks/adopt.yml's: the first fails unless the play's hosts agree on the site
      they record and the state directory holds no C(site.json) (it writes nothing); the second, with
      the PKI store rebuilt, writes C(site.json) and a journal rebuilt from what the hosts record (a
      phase is done on a host that records it with the fingerprint its inputs have now). C(plan)
      (install.yml's plan play, before the first phase) makes every phase's C(start) decision at
      once, for the hosts its play will have, and returns the phases no host runs (C(skip_phases)):
      C(playbooks/phase.yml) does not play them. It writes nothing and refuses hosts of another site
      as C(start) does.
    type: str
    choices: [start, done, forget, lock, versions, plan, adopt_check, adopt]
    required: true
  journal:
    description: >-
      Path of the journal. Defaults to C(<tke_state_dir>/journal.json). The site identity and the
      lock are in the same directory.
    type: path
  force:
    description: Phases to run even where done (C(-e force_phases=pki,etcd) or C(all)). Defaults to C(force_phases).
    type: raw
  skip:
    description: Phases skipped everywhere. Defaults to C(tke_skip_phases).
    type: raw
  resume:
    description: Skip what is done with unchanged inputs. Defaults to C(tke_resume), else true.
    type: bool
  hosts:
    description:
      - The hosts the phase is about. Defaults to the hosts still in the play (C(ansible_play_hosts)).
      - A phase with a host-by-host step ends in a later play than it started, so its end passes the hosts
        that ran it.
    type: list
    elements: str
  started:
    description:
      - With I(state=done), when the phase started (the start's C(started), seconds since the epoch); the
        phase's time in the banner and the journal counts from it. Defaults to the time the journal noted
        at the start; check mode notes none (nothing is written), so without it a check run tells no time.
    type: float
"""

EXAMPLES = r"""
- name: Journal - which hosts still need this phase
  offline_pot.tke.install_phase:
    phase: host_init
    state: start
  run_once: true
  delegate_to: localhost
  register: tke_phase
"""

RETURN = r"""
identity:
  description: The site identity the hosts record (C(id), C(ca_sha256)).
  returned: state=adopt_check or state=adopt
  type: dict
phases_done:
  description: The phases the rebuilt journal has done on some host, in order.
  returned: state=adopt
  type: list
  elements: str
runs_again:
  description: Per phase, the hosts that record it done with other inputs than they have now (it runs there again).
  returned: state=adopt
  type: dict
skip_phases:
  description: The phases this run goes through that no host runs (done with unchanged inputs, nothing drifted), in order.
  returned: state=plan
  type: list
  elements: str
plan:
  description: For each phase of C(skip_phases), its name (C(phase)), the hosts that skip it and why (C(skip_hosts)) and its line (C(msg)).
  returned: state=plan
  type: list
  elements: dict
run_phases:
  description: The phases with work, each with the hosts that run it (or why its play decides itself).
  returned: state=plan
  type: dict
skip_hosts:
  description: Hosts that skip the phase, with the reason.
  returned: state=start
  type: dict
run_hosts:
  description: Hosts that run the phase.
  returned: state=start
  type: list
names_hosts:
  description: >-
    The hosts of C(run_hosts) whose only change is the hosts their configuration names (a node
    added or removed), when the phase has names tasks (install.yml's C(tke_phase_names_tasks)):
    roles/tke/tasks/phase_names.yml runs those tasks alone there.
  returned: state=start
  type: list
  elements: str
unchecked:
  description: >-
    Check mode: phase -> the hosts that would run it but on which it cannot be checked, because its
    work or an earlier phase's is not there yet (docs/install.md, "Preview with --check"); the
    phase's play leaves them out (C(leave_out)). Empty in a real run.
  returned: state=plan
  type: dict
leave_out:
  description: >-
    Phase -> what its play leaves out of its host pattern (C(:!all) for a phase no host runs,
    C(:!h1:!h2) for the hosts check mode cannot check it on): roles/tke/tasks/plan.yml sets it on
    localhost as C(__tke_plan_leave_out), which playbooks/phase.yml's plays append to their hosts.
  returned: state=plan
  type: dict
unchecked_hosts:
  description: >-
    Check mode: host -> what would run there that is not checked (the phases and why), which
    roles/tke/tasks/plan.yml reports once per host, as a change. Empty in a real run.
  returned: state=plan
  type: dict
msg:
  description: >-
    The banner - one line saying the phase's number, name, hosts (with why they run or skip) and
    (state=done) how long it took. The result is shown without C(-v) (as a debug message is), so
    it is the phase's line of the default output; the progress callback (offline_pot.tke.progress)
    reads it too.
  returned: state=start or state=done
  type: str
banner:
  description: One line saying which hosts the journal forgot, and its step.
  returned: state=forget
  type: str
phase:
  description: The phase.
  returned: state=start or state=done
  type: str
started:
  description: When the phase started (seconds since the epoch); pass it to I(state=done).
  returned: state=start
  type: float
estimate:
  description: >-
    How many seconds the phase took the last time it ran on these hosts (the journal keeps each
    host's time), or null when the journal has none. The progress callback's estimate.
  returned: state=start
  type: float
seconds:
  description: How many seconds the phase took (null when its start time is not known).
  returned: state=done
  type: float
forgotten:
  description: The hosts the journal had and forgot.
  returned: state=forget
  type: list
  elements: str
fingerprints:
  description: >-
    Host -> the fingerprint the phase is recorded with (each host records it too, root-only): an
    HMAC-SHA256 keyed with the site's journal key (C(tke/journal.key) in the controller's PKI store,
    made with the site's first phase and kept on the masters by the pki phase), since the inputs hold
    secrets. With I(state=plan), per phase planned, the fingerprint of each host's inputs
    (C(hosts)) and the hosts its configuration names (C(names)); a phase's C(start) takes them from
    the registered plan (C(__tke_plan)) instead of computing them again.
  returned: state=done or state=plan
  type: dict
hooks:
  description: Hook name -> what running it gave (C(hook) path, C(rc), C(changed), C(seconds), C(msg), C(stdout_lines) the tail of its output).
  returned: when a hook of the phase ran
  type: dict
record_scripts:
  description: >-
    Host -> the shell command that records the phase done there (install_journal.record_script: the
    C(host_records) files; root-only, the fingerprint, the phase's state probes (what its roles keep on
    the host, each line printing a probe's name and a digest of the host's salt and the probe's output)
    and their digests now, and the host's random salt, made once; each file written only when it
    differs; it prints C(recorded) or C(unchanged)), run by the phase's end with raw.
  returned: state=done
  type: dict
host_records:
  description: >-
    File name (beside the phase records' directory) -> the line each host that ran the phase records
    there: C(site) (C(id=<site id> ca_sha256=<CA fingerprint>)), and after the offline phase
    C(kubernetes) (the version whose kubeadm and kubelet it installed).
  returned: state=done
  type: dict
lock:
  description: The site's lock file this run holds.
  returned: state=lock
  type: str
holder:
  description: What the lock file says about this run (pid of ansible-playbook, playbook, started, user).
  returned: state=lock
  type: dict
step:
  description: The journal's step after this call.
  returned: state=start, state=done, state=forget
  type: int
"""
