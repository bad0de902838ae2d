"""Derived scheduler state recomputed from scratch, by code that never calls a plugin.

Each function restates one upstream rule over the session's own objects (queues, jobs, tasks,
nodes) and the reference's resource arithmetic (`api/resource_info`, which upstream shares with
every plugin), so a rule in the catalog can compare what a plugin holds with what it should hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedcheck.reference.api.resource_info import (
    MAX_FLOAT, Infinity, Resource, Zero, exceeded_part, is_scalar_resource_name, res_max, semantic_deep_equal,
)
from schedcheck.reference.api.types import TaskStatus, allocated_status

if TYPE_CHECKING:
    from schedcheck.reference.api.job_info import JobInfo
    from schedcheck.reference.framework.session import Session

IGNORED_SCALAR_PREFIXES = ("count/",)


@dataclass
class QueueOpening:
    """One queue as proportion must see it at session open (upstream proportion.go OnSessionOpen)."""

    name: str
    weight: int
    guarantee: Resource
    capability: Resource
    real_capability: Resource
    request: Resource = field(default_factory=Resource)
    allocated: Resource = field(default_factory=Resource)
    inqueue: Resource = field(default_factory=Resource)
    elastic: Resource = field(default_factory=Resource)
    deserved: Resource = field(default_factory=Resource)


@dataclass
class ProportionOpening:
    total: Resource
    queues: dict[str, QueueOpening]
    pending_jobs: set[str]  # uids of jobs pending at open (enqueue may admit them)


def _capability(spec_capability) -> Resource | None:
    if not spec_capability:
        return None
    cap = Resource.from_resource_list(spec_capability)
    # an unset (or non-positive) cpu or memory in a capability means unlimited
    if cap.milli_cpu <= 0:
        cap.milli_cpu = MAX_FLOAT
    if cap.memory <= 0:
        cap.memory = MAX_FLOAT
    return cap


def reserved_minimum(job: JobInfo, allocated: Resource) -> Resource:
    """What a job still reserves of its minResources: per named dimension, min - allocated, floored at 0
    (a scalar the job has none of allocated keeps its whole minimum; `count/` quotas reserve nothing)."""
    assert job.pod_group is not None and job.pod_group.min_resources is not None
    names = job.pod_group.min_resources
    minimum = Resource.from_resource_list(names)
    out = Resource()
    for name in names:
        if name == "cpu":
            out.milli_cpu = max(minimum.milli_cpu - allocated.milli_cpu, 0.0)
        elif name == "memory":
            out.memory = max(minimum.memory - allocated.memory, 0.0)
        elif name == "pods":
            left = minimum.get("pods") - allocated.get("pods")
            if left > 0:
                out.set_scalar("pods", left)
        elif is_scalar_resource_name(name) and not name.startswith(IGNORED_SCALAR_PREFIXES):
            if allocated.scalars is None or name not in allocated.scalars:
                out.set_scalar(name, minimum.get(name))
            elif minimum.get(name) - allocated.get(name) > 0:
                out.set_scalar(name, minimum.get(name) - allocated.get(name))
    return out


def _add_job(queue: QueueOpening, job: JobInfo) -> None:
    for task in job.tasks.values():
        if allocated_status(task.status):
            queue.allocated.add(task.resreq)
            queue.request.add(task.resreq)
        elif task.status == TaskStatus.Pending:
            queue.request.add(task.resreq)
    pod_group = job.pod_group
    if pod_group is None:
        return
    allocated = Resource()
    for task in job.tasks.values():
        if allocated_status(task.status):
            allocated.add(task.resreq)
    reserving = pod_group.phase == "Inqueue" or (
        pod_group.phase == "Running" and sum(1 for t in job.tasks.values() if allocated_status(t.status))
        >= pod_group.min_member)
    if reserving and pod_group.min_resources is not None:
        queue.inqueue.add(job.deduct_sch_gated_resources(reserved_minimum(job, allocated)))
    minimum = Resource.from_resource_list(pod_group.min_resources) if pod_group.min_resources else Resource()
    queue.elastic.add(exceeded_part(allocated, minimum))


def water_fill(total: Resource, queues: list[QueueOpening]) -> None:
    """Deserved by weighted water-filling (proportion.go OnSessionOpen), written from the rule:
    each round hands every unmet queue its weight's part of what remains, capped by realCapability
    and by its request, raised to its guarantee; a queue is met once its request fits its deserved
    or its deserved stops moving; the rounds end when nothing remains or nothing changed."""
    remaining = total.clone()
    met: set[str] = set()
    for _ in range(100_000):
        unmet = [q for q in queues if q.name not in met]
        weight = sum(q.weight for q in unmet)
        if weight == 0:
            return
        before = remaining.clone()
        grown, shrunk = Resource(), Resource()
        for q in unmet:
            old = q.deserved.clone()
            d = q.deserved.clone().add(remaining.clone().multi(q.weight / weight))
            d.min_dimension_resource(q.real_capability, Infinity)
            d.min_dimension_resource(q.request, Zero)
            q.deserved = res_max(d, q.guarantee)
            if q.request.less_equal(q.deserved, Zero) or semantic_deep_equal(q.deserved, old):
                met.add(q.name)
            up, down = q.deserved.diff(old, Zero)
            grown.add(up)
            shrunk.add(down)
        remaining = exceeded_part(remaining.clone().add(shrunk), grown)
        if remaining.is_empty() or semantic_deep_equal(remaining, before):
            return


def proportion_opening(ssn: Session) -> ProportionOpening:
    """Every queue with a job, as proportion must build it at session open, deserved included."""
    total = Resource().add(ssn.total_resource)
    guarantees = Resource()
    for queue in ssn.queues.values():
        if queue.queue.guarantee:
            guarantees.add(Resource.from_resource_list(queue.queue.guarantee))
    queues: dict[str, QueueOpening] = {}
    pending: set[str] = set()
    for job in ssn.jobs.values():
        queue = ssn.queues.get(job.queue)
        if queue is None:
            continue
        if job.pod_group is not None and job.is_pending():
            pending.add(job.uid)
        opening = queues.get(job.queue)
        if opening is None:
            spec = queue.queue
            guarantee = Resource.from_resource_list(spec.guarantee) if spec.guarantee else Resource()
            cap = _capability(spec.capability)
            real = exceeded_part(total, guarantees).add(guarantee)
            if cap is not None:
                real.min_dimension_resource(cap, Infinity)
            opening = queues[job.queue] = QueueOpening(queue.name, queue.weight, guarantee,
                                                       cap if cap is not None else Resource(), real)
        _add_job(opening, job)
    water_fill(total, list(queues.values()))
    return ProportionOpening(total, queues, pending)


def share_of(allocated: Resource, deserved: Resource) -> float:
    """A queue's share: the largest allocated / deserved over deserved's dimensions (0/0 is 0, x/0 is 1)."""
    result = 0.0
    for name in deserved.resource_names():
        d, a = deserved.get(name), allocated.get(name)
        value = (0.0 if a == 0 else 1.0) if d == 0 else a / d
        result = max(result, value)
    return result


# ---------------------------------------------------------------- gang's readiness votes

# gang.go JobReady / JobPipelined restated from the job's task counters (job_info.go), so a rule
# about allocate's commit-or-discard does not ask the plugin whose vote it is judging.
def gang_ready(job: JobInfo) -> bool:
    return job.check_task_ready() and job.is_ready()


def gang_pipelined(job: JobInfo) -> int:
    return 1 if job.check_task_pipelined() and job.is_pipelined() else -1


def session_vote(ssn: Session, point: str, job: JobInfo, restated: dict[str, Callable[[JobInfo], Any]]) -> bool:
    """The session's verdict at `point` (job_ready: every callback; job_pipelined: the tiered
    permit/reject vote), with the named plugins' callbacks replaced by restatements."""
    tiers = [[restated.get(name, fn) for name, fn in tier] for tier in ssn.registered(point)]
    if point == "job_ready":
        return all(fn(job) for tier in tiers for fn in tier)
    for tier in tiers:
        permitted = False
        for fn in tier:
            result = fn(job)
            if result < 0:
                return False
            if result > 0:
                permitted = True
        if permitted:
            return True
    return True
