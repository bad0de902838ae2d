"""An implementation's answer judged from outside, in three steps.

1. The answer itself: `fault.unknown-object` (a pod or node the scenario does not have),
   `fault.wrong-scenario`, `trace.inconsistent` (the trace and the result disagree).
2. Decisions no scheduler can make, applied cycle by cycle to the scenario's state as the reference's
   cache loads it: `check.bind-not-pending` (a pod that is not pending, or bound twice),
   `check.bind-unschedulable` (a node that is not Ready), `check.evict-not-running`.
3. The catalog's own decision rules over the answer's history (schedcheck/conform/replay.py), as
   `check.<invariant id>`: the rule that judges the reference judges the implementation, and a rule
   that needs a plugin applies only where the conf turns it on, exactly as for the reference.
Reported ledgers must satisfy Idle + Used = Allocatable and have no negative Used, Releasing or
Pipelined (`ledger.identity`, `ledger.negative`): they are the implementation's own numbers, which
no replay sees. With no trace, decisions can be placed in cycles only for a one-cycle scenario.
"""

from __future__ import annotations

from schedcheck.reference.plugins.deviceshare import device_flags

from collections import Counter
from typing import Any

from schedcheck.reference.api.types import TaskStatus
from schedcheck.conform.findings import Finding
from schedcheck.conform.replay import judge
from schedcheck.scenario.model import Scenario

TOLERANCE = 1e-3  # absolute, in internal units (millicores, bytes, milli-units)
Decisions = dict[int, tuple[list[tuple[str, str]], list[str]]]  # cycle -> (binds, evictions)


def check_result(scenario: Scenario, result: dict[str, Any]) -> list[Finding]:
    """Every outside-judgeable rule on a schema-valid protocol result; [] when it passes."""
    findings = _names(scenario, result)
    if findings:
        return findings  # naming things that do not exist: nothing else can be judged
    decisions, findings = _per_cycle(scenario, result)
    if decisions is not None:
        findings += _validity(scenario, decisions)
    if not findings:
        findings += judge(scenario, result)
    findings += check_ledgers(result)
    return findings


# ---------------------------------------------------------------- names and the trace


def _names(scenario: Scenario, result: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    if result.get("scenario") not in (None, scenario.name):
        out.append(Finding("fault.wrong-scenario", f"answered for scenario {result['scenario']!r}, was given "
                                                   f"{scenario.name!r}"))
    if result.get("cycles") != scenario.cycles:
        out.append(Finding("fault.wrong-scenario", f"ran {result.get('cycles')} cycle(s), the scenario asks "
                                                   f"for {scenario.cycles}"))
    pods = {pod.key for pod in scenario.objects.pods}
    nodes = {node.name for node in scenario.objects.nodes}
    named: list[tuple[str, str | None, str]] = []
    named += [(task, node, "binds") for task, node in result["binds"].items()]
    named += [(task, node, "pipelined") for task, node in result["pipelined"].items()]
    named += [(task, None, "evicted") for task in result["evicted"]]
    named += [(op["task"], op.get("node"), f"trace[{i}]") for i, op in enumerate(result.get("trace") or [])]
    for task, node, where in named:
        if task not in pods:
            out.append(Finding("fault.unknown-object", f"{where} names pod {task}, which the scenario does not "
                                                       f"have", objects=[f"pod {task}"]))
        elif node and node not in nodes:
            out.append(Finding("fault.unknown-object", f"{where} puts pod {task} on node {node}, which the "
                                                       f"scenario does not have", objects=[f"node {node}"]))
    return out[:10]


def committed(trace: list[dict[str, Any]]) -> Decisions:
    """Per cycle, the binds and the evictions a trace commits (an evict undone by unevict is not one)."""
    out: Decisions = {}
    for op in trace:
        binds, evicts = out.setdefault(op["cycle"], ([], []))
        if op["op"] == "bind":
            binds.append((op["task"], op.get("node") or ""))
        elif op["op"] == "evict":
            evicts.append(op["task"])
        elif op["op"] == "unevict" and op["task"] in evicts:
            evicts.remove(op["task"])
    return out


def _per_cycle(scenario: Scenario, result: dict[str, Any]) -> tuple[Decisions | None, list[Finding]]:
    trace = result.get("trace")
    if trace is None:
        if scenario.cycles == 1:
            return {0: (list(result["binds"].items()), list(result["evicted"]))}, []
        return None, []
    decisions = committed(trace)
    findings = []
    if any(c >= scenario.cycles for c in decisions):
        findings.append(Finding("trace.inconsistent", f"the trace has operations in cycle {max(decisions)}, "
                                                      f"beyond the scenario's {scenario.cycles} cycle(s)"))
    traced_binds = {task: node for binds, _ in decisions.values() for task, node in binds}
    if traced_binds != result["binds"]:
        differ = sorted(set(traced_binds.items()) ^ set(result["binds"].items()))
        findings.append(Finding("trace.inconsistent", f"the trace's bind operations and `binds` disagree on "
                                                      f"{', '.join(f'{t}->{n}' for t, n in differ[:4])}"))
    traced_evicts = Counter(t for _, evicts in decisions.values() for t in evicts)
    if traced_evicts != Counter(result["evicted"]):
        differ = sorted((traced_evicts - Counter(result["evicted"])) + (Counter(result["evicted"]) - traced_evicts))
        findings.append(Finding("trace.inconsistent", f"the trace's evict operations and `evicted` disagree on "
                                                      f"{', '.join(differ[:4])}"))
    return decisions, findings


# ---------------------------------------------------------------- decisions that cannot be made


def _validity(scenario: Scenario, decisions: Decisions) -> list[Finding]:
    """Decisions no scheduler can make, cycle by cycle: a bind of a pod that is not pending (or bound
    twice), a bind to a node that is not Ready, an eviction of a pod that is not Running or Bound.
    The world moves on between cycles with the answer's own binds and evictions."""
    from schedcheck.reference.cache.cache import SchedulerCache

    cache = SchedulerCache(scenario.objects, server_options=scenario.options, now=scenario.now,
                           device_flags=device_flags(scenario.conf))
    out: list[Finding] = []
    for cycle in range(scenario.cycles):
        binds, evicts = decisions.get(cycle, ([], []))
        tasks = {t.key: (job, t) for job in cache.jobs.values() for t in job.tasks.values()}
        seen: set[str] = set()
        for task_key, node_name in binds:
            found = tasks.get(task_key)
            if found is None or found[1].status != TaskStatus.Pending or task_key in seen:
                state = "bound twice" if task_key in seen else (
                    "not a pod this scheduler schedules" if found is None else found[1].status.name)
                out.append(Finding("check.bind-not-pending", f"bound {task_key} to {node_name}, but the pod is "
                                                             f"{state}", cycle, [f"pod {task_key}"]))
            elif cache.nodes.get(node_name) is None or not cache.nodes[node_name].ready():
                out.append(Finding("check.bind-unschedulable", f"bound {task_key} to {node_name}, which is not a "
                                                               f"Ready node", cycle,
                                   [f"pod {task_key}", f"node {node_name}"]))
            seen.add(task_key)
        for task_key in evicts:
            found = tasks.get(task_key)
            if found is None or found[1].status not in (TaskStatus.Running, TaskStatus.Bound):
                state = "not a pod of this scheduler's jobs" if found is None else found[1].status.name
                out.append(Finding("check.evict-not-running", f"evicted {task_key}, which is {state}", cycle,
                                   [f"pod {task_key}"]))
        if out:
            return out
        cache.cluster.bound_this_cycle.update(binds)  # the answer's binds and evictions reach the world
        cache.cluster.evicted_this_cycle.update(evicts)
        if cycle < scenario.cycles - 1:
            cache.advance()
    return out


# ---------------------------------------------------------------- reported ledgers


def check_ledgers(result: dict[str, Any]) -> list[Finding]:
    out = []
    for entry in result.get("ledgers") or []:
        for node, ledger in sorted(entry["nodes"].items()):
            alloc, idle, used = ledger["allocatable"], ledger["idle"], ledger["used"]
            for dim in sorted(set(alloc) | set(idle) | set(used)):
                total = idle.get(dim, 0) + used.get(dim, 0)
                if abs(total - alloc.get(dim, 0)) > TOLERANCE * max(1.0, abs(alloc.get(dim, 0)) * 1e-9):
                    out.append(Finding("ledger.identity", f"node {node}: Idle + Used on {dim} is {total:g} but "
                                                          f"Allocatable is {alloc.get(dim, 0):g}", entry["cycle"],
                                       [f"node {node}"], {"ledger": ledger}))
                    break
            for label in ("used", "releasing", "pipelined"):  # Idle may start negative (over-full node)
                negative = {d: v for d, v in (ledger.get(label) or {}).items() if v < -TOLERANCE}
                if negative:
                    out.append(Finding("ledger.negative", f"node {node}: {label} is negative on "
                                                          f"{', '.join(sorted(negative))}", entry["cycle"],
                                       [f"node {node}"], {"ledger": ledger}))
        if out:
            return out[:10]
    return out
