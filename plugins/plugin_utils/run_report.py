# -*- coding: utf-8 -*-
# Copyright: offline_pot.tke contributors
# Apache License 2.0 (see LICENSE)
"""The run report: one self-contained HTML page an operator hands over after a run.

Private to the collection (the run_report action plugin gathers the data on the controller and
writes the page). Pure: plain data in, HTML text out. No external asset (no script, no font, no
style sheet from elsewhere): the page opens on a machine without a network. No secret goes in:
the inputs are the site's settings, the install journal's times, the hosts' certificates (public),
the Nodes' status and the pack's identity.

The timeline is an SVG drawn from the journal: one row per host, one bar per phase the host has
done, from when the phase started to when it was recorded done there (its `done_at` less its
`seconds`), coloured by phase; a phase done in this run (recorded after the run started) is drawn
solid, an earlier one faded. Every bar carries data-host and data-phase, so a reader (and the test)
can match the drawing to the data.
"""
from __future__ import annotations

import datetime
import html

# one colour per phase, in install order (a phase past the list takes the next one round)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
           "#e6550d", "#31a354", "#756bb1", "#636363")
ROW, LEFT, WIDTH, TOP = 26, 120, 900, 30


def _time(text):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None


def bars(journal: dict, phases: list, hosts: list) -> list:
    """The timeline's bars: {host, phase, start, end (datetime), seconds} for every phase a host has done
    with a time, in host then phase order."""
    out = []
    entries = journal.get("phases") or {}
    for host in hosts:
        for phase in phases:
            e = (entries.get(phase) or {}).get(host)
            if not isinstance(e, dict):
                continue
            end, seconds = _time(e.get("done_at")), e.get("seconds")
            if end is None:
                continue
            seconds = float(seconds) if isinstance(seconds, (int, float)) else 0.0
            out.append({"host": host, "phase": phase, "end": end,
                        "start": end - datetime.timedelta(seconds=seconds), "seconds": seconds})
    return out


def _order(phases: list, phase: str) -> int:
    return phases.index(phase) if phase in phases else len(phases)


def colour(phases: list, phase: str) -> str:
    return PALETTE[phases.index(phase) % len(PALETTE)] if phase in phases else "#000000"


def timeline_svg(drawn: list, phases: list, hosts: list, run_started: str | None = None) -> str:
    """The timeline of these bars (bars()) as an SVG element (empty drawing with a note when there is none)."""
    height = TOP + ROW * max(len(hosts), 1) + 30
    e = html.escape
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="timeline" width="{LEFT + WIDTH + 20}" '
             f'height="{height}" role="img" aria-label="phases per host over time">']
    for i, host in enumerate(hosts):
        y = TOP + i * ROW
        parts.append(f'<text x="4" y="{y + 17}" class="host">{e(host)}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{y + ROW - 2}" x2="{LEFT + WIDTH}" y2="{y + ROW - 2}" class="grid"/>')
    if not drawn:
        parts.append(f'<text x="{LEFT}" y="20">no phase has a recorded time yet</text></svg>')
        return "".join(parts)
    t0 = min(b["start"] for b in drawn)
    span = max((max(b["end"] for b in drawn) - t0).total_seconds(), 1.0)
    started = _time(run_started) if run_started else None
    parts.append(f'<text x="{LEFT}" y="16">{e(t0.strftime("%Y-%m-%d %H:%M:%S"))} UTC</text>')
    parts.append(f'<text x="{LEFT + WIDTH}" y="16" text-anchor="end">+{span:.0f} s</text>')
    for b in drawn:
        y = TOP + hosts.index(b["host"]) * ROW
        x = LEFT + (b["start"] - t0).total_seconds() / span * WIDTH
        w = max(b["seconds"] / span * WIDTH, 3.0)
        this_run = started is not None and b["end"] >= started
        parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{ROW - 8}" fill="{colour(phases, b["phase"])}" '
                     f'fill-opacity="{1.0 if this_run or started is None else 0.35}" data-host="{e(b["host"])}" '
                     f'data-phase="{e(b["phase"])}" data-this-run="{str(this_run).lower()}">'
                     f'<title>{e(b["host"])}: {e(b["phase"])}, {b["seconds"]:.1f} s, done '
                     f'{e(b["end"].strftime("%H:%M:%S"))}</title></rect>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers, rows, cls=""):
    e = html.escape
    head = "".join(f"<th>{e(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def render(report: dict) -> str:
    """The page. report: title, generated (UTC text), run_started, site (label -> value), hosts
    ({host: [groups]}), phases (in install order), journal, certificates (rows of cert_report:
    host, file, subject, not_after, days_left, status), nodes ([{name, ready, version}] or None: not
    read), changes ({host: {phase: [state probes the run changed]} or None: not read}), pack ({path,
    name, version, signature, key_sha256} or None), links ({label: relative path})."""
    e = html.escape
    hosts = list(report.get("hosts") or {})
    phases = list(report.get("phases") or [])
    journal = report.get("journal") or {}
    legend = "".join(f'<span class="key"><span class="swatch" style="background:{colour(phases, p)}"></span>{e(p)}</span>'
                     for p in phases)
    done = bars(journal, phases, hosts)
    started = _time(report.get("run_started") or "")
    per_phase = []
    for p in phases:
        ran = [b["host"] for b in done if b["phase"] == p and started and b["end"] >= started]
        earlier = [b["host"] for b in done if b["phase"] == p and not (started and b["end"] >= started)]
        longest = max((b["seconds"] for b in done if b["phase"] == p), default=None)
        per_phase.append((p, ", ".join(ran) or "-", ", ".join(earlier) or "-",
                          "-" if longest is None else f"{longest:.1f}"))
    links = [f'<li><a href="{e(path, quote=True)}">{e(label)}</a></li>'
             for label, path in sorted((report.get("links") or {}).items())]
    certs = report.get("certificates") or []
    changes = report.get("changes") or {}
    changed_rows = []
    for host in hosts:
        if host not in changes:
            continue
        if changes[host] is None:
            changed_rows.append((host, "-", "not read at the start and the end of this run"))
        elif not changes[host]:
            changed_rows.append((host, "-", "nothing"))
        for phase, names in sorted((changes[host] or {}).items(), key=lambda i: (_order(phases, i[0]), i[0])):
            changed_rows.append((host, phase, ", ".join(names)))
    nodes = report.get("nodes")
    pack = report.get("pack")
    sections = [
        f"<h1>{e(report.get('title', 'offline_pot.tke run report'))}</h1>",
        f"<p class=\"meta\">written {e(report.get('generated', ''))} UTC; this run started "
        f"{e(report.get('run_started') or 'at an unknown time')}</p>",
        "<h2>Site</h2>", _table(("setting", "value"), sorted((report.get("site") or {}).items()), "site"),
        "<h2>Hosts</h2>", _table(("host", "groups"), [(h, ", ".join(g)) for h, g in (report.get("hosts") or {}).items()],
                                 "hosts"),
        "<h2>Timeline</h2>", f'<div class="legend">{legend}</div>',
        timeline_svg(done, phases, hosts, report.get("run_started")),
        "<p class=\"note\">Solid: done in this run; faded: done in an earlier run (the install journal's times).</p>",
        "<h2>Phases</h2>",
        _table(("phase", "ran on (this run)", "done before", "longest (s)"), per_phase, "phases"),
        "<h2>What changed on the hosts</h2>",
        "<p class=\"note\">Each phase keeps named state on a host (a managed block, a configuration file, a service "
        "enabled and running), whose digests the host records when the phase is done. Each host's is read at the "
        "start and at the end of the run: listed here, what this run changed.</p>",
        _table(("host", "phase", "state changed"), changed_rows, "changes")
        if changed_rows else "<p>not read in this run</p>",
        "<h2>Nodes</h2>",
        _table(("node", "Ready", "kubelet"), [(n.get("name"), n.get("ready"), n.get("version")) for n in nodes], "nodes")
        if nodes is not None else "<p>not read in this run (no API server yet, or the network phase skipped)</p>",
        "<h2>Certificates on the hosts</h2>",
        _table(("host", "file", "subject", "expires", "days left", "status"),
               [(c.get("host"), c.get("file"), c.get("subject"), c.get("not_after"), c.get("days_left"), c.get("status"))
                for c in certs], "certificates") if certs else "<p>none read in this run</p>",
        "<h2>Site pack</h2>",
        _table(("field", "value"), sorted(pack.items()), "pack") if pack else "<p>no unpacked site pack on the controller</p>",
        "<h2>Sources</h2>", "<ul>" + "".join(links) + "</ul>",
    ]
    style = ("body{font-family:sans-serif;margin:20px;color:#222}table{border-collapse:collapse;margin:6px 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}"
             ".legend .key{margin-right:10px;font-size:12px}.swatch{display:inline-block;width:10px;height:10px;"
             "margin-right:3px}svg text{font-size:12px}svg .grid{stroke:#eee}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(report.get('title', 'run report'))}</title><style>{style}</style></head><body>"
            + "\n".join(sections) + "</body></html>\n")
