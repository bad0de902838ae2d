"""Readable terminal output for `schedcheck run`."""

from __future__ import annotations

from schedcheck.result import RunResult
from schedcheck.scenario.model import Scenario


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def render_run(scenario: Scenario, result: RunResult, with_trace: bool = False) -> str:
    conf = scenario.conf
    out = [
        f"scenario {result.scenario}  ({scenario.source})",
        f"seed {result.seed}, {result.cycles} cycle(s), actions: {', '.join(conf.actions)}"
        f"{' (default conf)' if conf.is_default else ''}",
        f"{len(scenario.objects.nodes)} nodes, {len(scenario.objects.pods)} pods, "
        f"{len(scenario.objects.pod_groups)} PodGroups, {len(scenario.objects.queues)} queues",
        "",
    ]
    if result.binds:
        out.append(table(["bound pod", "node"], [[p, n] for p, n in sorted(result.binds.items())]))
    else:
        out.append("no binds\n")
    if result.evicted:
        out.append(table(["evicted pod"], [[p] for p in sorted(result.evicted)]))
    if result.pipelined:
        out.append(table(["pipelined pod", "node"], [[p, n] for p, n in sorted(result.pipelined.items())]))
    groups = sorted(set(result.pod_group_phases) | set(result.task_status_counts))
    if groups:
        rows = []
        for group in groups:
            counts = result.task_status_counts.get(group, {})
            rows.append([group, result.pod_group_phases.get(group, "-"),
                         ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"])
        out.append(table(["PodGroup", "phase", "tasks (last session)"], rows))
    if result.ties:
        out.append(f"{len(result.ties)} tie(s) broken by the seeded generator "
                   f"(e.g. {result.ties[0]['task']}: {result.ties[0]['chosen']} "
                   f"of {', '.join(result.ties[0]['candidates'])})\n")
    if with_trace and result.trace:
        out.append(table(["cycle", "action", "op", "task", "node"],
                         [[str(t["cycle"]), t["action"], t["op"], t["task"], t["node"]] for t in result.trace]))
    if result.invariants:
        verdict = f"{len(result.violations)} violation(s)" if result.violations else "none violated"
        out.append(f"{result.invariants} invariants checked {result.invariant_checks} times: {verdict}\n")
    for violation in result.violations:
        out.append(f"VIOLATION {violation['id']} (cycle {violation['cycle']}): {violation.get('message') or violation['found']}\n")
    for finding in result.findings:
        known = f" [known upstream finding {finding['known']}, docs/findings.md]" if finding.get("known") else ""
        out.append(f"finding {finding['id']} (cycle {finding['cycle']}): {finding['message']}{known}\n")
    if scenario.expect.is_empty():
        out.append("no expectations given\n")
    elif result.expectation_failures:
        out.append(f"EXPECTATIONS FAILED ({len(result.expectation_failures)}):\n")
        out += [f"  - {line}\n" for line in result.expectation_failures]
    else:
        out.append("all expectations met\n")
    return "\n".join(part.rstrip("\n") for part in out) + "\n"


def render_check(scenario: Scenario, result: RunResult, engine, folder) -> str:
    out = [f"scenario {result.scenario}  ({scenario.source}), seed {result.seed}, {result.cycles} cycle(s)",
           f"{len(engine.invariants)} invariants, {engine.checks_run} checks, "
           f"{sum(engine.cost.values()):.3f} s checking"]
    if result.violations:
        out.append(f"VIOLATED: {len(result.violations)} violation(s)")
        rows = [[v["id"], str(v.get("cycle", "-")), v.get("action") or "-", v.get("checkpoint", ""),
                 (v.get("message") or "")[:100]]
                for v in result.violations]
        out.append(table(["invariant", "cycle", "action", "at", "what"], rows).rstrip("\n"))
        for inv_id, count in engine.suppressed.items():
            out.append(f"({count} more {inv_id} violation(s) not listed)")
    else:
        out.append("no invariant violated")
    if result.findings:
        out.append(f"{len(result.findings)} quality finding(s) (rules upstream may break too; not failures):")
        out += [f"  - {f['id']} (cycle {f['cycle']}, {f.get('action') or '-'}): {f['message'][:110]}"
                for f in result.findings]
    if result.expectation_failures:
        out.append(f"{len(result.expectation_failures)} expectation(s) failed (see the report)")
    out += _overkill_lines(result)
    out.append(f"report: {folder}/report.md")
    return "\n".join(out) + "\n"


def _overkill_lines(result: RunResult) -> list[str]:
    """Evictions made vs the Z3 minimum, per preemptor (model/overkill.py)."""
    if not result.overkill:
        return []
    from schedcheck.model.overkill import MAX_CANDIDATES, render_lines

    return [f"overkill (evictions made / minimum needed among the offered victims, "
            f"computed up to {MAX_CANDIDATES} candidates):"] + render_lines(result.overkill)
