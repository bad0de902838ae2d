"""proportion: weighted fair sharing of the cluster between queues.

Upstream: pkg/scheduler/plugins/proportion/proportion.go (volcano-semantics §9.4, seed 003).

At session open every queue that has at least one job gets attributes: capability (unset cpu or
memory means unlimited), guarantee, realCapability = min_Infinity(ExceededPart(total, Σ guarantee
of ALL queues) + guarantee, capability), allocated (AllocatedStatus tasks), request (allocated +
Pending), inqueue and elastic. The deserved share is then water-filled by weight (see
`compute_deserved`). The plugin orders queues (priority, then share), reports Overused, gates
Allocatable / Preemptive against deserved, picks reclaim victims from queues above deserved, admits
jobs against realCapability, and keeps allocated up to date through event handlers (Pipelined tasks
count as allocated, because Pipeline fires the allocate handler).

Where seed 003 (an older revision of this file) and upstream master differ, this module follows
master: the reclaimable check has no "allocated.LessPartly(reclaimer)" skip, the water-filling
remaining is ExceededPart(remaining + decreased, increased) rather than an unclamped Sub/Add,
JobEnqueueable no longer adds to inqueue on Permit (JobEnqueued does), Inqueue jobs reserve only
the part of minResources not yet allocated, and Allocatable/JobEnqueueable refuse non-Open queues.
Seed 001's closed formula, deserved = min(capability, max(guarantee, weight share)), is only the
first round of the loop: upstream caps by realCapability (which also subtracts the other queues'
guarantees) and by request before raising to guarantee, then redistributes what is left; its
"Overused: allocated > deserved" is really "deserved <= allocated on every dimension, pods included".

The queue accounting it shares with the capacity plugin (attributes, their accumulation, the
copy-on-write snapshot of the Simulate* extension points, PodGroup events) is in queue_attr.py.

Simplifications: metrics are not reported; the "orphaned task" guards upstream logs are kept as
silent skips.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import (
    Infinity,
    Resource,
    Zero,
    exceeded_part,
    res_max,
    semantic_deep_equal,
)
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.reference.plugins.queue_attr import (
    QUOTA_INSUFFICIENT,
    UNSCHEDULABLE_REASON,
    PodGroupEvent,
    QueueAttr,
    QueueAttrsState,
    SnapshotCache,
    accumulate_job,
    as_task_list,
    init_quota,
    queue_is_open,
    read_state,
    record_pod_group_event,
    simulated_queue_attr,
    summed_request,
    total_guarantee,
)
from schedcheck.reference.plugins.util import format_resource_names

PLUGIN_NAME = "proportion"
STATE_KEY = "proportionState"
def compute_deserved(total: Resource, attrs: list[QueueAttr], max_rounds: int = 100_000) -> int:
    """Water-fill `total` into the queues' deserved by weight; returns the number of rounds.

    Each round gives every unmet queue remaining * weight / Σ weight of unmet queues on top of its
    deserved, then caps it by realCapability (Infinity: unnamed scalars unlimited) and by request
    (Zero: scalars the queue does not request drop to 0), and raises it to guarantee. A queue is met
    when request <= deserved or when its deserved stopped changing. Every queue of a round reads the
    same `remaining`, so their order does not matter. The loop stops when no weight is left, when
    remaining is empty (pods ignored) or when remaining did not change. `max_rounds` only guards
    the harness against a runaway loop; upstream has no such bound.
    """
    remaining = total.clone()
    meet: set[str] = set()
    for rounds in range(1, max_rounds + 1):
        unmet = [attr for attr in attrs if attr.queue_id not in meet]
        total_weight = sum(attr.weight for attr in unmet)
        if total_weight == 0:
            return rounds
        old_remaining = remaining.clone()
        increased, decreased = Resource(), Resource()
        for attr in unmet:
            old = attr.deserved.clone()
            _grow_deserved(attr, remaining, attr.weight / total_weight)
            if attr.request.less_equal(attr.deserved, Zero) or semantic_deep_equal(attr.deserved, old):
                meet.add(attr.queue_id)
            inc, dec = attr.deserved.diff(old, Zero)
            increased.add(inc)
            decreased.add(dec)
        remaining = exceeded_part(remaining.clone().add(decreased), increased)
        if remaining.is_empty() or semantic_deep_equal(remaining, old_remaining):
            return rounds
    raise RuntimeError(f"proportion: deserved did not converge in {max_rounds} rounds")


def _grow_deserved(attr: QueueAttr, remaining: Resource, fraction: float) -> None:
    attr.deserved.add(remaining.clone().multi(fraction))
    attr.deserved.min_dimension_resource(attr.real_capability, Infinity)
    attr.deserved.min_dimension_resource(attr.request, Zero)
    attr.deserved = res_max(attr.deserved, attr.guarantee)
    attr.update_share()


# -- the plugin -------------------------------------------------------------------------------


class ProportionPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.total_resource = Resource()
        self.total_guarantee = Resource()
        self._queue_opts: dict[str, QueueAttr] = {}
        self._snapshots = SnapshotCache()
        self.events: list[PodGroupEvent] = []
        self.rounds = 0

    @property
    def queue_attrs(self) -> Mapping[str, QueueAttr]:
        """Read-only view: queue name -> its attributes (deserved, allocated, share, ...)."""
        return MappingProxyType(self._queue_opts)

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.total_resource.add(ssn.total_resource)
        self.total_guarantee = total_guarantee(ssn.queues.values())
        self._build_queue_attrs(ssn)
        self.rounds = compute_deserved(self.total_resource, list(self._queue_opts.values()))
        self._register(ssn)

    def _build_queue_attrs(self, ssn: Session) -> None:
        for job in ssn.jobs.values():
            attr = self._queue_opts.get(job.queue)
            if attr is None:
                queue = ssn.queues.get(job.queue)
                if queue is None:
                    continue  # unreachable: the snapshot drops jobs whose queue is missing
                attr = QueueAttr(queue)
                init_quota(attr, queue, self.total_resource, self.total_guarantee)
                self._queue_opts[job.queue] = attr
            accumulate_job(attr, job)

    def _register(self, ssn: Session) -> None:
        name = self.name
        ssn.add_fn("queue_order", name, self.queue_order)
        ssn.add_fn("reclaimable", name, self.reclaimable)
        ssn.add_fn("overused", name, self.overused)
        ssn.add_fn("allocatable", name, self.allocatable)
        ssn.add_fn("simulate_allocatable", name, self.simulate_allocatable)
        ssn.add_fn("preemptive", name, self.preemptive)
        ssn.add_fn("pre_predicate", name, self.pre_predicate)
        ssn.add_fn("job_enqueueable", name, self.job_enqueueable)
        ssn.add_fn("job_enqueued", name, self.job_enqueued)
        ssn.add_fn("simulate_add_task", name, self.simulate_add_task)
        ssn.add_fn("simulate_remove_task", name, self.simulate_remove_task)
        ssn.add_event_handler(EventHandler(self._on_allocate, self._on_deallocate))

    # -- ordering and queue checks ------------------------------------------------------------

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Higher spec.priority first, then the lower share; 0 on an exact tie."""
        if left.priority != right.priority:
            return right.priority - left.priority
        left_share = self._queue_opts[left.uid].share
        right_share = self._queue_opts[right.uid].share
        if left_share == right_share:
            return 0
        return -1 if left_share < right_share else 1

    def overused(self, queue: QueueInfo) -> bool:
        """Every dimension of deserved (pods included) is <= allocated."""
        attr = self._queue_opts[queue.uid]
        return attr.deserved.less_equal(attr.allocated, Zero)

    def _queue_allocatable(self, queue: QueueInfo, request: Resource) -> bool:
        if not queue_is_open(queue):
            return False
        attr = self._queue_opts[queue.uid]
        future = attr.allocated.clone().add(request)
        return future.less_equal_with_dimension_and_resources_name(attr.deserved, request)[0]

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        """Queue Open, and allocated + request <= deserved on the requested dimensions (strict, no pods)."""
        return self._queue_allocatable(queue, task.resreq)

    def preemptive(self, queue: QueueInfo, candidates: TaskInfo | list[TaskInfo]) -> bool:
        """Allocatable with the candidates' summed request."""
        return self._queue_allocatable(queue, summed_request(as_task_list(candidates)))

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        """A reclaimee is a victim while its queue's running allocated is not <= deserved."""
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        for reclaimee in reclaimees:
            job = self.ssn.jobs.get(reclaimee.job)
            attr = self._queue_opts.get(job.queue) if job is not None else None
            if job is None or attr is None:
                continue
            allocated = allocations.get(job.queue)
            if allocated is None:
                allocated = allocations[job.queue] = attr.allocated.clone()
            if not allocated.less_equal(attr.deserved, Zero):
                allocated.sub(reclaimee.resreq)
                victims.append(reclaimee)
        return victims, PERMIT

    # -- admission ------------------------------------------------------------------------------

    def job_enqueueable(self, job: JobInfo) -> int:
        """minResources + allocated + inqueue - elastic <= realCapability on minResources' dimensions."""
        queue = self.ssn.queues[job.queue]
        if not queue_is_open(queue):
            return REJECT
        assert job.pod_group is not None
        if job.pod_group.min_resources is None:
            return PERMIT
        attr = self._queue_opts[job.queue]
        min_req = job.get_min_resources()
        needed = min_req.clone().add(attr.allocated).add(attr.inqueue).sub(attr.elastic)
        ok, names = needed.less_equal_with_dimension_and_resources_name(attr.real_capability, min_req)
        if ok:
            return PERMIT
        message = format_resource_names(QUOTA_INSUFFICIENT, "insufficient", names)
        record_pod_group_event(self.ssn, self.events, job.pod_group, UNSCHEDULABLE_REASON, message)
        return REJECT

    def job_enqueued(self, job: JobInfo) -> None:
        assert job.pod_group is not None
        attr = self._queue_opts.get(job.queue)
        if job.pod_group.min_resources is None or attr is None:
            return
        attr.inqueue.add(job.deduct_sch_gated_resources(job.get_min_resources()))
        self._snapshots.bump()

    # -- simulation over a cycle-state snapshot -----------------------------------------------

    def pre_predicate(self, task: TaskInfo) -> Exception | None:
        snapshot = self._snapshots.snapshot(self._queue_opts)
        self.ssn.get_cycle_state(task.uid)[STATE_KEY] = QueueAttrsState(snapshot)
        return None

    def simulate_allocatable(self, state: Mapping[str, Any], queue: QueueInfo, task: TaskInfo) -> bool:
        """As Allocatable over the snapshot, without the queue-state check (as upstream)."""
        snapshot = read_state(state, STATE_KEY)
        attr = snapshot.get(queue.uid) if snapshot is not None else None
        if attr is None:
            return False
        future = attr.allocated.clone().add(task.resreq)
        return future.less_equal_with_dimension_and_resources_name(attr.deserved, task.resreq)[0]

    def simulate_add_task(self, state: Mapping[str, Any], task_to_schedule: TaskInfo, task_to_add: TaskInfo,
                          node: Any) -> Exception | None:
        return self._simulate(state, task_to_add, removing=False)

    def simulate_remove_task(self, state: Mapping[str, Any], task_to_schedule: TaskInfo,
                             task_to_remove: TaskInfo, node: Any) -> Exception | None:
        return self._simulate(state, task_to_remove, removing=True)

    def _simulate(self, state: Mapping[str, Any], task: TaskInfo, removing: bool) -> Exception | None:
        found = simulated_queue_attr(self.name, self.ssn, state, STATE_KEY, task)
        if isinstance(found, Exception):
            return found
        _, attr = found
        if removing:
            attr.allocated.sub(task.resreq)
        else:
            attr.allocated.add(task.resreq)
        attr.update_share()
        return None

    # -- events ---------------------------------------------------------------------------------

    def _attr_of(self, task: TaskInfo) -> QueueAttr | None:
        job = self.ssn.jobs.get(task.job)
        return self._queue_opts.get(job.queue) if job is not None else None

    def _on_allocate(self, event: Event) -> None:
        attr = self._attr_of(event.task)
        if attr is None:
            return
        attr.allocated.add(event.task.resreq)
        attr.update_share()
        self._snapshots.bump()

    def _on_deallocate(self, event: Event) -> None:
        attr = self._attr_of(event.task)
        if attr is None:
            return
        if self.ssn.conf.persistent_pipelines:
            attr.allocated.sub_floored(event.task.resreq)
        else:
            attr.allocated.sub(event.task.resreq)
        attr.update_share()
        self._snapshots.bump()


register_plugin_builder(ProportionPlugin.name, ProportionPlugin)
