"""The run report's page: the timeline drawn from the journal (a bar per host and phase done, this
run's solid), the tables, nothing external, everything escaped."""
import re

from ansible_collections.offline_pot.tke.plugins.plugin_utils import run_report

JOURNAL = {"format": 1, "step": 3, "phases": {
    "precheck": {"h1": {"done_at": "2026-11-26T10:00:10Z", "seconds": 4.0},
                 "h<2>": {"done_at": "2026-11-26T10:00:10Z", "seconds": 4.0}},
    "offline": {"h1": {"done_at": "2026-11-26T10:00:30Z", "seconds": 12.5}},
    "pki": {"h1": {"done_at": "2026-11-26T09:00:00Z", "seconds": 3}},
}}
PHASES = ["precheck", "offline", "pki", "runtime"]


def page(**kw):
    report = {"title": "t", "generated": "2026-11-26T10:01:00Z", "run_started": "2026-11-26T10:00:00Z",
              "site": {"cluster": "global"}, "hosts": {"h1": ["masters"], "h<2>": ["workers"]}, "phases": PHASES,
              "journal": JOURNAL, "certificates": [], "nodes": None, "pack": None, "links": {"journal": "../journal.json"}}
    report.update(kw)
    return run_report.render(report)


def test_a_bar_per_host_and_phase_done_this_runs_solid():
    text = page()
    bars = re.findall(r'<rect [^>]*data-host="([^"]*)" data-phase="([^"]*)" data-this-run="(true|false)"', text)
    assert sorted(bars) == sorted([("h1", "precheck", "true"), ("h&lt;2&gt;", "precheck", "true"),
                                   ("h1", "offline", "true"), ("h1", "pki", "false")])
    # a phase's colour is its own, the legend names every phase
    assert text.count(run_report.colour(PHASES, "offline")) >= 2
    assert all(f"</span>{p}</span>" in text for p in PHASES)


def test_the_page_is_self_contained_and_escaped():
    text = page(site={"cluster": "<script>alert(1)</script>"})
    assert "<script" not in text and "&lt;script&gt;" in text
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert '<a href="../journal.json">journal</a>' in text


def test_tables_say_what_was_not_read():
    text = page()
    assert "not read in this run" in text and "none read in this run" in text and "no unpacked site pack" in text
    text = page(nodes=[{"name": "h1", "ready": "True", "version": "v1.30.4"}],
                certificates=[{"host": "h1", "file": "/etc/kubernetes/pki/ca.crt", "subject": "CN=kubernetes",
                               "not_after": "2036-01-01T00:00:00Z", "days_left": 3000, "status": "ok"}],
                pack={"name": "tke-site", "version": "1", "signature": "signed"})
    assert "<td>h1</td><td>True</td><td>v1.30.4</td>" in text
    assert "/etc/kubernetes/pki/ca.crt" in text and "<td>signed</td>" in text


def test_an_empty_journal_draws_no_bar():
    text = page(journal={"format": 1, "phases": {}})
    assert "<rect" not in text and "no phase has a recorded time yet" in text


def test_what_changed_on_each_host_in_phase_order():
    """The run's changes per host: a row per phase with the probes it changed (install order), a host
    with none says nothing, one not read says so; without any read the section says not read."""
    text = page(changes={"h1": {"runtime": ["containerd"], "precheck": ["report"]}, "h<2>": {}})
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>",
                      text.split('class="changes"', 1)[1].split("</table>", 1)[0])
    assert rows == [("h1", "precheck", "report"), ("h1", "runtime", "containerd"), ("h&lt;2&gt;", "-", "nothing")]
    text = page(changes={"h1": None})
    assert "<td>h1</td><td>-</td><td>not read at the start and the end of this run</td>" in text
    assert "What changed on the hosts</h2>\n<p class=\"note\">" in page() and 'class="changes"' not in page()
