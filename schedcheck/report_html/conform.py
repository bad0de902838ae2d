"""report.html of a conformance report folder: the finding, the implementation's node ledgers after the
session before and the session of the finding, its timeline, and the scenario's queues and HyperNodes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedcheck.report_html.facts import offending
from schedcheck.report_html.figure import guarded
from schedcheck.report_html.ledger import is_ledger, render_ledgers
from schedcheck.report_html.page import as_text, code_block, document, esc, facts, fallback, note, section, table
from schedcheck.report_html.queues import queue_rows, render_queues
from schedcheck.report_html.scenario import objects_of
from schedcheck.report_html.timeline import render_timeline
from schedcheck.report_html.topology import render_topology


def render_conform_html(body: Mapping[str, Any], doc: dict[str, Any] | None = None,
                        result: Mapping[str, Any] | None = None) -> str:
    """`body` is report.json's payload, `doc` the minimised scenario, `result` the implementation's answer
    (protocol 1: binds, evicted, pipelined, optionally trace and ledgers)."""
    title = "Not conformant"
    try:
        finding = body.get("finding") if isinstance(body.get("finding"), Mapping) else {}
        title = f"Not conformant: {finding.get('kind') or '?'}"
        return _page(title, body, finding, doc, result if isinstance(result, Mapping) else {})
    except Exception as exc:  # noqa: BLE001
        return fallback(title, exc)


def _page(title: str, body: Mapping[str, Any], finding: Mapping[str, Any], doc: dict[str, Any] | None,
          result: Mapping[str, Any]) -> str:
    rows = [("finding", f"<code>{esc(finding.get('kind'))}</code>"), ("what happened", esc(finding.get("message"))),
            ("implementation", f"<code>{esc(body.get('implementation'))}</code>"), ("seed", esc(body.get("seed"))),
            ("scenarios run", esc(body.get("scenariosRun"))),
            ("found after", esc(f"{body.get('foundAfterSeconds')} s"))]
    if finding.get("cycle") is not None:
        rows.append(("cycle", esc(finding.get("cycle"))))
    rows.append(("objects", ", ".join(f"<code>{esc(o)}</code>" for o in finding.get("objects") or []) or "-"))
    if finding.get("details"):
        rows.append(("details", f"<code>{esc(as_text(finding.get('details')))}</code>"))
    parts = [facts(rows)]
    if body.get("replay"):
        parts.append(code_block(str(body["replay"])))
    parts.append(note("answer.json holds the scenario and the implementation's answer: "
                      "schedcheck check-trace answer.json checks it offline."))
    others = [f for f in body.get("findings") or [] if isinstance(f, Mapping)]
    if len(others) > 1:
        parts.append("<h3>All findings on the minimised scenario</h3>"
                     + table(["kind", "cycle", "message"], [(f.get("kind"), f.get("cycle", "-"), f.get("message"))
                                                            for f in others]))
    nodes = offending(finding.get("objects"), "node")
    objects = objects_of(doc)
    page = [*parts, section("The implementation's answer", [
        guarded("Node ledgers", render_ledgers, _ledger_panels(result.get("ledgers"), finding.get("cycle")), nodes),
        guarded("Timeline", render_timeline, result.get("trace"), None, result, _as_violation(finding)),
    ]), section("The scenario", [
        guarded("Queues", lambda: render_queues(queue_rows(objects) if objects is not None else None,
                                                offending(finding.get("objects"), "queue"),
                                                "From counterexample.yaml.")),
        guarded("HyperNode topology", render_topology, objects, nodes),
    ])]
    return document(title, page, subtitle=as_text(finding.get("message") or ""), status=("not conformant", False))


def _ledger_panels(ledgers: Any, cycle: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """The answer's ledgers after the session before the finding's and after the finding's session (the last
    session when the finding names none)."""
    if not isinstance(ledgers, Sequence) or isinstance(ledgers, str):
        return []
    by_cycle = {entry.get("cycle"): entry.get("nodes") for entry in ledgers
                if isinstance(entry, Mapping) and isinstance(entry.get("nodes"), Mapping)}
    if not by_cycle:
        return []
    if cycle not in by_cycle:
        cycle = max((c for c in by_cycle if isinstance(c, int)), default=next(iter(by_cycle)))
    panels = []
    if isinstance(cycle, int) and cycle - 1 in by_cycle:
        panels.append((f"after session {cycle - 1}", _ledgers(by_cycle[cycle - 1])))
    panels.append((f"after session {cycle}", _ledgers(by_cycle[cycle])))
    return panels


def _ledgers(nodes: Mapping[str, Any]) -> dict[str, Any]:
    return {str(name): value for name, value in nodes.items() if is_ledger(value)}


def _as_violation(finding: Mapping[str, Any]) -> dict[str, Any]:
    return {"cycle": finding.get("cycle"), "objects": finding.get("objects") or []}
