"""Queue accounting shared by the proportion and capacity plugins.

Upstream writes it twice (plugins/proportion/proportion.go and plugins/capacity/capacity.go each
declare a queueAttr and accumulate it the same way); the reference writes it once: the per-queue
attributes of one session and their accumulation from jobs, the copy-on-write cycle-state snapshot
the Simulate* extension points read, the queue helpers both use, and PodGroup events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import (
    MAX_FLOAT,
    Infinity,
    Resource,
    exceeded_part,
    share,
)
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus, allocated_status
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import PodGroup
from schedcheck.reference.plugins.util import inqueue_resource

QUEUE_OPEN = "Open"
EVENT_NORMAL = "Normal"
UNSCHEDULABLE_REASON = "Unschedulable"  # scheduling.PodGroupUnschedulableType
QUOTA_INSUFFICIENT = "queue resource quota insufficient"


# -- shared helpers (also used by the capacity plugin) ---------------------------------------


def simulated_queue_attr(plugin: str, ssn: Session, state: Mapping[str, Any], key: str,
                         task: TaskInfo) -> tuple[QueueAttrsState, QueueAttr] | Exception:
    """The cycle-state snapshot and the task's queue attributes in it, writable, for Simulate*."""
    snapshot = read_state(state, key)
    if snapshot is None:
        return LookupError(f"{plugin}: no {key} state in the cycle state")
    job = ssn.jobs.get(task.job)
    if job is None:
        return LookupError(f"{plugin}: job {task.job} not found in session")
    attr = snapshot.writable(job.queue)
    if attr is None:
        return LookupError(f"{plugin}: queue {job.queue} not found")
    return snapshot, attr


def total_guarantee(queues: Iterable[QueueInfo]) -> Resource:
    """Σ spec.guarantee.resource over every queue of the session, with or without jobs."""
    total = Resource()
    for queue in queues:
        if queue.queue.guarantee:
            total.add(Resource.from_resource_list(queue.queue.guarantee))
    return total


def queue_is_open(queue: QueueInfo) -> bool:
    return queue.queue.state == QUEUE_OPEN


@dataclass
class PodGroupEvent:
    """An event upstream records on a PodGroup (ssn.RecordPodGroupEvent)."""

    pod_group: str  # namespace/name
    type: str
    reason: str
    message: str


def record_pod_group_event(ssn: Session, sink: list[PodGroupEvent], pod_group: PodGroup | None,
                           reason: str, message: str) -> None:
    """Keep the event on the plugin (the session records no events of its own)."""
    if pod_group is None:
        return
    sink.append(PodGroupEvent(pod_group.key, EVENT_NORMAL, reason, message))


class QueueAttr:
    """Per-queue accounting of one session (upstream proportion queueAttr)."""

    __slots__ = (
        "allocated",
        "capability",
        "deserved",
        "elastic",
        "guarantee",
        "inqueue",
        "name",
        "queue_id",
        "real_capability",
        "request",
        "share",
        "weight",
    )

    def __init__(self, queue: QueueInfo) -> None:
        self.queue_id = queue.uid
        self.name = queue.name
        self.weight = queue.weight
        self.share = 0.0
        self.deserved = Resource()
        self.allocated = Resource()
        self.request = Resource()
        self.elastic = Resource()
        self.inqueue = Resource()
        self.capability = Resource()
        self.real_capability = Resource()
        self.guarantee = Resource()

    def clone(self) -> QueueAttr:
        c = self.__class__.__new__(self.__class__)
        c.queue_id, c.name, c.weight, c.share = self.queue_id, self.name, self.weight, self.share
        c.deserved, c.allocated = self.deserved.clone(), self.allocated.clone()
        c.request, c.elastic, c.inqueue = self.request.clone(), self.elastic.clone(), self.inqueue.clone()
        c.capability, c.real_capability = self.capability.clone(), self.real_capability.clone()
        c.guarantee = self.guarantee.clone()
        return c

    def update_share(self) -> None:
        """share = max over deserved's dimensions (pods included) of allocated / deserved."""
        result = 0.0
        allocated, deserved = self.allocated, self.deserved
        for name in deserved.resource_names():
            value = share(allocated.get(name), deserved.get(name))
            result = max(result, value)
        self.share = result

    def as_dict(self) -> dict[str, Any]:
        """A plain view for reports and the invariant engine."""
        return {
            "weight": self.weight, "share": self.share, "deserved": self.deserved.as_dict(),
            "allocated": self.allocated.as_dict(), "request": self.request.as_dict(),
            "elastic": self.elastic.as_dict(), "inqueue": self.inqueue.as_dict(),
            "capability": self.capability.as_dict(), "realCapability": self.real_capability.as_dict(),
            "guarantee": self.guarantee.as_dict(),
        }


def init_quota(attr: QueueAttr, queue: QueueInfo, total: Resource, guarantees: Resource) -> None:
    """capability (cpu/memory <= 0 → unlimited), guarantee and realCapability, as proportion and flat capacity."""
    spec = queue.queue
    capability = None
    if spec.capability:
        capability = Resource.from_resource_list(spec.capability)
        if capability.milli_cpu <= 0:
            capability.milli_cpu = MAX_FLOAT
        if capability.memory <= 0:
            capability.memory = MAX_FLOAT
    if spec.guarantee:
        attr.guarantee = Resource.from_resource_list(spec.guarantee)
    real = exceeded_part(total, guarantees).add(attr.guarantee)
    if capability is None:
        attr.capability = Resource()
    else:
        real.min_dimension_resource(capability, Infinity)
        attr.capability = capability
    attr.real_capability = real


def accumulate_job(attr: QueueAttr, job: JobInfo) -> None:
    """Add one job to its queue's allocated, request, inqueue and elastic."""
    for status, tasks in job.task_status_index.items():
        if allocated_status(status):
            for task in tasks.values():
                attr.allocated.add(task.resreq)
                attr.request.add(task.resreq)
        elif status == TaskStatus.Pending:
            for task in tasks.values():
                attr.request.add(task.resreq)
    pod_group = job.pod_group
    assert pod_group is not None
    # Inqueue jobs, and Running jobs holding at least minMember allocated tasks, reserve the part
    # of minResources that is not yet allocated.
    reserving = pod_group.phase == "Inqueue" or (
        pod_group.phase == "Running" and job.allocated_task_num() >= pod_group.min_member
    )
    if reserving and pod_group.min_resources is not None:
        attr.inqueue.add(job.deduct_sch_gated_resources(inqueue_resource(job, job.allocated)))
    attr.elastic.add(job.get_elastic_resources())


def as_task_list(candidates: TaskInfo | Iterable[TaskInfo | None]) -> list[TaskInfo]:
    """Preemptive takes a list upstream; the reference session passes one task. Accept both."""
    if isinstance(candidates, TaskInfo):
        return [candidates]
    return [task for task in candidates if task is not None]


def summed_request(tasks: list[TaskInfo]) -> Resource:
    total = Resource()
    for task in tasks:
        total.add(task.resreq)
    return total


class QueueAttrsState:
    """A task's cycle-state snapshot of every queue's attributes (proportionState / capacityState).

    The snapshot is copy-on-write: `base` is shared between tasks and never mutated; a queue's
    attributes are cloned into `own` the first time a Simulate* function changes them.
    """

    __slots__ = ("base", "own")

    def __init__(self, base: Mapping[str, QueueAttr]) -> None:
        self.base = base
        self.own: dict[str, QueueAttr] = {}

    def get(self, queue_id: str) -> QueueAttr | None:
        attr = self.own.get(queue_id)
        return attr if attr is not None else self.base.get(queue_id)

    def writable(self, queue_id: str) -> QueueAttr | None:
        attr = self.own.get(queue_id)
        if attr is None:
            shared = self.base.get(queue_id)
            if shared is None:
                return None
            attr = self.own[queue_id] = shared.clone()
        return attr

    def clone(self) -> QueueAttrsState:
        copy = QueueAttrsState(self.base)
        copy.own = {queue_id: attr.clone() for queue_id, attr in self.own.items()}
        return copy


class SnapshotCache:
    """Clones of the live queue attributes, rebuilt only after they changed (a generation counter)."""

    __slots__ = ("_built_at", "_snapshot", "generation")

    def __init__(self) -> None:
        self.generation = 0
        self._built_at = -1
        self._snapshot: Mapping[str, QueueAttr] = {}

    def bump(self) -> None:
        self.generation += 1

    def snapshot(self, live: Mapping[str, QueueAttr]) -> Mapping[str, QueueAttr]:
        if self._built_at != self.generation:
            self._snapshot = MappingProxyType({qid: attr.clone() for qid, attr in live.items()})
            self._built_at = self.generation
        return self._snapshot


def read_state(state: Mapping[str, Any], key: str) -> QueueAttrsState | None:
    value = state.get(key)
    return value if isinstance(value, QueueAttrsState) else None


# -- deserved water-filling -------------------------------------------------------------------
