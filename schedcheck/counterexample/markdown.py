"""report.md of a counterexample folder: the rule, where it broke, how to replay, the minimisation,
the scenario as tables, and the state of the named objects before and after the failing operation."""

from __future__ import annotations

import json
from typing import Any

from schedcheck import document as d
from schedcheck.counterexample.observe import BEFORE

def render_counterexample_markdown(payload: dict[str, Any], doc: dict[str, Any]) -> str:
    v = payload["violation"]
    mutant = payload.get("mutant")
    lines = [f"# Counterexample: `{payload['invariant']}`", "",
             f"> {payload['rule']}", "",
             "| | |", "| --- | --- |",
             f"| invariant | `{payload['invariant']}` ({payload['severity']}) |",
             (f"| where | cycle {v.get('cycle', '?')}, action {v.get('action') or '-'}, "
              f"checkpoint {v.get('checkpoint') or '-'} |"),
             f"| operation | {_cell(v.get('operation') or '-')} |",
             f"| seed | {payload['seed']} |"]
    if mutant:
        lines.append(f"| deliberate bug | `{mutant}` (schedcheck/mutants.py) |")
    if payload.get("foundAfter") is not None:
        lines.append(f"| found after | {_cell(_found_after(payload['foundAfter']))} |")
    lines += ["", "## What broke", "", v.get("message") or str(v.get("found")), ""]
    if v.get("objects"):
        lines.append(f"- objects: {', '.join(v['objects'])}")
    lines += [f"- expected: `{json.dumps(v.get('expected'), default=str)}`",
              f"- found: `{json.dumps(v.get('found'), default=str)}`", ""]
    if not payload.get("reproducedOnMinimised"):
        lines += [("**Warning:** replaying the minimised scenario did not reproduce the failure; the details "
                   "above are those of the original run."), ""]
    lines += ["## Replay", "", "```", payload["replay"], "```", "",
              "Exit status 1 while the failure reproduces, 0 once it no longer does. "
              "`counterexample.yaml` is an ordinary scenario; its `metadata.annotations` carry the invariant, "
              "cycle, action and seed" + (" and the deliberate bug, which replay activates again" if mutant else "")
              + ".", ""]
    lines += _files_section(payload)
    stats = payload.get("minimisation")
    if isinstance(stats, dict) and stats.get("before"):
        before, after = stats["before"], stats.get("after") or payload["scenario"]
        keys = [k for k in ("nodes", "pods", "jobs", "queues", "objects", "actions", "plugins", "cycles")
                if k in before]
        lines += ["## Minimisation", "",
                  "| | " + " | ".join(keys) + " |", "| --- |" + " --- |" * len(keys),
                  "| before | " + " | ".join(str(before.get(k, "")) for k in keys) + " |",
                  "| after | " + " | ".join(str(after.get(k, "")) for k in keys) + " |", "",
                  f"{stats.get('attempts', '?')} candidate scenarios tried, {stats.get('accepted', '?')} reductions "
                  f"kept, {stats.get('seconds', '?')} s"
                  + (" (stopped by the time budget)" if stats.get("budgetExhausted") else "") + ".", ""]
    lines += scenario_tables(doc)
    lines += _state_section(payload)
    return "\n".join(lines)


def _files_section(payload: dict[str, Any]) -> list[str]:
    """Which file is which, and the failure's cause on each (only when the original was kept)."""
    if not payload.get("original"):
        return []
    lines = ["## Files", "",
             f"- `{payload['counterexample']}`: the minimised scenario (the tables below)",
             f"- `{payload['original']}`: the scenario as the search found it, before minimisation "
             f"({_sizes(payload.get('originalScenario') or {})}); it replays the same way", ""]
    cause, original = payload.get("cause"), payload.get("originalCause")
    if cause or original:
        lines += ["The minimiser keeps the failure's cause, not only its invariant id: the same action, checkpoint, "
                  "kind of operation, roles of the objects named, and enabledness of the plugins the rule depends "
                  "on (schedcheck/minimize/cause.py).", ""]
        rows = [[k, _cause_cell((original or {}).get(k)), _cause_cell((cause or {}).get(k))]
                for k in ("action", "checkpoint", "operation", "roles", "plugins")]
        lines += _table(["cause", "original", "minimised"], rows)
        if not payload.get("sameCause"):
            lines += ["**Warning:** the minimised scenario does not fail for the same cause as the original; "
                      "read `original.yaml`.", ""]
    return lines


def _sizes(counts: dict[str, Any]) -> str:
    return ", ".join(f"{counts[k]} {k}" for k in ("nodes", "pods", "jobs", "queues", "plugins") if k in counts)


def _cause_cell(value: Any) -> str:
    if isinstance(value, dict):  # guarded plugins: configured or not
        return ", ".join(f"{name} {'on' if flags is not None else 'off'}" for name, flags in value.items()) or "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "-"
    return str(value) if value else "-"


def _found_after(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return f"{value:.1f} s"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text.replace("|", "\\|").replace("\n", " ") or "-"


def _table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out + [""]


def _resources(value: Any) -> str:
    if not isinstance(value, dict) or not value:
        return "-"
    return ", ".join(f"{k}={v}" for k, v in value.items())


def scenario_tables(doc: dict[str, Any]) -> list[str]:
    """The scenario as readable Markdown tables: conf, nodes, queues, jobs, pods, other objects."""
    objects = doc.get("objects") if isinstance(doc.get("objects"), list) else []
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        if isinstance(obj, dict):
            by_kind.setdefault(str(obj.get("kind")), []).append(obj)
    classes = {str(d.dig(o, "metadata", "name")): o.get("value") for o in by_kind.get("PriorityClass", [])}
    lines = ["## The minimised scenario", ""]
    conf = doc.get("schedulerConf")
    if isinstance(conf, dict):
        tiers = [", ".join(str(p.get("name")) + _plugin_extras(p) for p in (t.get("plugins") or [])
                           if isinstance(p, dict))
                 for t in (conf.get("tiers") or []) if isinstance(t, dict)]
        lines += [f"- actions: {conf.get('actions', '-')}",
                  f"- tiers: {' | '.join(tiers) or '-'}"]
        if conf.get("configurations"):
            lines.append(f"- configurations: `{json.dumps(conf['configurations'], default=str)}`")
    elif conf is None:
        lines.append("- conf: upstream's default")
    else:
        lines.append("- conf: given as text (see counterexample.yaml)")
    lines += [f"- cycles: {doc.get('cycles', 1)}", ""]

    rows = []
    for n in by_kind.get("Node", []):
        labels = d.dig(n, "metadata", "labels") or {}
        taints = d.dig(n, "spec", "taints") or []
        allocatable = d.dig(n, "status", "allocatable") or d.dig(n, "status", "capacity")
        rows.append([d.display_name(n, False), _resources(allocatable),
                     ", ".join(f"{k}={v}" for k, v in labels.items()) or "-",
                     ", ".join(f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in taints
                               if isinstance(t, dict)) or "-",
                     "yes" if d.dig(n, "spec", "unschedulable") else "-"])
    lines += ["### Nodes", ""] + (_table(["node", "allocatable", "labels", "taints", "unschedulable"], rows)
                                  if rows else ["(none)", ""])

    rows = []
    for q in by_kind.get("Queue", []):
        spec = d.dig(q, "spec") or {}
        rows.append([d.display_name(q, False), spec.get("weight", 1), _resources(spec.get("capability")),
                     _resources(d.dig(spec, "guarantee", "resource")), spec.get("parent") or "-",
                     "-" if spec.get("reclaimable") is None else spec.get("reclaimable")])
    lines += ["### Queues", ""] + (_table(["queue", "weight", "capability", "guarantee", "parent", "reclaimable"],
                                          rows) if rows else ["(none: the scheduler creates `default`)", ""])

    pods_of: dict[str, list[str]] = {}
    for p in by_kind.get("Pod", []):
        group = d.group_name(p)
        if group:
            pods_of.setdefault(f"{d.namespace(p)}/{group}", []).append(
                str(d.dig(p, "metadata", "name")))
    rows = []
    for g in by_kind.get("PodGroup", []):
        spec = d.dig(g, "spec") or {}
        key = d.display_name(g, True)
        rows.append([key, spec.get("queue") or "default", spec.get("minMember", 0),
                     _priority(spec.get("priorityClassName"), None, classes),
                     _resources(spec.get("minResources")), d.dig(g, "status", "phase") or "-",
                     ", ".join(pods_of.get(key, [])) or "-"])
    lines += ["### Jobs (PodGroups)", ""] + (_table(["job", "queue", "minMember", "priority", "minResources",
                                                      "phase", "pods"], rows) if rows else ["(none)", ""])

    rows = []
    for p in by_kind.get("Pod", []):
        spec = d.dig(p, "spec") or {}
        group = d.group_name(p)
        requests = [_resources(d.dig(c, "resources", "requests") or d.dig(c, "resources", "limits"))
                    for c in (spec.get("containers") or [])]
        inits = [_resources(d.dig(c, "resources", "requests") or d.dig(c, "resources", "limits"))
                 for c in (spec.get("initContainers") or [])]
        phase = d.dig(p, "status", "phase") or "Pending"
        if d.dig(p, "metadata", "deletionTimestamp"):
            phase += " (deleting)"
        job = f"{d.namespace(p)}/{group}" if group else "-"
        rows.append([d.display_name(p, True), job, " + ".join(requests) + (f" (init: {' + '.join(inits)})"
                                                                           if inits else "") or "-",
                     spec.get("nodeName") or "-", phase,
                     _priority(spec.get("priorityClassName"), spec.get("priority"), classes)])
    lines += ["### Pods", ""] + (_table(["pod", "job", "requests", "node", "phase", "priority"], rows)
                                 if rows else ["(none)", ""])

    others = [o for kind, objs in by_kind.items() if kind not in ("Node", "Queue", "PodGroup", "Pod") for o in objs]
    if others:
        rows = [[o.get("kind"), d.display_name(o, o.get("kind") == "ResourceQuota"),
                 o.get("value") if o.get("kind") == "PriorityClass" else _resources(d.dig(o, "spec", "hard"))]
                for o in others]
        lines += ["### Other objects", ""] + _table(["kind", "name", "value / hard"], rows)
    return lines


def _plugin_extras(plugin: dict[str, Any]) -> str:
    extras = [f"{k}={v}" for k, v in plugin.items() if k not in ("name", "arguments")]
    if plugin.get("arguments"):
        extras.append(f"arguments {json.dumps(plugin['arguments'], default=str)}")
    return f" ({'; '.join(extras)})" if extras else ""


def _priority(class_name: Any, value: Any, classes: dict[str, Any]) -> str:
    if value is not None:
        return str(value)
    if class_name:
        return f"{class_name} ({classes[class_name]})" if classes.get(class_name) is not None else str(class_name)
    return "-"


# ---------------------------------------------------------------- state before and after


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def state_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[tuple[str, Any, Any]]:
    """(field, before, after) for every field of the excerpts that differs."""
    flat_before, flat_after = _flatten(before or {}), _flatten(after or {})
    return [(key, flat_before.get(key, "-"), flat_after.get(key, "-"))
            for key in sorted(set(flat_before) | set(flat_after)) if flat_before.get(key) != flat_after.get(key)]


def _state_section(payload: dict[str, Any]) -> list[str]:
    before, after = payload.get("before"), payload.get("after")
    checkpoint = payload["violation"].get("checkpoint")
    lines = ["## State before and after the failing operation", ""]
    if not after or after.get("state") is None:
        return lines + ["No state excerpt was recorded for this failure.", ""]
    meaning = BEFORE.get(checkpoint, "the state of the same objects at the previous checkpoint of the same session")
    lines += [(f"*Before* is {meaning}; *after* is the state when the invariant fired. Both are replayed "
               "from the minimised scenario with the same seed, and show only the objects the violation names."),
              ""]
    if before and before.get("state") is not None:
        changes = state_changes(before["state"], after["state"])
        lines += ["What changed:", ""]
        lines += (_table(["field", "before", "after"], [[k, b, a] for k, b, a in changes])
                  if changes else ["(nothing in these objects: the failure is in what stayed the same)", ""])
        lines += [f"### Before ({before['label']})", "", "```json",
                  json.dumps(before["state"], indent=2, default=str), "```", ""]
    else:
        lines += ["(no earlier checkpoint in this session)", ""]
    lines += [f"### After ({after['label']})", "", "```json", json.dumps(after["state"], indent=2, default=str),
              "```", ""]
    return lines
