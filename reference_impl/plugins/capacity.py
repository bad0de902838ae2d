"""capacity: queue quotas from explicit spec.deserved, flat or hierarchical.

Upstream: pkg/scheduler/plugins/capacity/capacity.go (volcano-semantics §9.5).

Flat mode: queues with jobs get deserved = max(min_Infinity(spec.deserved, realCapability),
guarantee), realCapability as in proportion, and share = max allocated / deserved (1 for a queue
with empty deserved, a "best-effort" queue). QueueOrder: priority, then share, then a queue with
deserved before a best-effort one. Allocatable checks allocated + request against realCapability
(not deserved) on the requested dimensions; there is no Overused. Preemptive additionally needs one
requested dimension still within deserved. Reclaimable walks the victims in victim order, skips
those sharing no dimension with the reclaimer, keeps the queue's guarantee, and takes immediate
victims (no dimension in common with deserved) or victims of queues above deserved on a relevant
dimension. JobEnqueueable admits against realCapability.

Hierarchical mode (`enableHierarchy: true` on capacity): every queue of the session is placed under
the `root` queue through spec.parent (root must exist, or the session is "not ready" and the plugin
rejects everything). Jobs must sit in leaf queues. Root's empty capability becomes infinite;
children inherit unset cpu/memory/scalar capability from their parent; a child's realCapability is
min_Infinity(ExceededPart(parent realCapability, Σ sibling guarantees) + own guarantee, capability);
root's deserved and guarantee are the sums over its children. Allocatable and JobEnqueueable check
the leaf and every ancestor; QueueOrder prefers leaves and compares at the level where two paths
diverge; VictimQueueOrder evicts from the queue sharing the deeper ancestor with the preemptor first.
With `ancestorReclaimLevel: N` (hierarchy on), a victim also needs each of its ancestors up to N levels
up that the reclaimer does not share to be over deserved (an ancestor with no deserved on the
victim's dimensions does not constrain); an immediate victim is skipped when it shares a non-root
ancestor within N levels with a reclaimer whose own leaf has no deserved on what it asks for; and a
queue not below deserved itself may still reclaim if an ancestor within N levels is (Preemptive).

DRA device-class quotas (`capacity.DynamicResourceAllocationEnable`, on by default as the k8s feature gate):
capacity_dra.py, checked in Allocatable, SimulateAllocatable and JobEnqueueable for the queue and, with the
hierarchy, each ancestor; with `capacity.DRAConsumableCapacityEnable` (on by default, as the k8s gate
DRAConsumableCapacity at 1.36) also their consumable-capacity dimensions. With the feature gate
SchedulingGatesQueueAdmission on (`schedulerOptions.featureGates`), the queue-gate reservation cache: a pending task that opted in
(annotation `scheduling.volcano.sh/queue-allocation-gate: "true"`) and has lost its gate, or that
Allocatable has just admitted, counts against its queue's room until it is allocated (rebuilt at
every session open, dropped on allocate, restored on deallocate). Metrics are not reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import (
    MAX_INT,
    PODS,
    Infinity,
    Resource,
    Zero,
    exceeded_part,
    intersection,
    res_max,
)
from schedcheck.reference.api.task_info import TaskInfo, has_queue_allocation_gate_annotation
from schedcheck.reference.api.types import EvictionContext, EvictionKind, TaskStatus, allocated_status
from schedcheck.reference.features import SCHEDULING_GATES_QUEUE_ADMISSION
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.reference.plugins import capacity_dra
from schedcheck.reference.plugins.drf import hierarchy_enabled
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

PLUGIN_NAME = "capacity"
STATE_KEY = PLUGIN_NAME
ROOT_QUEUE = "root"
ANCESTOR_RECLAIM_LEVEL = "ancestorReclaimLevel"


class CapacityQueueAttr(QueueAttr):
    """proportion's queue attributes plus the hierarchy links; share is 1 without deserved."""

    __slots__ = ("ancestors", "children", "dra", "claim_refs")

    def __init__(self, queue: QueueInfo) -> None:
        super().__init__(queue)
        self.deserved = Resource.from_resource_list(queue.queue.deserved)
        self.ancestors: list[str] = []
        self.children: dict[str, CapacityQueueAttr] = {}
        spec = queue.queue
        self.dra = capacity_dra.new_quota(spec.capability or {}, spec.deserved or {}, spec.guarantee or {})
        self.claim_refs: dict[str, int] = {}  # claim key -> allocated tasks holding it (DRA)

    def clone(self) -> CapacityQueueAttr:
        c = super().clone()
        assert isinstance(c, CapacityQueueAttr)
        c.ancestors = list(self.ancestors)
        c.children = self.children  # links only; simulation never edits them
        c.dra = self.dra.clone() if self.dra is not None else None
        c.claim_refs = dict(self.claim_refs)
        return c

    def update_share(self) -> None:
        if self.deserved.is_empty():
            self.share = 1.0  # a best-effort queue goes after every queue still below deserved
            return
        super().update_share()


def compare_share_with_deserved(left: CapacityQueueAttr, right: CapacityQueueAttr) -> int:
    """Lower share first; on equal shares a queue with deserved before a best-effort one."""
    if left.share == right.share:
        left_has, right_has = not left.deserved.is_empty(), not right.deserved.is_empty()
        if left_has == right_has:
            return 0
        return -1 if left_has else 1
    return -1 if left.share < right.share else 1


def queue_level(left: CapacityQueueAttr, right: CapacityQueueAttr) -> int:
    """getQueueLevel: the index of the deepest common entry of the two ancestor lists."""
    level = 0
    for index in range(min(len(left.ancestors), len(right.ancestors))):
        if left.ancestors[index] != right.ancestors[index]:
            return level
        level = index
    return level


def ancestor_at_depth(attr: CapacityQueueAttr, depth: int) -> str | None:
    """queueAncestorAtDepth: 1 is the parent, 2 the grandparent (ancestors are kept root first)."""
    if depth <= 0 or len(attr.ancestors) < depth:
        return None
    return attr.ancestors[len(attr.ancestors) - depth]


def has_relevant_deserved(task: TaskInfo, deserved: Resource) -> bool:
    return bool(intersection(task.resreq, deserved))


def shares_dimension_with(reclaimee: TaskInfo, reclaimer: TaskInfo) -> bool:
    """IntersectionWithIgnoredScalarResources(reclaimee.Resreq, reclaimer.InitResreq) is non-empty."""
    return any(name != PODS for name in intersection(reclaimee.resreq, reclaimer.init_resreq))


class CapacityPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.total_resource = Resource()
        self.total_guarantee = Resource()
        self._queue_opts: dict[str, CapacityQueueAttr] = {}
        self.reserved_tasks: dict[str, dict[str, TaskInfo]] = {}  # queue -> opted-in tasks holding room
        self.gate_admission = False  # the feature gate SchedulingGatesQueueAdmission, read at session open
        self.hierarchy = False
        self.ready = True
        self.ancestor_reclaim_level = 0  # argument ancestorReclaimLevel, parsed at session open
        self.events: list[PodGroupEvent] = []
        self._snapshots = SnapshotCache()
        self.dra_enable = as_arguments(arguments).get_bool(capacity_dra.ENABLE, True)
        # the dimension checks (the k8s gate DRAConsumableCapacity's default at 1.36, as upstream's New)
        self.consumable_enable = as_arguments(arguments).get_bool(capacity_dra.CONSUMABLE_ENABLE, True)

    @property
    def queue_attrs(self) -> Mapping[str, CapacityQueueAttr]:
        """Read-only view: queue name -> its attributes."""
        return MappingProxyType(self._queue_opts)

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.ancestor_reclaim_level = max(0, as_arguments(self.arguments).get_int(ANCESTOR_RECLAIM_LEVEL, 0))
        self.total_resource.add(ssn.total_resource)
        self.gate_admission = ssn.cache.server_options.feature_enabled(SCHEDULING_GATES_QUEUE_ADMISSION)
        if self.gate_admission:
            self._build_reserved_cache(ssn)
        self.hierarchy = hierarchy_enabled(ssn, self.name)
        if self.hierarchy:
            self.ready = self._build_hierarchical_queue_attrs(ssn)
        else:
            self._build_queue_attrs(ssn)
        self._register(ssn)

    def _register(self, ssn: Session) -> None:
        name = self.name
        ssn.add_fn("reclaimable", name, self.reclaimable)
        ssn.add_fn("unified_evictable", name, self.unified_evictable)
        ssn.add_fn("preemptive", name, self.preemptive)
        ssn.add_fn("allocatable", name, self.allocatable)
        ssn.add_fn("job_enqueueable", name, self.job_enqueueable)
        ssn.add_fn("job_enqueued", name, self.job_enqueued)
        ssn.add_fn("pre_predicate", name, self.pre_predicate)
        ssn.add_fn("simulate_add_task", name, self.simulate_add_task)
        ssn.add_fn("simulate_remove_task", name, self.simulate_remove_task)
        ssn.add_fn("simulate_allocatable", name, self.simulate_allocatable)
        ssn.add_event_handler(EventHandler(self._on_allocate, self._on_deallocate))

    # -- flat mode --------------------------------------------------------------------------------

    def _build_queue_attrs(self, ssn: Session) -> None:
        self.total_guarantee = total_guarantee(ssn.queues.values())
        for job in ssn.jobs.values():
            attr = self._queue_opts.get(job.queue)
            if attr is None:
                queue = ssn.queues.get(job.queue)
                if queue is None:
                    continue  # unreachable: the snapshot drops jobs whose queue is missing
                attr = CapacityQueueAttr(queue)
                init_quota(attr, queue, self.total_resource, self.total_guarantee)
                self._queue_opts[job.queue] = attr
            accumulate_job(attr, job)
            self._accumulate_dra(attr, job)
        for attr in self._queue_opts.values():
            attr.deserved.min_dimension_resource(attr.real_capability, Infinity)
            attr.deserved = res_max(attr.deserved, attr.guarantee)
            attr.update_share()
        ssn.add_fn("queue_order", self.name, self.flat_queue_order)

    def _accumulate_dra(self, attr: CapacityQueueAttr, job: JobInfo) -> None:
        """The DRA requests of the job's allocated tasks, charged to the queue's DRA allocated."""
        if not self.dra_enable or attr.dra is None:
            return
        for status, tasks in job.task_status_index.items():
            if allocated_status(status):
                for task in tasks.values():
                    if task.dra_resreq is not None:
                        capacity_dra.add_task(attr.dra, attr.claim_refs, task)

    def flat_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        if left.priority != right.priority:
            return right.priority - left.priority
        return compare_share_with_deserved(self._queue_opts[left.uid], self._queue_opts[right.uid])

    # -- hierarchical mode ------------------------------------------------------------------------

    def _new_hierarchical_attr(self, queue: QueueInfo) -> CapacityQueueAttr:
        """No unlimited-cpu/memory substitution here: unset capability is inherited later."""
        attr = CapacityQueueAttr(queue)
        if queue.queue.capability:
            attr.capability = Resource.from_resource_list(queue.queue.capability)
        if queue.queue.guarantee:
            attr.guarantee = Resource.from_resource_list(queue.queue.guarantee)
        return attr

    def _build_hierarchical_queue_attrs(self, ssn: Session) -> bool:
        for queue in ssn.queues.values():
            if queue.uid in self._queue_opts:
                continue
            self._queue_opts[queue.uid] = self._new_hierarchical_attr(queue)
            if not self._link_ancestors(ssn, queue, set()):
                return False
        for job in ssn.jobs.values():
            attr = self._queue_opts.get(job.queue)
            if attr is None:
                continue
            if attr.children:
                return False  # a job in a non-leaf queue: the whole session is not ready
            self._add_job_to_branch(attr, job)
        root = self._queue_opts.get(ROOT_QUEUE)
        if root is None:
            return False
        if root.capability.is_empty():
            root.capability = self._infinite_capability()
        root.real_capability = root.capability
        self._settle_children(root)
        for attr in self._queue_opts.values():
            attr.update_share()
        ssn.add_fn("queue_order", self.name, self.hierarchical_queue_order)
        ssn.add_fn("victim_queue_order", self.name, self.victim_queue_order)
        return True

    def _link_ancestors(self, ssn: Session, queue: QueueInfo, visited: set[str]) -> bool:
        """updateAncestors: create missing parents, register the child, copy the parent's path.

        As upstream, a cycle is only detected when the walk re-enters a queue it is still creating.
        """
        if queue.name == ROOT_QUEUE:
            return True
        if queue.uid in visited:
            return False
        visited.add(queue.uid)
        try:
            parent = ssn.queues.get(queue.queue.parent or ROOT_QUEUE)
            if parent is None:
                return False
            if parent.uid not in self._queue_opts:
                self._queue_opts[parent.uid] = self._new_hierarchical_attr(parent)
                if not self._link_ancestors(ssn, parent, visited):
                    return False
            parent_attr = self._queue_opts[parent.uid]
            parent_attr.children[queue.uid] = self._queue_opts[queue.uid]
            self._queue_opts[queue.uid].ancestors = parent_attr.ancestors + [parent.uid]
            return True
        finally:
            visited.discard(queue.uid)

    def _add_job_to_branch(self, attr: CapacityQueueAttr, job: JobInfo) -> None:
        """Accumulate the job into its leaf queue and carry the same deltas up to every ancestor."""
        old = [attr.allocated.clone(), attr.request.clone(), attr.inqueue.clone(), attr.elastic.clone()]
        old_dra = capacity_dra.clone_requests(attr.dra.allocated) if attr.dra is not None else {}
        accumulate_job(attr, job)
        self._accumulate_dra(attr, job)
        new = [attr.allocated, attr.request, attr.inqueue, attr.elastic]
        deltas = [current.clone().sub(before) for current, before in zip(new, old)]
        dra_delta = capacity_dra.delta(attr.dra.allocated, old_dra) if attr.dra is not None else None
        for ancestor_id in attr.ancestors:
            ancestor = self._queue_opts[ancestor_id]
            for total, delta in zip(
                (ancestor.allocated, ancestor.request, ancestor.inqueue, ancestor.elastic), deltas
            ):
                total.add(delta)
            if self.dra_enable and ancestor.dra is not None and dra_delta is not None:
                # only the classes the ancestor's capability configures
                capacity_dra.merge(ancestor.dra.allocated,
                                   {c: n for c, n in dra_delta.items() if c in ancestor.dra.capability})

    def _infinite_capability(self) -> Resource:
        infinite = Resource.infinite()
        for name in self.total_resource.scalars or {}:
            infinite.set_scalar(name, float(MAX_INT))
        return infinite

    def _settle_children(self, attr: CapacityQueueAttr) -> None:
        """checkHierarchicalQueue: children's deserved, inherited capability and realCapability."""
        guarantees, deserved = Resource(), Resource()
        for child in attr.children.values():
            child.deserved = res_max(child.deserved, child.guarantee)
            deserved.add(child.deserved)
            guarantees.add(child.guarantee)
            _inherit_capability(child.capability, attr.capability)
        if attr.name == ROOT_QUEUE:
            attr.guarantee, attr.deserved = guarantees, deserved
        for child in attr.children.values():
            real = exceeded_part(attr.real_capability, guarantees).add(child.guarantee)
            real.min_dimension_resource(child.capability, Infinity)
            child.real_capability = real
        for child in attr.children.values():
            self._settle_children(child)

    def is_leaf(self, queue_id: str) -> bool:
        return not self._queue_opts[queue_id].children

    def hierarchical_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Priority; leaves first; two leaves compare the children of their deepest common ancestor."""
        if left.priority != right.priority:
            return right.priority - left.priority
        left_leaf, right_leaf = self.is_leaf(left.uid), self.is_leaf(right.uid)
        if left_leaf != right_leaf:
            return -1 if left_leaf else 1
        left_attr, right_attr = self._queue_opts[left.uid], self._queue_opts[right.uid]
        if not left_leaf:
            return compare_share_with_deserved(left_attr, right_attr)
        level = queue_level(left_attr, right_attr)
        left_id = left_attr.ancestors[level + 1] if level + 1 < len(left_attr.ancestors) else left_attr.queue_id
        right_id = right_attr.ancestors[level + 1] if level + 1 < len(right_attr.ancestors) else right_attr.queue_id
        return compare_share_with_deserved(self._queue_opts[left_id], self._queue_opts[right_id])

    def victim_queue_order(self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo) -> int:
        """The victim whose queue shares a deeper ancestor with the preemptor's queue first."""
        preemptor_attr = self._queue_opts[preemptor.uid]
        left_level = queue_level(self._queue_opts[left.uid], preemptor_attr)
        right_level = queue_level(self._queue_opts[right.uid], preemptor_attr)
        if left_level == right_level:
            return 0
        return -1 if left_level > right_level else 1

    def _branch(self, queue_id: str) -> list[str]:
        """The queue and its ancestors, leaf first (flat mode: the queue alone)."""
        return [queue_id, *reversed(self._queue_opts[queue_id].ancestors)]

    # -- allocation ---------------------------------------------------------------------------------

    def _reserved(self, queue_id: str, candidate: TaskInfo) -> Resource | None:
        tasks = self.reserved_tasks.get(queue_id)
        if not tasks:
            return None
        reserved = Resource()
        for uid, task in tasks.items():
            if uid != candidate.uid:
                reserved.add(task.resreq)
        return reserved

    def _queue_allocatable(self, attr: QueueAttr, candidate: TaskInfo) -> bool:
        """The DRA quota, then allocated + reserved + request <= realCapability on the requested dimensions."""
        if self.dra_enable and isinstance(attr, CapacityQueueAttr) and attr.dra is not None:
            request = capacity_dra.incremental(attr.claim_refs, candidate)
            if request is not None and not attr.dra.fits(request, False, self.consumable_enable):
                return False
        future = attr.allocated.clone()
        reserved = self._reserved(attr.queue_id, candidate)
        if reserved is not None:
            future.add(reserved)
        future.add(candidate.resreq)
        return future.less_equal_with_dimension_and_resources_name(attr.real_capability, candidate.resreq)[0]

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        if not queue_is_open(queue) or not self.ready:
            return False
        if self.hierarchy and not self.is_leaf(queue.uid):
            return False
        ok = all(self._queue_allocatable(self._queue_opts[qid], task) for qid in self._branch(queue.uid))
        if ok and self.gate_admission and has_queue_allocation_gate_annotation(task.pod):
            self.reserved_tasks.setdefault(queue.uid, {})[task.uid] = task
        return ok

    def preemptive(self, queue: QueueInfo, candidates: TaskInfo | list[TaskInfo]) -> bool:
        """Within realCapability, and some requested, non-zero dimension still within deserved."""
        if not self.ready or not queue_is_open(queue):
            return False
        attr = self._queue_opts[queue.uid]
        request = summed_request(as_task_list(candidates))
        future = attr.allocated.clone().add(request)
        if not future.less_equal_with_dimension_and_resources_name(attr.real_capability, request)[0]:
            return False
        if future.less_equal_partly_with_dimension_zero_filtered(attr.deserved, request)[0]:
            return True
        if not (self.hierarchy and self.ancestor_reclaim_level > 0):
            return False
        for level in range(1, self.ancestor_reclaim_level + 1):  # an ancestor still below deserved may reclaim
            ancestor_id = ancestor_at_depth(attr, level)
            ancestor = self._queue_opts.get(ancestor_id) if ancestor_id not in (None, ROOT_QUEUE) else None
            if ancestor is None:
                continue
            future = ancestor.allocated.clone().add(request)
            if future.less_equal_partly_with_dimension_zero_filtered(ancestor.deserved, request)[0]:
                return True
        return False

    # -- reclaim ------------------------------------------------------------------------------------

    def reclaimable(self, reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        ssn = self.ssn
        reclaimer_job = ssn.jobs.get(reclaimer.job)
        if not self.ready or reclaimer_job is None or reclaimer_job.queue not in self._queue_opts:
            return [], REJECT
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        ordered = ssn.build_victims_priority_queue(reclaimees, reclaimer)
        while not ordered.empty():
            reclaimee = ordered.pop()
            if self._reclaim_one(reclaimer, reclaimee, allocations):
                victims.append(reclaimee)
        return victims, PERMIT

    def _reclaim_one(self, reclaimer: TaskInfo, reclaimee: TaskInfo, allocations: dict[str, Resource]) -> bool:
        job = self.ssn.jobs.get(reclaimee.job)
        attr = self._queue_opts.get(job.queue) if job is not None else None
        if job is None or attr is None or not shares_dimension_with(reclaimee, reclaimer):
            return False
        allocated = allocations.get(job.queue)
        if allocated is None:
            allocated = allocations[job.queue] = attr.allocated.clone()
        if not self._keeps_guarantee(allocated, reclaimee, attr):
            return False
        reclaimer_attr = self._queue_opts[self.ssn.jobs[reclaimer.job].queue]
        scoped = self.hierarchy and self.ancestor_reclaim_level > 0
        if not has_relevant_deserved(reclaimee, attr.deserved):  # an immediate victim
            if scoped and self._share_ancestor_within_level(reclaimer_attr, attr) \
                    and not has_relevant_deserved(reclaimer, reclaimer_attr.deserved):
                return False  # no deserved signal on either side under a shared ancestor: no contention
        elif not allocated.greater_partly_with_relevant_dimensions(attr.deserved, reclaimee.resreq):
            return False
        ancestors: list[Resource] = []
        if scoped:  # the reclaimee's ancestors up to the level must be above deserved too
            for level in range(1, self.ancestor_reclaim_level + 1):
                check, ancestor = self._ancestor_to_check(reclaimer_attr, attr, level)
                if not check:
                    continue
                if ancestor is None:
                    return False
                held = allocations.get(ancestor.queue_id)
                if held is None:
                    held = allocations[ancestor.queue_id] = ancestor.allocated.clone()
                ancestors.append(held)
                if has_relevant_deserved(reclaimee, ancestor.deserved) and \
                        not held.greater_partly_with_relevant_dimensions(ancestor.deserved, reclaimee.resreq):
                    return False
        allocated.sub(reclaimee.resreq)
        for held in ancestors:
            held.sub(reclaimee.resreq)
        return True

    def _share_ancestor_within_level(self, left: CapacityQueueAttr, right: CapacityQueueAttr) -> bool:
        """sharesAnyNonRootAncestorWithinLevel."""
        mine = {ancestor_at_depth(left, n) for n in range(1, self.ancestor_reclaim_level + 1)}
        theirs = {ancestor_at_depth(right, n) for n in range(1, self.ancestor_reclaim_level + 1)}
        return bool((mine & theirs) - {None, ROOT_QUEUE})

    def _ancestor_to_check(self, reclaimer: CapacityQueueAttr, reclaimee: CapacityQueueAttr, level: int
                           ) -> tuple[bool, CapacityQueueAttr | None]:
        """getReclaimeeAncestorToCheck: (check it, its attributes) for the reclaimee's ancestor at `level`;
        not checked at the root or where the reclaimer shares that ancestor."""
        ancestor_id = ancestor_at_depth(reclaimee, level)
        if ancestor_id is None or ancestor_id == ROOT_QUEUE or ancestor_at_depth(reclaimer, level) == ancestor_id:
            return False, None
        return True, self._queue_opts.get(ancestor_id)

    @staticmethod
    def _keeps_guarantee(allocated: Resource, reclaimee: TaskInfo, attr: QueueAttr) -> bool:
        """guarantee <= allocated - reclaimee (the asserting Sub, as upstream)."""
        return attr.guarantee.less_equal(allocated.clone().sub(reclaimee.resreq), Zero)

    def unified_evictable(self, context: EvictionContext, candidates: list[TaskInfo]) -> tuple[list[TaskInfo] | None, int]:
        """Gang preempt: every candidate. Gang reclaim: guarantee and deserved checks per queue."""
        if context.kind == EvictionKind.GangPreempt:
            return list(candidates), PERMIT
        if not self.ready:
            return None, REJECT
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        for reclaimee in candidates:
            job = self.ssn.jobs[reclaimee.job]
            attr = self._queue_opts[job.queue]
            allocated = allocations.get(job.queue)
            if allocated is None:
                allocated = allocations[job.queue] = attr.allocated.clone()
            if not self._keeps_guarantee(allocated, reclaimee, attr):
                continue
            if (not has_relevant_deserved(reclaimee, attr.deserved)
                    or allocated.greater_partly_with_relevant_dimensions(attr.deserved, reclaimee.resreq)):
                allocated.sub(reclaimee.resreq)
                victims.append(reclaimee)
        return victims, PERMIT

    # -- admission ----------------------------------------------------------------------------------

    def job_enqueueable(self, job: JobInfo) -> int:
        if not self.ready:
            return REJECT
        if self.hierarchy and not self.is_leaf(job.queue):
            return REJECT
        queue = self.ssn.queues[job.queue]
        if not queue_is_open(queue):
            return REJECT
        assert job.pod_group is not None
        if job.pod_group.min_resources is None and self._min_dra(self._queue_opts[job.queue], job) is None:
            return PERMIT
        for queue_id in self._branch(job.queue):
            ok, names = self._job_fits(self._queue_opts[queue_id], job)
            if ok:
                ok, names = self._job_fits_dra(self._queue_opts[queue_id], job, names)
            if not ok:
                message = format_resource_names(QUOTA_INSUFFICIENT, "insufficient", names)
                record_pod_group_event(self.ssn, self.events, job.pod_group, UNSCHEDULABLE_REASON, message)
                return REJECT
        return PERMIT

    @staticmethod
    def _job_fits(attr: QueueAttr, job: JobInfo) -> tuple[bool, list[str]]:
        min_req = job.get_min_resources()
        needed = min_req.clone().add(attr.allocated).add(attr.inqueue).sub(attr.elastic)
        return needed.less_equal_with_dimension_and_resources_name(attr.real_capability, min_req)

    def _min_dra(self, attr: CapacityQueueAttr, job: JobInfo) -> capacity_dra.Requests | None:
        """The job's minimum DRA requests when the queue has a DRA quota to hold them against."""
        if not self.dra_enable or attr.dra is None:
            return None
        return capacity_dra.min_dra_resources(job)

    def _job_fits_dra(self, attr: CapacityQueueAttr, job: JobInfo, names: list[str]) -> tuple[bool, list[str]]:
        minimum = self._min_dra(attr, job)
        if minimum is None or attr.dra is None or attr.dra.fits(minimum, True, self.consumable_enable):
            return True, names
        return False, [*names, "dra-resource-exceeded"]

    def job_enqueued(self, job: JobInfo) -> None:
        attr = self._queue_opts.get(job.queue)
        if attr is None or job.pod_group is None:
            return
        min_dra = self._min_dra(attr, job)
        if job.pod_group.min_resources is None and min_dra is None:
            return
        deducted = job.deduct_sch_gated_resources(job.get_min_resources())
        attr.inqueue.add(deducted)
        if attr.dra is not None and min_dra is not None:
            capacity_dra.merge(attr.dra.inqueue, min_dra)
        if self.hierarchy:
            for ancestor_id in attr.ancestors:
                ancestor = self._queue_opts[ancestor_id]
                ancestor.inqueue.add(deducted)
                if self.dra_enable and ancestor.dra is not None and min_dra is not None:
                    capacity_dra.merge(ancestor.dra.inqueue, min_dra)
        self._snapshots.bump()

    # -- simulation ---------------------------------------------------------------------------------

    def pre_predicate(self, task: TaskInfo) -> Exception | None:
        snapshot = self._snapshots.snapshot(self._queue_opts)
        self.ssn.get_cycle_state(task.uid)[STATE_KEY] = QueueAttrsState(snapshot)
        return None

    def simulate_allocatable(self, state: Mapping[str, Any], queue: QueueInfo, task: TaskInfo) -> bool:
        snapshot = read_state(state, STATE_KEY)
        if snapshot is None or not self.ready:
            return False
        if self.hierarchy and not self.is_leaf(queue.uid):
            return False
        leaf = snapshot.get(queue.uid)
        if leaf is None:
            return False
        assert isinstance(leaf, CapacityQueueAttr)
        for queue_id in [queue.uid, *reversed(leaf.ancestors)]:
            attr = snapshot.get(queue_id)
            if attr is None or not self._queue_allocatable(attr, task):
                return False
        return True

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
        snapshot, attr = found
        _move(attr.allocated, task.resreq, removing, self.ssn.conf.persistent_pipelines)
        self._move_dra(attr, task, removing)
        attr.update_share()
        if self.hierarchy and isinstance(attr, CapacityQueueAttr):
            for ancestor_id in attr.ancestors:
                ancestor = snapshot.writable(ancestor_id)
                if ancestor is not None:
                    _move(ancestor.allocated, task.resreq, removing, self.ssn.conf.persistent_pipelines)
                    self._move_dra(ancestor, task, removing)
        return None

    def _move_dra(self, attr: QueueAttr, task: TaskInfo, removing: bool) -> None:
        """The task's DRA requests into or out of the queue's DRA allocated (shared claims once)."""
        if not self.dra_enable or not isinstance(attr, CapacityQueueAttr) or attr.dra is None:
            return
        if task.dra_resreq is None:
            return
        move = capacity_dra.remove_task if removing else capacity_dra.add_task
        move(attr.dra, attr.claim_refs, task)

    # -- events and the queue-gate reservation cache ------------------------------------------------

    def _build_reserved_cache(self, ssn: Session) -> None:
        """Pending, ungated tasks that carry the queue-allocation-gate annotation keep their reservation."""
        self.reserved_tasks = {}
        for job in ssn.jobs.values():
            for task in job.task_status_index.get(TaskStatus.Pending, {}).values():
                if not task.sch_gated and has_queue_allocation_gate_annotation(task.pod):
                    self.reserved_tasks.setdefault(job.queue, {})[task.uid] = task

    def _unreserve(self, task_uid: str) -> None:
        for queue_id, tasks in self.reserved_tasks.items():
            if task_uid in tasks:
                del tasks[task_uid]
                if not tasks:
                    del self.reserved_tasks[queue_id]
                return

    def _on_allocate(self, event: Event) -> None:
        self._apply(event.task, removing=False)
        if self.gate_admission:
            self._unreserve(event.task.uid)

    def _on_deallocate(self, event: Event) -> None:
        job = self._apply(event.task, removing=True)
        if job is not None and self.gate_admission and has_queue_allocation_gate_annotation(event.task.pod):
            self.reserved_tasks.setdefault(job.queue, {})[event.task.uid] = event.task

    def _apply(self, task: TaskInfo, removing: bool) -> JobInfo | None:
        """The task's queue's allocated and share, and (hierarchy) every ancestor's allocated."""
        job = self.ssn.jobs.get(task.job)
        attr = self._queue_opts.get(job.queue) if job is not None else None
        if job is None or attr is None:
            return None
        _move(attr.allocated, task.resreq, removing, self.ssn.conf.persistent_pipelines)
        self._move_dra(attr, task, removing)
        attr.update_share()
        if self.hierarchy:
            for ancestor_id in attr.ancestors:
                ancestor = self._queue_opts[ancestor_id]
                _move(ancestor.allocated, task.resreq, removing, self.ssn.conf.persistent_pipelines)
                self._move_dra(ancestor, task, removing)
        self._snapshots.bump()
        return job


def _move(total: Resource, request: Resource, removing: bool, floored: bool = False) -> None:
    if removing and floored:
        total.sub_floored(request)  # persistent pipelines (seed 004): never below zero
    elif removing:
        total.sub(request)
    else:
        total.add(request)


def _inherit_capability(child: Resource, parent: Resource) -> None:
    """Unset (<= 0) cpu/memory and missing scalars come from the parent's capability."""
    if child.milli_cpu <= 0:
        child.milli_cpu = parent.milli_cpu
    if child.memory <= 0:
        child.memory = parent.memory
    if parent.scalars is not None:
        if child.scalars is None:
            child.scalars = {}
        for name, value in parent.scalars.items():
            child.scalars.setdefault(name, value)


register_plugin_builder(CapacityPlugin.name, CapacityPlugin)
