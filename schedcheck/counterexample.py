"""Counterexample files and reports.

A counterexample is an ordinary scenario document (so `schedcheck run` accepts
it unchanged) whose `metadata.annotations` say what it proves:

    schedcheck.io/invariant  the invariant that fails         gang.commit-ready
    schedcheck.io/cycle      the session where it failed      "0"
    schedcheck.io/action     the action running at the time   allocate
    schedcheck.io/seed       the tie-breaking seed            "0"
    schedcheck.io/mutant     the deliberate bug that was active (schedcheck/mutants.py), if any

`write_counterexample_report` writes a report folder (assembled under a
temporary name and renamed into place, like schedcheck/report.py) with
`counterexample.yaml`, `report.json` and `report.md`. The state before and
after the failing operation comes from replaying the minimised scenario with an
extra observer next to the invariant engine (`observe_failure`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from schedcheck.invariants.violation import plain
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.registry import ACTION as ACTION_END
from schedcheck.invariants.registry import CLOSE, OPERATION, STATEMENT
from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.invariants.snapshot import state_excerpt
from schedcheck.invariants.violation import Violation
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.model import Scenario
from schedcheck.report_folder import write_report_folder

PREFIX = "schedcheck.io/"
INVARIANT = PREFIX + "invariant"
CYCLE = PREFIX + "cycle"
ACTION = PREFIX + "action"
SEED = PREFIX + "seed"
MUTANT = PREFIX + "mutant"
FILE_NAME = "counterexample.yaml"
ORIGINAL_NAME = "original.yaml"  # the scenario as the search found it, before minimisation
UPSTREAM_ASSERT = "upstream.assert"  # reported by the runner, not by a catalogued invariant


# ---------------------------------------------------------------- the file


@dataclass
class Counterexample:
    scenario: Scenario
    invariant: str
    seed: int
    cycle: int | None = None
    action: str = ""
    mutant: str | None = None
    path: str = ""


def annotate(doc: dict[str, Any], invariant: str, cycle: int | None, action: str, seed: int,
             mutant: str | None) -> dict[str, Any]:
    """A copy of the scenario document carrying the counterexample annotations (older ones replaced)."""
    out = copy.deepcopy(doc)
    metadata = out.get("metadata")
    if not isinstance(metadata, dict):
        metadata = out["metadata"] = {}
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if not str(k).startswith(PREFIX)}
    annotations[INVARIANT] = invariant
    if cycle is not None:
        annotations[CYCLE] = str(cycle)
    annotations[ACTION] = action or ""
    annotations[SEED] = str(seed)
    if mutant:
        annotations[MUTANT] = mutant
    metadata["annotations"] = annotations
    return out


def dump_counterexample(doc: dict[str, Any]) -> str:
    """YAML text of an annotated counterexample, with a header saying how to replay it."""
    notes = (doc.get("metadata") or {}).get("annotations") or {}
    header = [f"# schedcheck counterexample: {notes.get(INVARIANT, '?')} fails"
              f" (cycle {notes.get(CYCLE, '?')}, action {notes.get(ACTION) or '-'}, seed {notes.get(SEED, '0')}"
              + (f", with the deliberate bug {notes[MUTANT]} active" if notes.get(MUTANT) else "") + ").",
              "# Replay: schedcheck replay THIS_FILE   (exit 1: still fails, 0: fixed)",
              "# It is an ordinary scenario: schedcheck run THIS_FILE works too."]
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
    return "\n".join(header) + "\n" + body


def read_counterexample(path: str | Path) -> Counterexample:
    """Load a counterexample file; ScenarioError (naming file, object and field) when it is not one."""
    from schedcheck.mutants import MUTANTS
    from schedcheck.scenario.loader import load_scenario

    scenario = load_scenario(path)
    source = scenario.source
    notes = scenario.annotations
    where = "metadata.annotations"
    invariant = notes.get(INVARIANT)
    if not invariant:
        raise ScenarioError(source, "Scenario", f"{where}.{INVARIANT}",
                            "missing: not a counterexample (it names no invariant)")
    if invariant != UPSTREAM_ASSERT and get_invariant(invariant) is None:
        raise ScenarioError(source, "Scenario", f"{where}.{INVARIANT}",
                            f"unknown invariant {invariant!r} (see `schedcheck invariants`)")
    seed = _int_note(notes, SEED, source, default=0)
    cycle = _int_note(notes, CYCLE, source, default=None)
    mutant = notes.get(MUTANT) or None
    if mutant is not None and mutant not in MUTANTS:
        raise ScenarioError(source, "Scenario", f"{where}.{MUTANT}",
                            f"unknown deliberate bug {mutant!r} (known: {', '.join(sorted(MUTANTS))})")
    return Counterexample(scenario=scenario, invariant=invariant, seed=seed, cycle=cycle,
                          action=notes.get(ACTION, ""), mutant=mutant, path=str(path))


def _int_note(notes: dict[str, str], key: str, source: str, default: int | None) -> int | None:
    raw = notes.get(key)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ScenarioError(source, "Scenario", f"metadata.annotations.{key}",
                            f"expected an integer, got {raw!r}") from None


# ---------------------------------------------------------------- observing the failure


@dataclass
class FailureObservation:
    """The first violation of an invariant in a run, with the state of its objects before and after."""

    violation: dict[str, Any]  # Violation.to_json() form (or the runner's record for upstream.assert)
    before: dict[str, Any] | None = None
    before_label: str = ""
    after: dict[str, Any] | None = None
    after_label: str = ""


Excerpt = tuple[str, dict[str, Any]]  # (when it was taken, the excerpt)


class _ObservingEngine(InvariantEngine):
    """The invariant engine plus an observer that excerpts chosen objects at every checkpoint of one cycle.

    The observer's hooks run after the engine's own, so at each checkpoint it sees whether the target
    invariant has just fired. Until then it keeps the excerpts a "before" may need (see BEFORE).
    """

    def __init__(self, only: list[str], target: str, cycle: int, objects: list[str]) -> None:
        super().__init__(only=only)
        self.target, self.cycle, self.objects = target, cycle, objects
        self.last_any: Excerpt | None = None  # the previous checkpoint of any kind
        self.last_operation: Excerpt | None = None  # the previous operation (or session open)
        self.last_action: Excerpt | None = None  # the previous action's end (or session open)
        self.statement_begin: dict[int, Excerpt] = {}  # statement id -> when it began
        self.statement_of: dict[str, int] = {}  # task uid -> statement of its latest operation
        self.caught: tuple[Violation, Excerpt | None, Excerpt] | None = None

    def hooks(self):
        hooks = super().hooks()
        hooks.on_session_open.append(lambda ssn: self._see(ssn, "at session open", kind="open"))
        hooks.on_statement_begin.append(self._statement_begins)
        hooks.on_operation.append(lambda ssn, op: self._see(
            ssn, f"after {op.op} {op.task} on {op.node or '-'} ({ssn.current_action or '-'})", kind=OPERATION,
            op=op))
        hooks.on_statement_end.append(lambda ssn, kind, ops: self._see(
            ssn, f"after the {kind} of a statement ({ssn.current_action or '-'})", kind=STATEMENT, ops=ops))
        hooks.on_action_end.append(lambda ssn, action: self._see(ssn, f"after action {action}", kind=ACTION_END))
        hooks.on_session_closed.append(lambda ssn: self._see(ssn, "after the session closed", kind=CLOSE))
        return hooks

    def _statement_begins(self, ssn, stmt) -> None:
        if self.caught is None and ssn.cycle == self.cycle:
            label = f"when the statement began, before its operations ({ssn.current_action or '-'})"
            self.statement_begin[stmt.id] = (label, state_excerpt(ssn, self.objects))

    def _fired(self) -> Violation | None:
        return next((v for v in self.violations + self.findings if v.invariant == self.target), None)

    def _see(self, ssn, label: str, kind: str, op=None, ops=None) -> None:
        if self.caught is not None or ssn.cycle != self.cycle:
            return
        if op is not None and op.statement:
            self.statement_of[op.task_uid] = op.statement
        excerpt = (label, state_excerpt(ssn, self.objects))
        fired = None if kind == "open" else self._fired()
        if fired is not None:
            self.caught = (fired, self._before(fired.checkpoint, ops or []), excerpt)
            return
        self.last_any = excerpt
        if kind in ("open", OPERATION):
            self.last_operation = excerpt
        if kind in ("open", ACTION_END):
            self.last_action = excerpt

    def _before(self, checkpoint: str, ops: list) -> Excerpt | None:
        if checkpoint == OPERATION:
            return self.last_operation
        if checkpoint == STATEMENT:
            ids = sorted({self.statement_of[op.task.uid] for op in ops if op.task.uid in self.statement_of})
            begun = next((self.statement_begin[i] for i in ids if i in self.statement_begin), None)
            return begun or self.last_any
        if checkpoint in (ACTION_END, CLOSE):
            return self.last_action
        return self.last_any


# What "before" means, per checkpoint kind (shown in report.md).
BEFORE = {
    OPERATION: "the state of the same objects after the previous operation of the same session (or at session "
               "open, if the failing operation was the session's first)",
    STATEMENT: "the state of the same objects when the failing statement began, before its first operation (so the "
               "difference is the whole statement's effect)",
    ACTION_END: "the state of the same objects when the failing action began: after the previous action, or at "
                "session open",
    CLOSE: "the state of the same objects after the session's last action, before it closed",
}


def only_ids(invariant: str) -> list[str]:
    return [invariant] if get_invariant(invariant) is not None else []


def run_with(scenario: Scenario, seed: int, mutant: str | None, engine: InvariantEngine):
    from schedcheck.mutants import mutant as activate
    from schedcheck.runner import run_scenario

    if mutant:
        with activate(mutant):
            return run_scenario(scenario, seed=seed, engine=engine)
    return run_scenario(scenario, seed=seed, engine=engine)


def first_violation(scenario: Scenario, invariant: str, seed: int, mutant: str | None,
                    engine: InvariantEngine | None = None) -> dict[str, Any] | None:
    """The first violation (or finding) of the invariant in a run, in Violation.to_json() form."""
    result = run_with(scenario, seed, mutant, engine or InvariantEngine(only=only_ids(invariant)))
    return next((v for v in result.violations + result.findings if v.get("id") == invariant), None)


def observe_failure(scenario: Scenario, invariant: str, seed: int, mutant: str | None) -> FailureObservation | None:
    """Replay twice: once to find the violation and the objects it names, once more with the observer
    excerpting those objects at every checkpoint of the failing cycle. None if it does not fail."""
    found = first_violation(scenario, invariant, seed, mutant)
    if found is None:
        return None
    if invariant == UPSTREAM_ASSERT or not found.get("objects"):
        return FailureObservation(violation=found, after=found.get("state") or None,
                                  after_label="when the failure was recorded")
    engine = _ObservingEngine(only_ids(invariant), invariant, found["cycle"], list(found["objects"]))
    run_with(scenario, seed, mutant, engine)
    if engine.caught is None:  # not deterministic after all: report what the first run saw
        return FailureObservation(violation=found, after=found.get("state") or None,
                                  after_label="when the failure was recorded")
    fired, previous, now = engine.caught
    return FailureObservation(
        violation=fired.to_json(),
        before=plain(previous[1]) if previous else None,
        before_label=previous[0] if previous else "",
        after=fired.to_json().get("state") or plain(now[1]),
        after_label=f"{now[0]}, when the invariant fired",
    )


# ---------------------------------------------------------------- the report folder


def write_counterexample_report(parent: Path, doc: dict[str, Any], violation: Violation | dict[str, Any] | str,
                                seed: int, mutant: str | None, stats: Any = None, found_after: Any = None,
                                original_doc: dict[str, Any] | None = None) -> Path:
    """Write <parent>/<time>-<invariant>/ with counterexample.yaml, report.json and report.md; return it.

    `doc` is the minimised scenario document, `violation` the violation it was minimised for (a
    Violation, its JSON form, or just the invariant id; cycle and action are taken from a fresh replay
    of `doc`, falling back to `violation` if the replay does not reproduce it). `stats` is the
    minimiser's MinimizeStats (or any mapping, or None); `found_after` says how long the search took
    before it found the failure: seconds as a number, or free text such as "37 examples, 12.4 s".
    `original_doc`, the scenario as the search found it, is written beside the minimised one.
    """
    from schedcheck.minimize import scenario_counts
    from schedcheck.scenario.loader import scenario_from_document

    if isinstance(violation, str):  # just the invariant id: everything else comes from the replay
        original: dict[str, Any] = {"id": violation}
    else:
        original = violation.to_json() if isinstance(violation, Violation) else dict(violation)
    invariant = original.get("id") or original.get("invariant") or ""
    scenario = scenario_from_document(doc, FILE_NAME)
    observation = observe_failure(scenario, invariant, seed, mutant)
    seen = observation.violation if observation is not None else original
    annotated = annotate(doc, invariant, seen.get("cycle"), seen.get("action", ""), seed, mutant)
    stats_json = stats.to_json() if hasattr(stats, "to_json") else dict(stats) if stats is not None else None
    rule = get_invariant(invariant)
    payload: dict[str, Any] = {
        "invariant": invariant,
        "rule": rule.statement if rule else "an upstream assertion must hold",
        "severity": rule.severity if rule else "safety",
        "seed": seed,
        "mutant": mutant,
        "violation": seen,
        "reproducedOnMinimised": observation is not None,
        "counterexample": FILE_NAME,
        "foundAfter": found_after,
        "minimisation": stats_json,
        "scenario": scenario_counts(annotated),
        "before": None if observation is None else {"label": observation.before_label, "state": observation.before},
        "after": None if observation is None else {"label": observation.after_label, "state": observation.after},
    }
    if original_doc is not None:
        payload["original"] = ORIGINAL_NAME

    def files(target: Path) -> dict[str, str]:
        payload["replay"] = f"schedcheck replay {target / FILE_NAME}"  # the report names its final place
        out = {FILE_NAME: dump_counterexample(annotated),
               "report.json": json.dumps(payload, indent=2, default=str) + "\n",
               "report.md": render_counterexample_markdown(payload, annotated)}
        if original_doc is not None:  # what the search found, before minimisation kept only the failure
            out[ORIGINAL_NAME] = dump_counterexample(annotate(original_doc, invariant, seen.get("cycle"),
                                                              seen.get("action", ""), seed, mutant))
        return out

    return write_report_folder(parent, invariant or "counterexample", files)


# ---------------------------------------------------------------- report.md


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


def _sub(obj: Any, *path: str) -> Any:
    for part in path:
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _name(obj: dict[str, Any], namespaced: bool) -> str:
    name = str(_sub(obj, "metadata", "name"))
    return f"{_sub(obj, 'metadata', 'namespace') or 'default'}/{name}" if namespaced else name


def scenario_tables(doc: dict[str, Any]) -> list[str]:
    """The scenario as readable Markdown tables: conf, nodes, queues, jobs, pods, other objects."""
    from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION

    objects = doc.get("objects") if isinstance(doc.get("objects"), list) else []
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        if isinstance(obj, dict):
            by_kind.setdefault(str(obj.get("kind")), []).append(obj)
    classes = {str(_sub(o, "metadata", "name")): o.get("value") for o in by_kind.get("PriorityClass", [])}
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
        labels = _sub(n, "metadata", "labels") or {}
        taints = _sub(n, "spec", "taints") or []
        rows.append([_name(n, False), _resources(_sub(n, "status", "allocatable") or _sub(n, "status", "capacity")),
                     ", ".join(f"{k}={v}" for k, v in labels.items()) or "-",
                     ", ".join(f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in taints
                               if isinstance(t, dict)) or "-",
                     "yes" if _sub(n, "spec", "unschedulable") else "-"])
    lines += ["### Nodes", ""] + (_table(["node", "allocatable", "labels", "taints", "unschedulable"], rows)
                                  if rows else ["(none)", ""])

    rows = []
    for q in by_kind.get("Queue", []):
        spec = _sub(q, "spec") or {}
        rows.append([_name(q, False), spec.get("weight", 1), _resources(spec.get("capability")),
                     _resources(_sub(spec, "guarantee", "resource")), spec.get("parent") or "-",
                     "-" if spec.get("reclaimable") is None else spec.get("reclaimable")])
    lines += ["### Queues", ""] + (_table(["queue", "weight", "capability", "guarantee", "parent", "reclaimable"],
                                          rows) if rows else ["(none: the scheduler creates `default`)", ""])

    pods_of: dict[str, list[str]] = {}
    for p in by_kind.get("Pod", []):
        group = (_sub(p, "metadata", "annotations") or {}).get(GROUP_NAME_ANNOTATION)
        if group:
            pods_of.setdefault(f"{_sub(p, 'metadata', 'namespace') or 'default'}/{group}", []).append(
                str(_sub(p, "metadata", "name")))
    rows = []
    for g in by_kind.get("PodGroup", []):
        spec = _sub(g, "spec") or {}
        key = _name(g, True)
        rows.append([key, spec.get("queue") or "default", spec.get("minMember", 0),
                     _priority(spec.get("priorityClassName"), None, classes),
                     _resources(spec.get("minResources")), _sub(g, "status", "phase") or "-",
                     ", ".join(pods_of.get(key, [])) or "-"])
    lines += ["### Jobs (PodGroups)", ""] + (_table(["job", "queue", "minMember", "priority", "minResources",
                                                      "phase", "pods"], rows) if rows else ["(none)", ""])

    rows = []
    for p in by_kind.get("Pod", []):
        spec = _sub(p, "spec") or {}
        group = (_sub(p, "metadata", "annotations") or {}).get(GROUP_NAME_ANNOTATION)
        requests = [_resources(_sub(c, "resources", "requests") or _sub(c, "resources", "limits"))
                    for c in (spec.get("containers") or [])]
        inits = [_resources(_sub(c, "resources", "requests") or _sub(c, "resources", "limits"))
                 for c in (spec.get("initContainers") or [])]
        phase = _sub(p, "status", "phase") or "Pending"
        if _sub(p, "metadata", "deletionTimestamp"):
            phase += " (deleting)"
        job = f"{_sub(p, 'metadata', 'namespace') or 'default'}/{group}" if group else "-"
        rows.append([_name(p, True), job, " + ".join(requests) + (f" (init: {' + '.join(inits)})"
                                                                           if inits else "") or "-",
                     spec.get("nodeName") or "-", phase,
                     _priority(spec.get("priorityClassName"), spec.get("priority"), classes)])
    lines += ["### Pods", ""] + (_table(["pod", "job", "requests", "node", "phase", "priority"], rows)
                                 if rows else ["(none)", ""])

    others = [o for kind, objs in by_kind.items() if kind not in ("Node", "Queue", "PodGroup", "Pod") for o in objs]
    if others:
        rows = [[o.get("kind"), _name(o, o.get("kind") == "ResourceQuota"),
                 o.get("value") if o.get("kind") == "PriorityClass" else _resources(_sub(o, "spec", "hard"))]
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
