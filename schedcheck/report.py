"""Check reports: reports/<timestamp>-<name>/report.json and report.md, written atomically.

A report folder is assembled under a temporary name in the same parent and
renamed into place in one step, so an interrupted run never leaves a
half-written report behind, and an existing folder is never overwritten.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from schedcheck.invariants.catalog import get as get_invariant


def write_report(parent: Path, name: str, payload: dict[str, Any]) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:60] or "scenario"
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=parent))
    (staging / "report.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (staging / "report.md").write_text(render_markdown(payload), encoding="utf-8")
    for attempt in range(100):
        target = parent / (f"{stamp}-{safe}" + (f"-{attempt}" if attempt else ""))
        try:
            os.rename(staging, target)  # atomic; fails if the target exists and is not empty
            return target
        except OSError:
            continue
    raise OSError(f"could not find a free report folder name under {parent}")


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
            lines.append(f"| `{inv_id}` | {len(found)} | cycle {first['cycle']}, {first['action'] or '-'}, "
                         f"{first['checkpoint']} | {rule} |")
        lines.append("")
        for index, v in enumerate(violations, 1):
            lines += [f"## {index}. `{v['id']}`", "", v["message"], "",
                      f"- where: cycle {v['cycle']}, action {v['action'] or '-'}, at {v['checkpoint']}"
                      + (f", after {v['operation']}" if v.get("operation") else ""),
                      f"- objects: {', '.join(v.get('objects') or []) or '-'}",
                      f"- expected: `{json.dumps(v.get('expected'))}`", f"- found: `{json.dumps(v.get('found'))}`"]
            if v.get("state"):
                lines += ["", "State at the time:", "", "```json", json.dumps(v["state"], indent=2), "```"]
            lines.append("")
    if findings:
        lines += ["## Quality findings", "",
                  "Rules upstream itself may break (for example minimal evictions); reported, not failed.", ""]
        lines += [f"- `{f['id']}` (cycle {f['cycle']}, {f.get('action') or '-'}): {f['message']}" for f in findings]
        lines.append("")
    if payload.get("expectations", {}).get("failures"):
        lines += ["## Expectations that failed", ""]
        lines += [f"- {f}" for f in payload["expectations"]["failures"]]
        lines.append("")
    return "\n".join(lines)
