"""report.html of `schedcheck check --report DIR`: the run's facts, each violation with its node ledgers
when it fired, the run's timeline, the queues and the HyperNode tree of the scenario file checked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.report_html.facts import offending, violation_facts
from schedcheck.report_html.figure import guarded
from schedcheck.report_html.ledger import nodes_of_state, render_ledgers
from schedcheck.report_html.page import as_text, document, esc, facts, fallback, heading, note, section, table
from schedcheck.report_html.queues import queue_rows, render_queues
from schedcheck.report_html.scenario import objects_from_source
from schedcheck.report_html.timeline import render_timeline
from schedcheck.report_html.topology import render_topology

MAX_DETAILED = 6  # violations drawn one by one; the rest are listed


def render_check_html(payload: Mapping[str, Any]) -> str:
    """The page of a check report (the payload schedcheck.commands.check writes to report.json)."""
    title = "schedcheck check"
    try:
        title = f"schedcheck check: {payload.get('scenario', '?')}"
        return _page(title, payload)
    except Exception as exc:  # noqa: BLE001 - the page is never the reason a report is missing
        return fallback(title, exc)


def _page(title: str, payload: Mapping[str, Any]) -> str:
    from schedcheck.invariants.catalog import get as get_invariant

    violations = [v for v in payload.get("violations") or [] if isinstance(v, Mapping)]
    findings = [f for f in payload.get("findings") or [] if isinstance(f, Mapping)]
    body = [facts([
        ("source", f"<code>{esc(payload.get('source', '?'))}</code>"),
        ("seed", esc(payload.get("seed"))), ("cycles", esc(payload.get("cycles"))),
        ("invariants", esc(f"{payload.get('invariantsChecked', 0)} checks over "
                           f"{len(payload.get('invariants') or [])} invariants")),
        ("result", ('<span class="bad">violated</span>' if violations else '<span class="good">clean</span>')
         + (esc(f", {len(findings)} quality finding(s)") if findings else "")),
    ])]
    if payload.get("source"):
        body.append(note("Run it again: schedcheck check " + as_text(payload.get("source"))
                         + f" --seed {payload.get('seed', 0)}"))
    rule = {}
    for v in violations:
        inv = get_invariant(str(v.get("id")))
        rule[v.get("id")] = inv.statement if inv else ""
    if violations:
        counts: dict[str, list[Mapping[str, Any]]] = {}
        for v in violations:
            counts.setdefault(str(v.get("id")), []).append(v)
        body.append(heading("Violations"))
        body.append(table(["invariant", "violations", "first at", "rule"],
                          [(i, len(found), f"cycle {found[0].get('cycle', '-')}, {found[0].get('action') or '-'}, "
                            f"{found[0].get('checkpoint') or '-'}", rule.get(i, "")) for i, found in counts.items()],
                          numeric=(1,)))
    objects = objects_from_source(payload.get("source"))
    named_nodes = set().union(*(offending(v.get("objects"), "node") for v in violations)) if violations else set()
    named_queues = set().union(*(offending(v.get("objects"), "queue") for v in violations)) if violations else set()
    body.append(section("The run", [
        guarded("Timeline", render_timeline, payload.get("trace"), payload.get("overkill"), payload,
                violations[0] if violations else None),
        guarded("Queues", lambda: render_queues(queue_rows(objects) if objects is not None else None, named_queues,
                                                "From the scenario file checked.")),
        guarded("HyperNode topology", render_topology, objects, named_nodes),
    ]))
    for index, v in enumerate(violations[:MAX_DETAILED], 1):
        nodes = nodes_of_state(v.get("state"))
        body.append(section(f"{index}. {v.get('id')}", [
            violation_facts(v, rule.get(v.get("id"))),
            guarded("Node ledgers", render_ledgers, [("when the invariant fired", nodes)],
                    offending(v.get("objects"), "node")),
        ]))
    if len(violations) > MAX_DETAILED:
        body.append(note(f"{len(violations) - MAX_DETAILED} more violation(s): see report.json and report.md."))
    if findings:
        body.append(heading("Quality findings"))
        body.append(note("Rules upstream itself may break (for example minimal evictions); reported, not failed."))
        body.append(table(["invariant", "cycle", "action", "message"],
                          [(f.get("id"), f.get("cycle", "-"), f.get("action") or "-", f.get("message", ""))
                           for f in findings]))
    failures = (payload.get("expectations") or {}).get("failures") if isinstance(payload.get("expectations"),
                                                                                  Mapping) else None
    if failures:
        body.append(heading("Expectations that failed"))
        body.append("<ul>" + "".join(f"<li>{esc(f)}</li>" for f in failures) + "</ul>")
    status = ("violated", False) if violations else ("clean", True)
    return document(title, body, subtitle="report.json and report.md in this folder hold the same facts",
                    status=status)
