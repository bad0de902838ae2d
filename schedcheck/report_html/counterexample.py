"""report.html of a counterexample folder (the gate's, written by schedcheck.counterexample): the facts
of the failure and how to replay it, the node ledgers before and after the failing operation, the
task statuses that changed, the run's timeline, and the scenario's queues and HyperNode tree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.report_html.facts import offending, violation_facts
from schedcheck.report_html.figure import guarded
from schedcheck.report_html.ledger import nodes_of_state, render_ledgers, task_changes
from schedcheck.report_html.page import as_text, document, esc, fallback, note, section, table
from schedcheck.report_html.queues import queue_rows, render_queues
from schedcheck.report_html.scenario import objects_of
from schedcheck.report_html.timeline import render_timeline
from schedcheck.report_html.topology import render_topology


def render_counterexample_html(payload: Mapping[str, Any], doc: dict[str, Any] | None = None,
                               run: Mapping[str, Any] | None = None) -> str:
    """The page of a counterexample report: `payload` is what report.json holds, `doc` the (annotated)
    minimised scenario, `run` a replay's {"trace", "overkill"} (schedcheck.report_html.replay)."""
    title = "Counterexample"
    try:
        title = f"Counterexample: {payload.get('invariant') or '?'}"
        return _page(title, payload, doc, run if isinstance(run, Mapping) else {})
    except Exception as exc:  # noqa: BLE001
        return fallback(title, exc)


def _state(part: Any) -> tuple[str, Any]:
    if isinstance(part, Mapping):
        return str(part.get("label") or ""), part.get("state")
    return "", None


def _page(title: str, payload: Mapping[str, Any], doc: dict[str, Any] | None, run: Mapping[str, Any]) -> str:
    violation = payload.get("violation") if isinstance(payload.get("violation"), Mapping) else {}
    extra = [("seed", esc(payload.get("seed"))),
             ("deliberate bug", f"<code>{esc(payload['mutant'])}</code>" if payload.get("mutant") else "none"),
             ("found after", esc(_found_after(payload.get("foundAfter")))),
             ("reproduced", esc("yes, on the minimised scenario" if payload.get("reproducedOnMinimised")
                                else "no: the minimised scenario did not fail again"))]
    counts = payload.get("scenario")
    if isinstance(counts, Mapping):
        extra.append(("scenario", esc(", ".join(f"{v} {k}" for k, v in counts.items()))))
    if "sameCause" in payload:
        extra.append(("cause", esc("the same on the original and the minimised scenario" if payload["sameCause"]
                                   else "differs between the original and the minimised scenario")))
    body = [violation_facts(violation, payload.get("rule"), payload.get("replay"), extra)]
    body.append(note("counterexample.yaml in this folder is the minimised scenario; replay it with the command above."))
    before_label, before = _state(payload.get("before"))
    after_label, after = _state(payload.get("after"))
    nodes = offending(violation.get("objects"), "node")
    panels = [(f"before: {before_label}", nodes_of_state(before)), (f"after: {after_label}", nodes_of_state(after))]
    caption = ""
    if not any(ledgers for _, ledgers in panels) and isinstance(run.get("after"), Mapping):
        hosts = [*nodes_of_state(run["after"].get("state"))]
        caption = (f"The violation names no node: these are the nodes its tasks are on ({', '.join(hosts)}), "
                   "excerpted at the same moments in a replay.")
        panels = [(f"before: {_state(run.get('before'))[0]}", nodes_of_state(_state(run.get("before"))[1])),
                  (f"after: {_state(run.get('after'))[0]}", nodes_of_state(_state(run.get("after"))[1]))]
    body.append(section("The failing operation", [
        guarded("Node ledgers", render_ledgers, panels, nodes, caption),
        _changes(before, after),
    ]))
    objects = objects_of(doc)
    body.append(section("The run", [
        guarded("Timeline", render_timeline, run.get("trace"), run.get("overkill"), None, violation),
        guarded("Queues", lambda: render_queues(queue_rows(objects) if objects is not None else None,
                                                offending(violation.get("objects"), "queue"),
                                                "From counterexample.yaml.")),
        guarded("HyperNode topology", render_topology, objects, nodes),
    ]))
    return document(title, body, subtitle=as_text(violation.get("message") or payload.get("rule") or ""),
                    status=("fails", False))


def _changes(before: Any, after: Any) -> str:
    rows = task_changes(before, after) if before is not None and after is not None else []
    if not rows:
        return note("Task statuses: no change between before and after among the objects recorded"
                    if before is not None and after is not None else "Task statuses: no before state was recorded")
    return "<h3>Task statuses that changed</h3>" + table(["task", "before", "after"], rows)


def _found_after(value: Any) -> str:
    if isinstance(value, (int, float)):
        return f"{value:.1f} s"
    return as_text(value) if value is not None else "-"
