"""Invariants judged from outside: an implementation's own decisions applied to the scenario's state.

The scenario's cluster is loaded into the reference's cache (which derives requests, node ledgers,
job and queue membership exactly as upstream does); each cycle, the implementation's binds and
evictions of that cycle are checked against the state at the session's start and then applied
(binds complete, evicted pods terminate) before the next cycle. With no trace, decisions can be
attributed to a cycle only when there is one cycle; otherwise only the cycle-free checks run.

Checks (finding kind `check.<name>`):
  bind-not-pending      a bind of a pod that is not a pending pod of this scheduler, or bound twice
  bind-unschedulable    a bind to a node that is not Ready
  node-overcommit       the binds of a session ask a node for more than its Idle (any dimension, pods included)
  gang-min              binds of a job that stays below minAvailable (gang atomicity; gang plugin on)
  queue-capability      binds that take a queue above its spec.capability (with proportion or capacity)
A check applies only where the conf turns on the plugin that enforces the rule upstream.
  evict-not-running     an eviction of a pod that is not Running or Bound
  evict-not-preemptable an eviction of a pod marked volcano.sh/preemptable=false
  pipeline-overcommit   pipelined tasks beyond a node's FutureIdle at the last session's close
  ledger-identity / ledger-negative  a reported ledger breaks Idle + Used = Allocatable or goes negative
Consistency of the answer itself: `trace.inconsistent` (the trace and the result disagree),
`fault.unknown-object` (a pod or node that does not exist), `fault.wrong-scenario`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.types import TaskStatus
from schedcheck.conform.findings import Finding
from schedcheck.scenario.model import Scenario

TOLERANCE = 1e-3  # absolute, in internal units (millicores, bytes, milli-units)
QUEUE_PLUGINS = {"proportion", "capacity"}
Decisions = dict[int, tuple[list[tuple[str, str]], list[str]]]  # cycle -> (binds, evictions)


def check_result(scenario: Scenario, result: dict[str, Any]) -> list[Finding]:
    """Every outside-judgeable rule on a schema-valid protocol result; [] when it passes."""
    findings = _names(scenario, result)
    if findings:
        return findings  # naming things that do not exist: nothing else can be judged
    decisions, findings = _per_cycle(scenario, result)
    if decisions is not None:
        findings += _replay(scenario, result, decisions)
    findings += _static(scenario, result)
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


# ---------------------------------------------------------------- the replay, cycle by cycle


def _replay(scenario: Scenario, result: dict[str, Any], decisions: Decisions) -> list[Finding]:
    from schedcheck.reference.cache.cache import SchedulerCache

    cache = SchedulerCache(scenario.objects, now=scenario.now)
    queue_checks = _queue_plugins_on(scenario)
    gang_on = any(p.name == "gang" and p.enabled("enableJobReady") for t in scenario.conf.tiers for p in t.plugins)
    out: list[Finding] = []
    for cycle in range(scenario.cycles):
        binds, evicts = decisions.get(cycle, ([], []))
        tasks = {t.key: (job, t) for job in cache.jobs.values() for t in job.tasks.values()}
        out += _check_binds(cycle, cache, tasks, binds, evicts, gang_on)
        out += _check_evictions(cycle, tasks, evicts)
        if queue_checks:
            out += _check_queues(cycle, cache, tasks, binds)
        if cycle == scenario.cycles - 1:
            out += _check_pipelined(cycle, cache, tasks, binds, evicts, result["pipelined"])
        if out:
            return out  # the state after a broken cycle is not worth judging further
        cache._bound_this_cycle = dict(binds)
        cache._evicted_this_cycle = set(evicts)
        if cycle < scenario.cycles - 1:
            cache.advance()
    return out


def _exceeds(request: Resource, room: Resource) -> list[str]:
    """The dimensions on which `request` is more than `room` (beyond the tolerance)."""
    return [dim for dim, value in request.as_dict().items() if value > room.get(dim) + TOLERANCE]


def _check_binds(cycle: int, cache: Any, tasks: dict[str, Any], binds: list[tuple[str, str]],
                 evicts: list[str], gang_on: bool = True) -> list[Finding]:
    out: list[Finding] = []
    per_node: dict[str, Resource] = defaultdict(Resource)
    per_job: Counter[str] = Counter()
    seen: set[str] = set()
    for task_key, node_name in binds:
        found = tasks.get(task_key)
        if found is None or found[1].status != TaskStatus.Pending or task_key in seen:
            state = "bound twice" if task_key in seen else (
                "not a pod this scheduler schedules" if found is None else found[1].status.name)
            out.append(Finding("check.bind-not-pending", f"bound {task_key} to {node_name}, but the pod is {state}",
                               cycle, [f"pod {task_key}"]))
            continue
        seen.add(task_key)
        node = cache.nodes.get(node_name)
        if node is None or not node.ready():
            out.append(Finding("check.bind-unschedulable", f"bound {task_key} to {node_name}, which is not a Ready "
                                                           f"node", cycle, [f"pod {task_key}", f"node {node_name}"]))
            continue
        job, task = found
        per_node[node_name].add(task.resreq)
        if not task.best_effort and gang_on:  # without gang's JobReady, upstream commits any part of a job
            per_job[job.uid] += 1
    for node_name, request in sorted(per_node.items()):
        node = cache.nodes[node_name]
        over = _exceeds(request, node.idle)
        if over:
            out.append(Finding(
                "check.node-overcommit",
                f"the binds to node {node_name} ask for {_fmt(request, over)} but its Idle at the session's start "
                f"was {_fmt(node.idle, over)}", cycle, [f"node {node_name}"],
                {"requested": request.as_dict(), "idle": node.idle.as_dict()}))
    for job_uid, count in sorted(per_job.items()):
        job = next(j for j, _ in tasks.values() if j.uid == job_uid)
        ready = job.ready_task_num() + job.pending_best_effort_task_num() + count
        if ready < job.min_available:
            out.append(Finding("check.gang-min", f"bound {count} pod(s) of job {job_uid}, leaving it at {ready} "
                                                 f"ready task(s), below minAvailable {job.min_available}",
                               cycle, [f"job {job_uid}"], {"ready": ready, "minAvailable": job.min_available}))
    return out


def _check_evictions(cycle: int, tasks: dict[str, Any], evicts: list[str]) -> list[Finding]:
    out = []
    for task_key in evicts:
        found = tasks.get(task_key)
        if found is None or found[1].status not in (TaskStatus.Running, TaskStatus.Bound):
            state = "not a pod of this scheduler's jobs" if found is None else found[1].status.name
            out.append(Finding("check.evict-not-running", f"evicted {task_key}, which is {state}", cycle,
                               [f"pod {task_key}"]))
        elif not found[1].preemptable:
            out.append(Finding("check.evict-not-preemptable", f"evicted {task_key}, which is marked "
                                                              f"volcano.sh/preemptable=false", cycle,
                               [f"pod {task_key}"]))
    return out


ALLOCATED = (TaskStatus.Allocated, TaskStatus.Binding, TaskStatus.Bound, TaskStatus.Running)


def _check_queues(cycle: int, cache: Any, tasks: dict[str, Any], binds: list[tuple[str, str]]) -> list[Finding]:
    added: dict[str, Resource] = defaultdict(Resource)
    for task_key, _ in binds:
        job, task = tasks[task_key]
        added[job.queue].add(task.resreq)
    out = []
    specs = {q.name: q for q in cache.world.queues}
    for queue_name, request in sorted(added.items()):
        spec = specs.get(queue_name)
        if spec is None or not spec.capability:
            continue
        capability = Resource.from_resource_list(spec.capability)
        allocated = Resource()
        for job in cache.jobs.values():
            if job.queue == queue_name:
                for status in ALLOCATED:
                    for task in job.task_status_index.get(status, {}).values():
                        allocated.add(task.resreq)
        after = allocated.clone().add(request)
        limited = {d: v for d, v in capability.as_dict().items() if v > 0 and d != "pods"}
        over = [d for d, v in limited.items() if request.get(d) > 0 and after.get(d) > v + TOLERANCE]
        if over:
            out.append(Finding("check.queue-capability",
                               f"binds into queue {queue_name} take it to {_fmt(after, over)}, above its capability "
                               f"{_fmt(capability, over)}", cycle, [f"queue {queue_name}"]))
    return out


def _check_pipelined(cycle: int, cache: Any, tasks: dict[str, Any], binds: list[tuple[str, str]],
                     evicts: list[str], pipelined: dict[str, str]) -> list[Finding]:
    if not pipelined:
        return []
    room: dict[str, Resource] = {}
    for name, node in cache.nodes.items():
        room[name] = node.idle.clone().add(node.releasing)
    for task_key, node_name in binds:
        if task_key in tasks and node_name in room:
            room[node_name].sub_without_assert(tasks[task_key][1].resreq)
    for task_key in evicts:
        if task_key in tasks:
            task = tasks[task_key][1]
            if task.node_name in room and task.status != TaskStatus.Releasing:
                room[task.node_name].add(task.resreq)
    asked: dict[str, Resource] = defaultdict(Resource)
    for task_key, node_name in pipelined.items():
        if task_key in tasks:
            asked[node_name].add(tasks[task_key][1].resreq)
    out = []
    for node_name, request in sorted(asked.items()):
        over = _exceeds(request, room.get(node_name, Resource()))
        if over:
            out.append(Finding("check.pipeline-overcommit",
                               f"tasks pipelined on node {node_name} ask for {_fmt(request, over)} but its FutureIdle "
                               f"is {_fmt(room.get(node_name, Resource()), over)}", cycle, [f"node {node_name}"]))
    return out


def _static(scenario: Scenario, result: dict[str, Any]) -> list[Finding]:
    """Cycle-free rules: no pod marked preemptable=false is ever evicted."""
    from schedcheck.reference.api.task_info import get_pod_preemptable

    if result.get("trace") is not None or scenario.cycles == 1:
        return []  # the replay judged them already
    pods = {pod.key: pod for pod in scenario.objects.pods}
    return [Finding("check.evict-not-preemptable", f"evicted {key}, which is marked volcano.sh/preemptable=false",
                    None, [f"pod {key}"]) for key in result["evicted"] if not get_pod_preemptable(pods[key])]


def _queue_plugins_on(scenario: Scenario) -> bool:
    return any(p.name in QUEUE_PLUGINS for tier in scenario.conf.tiers for p in tier.plugins)


def _fmt(resource: Resource, dims: list[str]) -> str:
    return ", ".join(f"{d}={resource.get(d):g}" for d in dims)


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
