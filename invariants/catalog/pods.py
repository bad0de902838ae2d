"""What the scheduler reads off each pod, restated from Kubernetes and upstream's helpers: the task status
(getTaskStatus) and the resource request (resource helpers' PodRequests: containers summed, init
containers maxed in with the sidecars started before them, pod-level requests of cpu, memory and hugepages
in their place, overhead added). Judged once per session, on the tasks as the session opened."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, collect_at_open, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.task_info import QUEUE_ALLOCATION_GATE
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.features import SCHEDULING_GATES_QUEUE_ADMISSION
from schedcheck.reference.k8s import Pod

POD_VIEW = "pod_view_at_open"
COUNTED_IN_UNITS = ("memory", "pods")  # kept in bytes / a count; cpu and scalars in thousandths


def restated_status(pod: Pod) -> str:
    if pod.phase == "Running":
        return "Releasing" if pod.deletion_timestamp else "Running"
    if pod.phase == "Pending":
        if pod.deletion_timestamp:
            return "Releasing"
        return "Bound" if pod.node_name else "Pending"
    return pod.phase if pod.phase in ("Succeeded", "Failed") else "Unknown"


def _add(into: dict[str, Fraction], requests: dict[str, Any]) -> None:
    for name, quantity in requests.items():
        value = quantity.as_fraction()
        have = into.get(name)
        into[name] = value if have is None else have + value


def _resized(pod: Pod, container) -> dict[str, Any]:
    """A container mid-way through an in-place resize asks for the most of its spec, what the kubelet
    actuated and what it admitted; the spec drops out while the resize is pending as Infeasible."""
    if container.status_resources is None:
        return container.requests
    pending = next((c for c in pod.conditions if c.type == "PodResizePending"), None)
    lists = [container.status_resources.requests, container.allocated_resources]
    if pending is None or pending.reason != "Infeasible":
        lists.append(container.requests)
    most: dict[str, Any] = {}
    for listed in lists:
        for name, quantity in listed.items():
            if name not in most or quantity.as_fraction() > most[name].as_fraction():
                most[name] = quantity
    return most


def restated_request(pod: Pod) -> dict[str, Fraction]:
    """PodRequests in whole units (cores, bytes, devices), before the scheduler's conversions."""
    total: dict[str, Fraction] = {}
    for container in pod.containers:
        _add(total, _resized(pod, container))
    started: dict[str, Fraction] = {}  # sidecars (restartPolicy Always) started so far
    init_peak: dict[str, Fraction] = {}
    for container in pod.init_containers:
        if container.restart_policy == "Always":
            _add(total, _resized(pod, container))
            _add(started, _resized(pod, container))
            need = dict(started)
        else:
            need = dict(started)
            _add(need, container.requests)
        for name, value in need.items():
            init_peak[name] = max(init_peak.get(name, Fraction(0)), value)
    for name, value in init_peak.items():
        total[name] = max(total.get(name, Fraction(0)), value)
    if pod.resources is not None:  # pod-level requests (PodLevelResources on) stand for the containers'
        for name, quantity in pod.resources.requests.items():
            if name in ("cpu", "memory") or name.startswith("hugepages-"):
                total[name] = quantity.as_fraction()
    _add(total, pod.overhead)
    return total


def _in_units(name: str, value: Fraction) -> float:
    numerator = value.numerator if name in COUNTED_IN_UNITS else value.numerator * 1000
    return float(-((-numerator) // value.denominator))  # rounded away from zero, as MilliValue


@collect_at_open(POD_VIEW, ("task.status-from-pod", "task.request-from-pod"))
def _pod_view_at_open(ssn) -> dict[str, tuple[Any, ...]]:
    """task uid -> (pod key, status, what the pod says it should be, the request's cpu and memory, what the
    pod asks for), as the session opened (the session later writes spec.nodeName into the shared pod)."""
    out = {}
    for job in ssn.jobs.values():
        for uid, task in job.tasks.items():
            pod = task.pod
            said = (pod.phase, bool(pod.deletion_timestamp), pod.node_name)  # worded only for a violation (_said)
            out[uid] = (pod.key, task.status.name, restated_status(pod), said, task.resreq.milli_cpu,
                        task.resreq.memory, restated_request(pod))
    return out


def _off(expected: float, found: float) -> bool:
    return abs(expected - found) > 1e-6 * max(1.0, abs(expected))


def _said(phase: str, deleting: bool, node_name: str | None) -> str:
    return f"phase {phase}" + (", deleting" if deleting else "") + (f", on {node_name}" if node_name else "")


def _first_action(ctx: CheckContext, rule: str) -> dict[str, Any] | None:
    done = ctx.session_state.setdefault("pod_view_judged", set())
    if rule in done:
        return None
    done.add(rule)
    return ctx.session_state.get(POD_VIEW)


@invariant("task.status-from-pod", "every task opens the session with the status its pod's phase, deletion and node "
           "give it (Running: Running, or Releasing once deleting; Pending: Pending, Bound with a node, Releasing "
           "once deleting; Succeeded, Failed; else Unknown), but for a task whose bind still waits in DRA "
           "PreBind for binding conditions: Binding, as AddBindTask left it", "job",
           "pkg/scheduler/api/helpers.go getTaskStatus; volcano-semantics §2.2", (ACTION,))
def task_status_from_pod(ctx: CheckContext) -> Iterator[Violation]:
    view = _first_action(ctx, "task.status-from-pod")
    if not view:
        return
    wrong = [(uid, key, status, want, said) for uid, (key, status, want, said, _, _, _) in view.items()
             if status != want]
    for _, key, status, want, said in sorted(wrong):
        if ctx.ssn.conf.persistent_pipelines and status == "Pipelined":
            continue  # a decision kept from the last session (persistent mode)
        if status == "Binding" and key in ctx.ssn.cache.cluster.device_binding_waits:
            continue  # AddBindTask's status, kept while its bind waits in PreBind (binding conditions)
        yield Violation("", f"task {key} opened the session {status}, but its pod ({_said(*said)}) makes it {want}",
                        [f"task {key}"], want, status)


@invariant("task.request-from-pod", "every task's cpu and memory request is its pod's: containers summed, init "
           "containers maxed in with the sidecars started before them, pod-level requests in their place, "
           "overhead added; a container or sidecar being resized in place at the most of its spec, actuated and "
           "allocated requests (the spec left out when the resize is Infeasible)", "job",
           "k8s resource helpers PodRequests; pkg/scheduler/api/pod_info.go GetPodResourceRequest, "
           "amendResourceAccordingToPodFeatures, determineContainerReqs; "
           "volcano-semantics §2.3", (ACTION,))
def task_request_from_pod(ctx: CheckContext) -> Iterator[Violation]:
    view = _first_action(ctx, "task.request-from-pod")
    if not view:
        return
    zero = Fraction(0)
    differ = []
    for uid, (key, _, _, _, cpu, memory, want) in view.items():
        want_cpu = _in_units("cpu", want.get("cpu", zero))
        want_memory = _in_units("memory", want.get("memory", zero))
        if _off(want_cpu, cpu) or _off(want_memory, memory):
            differ.append((uid, key, cpu, memory, want_cpu, want_memory))
    for _, key, cpu, memory, want_cpu, want_memory in sorted(differ):
        expected = {"cpu": want_cpu, "memory": want_memory}
        found = {"cpu": cpu, "memory": memory}
        wrong = [n for n in expected if _off(expected[n], found[n])]
        if wrong:
            yield Violation("", f"task {key} requests {', '.join(f'{n} {found[n]:g}' for n in wrong)}, but its "
                                f"pod asks for {', '.join(f'{n} {expected[n]:g}' for n in wrong)} (containers, init "
                                f"containers and sidecars, pod level, overhead)", [f"task {key}"],
                            {n: expected[n] for n in wrong}, {n: found[n] for n in wrong})


@invariant("task.gated-not-placed", "no action allocates, pipelines or binds a task whose pod still carries a "
           "scheduling gate (spec.schedulingGates, Volcano's own queue-allocation gate included)", "job",
           "k8s Pod scheduling readiness (a gated pod is not scheduled); pkg/scheduler/api/job_info.go "
           "calSchedulingGated; allocate.go, backfill.go, preempt.go, reclaim.go (task.SchGated skips)", (ACTION,))
def task_gated_not_placed(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    seen: set[str] = set()
    for op in ssn.operations:
        if op.action != ctx.action or op.op not in ("allocate", "pipeline", "bind") or op.task_uid in seen:
            continue
        job = ssn.jobs.get(op.job)
        task = job.tasks.get(op.task_uid) if job is not None else None
        if task is None or not task.pod.scheduling_gates:
            continue
        seen.add(op.task_uid)
        gates = ", ".join(task.pod.scheduling_gates)
        yield Violation("", f"{ctx.action} did {op.op} task {task.key} on node {op.node}, but its pod is still "
                            f"gated ({gates}): a gated pod is not scheduled until every gate is removed",
                        [f"task {task.key}", f"node {op.node}"], "no placement while gated", op.op)


GATE_REMOVALS_SEEN = "gate_removals_seen"


@invariant("task.gate-removal-admitted", "Volcano's queue-allocation gate is removed only with the feature gate "
           "SchedulingGatesQueueAdmission on, by allocate, from a pending pod that opted in (annotation \"true\") "
           "and is held by that gate alone, whose queue is open (when proportion's or capacity's Allocatable is "
           "on: allocate itself does not look) and (capacity) whose request fits realCapability "
           "of the queue and every ancestor on the dimensions it requests", "job",
           "pkg/scheduler/actions/allocate/allocate.go allocateResourcesForTasks (Allocatable, then Enqueue); "
           "gate/schedulinggate.go Enqueue (HasOnlyVolcanoSchedulingGate); api/helpers.go; capacity.go "
           "queueAllocatableWithReserved", (ACTION,))
def task_gate_removal_admitted(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    records = ssn.cache.log.gate_removals
    start = ctx.session_state.get(GATE_REMOVALS_SEEN, len([r for r in records if r.cycle < ssn.cycle]))
    ctx.session_state[GATE_REMOVALS_SEEN] = len(records)
    fresh = [r for r in records[start:] if r.cycle == ssn.cycle]
    if not fresh:
        return
    tasks = {task.key: (job, task) for job in ssn.jobs.values() for task in job.tasks.values()}
    enabled = ssn.cache.server_options.feature_enabled(SCHEDULING_GATES_QUEUE_ADMISSION)
    capacity = ssn.plugins.get("capacity")
    # allocate itself asks nothing of the queue's state: only proportion's and capacity's Allocatable refuse a
    # closed queue (without them, upstream asks to remove the gate of a closed queue's pod too)
    state_checked = sorted({name for tier in ssn.registered("allocatable") for name, _ in tier}
                           & {"proportion", "capacity"})
    for record in fresh:
        job, task = tasks.get(record.task, (None, None))
        if job is None or task is None:
            continue
        wrong = []
        if not enabled:
            wrong.append("the feature gate SchedulingGatesQueueAdmission is off")
        if ctx.action != "allocate":
            wrong.append(f"{ctx.action} asked for it (only allocate does)")
        if task.pod.annotations.get(QUEUE_ALLOCATION_GATE) != "true":
            wrong.append(f"the pod has not opted in (annotation {QUEUE_ALLOCATION_GATE}: \"true\")")
        if task.pod.scheduling_gates != [QUEUE_ALLOCATION_GATE]:
            wrong.append(f"its gates are [{', '.join(task.pod.scheduling_gates)}], not Volcano's alone")
        # the task's status, not the pod's spec.nodeName: a discarded allocation leaves that written (upstream's
        # Statement.Allocate writes it and unallocate does not clear it), and the pod is still pending
        if task.status != TaskStatus.Pending:
            wrong.append(f"the task is {task.status.name}, not pending")
        queue = ssn.queues.get(job.queue)
        if queue is None:
            wrong.append(f"queue {job.queue} is not in the session")
        elif queue.queue.state != "Open" and state_checked:
            wrong.append(f"queue {job.queue} is not open (and {' and '.join(state_checked)}'s Allocatable refuses "
                         f"a closed queue)")
        elif capacity is not None and getattr(capacity, "ready", False):
            wrong.extend(_past_real_capability(capacity, job.queue, task))
        for reason in wrong:
            yield Violation("", f"allocate asked to remove the queue-allocation gate of {task.key}, but {reason}",
                            [f"task {task.key}", f"queue {job.queue}"], "an admitted, opted-in pod", reason)


def _past_real_capability(capacity: Any, queue_id: str, task: Any) -> list[str]:
    """The request alone against realCapability of the queue and its ancestors (what capacity's check,
    allocated + reservations + request, can never pass below)."""
    attrs = capacity.queue_attrs
    leaf = attrs.get(queue_id)
    if leaf is None:
        return []
    out = []
    for level in (queue_id, *getattr(leaf, "ancestors", ())):
        attr = attrs.get(level)
        if attr is None:
            continue
        fits, over = task.resreq.less_equal_with_dimension_and_resources_name(attr.real_capability, task.resreq)
        if not fits:
            out.append(f"its request <{task.resreq}> exceeds queue {attr.name}'s realCapability "
                       f"<{attr.real_capability}> ({', '.join(over) if over else 'a requested dimension'})")
    return out
