"""report.html: each picture is drawn for a payload that has its part and is a one-line note (never an
exception) for one that lacks it; the pages are self-contained (nothing to load from the network); and a
real counterexample page, opened in headless Chromium, shows its figures.

The browser test needs Debian's chromium at /usr/bin/chromium (CI installs it) and the `playwright`
package (the `test` extra); it never downloads a browser. Without them it fails, it does not skip.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from schedcheck.cli import main
from schedcheck.report_html import (
    render_check_html,
    render_conform_html,
    render_counterexample_html,
    render_selftest_html,
    render_summary_html,
)
from schedcheck.report_html.figure import Part, guarded
from schedcheck.report_html.ledger import nodes_of_state, render_ledgers, task_changes
from schedcheck.report_html.queues import queue_rows, render_queues
from schedcheck.report_html.scenario import objects_of
from schedcheck.report_html.timeline import render_timeline
from schedcheck.report_html.topology import render_topology
from tests.test_minimize import group_doc, node_doc, pod_doc, scenario_doc

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SCREENSHOT = Path("/tmp/report-html-screenshot.png")
PIPELINE_MUTANT = "pipeline-not-reserved"
RED = "#d62728"


# ---------------------------------------------------------------- inputs


def ledger(cpu_used: float, cpu_idle: float, pipelined: float = 0, releasing: float = 0) -> dict:
    return {"allocatable": {"cpu": 4000, "memory": 8 << 30, "pods": 110},
            "used": {"cpu": cpu_used, "memory": 2 << 30, "pods": 2},
            "idle": {"cpu": cpu_idle, "memory": 6 << 30, "pods": 108},
            "releasing": {"cpu": releasing, "memory": 0}, "pipelined": {"cpu": pipelined, "memory": 0},
            "tasks": {"default/low-0": "Running"}}


def hyper_node(name: str, tier: int, members: list) -> dict:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": members}}


def queue(name: str, parent: str = "", **spec) -> dict:
    body = {"weight": 1, **spec}
    if parent:
        body["parent"] = parent
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": body}


def cluster_doc() -> dict:
    """Two nodes under a two-tier HyperNode tree, a queue with a guarantee and a capability, and a high-priority
    pod that preempts low-0 on n1: with pipeline-not-reserved, node.pipelined-sum fails at the pipeline."""
    objects = [node_doc("n1", cpu="4"), node_doc("n2", cpu="2"),
               pod_doc("low-0", "low", cpu="2", node="n1", phase="Running"),
               pod_doc("low-1", "low", cpu="2", node="n1", phase="Running"),
               pod_doc("mid-0", "mid", cpu="2", node="n2", phase="Running"),
               pod_doc("high-0", "high", cpu="2"),
               group_doc("low", 1, phase="Running"), group_doc("mid", 1, phase="Running"),
               group_doc("high", 1, phase="Inqueue", priorityClassName="high"),
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000},
               queue("default", capability={"cpu": "8"}, guarantee={"resource": {"cpu": "1"}}),
               hyper_node("rack-0", 1, [{"type": "Node", "selector": {"exactMatch": {"name": "n1"}}},
                                        {"type": "Node", "selector": {"regexMatch": {"pattern": "^n2$"}}}]),
               hyper_node("spine", 2, [{"type": "HyperNode", "selector": {"exactMatch": {"name": "rack-0"}}}])]
    return scenario_doc("preempt-into-a-rack", objects, actions="enqueue, allocate, preempt")


TRACE = [{"cycle": 0, "action": "allocate", "op": "allocate", "task": "default/a-0", "node": "n2"},
         {"cycle": 0, "action": "allocate", "op": "bind", "task": "default/a-0", "node": "n2"},
         {"cycle": 0, "action": "preempt", "op": "evict", "task": "default/low-0", "node": "n1"},
         {"cycle": 0, "action": "preempt", "op": "pipeline", "task": "default/high-0", "node": "n1"},
         {"cycle": 1, "action": "allocate", "op": "allocate", "task": "default/high-0", "node": "n1"},
         {"cycle": 1, "action": "allocate", "op": "unallocate", "task": "default/b-0", "node": "n2"}]
OVERKILL = [{"cycle": 0, "action": "preempt", "preemptor": "default/high-0", "node": "n1",
             "victims": ["default/low-0"]}]
VIOLATION = {"id": "node.pipelined-sum", "cycle": 0, "action": "preempt", "checkpoint": "operation",
             "operation": "pipeline default/high-0 on n1 (statement 3)", "objects": ["node n1"],
             "expected": 2000, "found": 0, "message": "node n1: Pipelined on cpu is 0m, expected 2000m",
             "state": {"node n1": ledger(2000, 2000)}}


def check_payload() -> dict:
    return {"scenario": "preempt-into-a-rack", "source": "<stdin>", "seed": 0, "cycles": 2,
            "binds": {"default/a-0": "n2"}, "evicted": ["default/low-0"], "pipelined": {"default/high-0": "n1"},
            "violations": [VIOLATION], "findings": [], "overkill": OVERKILL, "invariants": ["node.pipelined-sum"],
            "invariantsChecked": 12, "expectations": {"met": True, "failures": []}}


def summary_json() -> dict:
    return {"seed": 3, "budget": 8.0, "workers": 1, "result": "clean", "examples": 462, "cycles": 1161,
            "invariantChecks": 284220, "seconds": 8.15,
            "timeShare": {"checking": 0.128, "scheduling": 0.361, "generationAndSearch": 0.511},
            "cyclesPerSecond": 142.5, "cyclesPerSecondPerWorker": 142.5, "checksPerSecond": 34880.4,
            "checksPerInvariant": {"node.ledger": 4220, "gang.commit-ready": 2487, "queue.capacity-allocated": 34},
            "reached": {"action:allocate": 394, "action:preempt": 72, "outcome:bind": 93, "plugin:gang": 394},
            "mutant": None, "neverChecked": ["node.in-shard"]}


def selftest_json(budget: float = 20.0) -> dict:
    return {"mutants": 2, "caught": 1, "gateBudget": budget, "gateSeed": 1, "foundByGate": 1, "seconds": 40.0,
            "results": [{"mutant": "reclaim-own-queue", "description": "reclaim takes from its own queue",
                         "source": "systematic rule mutant", "caught": True, "caughtBy": ["victim.reclaim-scope"],
                         "cleanProblems": [], "gateSeconds": 15.1, "gateInvariant": "victim.reclaim-scope"},
                        {"mutant": "preempt-uses-idle", "description": "Idle instead of FutureIdle",
                         "source": "systematic rule mutant", "caught": False, "caughtBy": [], "cleanProblems": [],
                         "gateSeconds": None, "gateInvariant": ""}]}


def conform_parts() -> tuple[dict, dict]:
    body = {"command": "conform", "implementation": "python drift.py", "seed": 1, "conformant": False,
            "finding": {"kind": "ledger.identity", "message": "node n1: Idle + Used on pods is 111",
                        "cycle": 1, "objects": ["node n1"], "details": {}},
            "findings": [], "scenariosRun": 5, "foundAfterSeconds": 2.7, "replay": "schedcheck replay x --impl y"}
    result = {"protocol": 1, "binds": {"default/a-0": "n2"}, "evicted": [], "pipelined": {}, "trace": TRACE,
              "ledgers": [{"cycle": 0, "nodes": {"n1": ledger(2000, 2000)}},
                          {"cycle": 1, "nodes": {"n1": ledger(2000, 2500)}}]}
    return body, result


def svgs(page: str) -> int:
    return page.count("<svg")


# ---------------------------------------------------------------- each picture: drawn, or a note


def test_ledgers_draw_before_and_after_and_mark_the_named_node():
    part = render_ledgers([("before", {"n1": ledger(4000, 0)}), ("after", {"n1": ledger(4000, 0, pipelined=2000)}),
                           ], {"n1"})
    assert part.drawn and part.svg.startswith("<svg") and "n1 · cpu" in part.svg and RED in part.svg
    assert "Pipelined" in part.svg and "Allocatable" in part.svg


def test_ledgers_without_a_node_are_a_note():
    part = render_ledgers([("after", nodes_of_state({"task default/x": {"status": "Running"}})),
                           ("before", nodes_of_state(None))])
    assert not part.drawn and part.note.startswith("Node ledgers: not drawn")


def test_task_changes_lists_what_moved():
    before = {"node n1": {**ledger(2000, 2000), "tasks": {"default/low-0": "Running"}}}
    after = {"node n1": {**ledger(2000, 2000), "tasks": {"default/low-0": "Releasing", "default/high-0": "Pipelined"}}}
    assert task_changes(before, after) == [("default/high-0", "-", "Pipelined on n1"),
                                           ("default/low-0", "Running on n1", "Releasing on n1")]


def test_queues_draw_allocation_against_the_limits_as_a_tree():
    objects = objects_of(scenario_doc("q", [
        node_doc("n1"), queue("root"), queue("eng", "root", capability={"cpu": "4"}, deserved={"cpu": "2"}),
        queue("ml", "eng", guarantee={"resource": {"cpu": "1"}}),
        pod_doc("p-0", "g", cpu="2", node="n1", phase="Running"), group_doc("g", 1, queue="ml", phase="Running")]))
    rows = queue_rows(objects)
    assert [(r.name, r.depth) for r in rows] == [("root", 0), ("eng", 1), ("ml", 2)]
    assert rows[2].allocated["cpu"] == 2000 and rows[1].capability == {"cpu": 4000}
    part = render_queues(rows, {"ml"})
    assert part.drawn and "ml" in part.svg and "capability" in part.svg and RED in part.svg


def test_queues_without_a_document_are_a_note():
    assert not render_queues(None).drawn
    assert not render_queues(queue_rows(objects_of(scenario_doc("q", [queue("idle")])))).drawn  # nothing to draw
    assert objects_of("not a document") is None


def test_timeline_draws_operations_and_links_each_victim_to_its_preemptor():
    part = render_timeline(TRACE, OVERKILL, None, VIOLATION)
    assert part.drawn and "default/high-0" in part.svg and "session 1" in part.svg
    assert "victim → preemptor" in part.svg and "failing operation" in part.svg and "discarded" in part.svg


def test_timeline_without_a_trace_draws_the_outcomes_and_without_either_is_a_note():
    part = render_timeline(None, OVERKILL, check_payload(), VIOLATION)
    assert part.drawn and "pipelined at the end" in part.svg and "no operation trace" in part.caption
    assert not render_timeline(None, None, {"binds": {}, "evicted": []}).drawn
    assert not render_timeline([{"op": "nonsense"}], None, None).drawn


def test_topology_draws_the_hypernodes_by_tier():
    part = render_topology(objects_of(cluster_doc()), {"n1"})
    assert part.drawn and "spine" in part.svg and "tier 2" in part.svg and "rack-0" in part.svg and RED in part.svg
    assert not render_topology(objects_of(scenario_doc("flat", [node_doc("n1")]))).drawn
    assert not render_topology(None).drawn


def test_a_picture_that_fails_to_draw_is_a_note():
    def broken() -> Part:
        raise RuntimeError("no ink")

    part = guarded("Broken", broken)
    assert not part.drawn and "RuntimeError: no ink" in part.note
    assert "not drawn" in guarded("Odd", lambda: "not a part").note


# ---------------------------------------------------------------- the pages


@pytest.mark.parametrize("render, payload", [
    (render_check_html, {}), (render_check_html, {"violations": "garbage", "expectations": 3}),
    (render_check_html, {"violations": [{"id": "x", "state": {"node n1": {"allocatable": "?"}}}]}),
    (render_counterexample_html, {}), (render_counterexample_html, {"violation": 3, "before": "x", "after": []}),
    (render_conform_html, {}), (render_conform_html, {"finding": {"objects": None}, "findings": "x"}),
    (render_summary_html, {}), (render_summary_html, {"timeShare": "?", "checksPerInvariant": [1, 2]}),
    (render_selftest_html, {}), (render_selftest_html, {"results": [3, {"mutant": None}], "gateBudget": "x"}),
    (render_check_html, []), (render_counterexample_html, None), (render_conform_html, "x"),
    (render_summary_html, 7), (render_selftest_html, None),
])
def test_every_page_survives_a_payload_without_its_parts(render, payload):
    page = render(payload)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "Traceback" not in page


def test_the_check_page_draws_its_pictures_and_escapes_the_text():
    payload = check_payload()
    payload["violations"] = [{**VIOLATION, "message": "<script>alert(1)</script> & more"}]
    page = render_check_html(payload)
    assert svgs(page) == 2  # the timeline and the ledger; no scenario file for queues and topology
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    assert "Queues: not drawn" in page and "HyperNode topology: not drawn" in page


def test_the_counterexample_page_draws_before_after_timeline_queues_and_topology():
    payload = {"invariant": "node.pipelined-sum", "rule": "Pipelined equals ...", "seed": 0, "mutant": PIPELINE_MUTANT,
               "violation": VIOLATION, "replay": "schedcheck replay /r/counterexample.yaml",
               "before": {"label": "after evict default/low-0",
                          "state": {"node n1": ledger(2000, 2000, releasing=2000)}},
               "after": {"label": "after pipeline default/high-0", "state": VIOLATION["state"]}}
    page = render_counterexample_html(payload, cluster_doc(), {"trace": TRACE, "overkill": OVERKILL})
    assert svgs(page) == 4 and "schedcheck replay /r/counterexample.yaml" in page


def test_summary_selftest_and_conform_pages_draw_their_charts():
    assert svgs(render_summary_html(summary_json())) == 3
    assert "node.in-shard" in render_summary_html(summary_json())
    page = render_selftest_html(selftest_json())
    assert svgs(page) == 1 and "not found in 20 s" in page and "preempt-uses-idle" in page
    assert svgs(render_selftest_html(selftest_json(budget=0))) == 0
    body, result = conform_parts()
    page = render_conform_html(body, cluster_doc(), result)
    assert svgs(page) == 4 and "after session 0" in page and "after session 1" in page


def test_the_pages_load_nothing_from_the_network():
    body, result = conform_parts()
    pages = [render_check_html(check_payload()), render_summary_html(summary_json()),
             render_selftest_html(selftest_json()), render_conform_html(body, cluster_doc(), result),
             render_counterexample_html({"violation": VIOLATION}, cluster_doc(), {"trace": TRACE})]
    for page in pages:
        assert "http://" not in page and "https://" not in page
        assert not re.search(r"<script|<link|<iframe|<img|@import|\bsrc\s*=", page, re.I)
        for target in re.findall(r'href="([^"]*)"', page):
            assert target.startswith("#"), target  # only references inside the page (SVG <use>)
        assert len(set(re.findall(r'\bid="([^"]+)"', page))) == len(re.findall(r'\bid="([^"]+)"', page))


# ---------------------------------------------------------------- the folders


def test_check_writes_report_html_beside_report_json(tmp_path, capsys):
    scenario = ROOT / "tests" / "scenarios" / "backfill-reuses-the-host-port-of-a-put-back-victim.yaml"
    assert main(["check", str(scenario), "--report", str(tmp_path), "--fail-on-known", "all", "--json"]) == 1
    folder = Path(json.loads(capsys.readouterr().out)["report"])
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.json", "report.md"]
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert svgs(page) >= 3 and "node.host-ports-free" in page  # timeline, queues, a ledger per violation


def test_selftest_report_writes_a_folder(tmp_path, capsys):
    assert main(["selftest", "--only", "reclaim-own-queue", "--report", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    folder = Path(out["report"])
    assert folder.parent == tmp_path and folder.name.endswith("-selftest")
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.json", "report.md"]
    saved = json.loads((folder / "report.json").read_text())
    assert saved["mutants"] == 1 and saved["results"][0]["mutant"] == "reclaim-own-queue" and saved["caught"] == 1
    assert "reclaim-own-queue" in (folder / "report.md").read_text()
    page = (folder / "report.html").read_text()
    assert "reclaim-own-queue" in page and "the blind gate was not run" in page


def counterexample_folder(parent: Path) -> Path:
    from schedcheck.counterexample import observe_failure, write_counterexample_report
    from schedcheck.scenario.loader import scenario_from_document

    doc = cluster_doc()
    seen = observe_failure(scenario_from_document(doc, "<test>"), "node.pipelined-sum", 0, PIPELINE_MUTANT)
    assert seen is not None and seen.violation["objects"] == ["node n1"]
    return write_counterexample_report(parent, doc, seen.violation, 0, PIPELINE_MUTANT, None, 1.5)


def test_the_counterexample_folder_holds_report_html_with_every_picture(tmp_path):
    folder = counterexample_folder(tmp_path)
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert svgs(page) == 4 and "not drawn" not in page
    assert "victim → preemptor" in page and f"schedcheck replay {folder / 'counterexample.yaml'}" in page


# ---------------------------------------------------------------- in a real browser


def _browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium); CI installs it, "
                    "and this test never downloads a browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright package is missing: pip install -e '.[test]'")
    return sync_playwright


def _pixels(png: Path):
    from matplotlib.image import imread

    image = imread(str(png))
    return image[..., :3]


def test_report_html_renders_its_figures_in_headless_chromium(tmp_path):
    sync_playwright = _browser()
    folder = counterexample_folder(tmp_path / "reports")
    page_file = folder / "report.html"
    expected = page_file.read_text(encoding="utf-8").count("<figure")
    assert expected == 4
    shot = tmp_path / "report.png"
    outside = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: None if request.url.startswith(("file:", "data:", "about:"))
                    else outside.append(request.url))
            page.goto(page_file.as_uri(), wait_until="load")
            figures = page.locator("figure svg")
            assert figures.count() == expected
            for i in range(expected):
                box = figures.nth(i).bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 80, (i, box)
            titles = page.locator("figure h3").all_inner_texts()
            assert titles == ["Node ledgers", "Timeline", "Queues", "HyperNode topology"]
            assert page.locator("text=node n1").count() >= 1
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert outside == []  # nothing requested from the network
    pixels = _pixels(shot)
    assert pixels.shape[0] > 900 and pixels.std() > 0.05  # a full page, not blank
    assert (pixels.min(axis=2) < 0.9).mean() > 0.03  # ink: text, bars and boxes
    red = (pixels[..., 0] > 0.75) & (pixels[..., 1] < 0.3) & (pixels[..., 2] < 0.3)
    assert red.sum() > 50  # the named node is marked in red
    shutil.copyfile(shot, SCREENSHOT)
