#!/usr/bin/env python
"""Benchmark of install.yml on 3 fresh test hosts, every phase: full install time, no-op re-run time
(journal resume) and its ratio to the install, a full re-converge with resume off, tasks executed per
host, and per-phase times from the phase banners (the network phase on a line of its own), the
controller's CPU seconds and where the time goes (tasks that reached each host, the top 20 tasks by
wall time summed over hosts: bench/callback_plugins/task_times.py). The site is the end-to-end test's: HA keepalived
(h1, h2 masters holding the VIP; h3 a worker), external etcd on h1, the registry on h1, the fixture
site pack; kubeadm and kubelet are the test doubles (tests/kubeadm_double), put on the hosts first.
Not a test: prints numbers for the closing notes.

    sudo .cache/venv/bin/python bench/install_bench.py [--th-id 8]

A/B: `--ab REF [--rounds N]` compares this checkout against git commit REF (checked out as a
detached worktree under .cache/): each round installs the site with one tree, then with the other
(alternating which goes first), on the same hosts given fresh root file systems between installs,
then a no-op re-run; it prints, per tree, the medians of the install and no-op times, of each
phase's time, of the tasks per host and of the plays printed, and the ratio this/REF.

`--add`: a fourth host, h4, is added to the installed site as a worker (install.yml with it in the
inventory, docs/lifecycle.md): its time, the controller's CPU, and the tasks that reached each
existing host (what adding a node costs them); with --ab, per tree.
"""
import argparse
import collections
import json
import os
import resource
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))
sys.path.insert(0, str(TOP / "collections"))   # the fixture pack reads the collection's module_utils

from harness import sites, testhosts  # noqa: E402
from harness.playbook import run_playbook  # noqa: E402

# the instance whose hosts' CPU is counted: --th-id, set in main()
hosts_th_id = None


def hosts_cpu():
    """CPU seconds the test hosts have used so far (every process in their containers), or 0."""
    if hosts_th_id is None:
        return 0.0
    return sum(testhosts.host_cpu(hosts_th_id).values())


PHASE_DONE = re.compile(r"phase (\d+)/\d+ (\S+): done on .*? in ([\d.]+) s")


def timed(inv, *args, tree=TOP):
    """One run of install.yml from tree: the run, its wall time, and on the run: `cpu`, the
    controller's CPU seconds (ansible-playbook and every process it waited for: its workers, ssh),
    and `tasks`, each task's time per host (bench/callback_plugins/task_times.py)."""
    times = Path(os.environ.get("TMPDIR", "/tmp")) / f"task-times-{os.getpid()}-{time.monotonic_ns()}.jsonl"
    env = {"ANSIBLE_CONFIG": str(tree / "ansible.cfg"), "TASK_TIMES_FILE": str(times),
           "ANSIBLE_CALLBACK_PLUGINS": str(TOP / "bench" / "callback_plugins"),
           "ANSIBLE_CALLBACKS_ENABLED": "task_times"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    hosts_before = hosts_cpu()
    t0 = time.monotonic()
    run = run_playbook(tree / "install.yml", inv, *args, env=env)
    elapsed = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run.hosts_cpu = hosts_cpu() - hosts_before
    run.tasks = [json.loads(line) for line in times.read_text(encoding="utf-8").splitlines()] if times.exists() else []
    times.unlink(missing_ok=True)
    return run, elapsed


def reached(run):
    """host -> the tasks that reached it (not skipped, not run on the controller: each is at least
    one SSH round trip)."""
    return collections.Counter(r["host"] for r in run.tasks if r["status"] != "skipped" and not r["on_controller"])


def where_time_goes(run, top=20):
    """Lines: tasks per host that reached the host (reached()), and the top tasks by wall time
    summed over hosts."""
    on_host = reached(run)
    total = collections.defaultdict(float)
    count = collections.Counter()
    for r in run.tasks:
        total[r["task"]] += r["seconds"]
        count[r["task"]] += 1
    lines = ["tasks that reached each host (SSH round trips, at least): "
             + ", ".join(f"{h} {n}" for h, n in sorted(on_host.items())),
             f"controller CPU: {run.cpu:.1f} s; top {top} tasks by wall time summed over hosts (s, runs):"]
    for name, secs in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {secs:7.1f} {count[name]:4d}  {name}")
    return lines


def plays(run):
    return run.output.count("\nPLAY [")


def worktree(ref):
    """A detached worktree of ref under .cache/ (made once, reused)."""
    sha = subprocess.run(["git", "-C", str(TOP), "rev-parse", ref], capture_output=True, text=True,
                         check=True).stdout.strip()
    path = TOP / ".cache" / f"ab-{sha[:12]}"
    if not path.is_dir():
        subprocess.run(["git", "-C", str(TOP), "worktree", "add", "--detach", str(path), sha], check=True,
                       capture_output=True)
    (path / ".cache").mkdir(exist_ok=True)
    return path, sha[:12]


def grow(hosts, site, pack, tree=TOP):
    """h4 added to the installed site of sites.ha_keepalived as a worker: the run, its time."""
    inv = sites.keepalived_site(hosts, site / "hosts.yml", pack, ["h1", "h2"], ["h3", "h4"])
    run, took = timed(inv, tree=tree)
    if run.rc != 0:
        print(run.explain())
        raise SystemExit("adding h4 failed")
    return run, took


def one_install(hosts, tmp, pack, tree, label, fresh, add=False):
    """Fresh hosts, then the install and a no-op re-run from tree (and h4 added: add); the figures."""
    from harness import kubeadm_double
    if fresh:
        hosts.reset(*hosts.names)
        subprocess.run(["bash", str(TOP / "tests/harness/testhosts.sh"), "ssh-wait",
                        *[n.lstrip("h") for n in hosts.names]], check=True, capture_output=True,
                       env=dict(os.environ, TH_ID=str(hosts.th_id)))
        kubeadm_double.install(hosts)
    site = tmp / f"{label}-{time.monotonic_ns()}"
    site.mkdir()
    inv = sites.ha_keepalived(hosts, site / "hosts.yml", pack)
    full, t_full = timed(inv, tree=tree)
    if full.rc != 0:
        print(full.explain())
        raise SystemExit(f"{label}: the install failed")
    noop, t_noop = timed(inv, tree=tree)
    fig = {"install": t_full, "no-op": t_noop, "plays": plays(full), "controller CPU": full.cpu, "hosts CPU": full.hosts_cpu,
           **{f"tasks {h}": n for h, n in tasks_per_host(full).items()},
           **{f"phase {m[1]}": float(m[2]) for m in PHASE_DONE.findall(full.output)}}
    if add:
        grown, t_add = grow(hosts, site, pack, tree)
        fig.update({"add h4": t_add, "add h4: controller CPU": grown.cpu,
                    **{f"add h4: reached {h}": n for h, n in sorted(reached(grown).items())}})
    return fig


def ab(ref, rounds, th_id, add=False):
    other, sha = worktree(ref)
    trees = {"this": TOP, sha: other}
    figures = {k: [] for k in trees}
    print(f"A/B: this checkout ({TOP}) against {ref} ({sha}), {rounds} round(s); "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    with sites.started(th_id, 4 if add else 3, TOP / ".cache" / "sandbox") as (hosts, tmp, pack):
        first = True
        for r in range(rounds):
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for label in order:
                fig = one_install(hosts, tmp, pack, trees[label], label, fresh=not first, add=add)
                first = False
                figures[label].append(fig)
                print(f"round {r + 1} {label}: install {fig['install']:.1f} s, no-op {fig['no-op']:.1f} s, "
                      f"plays {fig['plays']}; load average {os.getloadavg()[0]:.2f}", flush=True)
    keys = list(dict.fromkeys(k for figs in figures.values() for f in figs for k in f))
    print(f"{'median':24} {'this':>10} {sha:>12} {'this/' + sha[:6]:>12}")
    for k in keys:
        a = statistics.median([f[k] for f in figures["this"] if k in f] or [0])
        b = statistics.median([f[k] for f in figures[sha] if k in f] or [0])
        print(f"{k:24} {a:10.1f} {b:12.1f} {(a / b if b else float('nan')):12.2f}")
    return 0


def tasks_per_host(run):
    return {h: s["ok"] + s["changed"] + s["failed"] for h, s in run.stats.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th-id", type=int, default=8)
    ap.add_argument("--ab", metavar="REF", help="compare with this git commit (A/B, alternating)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-reconverge", action="store_true", help="the install and the no-op re-run only")
    ap.add_argument("--add", action="store_true", help="then h4 added as a worker (see the docstring)")
    a = ap.parse_args()
    global hosts_th_id   # pylint: disable=global-statement
    hosts_th_id = a.th_id
    if a.ab:
        return ab(a.ab, a.rounds, a.th_id, a.add)
    with sites.started(a.th_id, 4 if a.add else 3, TOP / ".cache" / "sandbox") as (hosts, tmp, pack):
        inv = sites.ha_keepalived(hosts, tmp / "hosts.yml", pack)
        full, t_full = timed(inv)
        if full.rc != 0:
            print(full.explain())
            return 1
        noop, t_noop = timed(inv)
        if a.no_reconverge:
            again, t_again = None, 0.0
        else:
            again, t_again = timed(inv, "-e", '{"tke_resume": false}')
        print(f"full install on 3 hosts: {t_full:.1f} s (load average {os.getloadavg()[0]:.2f}), "
              f"CPU {full.cpu:.1f} s on the controller, {full.hosts_cpu:.1f} s on the hosts; "
              f"no-op re-run: {noop.cpu:.1f} s, {noop.hosts_cpu:.1f} s")
        print(f"no-op re-run (journal resume): {t_noop:.1f} s = {t_noop / t_full:.2f} of the install; "
              f"changed={noop.total('changed')}")
        if again:
            print(f"re-converge with tke_resume=false: {t_again:.1f} s; changed={again.total('changed')}")
        print(f"plays printed (install / no-op re-run): {plays(full)}/{plays(noop)}")
        print("tasks executed per host (install / no-op re-run): " + ", ".join(
            f"{h} {n}/{tasks_per_host(noop).get(h, 0)}" for h, n in sorted(tasks_per_host(full).items())))
        print("per-phase time (install): " + ", ".join(
            f"{m[0]}. {m[1]} {m[2]} s" for m in PHASE_DONE.findall(full.output)))
        network = [m[2] for m in PHASE_DONE.findall(full.output) if m[1] == "network"]
        print(f"network phase (CNI configs, objects through the API, wait for every node Ready): "
              f"{network[0] + ' s' if network else 'did not run'}")
        print("\n".join(where_time_goes(full)))
        if again:
            print("changed by the re-converge: " + ("; ".join(again.changed_tasks()) or "nothing"))
        if a.add:
            grown, t_add = grow(hosts, tmp, pack)
            print(f"h4 added as a worker: {t_add:.1f} s, controller CPU {grown.cpu:.1f} s, hosts CPU "
                  f"{grown.hosts_cpu:.1f} s; phases: " + ", ".join(f"{m[1]} {m[2]} s" for m in PHASE_DONE.findall(grown.output)))
            print("\n".join(where_time_goes(grown)))
            print("phases run per existing host: " + "; ".join(
                f"{h}: {', '.join(p for p, on in grown.phase_hosts().items() if h in on)}" for h in ("h1", "h2", "h3")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
