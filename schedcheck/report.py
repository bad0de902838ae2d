"""Check reports: reports/<timestamp>-<name>/report.json, report.md and report.html (`schedcheck check`).

The folder is written by schedcheck.report_folder: atomically, never overwriting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.report_folder import safe_name, write_report_folder
from schedcheck.report_html.check import render_check_html


def write_report(parent: Path, name: str, payload: dict[str, Any]) -> Path:
    """reports/<time>-<name>/ with report.json, report.md and report.html (schedcheck.report_folder writes
    it; the page's pictures never fail the report: one that cannot be drawn is a note in the page)."""
    return write_report_folder(parent, safe_name(name, "scenario"), {
        "report.json": json.dumps(payload, indent=2) + "\n",
        "report.md": render_markdown(payload),
        "report.html": render_check_html(payload),
    })


def render_markdown(payload: dict[str, Any]) -> str:
    violations = payload.get("violations", [])
    findings = payload.get("findings", [])
    lines = [f"# schedcheck report: {payload.get('scenario', '?')}", "",
             f"- source: `{payload.get('source', '?')}`", f"- seed: {payload.get('seed')}",
             f"- cycles: {payload.get('cycles')}", f"- invariants checked: {payload.get('invariantsChecked', 0)} "
             f"checks over {len(payload.get('invariants', []))} invariants",
             f"- result: **{'violated' if violations else 'clean'}**"
             + (f", {len(findings)} quality finding(s)" if findings else ""), ""]
    if violations:
        counts: dict[str, list[dict[str, Any]]] = {}
        for v in violations:
            counts.setdefault(v["id"], []).append(v)
        lines += ["| invariant | violations | first at | rule |", "| --- | --- | --- | --- |"]
        for inv_id, found in counts.items():
            first = found[0]
            inv = get_invariant(inv_id)
            rule = inv.statement if inv else ""
            lines.append(f"| `{inv_id}` | {len(found)} | cycle {first.get('cycle', '-')}, "
                         f"{first.get('action') or '-'}, {first.get('checkpoint') or '-'} | {rule} |")
        lines.append("")
        for index, v in enumerate(violations, 1):
            lines += [f"## {index}. `{v['id']}`", "", v.get("message") or v.get("found") or "", "",
                      f"- where: cycle {v.get('cycle', '-')}, action {v.get('action') or '-'}, "
                      f"at {v.get('checkpoint') or '-'}"
                      + (f", after {v['operation']}" if v.get("operation") else ""),
                      f"- objects: {', '.join(v.get('objects') or []) or '-'}",
                      f"- expected: `{json.dumps(v.get('expected'))}`", f"- found: `{json.dumps(v.get('found'))}`"]
            if v.get("state"):
                lines += ["", "State at the time:", "", "```json", json.dumps(v["state"], indent=2), "```"]
            lines.append("")
    if findings:
        lines += ["## Quality findings", "",
                  "Rules upstream itself may break (for example minimal evictions); reported, not failed.", ""]
        lines += [f"- `{f['id']}` (cycle {f.get('cycle', '-')}, {f.get('action') or '-'}): {f.get('message', '')}"
                  for f in findings]
        lines.append("")
    if payload.get("expectations", {}).get("failures"):
        lines += ["## Expectations that failed", ""]
        lines += [f"- {f}" for f in payload["expectations"]["failures"]]
        lines.append("")
    return "\n".join(lines)
