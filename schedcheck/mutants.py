"""Deliberate bugs for the harness's self-test: each one a believable accounting or rule mistake.

`with mutant("discard-not-reversing"): ...` runs the reference with that bug in
place and restores the clean code afterwards. The invariant engine must catch
every mutant on at least one scenario; the test suite and (later) the gate
prove it. A mutant is only ever active inside its `with` block.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from schedcheck.reference.api.types import TaskStatus


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    patches: Callable[[], list[tuple[Any, str, Any]]]  # (owner, attribute, replacement) triples
    source: str = "systematic rule mutant"  # or the upstream issue / pull request whose bug it re-creates


def _remove_task_forgets_releasing() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.api.node_info import NodeInfo

    original = NodeInfo.remove_task

    def remove_task(self, task):
        stored = self.tasks.get(task.key)
        if stored is not None and stored.status == TaskStatus.Releasing and self.node is not None:
            self.idle.add(stored.resreq)  # the bug: Releasing and Used are left as they were
            del self.tasks[task.key]
            self._future_idle = None
            return
        original(self, task)
    return [(NodeInfo, "remove_task", remove_task)]


def _discard_not_reversing() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.framework.statement import Statement

    def discard(self):
        self.operations = []  # the bug: the operations are dropped, not undone
        self._begun = False
    return [(Statement, "discard", discard)]


def _unallocate_keeps_node() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.framework.statement import Statement

    def unallocate(self, task):
        self.ssn.jobs[task.job].update_task_status(task, TaskStatus.Pending)
        self.ssn.fire_deallocate(task)
        task.node_name = ""  # the bug: the node keeps the task and its resources
    return [(Statement, "_unallocate", unallocate)]


def _no_deallocate_events() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.framework.session import Session

    return [(Session, "fire_deallocate", lambda self, task: None)]


def _gang_commit_too_few() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.plugins.gang as gang

    return [(gang, "job_ready", lambda job: True)]


def _preempt_ignores_priority() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.priority import PriorityPlugin

    original = PriorityPlugin.on_session_open

    def on_session_open(self, ssn):
        original(self, ssn)
        ssn.add_fn("preemptable", self.name, lambda preemptor, preemptees: (list(preemptees), 1))
    return [(PriorityPlugin, "on_session_open", on_session_open)]


def _reclaim_from_under_deserved() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    return [(ProportionPlugin, "reclaimable", lambda self, reclaimer, reclaimees: (list(reclaimees), 1))]


def _allocate_ignores_deserved() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    return [(ProportionPlugin, "allocatable", lambda self, queue, task: True)]


def _reclaim_own_queue() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.actions.reclaim import Reclaim

    def reclaimees(self, node, job):
        return [t.clone() for t in node.tasks.values() if t.status == TaskStatus.Running and t.preemptable]
    return [(Reclaim, "_reclaimees", reclaimees)]


def _evict_before_fit() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.actions.preempt import Preempt

    original = Preempt._evict_until_fits

    def evict_until_fits(self, node_stmt, queue, preemptor, node, victims):
        if victims:
            node_stmt.evict(self.ssn.build_victims_priority_queue(victims, preemptor).pop(), "preempt")
        return original(self, node_stmt, queue, preemptor, node, victims[1:] if victims else victims)
    return [(Preempt, "_evict_until_fits", evict_until_fits)]


def _binding_not_allocated() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.api.job_info import JobInfo

    original = JobInfo.add_task_info

    def add_task_info(self, task):
        original(self, task)
        if task.status == TaskStatus.Binding:
            self.allocated.sub_without_assert(task.resreq)  # the bug: Binding is not counted as allocated
    return [(JobInfo, "add_task_info", add_task_info)]


def _pipeline_not_reserved() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.api.node_info import NodeInfo

    original = NodeInfo.add_task

    def add_task(self, task):
        original(self, task)
        if task.status == TaskStatus.Pipelined and self.node is not None:
            self.pipelined.sub_without_assert(task.resreq)  # the bug: a pipeline reserves nothing
            self._future_idle = None
    return [(NodeInfo, "add_task", add_task)]


def _overcommit_inqueue_not_added() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.overcommit import OvercommitPlugin

    return [(OvercommitPlugin, "job_enqueued", lambda self, job: None)]


def _overcommit_factor_unbounded() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.plugins.overcommit as overcommit

    return [(overcommit, "overcommit_factor", lambda arguments: 100.0)]


def _capacity_branch_leaf_only() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.capacity import CapacityPlugin

    return [(CapacityPlugin, "_branch", lambda self, queue_id: [queue_id])]


def _capacity_ancestors_not_charged() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.capacity import CapacityPlugin

    original = CapacityPlugin._apply

    def apply(self, task, removing):
        saved, self.hierarchy = self.hierarchy, False  # the bug: the ancestors' allocated is left alone
        try:
            return original(self, task, removing)
        finally:
            self.hierarchy = saved
    return [(CapacityPlugin, "_apply", apply)]


def _proportion_deserved_ignores_weight() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.plugins.proportion as proportion

    original = proportion._grow_deserved
    return [(proportion, "_grow_deserved", lambda attr, remaining, fraction: original(attr, remaining, 1.0))]


def _proportion_deserved_over_real_capability() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.plugins.proportion as proportion
    from schedcheck.reference.api.resource_info import Zero, res_max

    def grow(attr, remaining, fraction):
        attr.deserved.add(remaining.clone().multi(fraction))
        attr.deserved.min_dimension_resource(attr.request, Zero)  # the bug: realCapability does not cap it
        attr.deserved = res_max(attr.deserved, attr.guarantee)
        attr.update_share()
    return [(proportion, "_grow_deserved", grow)]


def _proportion_share_stale() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.queue_attr import QueueAttr

    return [(QueueAttr, "update_share", lambda self: None)]


def _proportion_inqueue_not_added() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    return [(ProportionPlugin, "job_enqueued", lambda self, job: None)]


def _reclaim_evicts_every_victim() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.actions.reclaim import Reclaim

    def evict_until_fits(self, node_stmt, task, node, victims):
        queue = self.ssn.build_victims_priority_queue(victims, task)
        evicted = False
        while not queue.empty():  # the bug: no check that the reclaimer already fits
            node_stmt.evict(queue.pop(), "reclaim")
            evicted = True
        node_stmt.pipeline(task, node.name, evicted)
        return True
    return [(Reclaim, "_evict_until_fits", evict_until_fits)]


def _enqueue_skips_admission() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.framework.session import Session

    original = Session.job_enqueueable
    return [(Session, "job_enqueueable", lambda self, job: original(self, job) or True)]


def _allocated_idle_not_subtracted() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.api.node_info import NodeInfo

    original = NodeInfo.add_task

    def add_task(self, task):
        original(self, task)
        if task.status == TaskStatus.Allocated and self.node is not None:
            self.idle.add(task.resreq)  # the bug: Idle is not reduced for an allocated task
            self._future_idle = None
    return [(NodeInfo, "add_task", add_task)]


def _drf_deallocate_forgotten() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.drf import DrfPlugin

    return [(DrfPlugin, "_on_deallocate", lambda self, event: None)]


def _podgroup_phase_off_by_one() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.framework.framework as framework

    original = framework.pod_group_phase

    def pod_group_phase(job, unschedulable):
        phase = original(job, unschedulable)
        if phase == "Running" and job.scheduled_task_num() + job.releasing_scheduled_task_num() \
                == job.pod_group.min_member:
            return "Inqueue"  # the bug: a gang needs more than minMember scheduled to be Running
        return phase
    return [(framework, "pod_group_phase", pod_group_phase)]


def _preempt_ignores_never_policy() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.actions.preempt as preempt

    return [(preempt, "preemption_policy_never", lambda task: False)]


def _commit_loses_evictions() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.framework.statement import Statement

    original = Statement.commit

    def commit(self):
        cache = self.ssn.cache
        real_evict = cache.evict
        cache.evict = lambda task, reason: None  # the bug: the evict operations never reach the cache
        try:
            original(self)
        finally:
            cache.evict = real_evict
    return [(Statement, "commit", commit)]


def _between_jobs_filter_without(check: str) -> list[tuple[Any, str, Any]]:
    """Preempt's phase-A victim filter with one of its tests left out."""
    import schedcheck.reference.actions.preempt as preempt
    from schedcheck.reference.api.types import preemptable_status

    def between_jobs_filter(ssn, preemptor_job, preemptor):
        jobs, queue, job_uid, best_effort = ssn.jobs, preemptor_job.queue, preemptor.job, preemptor.best_effort

        def accept(task):
            if not preemptable_status(task.status):
                return False
            if check != "best-effort" and best_effort and not task.best_effort:
                return False
            if check != "preemptable" and not task.preemptable:
                return False
            job = jobs.get(task.job)
            return job is not None and job.queue == queue and task.job != job_uid
        return accept
    return [(preempt, "between_jobs_filter", between_jobs_filter)]


def _proportion_never_overused() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    return [(ProportionPlugin, "overused", lambda self, queue: False)]


def _drf_share_stale() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.drf import DrfPlugin

    return [(DrfPlugin, "update_share", lambda self, attr: None)]


def _unevict_leaves_node() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.framework.statement import Statement

    def unevict(self, reclaimee):
        job = self.ssn.jobs.get(reclaimee.job)
        if job is not None:
            job.update_task_status(reclaimee, TaskStatus.Running)
        # the bug: the node is not told, so it keeps the task as Releasing
        self.ssn.fire_allocate(reclaimee)
        self.ssn.record("unevict", reclaimee, reclaimee.node_name, None, self.id)
    return [(Statement, "_unevict", unevict)]


def _gang_preemptable_ignores_min() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.gang import GangPlugin

    original = GangPlugin.on_session_open

    def on_session_open(self, ssn):
        original(self, ssn)
        everything = lambda preemptor, preemptees: (list(preemptees), 1)  # noqa: E731 - the bug: no minAvailable
        ssn.add_fn("preemptable", self.name, everything)
    return [(GangPlugin, "on_session_open", on_session_open)]


def _reclaim_ignores_reclaimable_flag() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.actions.reclaim import Reclaim

    def reclaimees(self, node, job):
        jobs = self.ssn.jobs
        return [t.clone() for t in node.tasks.values() if t.status == TaskStatus.Running and t.preemptable
                and jobs.get(t.job) is not None and jobs[t.job].queue != job.queue]  # the bug: reclaimable unchecked
    return [(Reclaim, "_reclaimees", reclaimees)]


def _total_request_not_reduced() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.api.job_info import JobInfo

    original = JobInfo.delete_task_info

    def delete_task_info(self, task):
        stored = self.tasks.get(task.uid)
        original(self, task)
        if stored is not None:
            self.total_request.add(stored.resreq)  # the bug: a removed task's request stays in the total
    return [(JobInfo, "delete_task_info", delete_task_info)]


def _phase_not_written_back() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.cache.cache import SchedulerCache

    original = SchedulerCache.update_job_status

    def update_job_status(self, job):
        cached = self.jobs.get(job.uid)
        kept = cached.pod_group.phase if cached is not None and cached.pod_group is not None else None
        original(self, job)
        if kept is not None:
            cached.pod_group.phase = kept  # the bug: the new phase never reaches the cache
    return [(SchedulerCache, "update_job_status", update_job_status)]


def _capacity_allocatable_always() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.capacity import CapacityPlugin

    return [(CapacityPlugin, "_queue_allocatable", lambda self, attr, candidate: True)]


def _overcommit_ignores_used() -> list[tuple[Any, str, Any]]:
    import schedcheck.reference.plugins.overcommit as overcommit
    from schedcheck.reference.api.resource_info import Resource

    def idle_at_open(ssn, factor):
        return Resource().add(ssn.total_resource).multi(factor)  # the bug: what runs is not subtracted
    return [(overcommit, "idle_at_open", idle_at_open)]


def _drf_allocate_forgotten() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.drf import DrfPlugin

    return [(DrfPlugin, "_on_allocate", lambda self, event: None)]


def _proportion_allocate_forgotten() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    return [(ProportionPlugin, "_on_allocate", lambda self, event: None)]


def _snapshot_shares_nodes() -> list[tuple[Any, str, Any]]:
    from schedcheck.reference.cache.cache import SchedulerCache

    original = SchedulerCache.snapshot

    def snapshot(self):
        snap = original(self)
        for name in list(snap.nodes):
            if name in self.nodes:
                snap.nodes[name] = self.nodes[name]  # the bug: the session works on the cache's own nodes
        return snap
    return [(SchedulerCache, "snapshot", snapshot)]


# -- from the upstream-history and systematic sweep (helper H8) ------------------------------

def _reversed(compare):
    return lambda *args: -compare(*args)

def _priority_task_order_reversed():
    import schedcheck.reference.plugins.priority as priority
    return [(priority, "task_order", _reversed(priority.task_order))]

def _priority_job_order_reversed():
    import schedcheck.reference.plugins.priority as priority
    return [(priority, "job_order", _reversed(priority.job_order))]

def _gang_job_order_reversed():
    import schedcheck.reference.plugins.gang as gang
    return [(gang, "job_order", _reversed(gang.job_order))]

def _drf_job_order_reversed():
    from schedcheck.reference.plugins.drf import DrfPlugin
    original = DrfPlugin.job_order
    return [(DrfPlugin, "job_order", lambda self, left, right: -original(self, left, right))]

def _proportion_queue_order_reversed():
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    def queue_order(self, left, right):
        if left.priority != right.priority:
            return right.priority - left.priority
        ls, rs = self._queue_opts[left.uid].share, self._queue_opts[right.uid].share
        return 0 if ls == rs else (1 if ls < rs else -1)  # the bug: the higher share first
    return [(ProportionPlugin, "queue_order", queue_order)]

def _proportion_queue_priority_ignored():
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    def queue_order(self, left, right):
        ls, rs = self._queue_opts[left.uid].share, self._queue_opts[right.uid].share  # the bug: no priority
        return 0 if ls == rs else (-1 if ls < rs else 1)
    return [(ProportionPlugin, "queue_order", queue_order)]

def _proportion_allocatable_forgets_request():
    from schedcheck.reference.plugins.proportion import ProportionPlugin
    from schedcheck.reference.plugins.queue_attr import queue_is_open

    def queue_allocatable(self, queue, request):
        if not queue_is_open(queue):
            return False
        attr = self._queue_opts[queue.uid]
        # the bug: allocated is compared without the request being added
        return attr.allocated.less_equal_with_dimension_and_resources_name(attr.deserved, request)[0]
    return [(ProportionPlugin, "_queue_allocatable", queue_allocatable)]

def _proportion_enqueue_check(drop: str):
    from schedcheck.reference.api.resource_info import Resource
    from schedcheck.reference.plugins.proportion import ProportionPlugin
    from schedcheck.reference.plugins.queue_attr import queue_is_open
    from schedcheck.reference.framework.session import PERMIT, REJECT

    def job_enqueueable(self, job):
        queue = self.ssn.queues[job.queue]
        if not queue_is_open(queue):
            return REJECT
        if job.pod_group.min_resources is None:
            return PERMIT
        attr = self._queue_opts[job.queue]
        min_req = job.get_min_resources()
        needed = min_req.clone()
        if drop != "allocated":
            needed.add(attr.allocated)
        if drop != "inqueue":
            needed.add(attr.inqueue)
        if drop != "elastic":
            needed.sub(attr.elastic)
        ok, _ = needed.less_equal_with_dimension_and_resources_name(attr.real_capability, min_req)
        return PERMIT if ok else REJECT
    del Resource
    return [(ProportionPlugin, "job_enqueueable", job_enqueueable)]

def _proportion_reclaim_no_running_sub():
    from schedcheck.reference.api.resource_info import Zero
    from schedcheck.reference.plugins.proportion import ProportionPlugin
    from schedcheck.reference.framework.session import PERMIT

    def reclaimable(self, reclaimer, reclaimees):
        victims = []
        for reclaimee in reclaimees:
            job = self.ssn.jobs.get(reclaimee.job)
            attr = self._queue_opts.get(job.queue) if job is not None else None
            if attr is None:
                continue
            if not attr.allocated.less_equal(attr.deserved, Zero):  # the bug: the victims taken are not deducted
                victims.append(reclaimee)
        return victims, PERMIT
    return [(ProportionPlugin, "reclaimable", reclaimable)]

def _overcommit_ignores_inqueue():
    from schedcheck.reference.plugins.overcommit import OvercommitPlugin
    from schedcheck.reference.framework.session import PERMIT, REJECT

    def job_enqueueable(self, job):
        if job.pod_group.min_resources is None:
            return PERMIT
        minimum = job.get_min_resources()
        fits, _ = minimum.less_equal_with_dimension_and_resources_name(self.idle, minimum)  # the bug: inqueue left out
        return PERMIT if fits else REJECT
    return [(OvercommitPlugin, "job_enqueueable", job_enqueueable)]

def _conformance_evicts_critical():
    import schedcheck.reference.plugins.conformance as conformance
    from schedcheck.reference.framework.session import PERMIT
    return [(conformance, "evictable", lambda evictor, evictees: (list(evictees), PERMIT))]

def _reclaim_filter(skip: str):
    from schedcheck.reference.actions.reclaim import Reclaim, guided_order

    def reclaimees(self, node, job):
        jobs, queues, own_queue = self.ssn.jobs, self.ssn.queues, job.queue
        out = []
        for task in node.tasks.values():
            if task.status != TaskStatus.Running or (skip != "preemptable" and not task.preemptable):
                continue
            victim_job = jobs.get(task.job)
            if victim_job is None or victim_job.queue == own_queue:
                continue
            victim_queue = queues.get(victim_job.queue)
            if victim_queue is None or (skip != "reclaimable" and not victim_queue.reclaimable()):
                continue
            out.append(task.clone())
        return guided_order(self.ssn, out)
    return [(Reclaim, "_reclaimees", reclaimees)]

def _predicates_filter_skips(skip: str):
    from schedcheck.reference.plugins import predicates

    original = predicates._PodFilter.check

    def check(self, node, affinity_on, taints_on):
        return original(self, node, affinity_on and skip != "affinity", taints_on and skip != "taints")
    return [(predicates._PodFilter, "check", check)]

def _proportion_overused_any_dimension():
    from schedcheck.reference.plugins.proportion import ProportionPlugin

    def overused(self, queue):
        attr = self._queue_opts[queue.uid]
        # the bug: a queue counts as overused as soon as one dimension reaches deserved
        return any(attr.allocated.get(n) >= attr.deserved.get(n) for n in attr.deserved.resource_names())
    return [(ProportionPlugin, "overused", overused)]

def _allocate_never_pipelines():
    from schedcheck.reference.actions.allocate import Allocate

    def allocate_resources_for_task(self, stmt, task, node):
        if task.init_resreq.less_equal(node.idle, Zero):  # the bug: FutureIdle is never used
            stmt.allocate(task, node)
    from schedcheck.reference.api.resource_info import Zero
    return [(Allocate, "allocate_resources_for_task", allocate_resources_for_task)]

def _overcommit_inqueue_doubled():
    from schedcheck.reference.plugins.overcommit import OvercommitPlugin

    def job_enqueued(self, job):
        if job.pod_group.min_resources is None:
            return
        reserved = job.deduct_sch_gated_resources(job.get_min_resources())
        self.inqueue.add(reserved).add(reserved)  # the bug: an admission is counted twice
    return [(OvercommitPlugin, "job_enqueued", job_enqueued)]

def _task_info_patch(variant: str):
    import schedcheck.reference.api.task_info as task_info

    original_status, original_request = task_info.get_task_status, task_info.get_pod_resource_request

    def status(pod):
        if variant == "deletion" and pod.phase == "Running":
            return task_info.TaskStatus.Running  # the bug: a terminating pod still counts as Running
        return original_status(pod)

    def request(pod):
        if variant == "init":  # the bug: init containers are not maxed in
            return original_request(type(pod)(**{**pod.__dict__, "init_containers": []}))
        if variant == "overhead":  # the bug: the pod overhead is forgotten
            return original_request(type(pod)(**{**pod.__dict__, "overhead": {}}))
        return original_request(pod)
    return [(task_info, "get_task_status", status), (task_info, "get_pod_resource_request", request)]

def _predicates_ignore_ports():
    from schedcheck.reference.plugins import predicates
    return [(predicates, "host_ports_conflict", lambda pod, node: False)]

def _predicates_ignore_hard_shard():
    from schedcheck.reference.util import scheduler_helper
    return [(scheduler_helper, "outside_shard", lambda ssn, node: False)]


def _allocate_ignores_hard_topology():
    from schedcheck.reference.api.job_info import JobInfo
    return [(JobInfo, "contains_hard_topology", lambda self: False)]


def _gradient_ignores_highest_tier():
    from schedcheck.reference.plugins.network_topology_aware import NetworkTopologyAwarePlugin

    original = NetworkTopologyAwarePlugin._eligible

    def eligible(self, hn, highest, allocated, min_resource, purpose):
        return original(self, hn, 1 << 30, allocated, min_resource, purpose)
    return [(NetworkTopologyAwarePlugin, "_eligible", eligible)]


def _gradient_highest_tier_first():
    from schedcheck.reference.plugins.network_topology_aware import NetworkTopologyAwarePlugin

    original = NetworkTopologyAwarePlugin.gradient

    def gradient(self, ssn, hyper_node, highest, allocated, min_resource, purpose):
        result = original(self, ssn, hyper_node, highest, allocated, min_resource, purpose)
        return list(reversed(result)) if result else result  # the bug: the highest tier is tried first
    return [(NetworkTopologyAwarePlugin, "gradient", gradient)]


def _hyper_node_drops_nested_members():
    from schedcheck.reference.api import hyper_node_info
    from schedcheck.reference.cache import cache

    def build(objects, nodes):
        info = hyper_node_info.build_hyper_nodes(objects, nodes)
        for hn in objects:
            if any(m.type == "HyperNode" for m in hn.members):
                info.real_nodes_set[hn.name] = set()  # the bug: a lower hypernode's nodes are not added
        return info
    return [(cache, "build_hyper_nodes", build)]


def _sub_groups_always_ready():
    from schedcheck.reference.api.job_info import JobInfo
    return [(JobInfo, "check_sub_job_ready", lambda self: True)]


def _sub_group_topology_ignored():
    from schedcheck.reference.api.sub_job_info import SubJobInfo

    def hard_mode(self):
        if self.uid != self.job.uid:
            return False, 0  # the bug: a policy's own network topology is not applied
        nt = self.network_topology
        if nt is None or nt.highest_tier_allowed is None:
            return False, 0
        return nt.mode == "hard", nt.highest_tier_allowed
    return [(SubJobInfo, "hard_mode", hard_mode)]


def _predicates_ignore_pod_affinity():
    from schedcheck.reference.plugins import predicates
    return [(predicates, "filter_node", lambda state, node: None)]


def _predicates_ignore_topology_spread():
    from schedcheck.reference.plugins import pod_topology_spread
    return [(pod_topology_spread, "filter_node", lambda state, pod, node: None)]


def _reclaim_forgets_freed():
    from schedcheck.reference.actions.reclaim import Reclaim
    from schedcheck.reference.api.resource_info import Zero
    from schedcheck.reference.framework.statement import StatementError

    def evict_until_fits(self, node_stmt, task, node, victims):
        victims_queue = self.ssn.build_victims_priority_queue(victims, task)
        available = node.future_idle()
        evicted = False
        while not victims_queue.empty() and not task.init_resreq.less_equal(available, Zero):
            node_stmt.evict(victims_queue.pop(), "reclaim")  # the bug: what the victim frees is not counted
            evicted = True
        if task.init_resreq.less_equal(available, Zero):
            try:
                node_stmt.pipeline(task, node.name, evicted)
                return True
            except StatementError:
                pass
        node_stmt.discard()
        return False
    return [(Reclaim, "_evict_until_fits", evict_until_fits)]

def _preempt_fits(variant: str):
    from schedcheck.reference.actions.preempt import Preempt
    from schedcheck.reference.api.resource_info import Zero

    def fits_on_node(self, queue, preemptor, node):
        ssn = self.ssn
        room = node.idle if variant == "idle" else node.future_idle_view()
        return ((variant == "no-allocatable" or ssn.allocatable(queue, preemptor))
                and preemptor.init_resreq.less_equal(room, Zero)
                and ssn.predicate_fn(preemptor, node) is None)
    return [(Preempt, "_fits_on_node", fits_on_node)]

def _no_allocate_events():
    from schedcheck.reference.framework.session import Session
    return [(Session, "fire_allocate", lambda self, task: None)]

def _handler_missed(cls_path: str, attr: str):
    import importlib
    module, cls = cls_path.rsplit(".", 1)
    owner = getattr(importlib.import_module(module), cls)
    return [(owner, attr, lambda self, event: None)]

def _capacity_enqueue_always():
    from schedcheck.reference.plugins.capacity import CapacityPlugin
    from schedcheck.reference.framework.session import PERMIT
    return [(CapacityPlugin, "job_enqueueable", lambda self, job: PERMIT)]

def _gang_pipelined_always():
    import schedcheck.reference.plugins.gang as gang
    from schedcheck.reference.framework.session import PERMIT
    return [(gang, "job_pipelined", lambda job: PERMIT)]

def _priority_starving_never():
    import schedcheck.reference.plugins.priority as priority
    return [(priority, "job_starving", lambda job: False)]



def _scheduling_gates_not_read():
    from schedcheck.reference.api.task_info import TaskInfo

    original = TaskInfo.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.sch_gated = False  # the bug: calSchedulingGated is not consulted
    return [(TaskInfo, "__init__", init)]


def _pdb_ignores_budget():
    from schedcheck.reference.plugins import pdb

    return [(pdb, "filter_victims", lambda budgets, tasks: [t for t in tasks if t.pod.labels])]

def _gpushare_idle_memory_wraps():
    from schedcheck.reference.api.devices import gpushare

    # the unsigned subtraction before the clamp: a card charged beyond its memory looks almost empty
    return [(gpushare.GPUDevice, "idle_memory", lambda self: (self.memory - self.used_memory()) % 2**64)]


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    Mutant("remove-task-forgets-releasing", "NodeInfo.RemoveTask of a Releasing task leaves Releasing and Used",
           _remove_task_forgets_releasing),
    Mutant("discard-not-reversing", "Statement.Discard drops its operations without undoing them",
           _discard_not_reversing),
    Mutant("unallocate-keeps-node", "unallocate sets the task Pending but leaves it on its node",
           _unallocate_keeps_node),
    Mutant("no-deallocate-events", "deallocate events never reach the plugins", _no_deallocate_events),
    Mutant("gang-commit-too-few", "gang's JobReady always holds, so partial gangs are committed",
           _gang_commit_too_few),
    Mutant("preempt-ignores-priority", "priority's Preemptable offers every preemptee", _preempt_ignores_priority),
    Mutant("reclaim-from-under-deserved", "proportion's Reclaimable offers tasks of queues within deserved",
           _reclaim_from_under_deserved),
    Mutant("allocate-ignores-deserved", "proportion's Allocatable always holds", _allocate_ignores_deserved),
    Mutant("reclaim-own-queue", "reclaim also takes tasks of the reclaimer's own queue", _reclaim_own_queue),
    Mutant("evict-before-fit", "preempt evicts a victim before checking whether the preemptor already fits",
           _evict_before_fit),
    Mutant("binding-not-allocated", "a task added as Binding is not counted in its job's Allocated",
           _binding_not_allocated),
    Mutant("pipeline-not-reserved", "a pipelined task reserves nothing on its node", _pipeline_not_reserved),
    Mutant("overcommit-inqueue-not-added", "overcommit's JobEnqueued does not add the admitted minimum to inqueue, "
           "so every job that fits alone is admitted", _overcommit_inqueue_not_added,
           "cf. volcano-sh/volcano#1416 (overcommit's inqueue accounting)"),
    Mutant("overcommit-factor-unbounded", "overcommit reads its factor as unlimited", _overcommit_factor_unbounded),
    Mutant("capacity-branch-leaf-only", "capacity checks a queue's realCapability but not its ancestors' "
           "(Allocatable and JobEnqueueable)", _capacity_branch_leaf_only,
           "volcano-sh/volcano#3932 (fixed by #3940) and #4118 (fixed by #4119)"),
    Mutant("capacity-ancestors-not-charged", "capacity's allocate/deallocate events update the leaf queue but not "
           "its ancestors", _capacity_ancestors_not_charged),
    Mutant("proportion-deserved-ignores-weight", "proportion's water-filling hands every queue the whole remainder",
           _proportion_deserved_ignores_weight),
    Mutant("proportion-deserved-over-real-capability", "proportion's water-filling does not cap deserved by "
           "realCapability", _proportion_deserved_over_real_capability),
    Mutant("proportion-share-stale", "proportion never updates a queue's share", _proportion_share_stale),
    Mutant("proportion-inqueue-not-added", "proportion's JobEnqueued does not reserve the admitted minimum",
           _proportion_inqueue_not_added, "volcano-sh/volcano#2213 (inqueue of jobs miscounted at enqueue)"),
    Mutant("reclaim-evicts-every-victim", "reclaim evicts every victim offered, not only until the reclaimer fits",
           _reclaim_evicts_every_victim,
           "volcano-sh/volcano#1256 (more pods reclaimed than required), fixed by #1255/#1260"),
    Mutant("enqueue-skips-admission", "enqueue admits every job whatever the admission plugins vote",
           _enqueue_skips_admission),
    Mutant("allocated-idle-not-subtracted", "NodeInfo.AddTask of an Allocated task leaves Idle as it was",
           _allocated_idle_not_subtracted),
    Mutant("podgroup-phase-off-by-one", "the job updater makes a PodGroup Running only above minMember scheduled "
           "tasks, not at it", _podgroup_phase_off_by_one, "cf. volcano-sh/volcano#513 (podgroup phase fix)"),
    Mutant("preempt-ignores-never-policy", "preempt lets a pod with preemptionPolicy Never evict others",
           _preempt_ignores_never_policy, "volcano-sh/volcano#3642 (behaviour before #3739)"),
    Mutant("commit-loses-evictions", "Statement.Commit does not send its evictions to the cache",
           _commit_loses_evictions),
    Mutant("preempt-ignores-preemptable-flag", "preempt's victim filter forgets volcano.sh/preemptable=false",
           lambda: _between_jobs_filter_without("preemptable")),
    Mutant("preempt-best-effort-evicts-any", "a BestEffort preemptor may evict tasks that request resources",
           lambda: _between_jobs_filter_without("best-effort")),
    Mutant("proportion-never-overused", "proportion's Overused never holds", _proportion_never_overused),
    Mutant("drf-share-stale", "drf never updates a job's share", _drf_share_stale),
    Mutant("unevict-leaves-node", "unevict puts the victim back Running in its job but not on its node",
           _unevict_leaves_node),
    Mutant("gang-preemptable-ignores-min", "gang's Preemptable offers victims below their job's minAvailable",
           _gang_preemptable_ignores_min),
    Mutant("reclaim-ignores-reclaimable-flag", "reclaim takes tasks of queues marked reclaimable: false",
           _reclaim_ignores_reclaimable_flag),
    Mutant("total-request-not-reduced", "JobInfo.DeleteTaskInfo leaves the task's request in TotalRequest",
           _total_request_not_reduced),
    Mutant("phase-not-written-back", "the job updater's PodGroup phase never reaches the cache, so the next "
           "session starts from the old one", _phase_not_written_back),
    Mutant("capacity-allocatable-always", "capacity's queue check lets every task through",
           _capacity_allocatable_always),
    Mutant("overcommit-ignores-used", "overcommit's idle forgets to subtract what the nodes already run",
           _overcommit_ignores_used),
    Mutant("drf-allocate-forgotten", "drf's allocate handler is lost, so placements are not charged to the job",
           _drf_allocate_forgotten),
    Mutant("proportion-allocate-forgotten", "proportion's allocate handler is lost, so placements are not charged "
           "to the queue", _proportion_allocate_forgotten),
    Mutant("snapshot-shares-nodes", "the session snapshot hands out the cache's own NodeInfo objects",
           _snapshot_shares_nodes),
    Mutant("priority-task-order-reversed", "priority's TaskOrder puts the lower priority first",
           _priority_task_order_reversed),
    Mutant("priority-job-order-reversed", "priority's JobOrder puts the lower priority job first",
           _priority_job_order_reversed),
    Mutant("gang-job-order-reversed", "gang's JobOrder puts ready jobs before not-ready ones",
           _gang_job_order_reversed),
    Mutant("drf-job-order-reversed", "drf's JobOrder serves the higher dominant share first",
           _drf_job_order_reversed),
    Mutant("proportion-queue-order-reversed", "proportion's QueueOrder serves the higher share first",
           _proportion_queue_order_reversed),
    Mutant("proportion-queue-priority-ignored", "proportion's QueueOrder ignores spec.priority",
           _proportion_queue_priority_ignored),
    Mutant("proportion-allocatable-forgets-request", "proportion's Allocatable compares allocated, not allocated + request, with deserved",
           _proportion_allocatable_forgets_request),
    Mutant("proportion-enqueue-ignores-inqueue", "proportion's JobEnqueueable leaves the queue's inqueue out of the sum",
           lambda: _proportion_enqueue_check("inqueue"),
           "volcano-sh/volcano#2213 (inqueue of jobs miscounted at enqueue)"),
    Mutant("proportion-enqueue-ignores-allocated", "proportion's JobEnqueueable leaves the queue's allocated out of the sum",
           lambda: _proportion_enqueue_check("allocated"),
           "volcano-sh/volcano#3950 discussion (minResources + allocated + inqueue <= capability)"),
    Mutant("proportion-enqueue-ignores-elastic", "proportion's JobEnqueueable does not subtract the queue's elastic resources",
           lambda: _proportion_enqueue_check("elastic"),
           "volcano-sh/volcano PR #1884/#2173 (elastic resources in proportion's admission)"),
    Mutant("proportion-reclaim-no-deduction", "proportion's Reclaimable does not deduct victims already offered from their queue's allocated",
           _proportion_reclaim_no_running_sub),
    Mutant("overcommit-ignores-inqueue", "overcommit's JobEnqueueable compares minResources alone with idle",
           _overcommit_ignores_inqueue,
           "volcano-sh/volcano PR #1298 (overcommit limits admission by idle minus inqueue)"),
    Mutant("conformance-evicts-critical", "conformance's Evictable offers system-critical and kube-system pods",
           _conformance_evicts_critical),
    Mutant("reclaim-takes-non-preemptable", "reclaim takes victims that are not preemptable",
           lambda: _reclaim_filter("preemptable")),
    Mutant("predicates-ignores-taints", "predicates' TaintToleration filter is skipped",
           lambda: _predicates_filter_skips("taints")),
    Mutant("predicates-ignores-node-affinity", "predicates' NodeAffinity filter (nodeSelector, required terms) is skipped",
           lambda: _predicates_filter_skips("affinity")),
    Mutant("proportion-overused-any-dimension", "proportion's Overused holds once any one dimension reaches deserved",
           _proportion_overused_any_dimension),
    Mutant("allocate-never-pipelines", "allocate places a task only where Idle fits it, never pipelining onto FutureIdle",
           _allocate_never_pipelines),
    Mutant("overcommit-inqueue-doubled", "overcommit's JobEnqueued adds an admitted job's minimum to inqueue twice",
           _overcommit_inqueue_doubled),
    Mutant("task-status-ignores-deletion", "getTaskStatus maps a Running pod being deleted to Running, not Releasing",
           lambda: _task_info_patch("deletion")),
    Mutant("request-ignores-init-containers", "GetPodResourceRequest leaves init containers out",
           lambda: _task_info_patch("init"),
           "volcano-sh/volcano#1092 (init container resources in task requests)"),
    Mutant("request-ignores-overhead", "GetPodResourceRequest leaves the pod overhead out",
           lambda: _task_info_patch("overhead"),
           "volcano-sh/volcano#1536 (pod overhead counted in task requests)"),
    Mutant("predicates-ignores-node-ports", "predicates' NodePorts filter never finds a host-port conflict",
           _predicates_ignore_ports),
    Mutant("predicates-ignores-hard-shard", "PredicateNodes lets nodes outside the scheduler's shard pass in hard "
           "sharding mode", _predicates_ignore_hard_shard),
    Mutant("allocate-ignores-hard-topology", "allocate places a hard-mode job like any other, ignoring its hypernode "
           "constraint", _allocate_ignores_hard_topology),
    Mutant("topology-gradient-ignores-highest-tier", "the hypernode gradient admits hypernodes above the job's "
           "highest allowed tier", _gradient_ignores_highest_tier),
    Mutant("topology-gradient-highest-tier-first", "the hypernode gradient lists tiers highest first, so a job "
           "lands in the widest allowed hypernode although a lower one had room", _gradient_highest_tier_first),
    Mutant("hypernode-drops-nested-members", "a hypernode made of lower hypernodes is built without their nodes",
           _hyper_node_drops_nested_members),
    Mutant("gang-ignores-min-sub-groups", "gang's JobReady no longer asks for each policy's minSubGroups ready "
           "subgroups (CheckSubJobReady)", _sub_groups_always_ready),
    Mutant("sub-group-topology-ignored", "a subgroup policy's hard network topology is not applied to its "
           "subgroups", _sub_group_topology_ignored),
    Mutant("predicates-ignores-inter-pod-affinity", "predicates' InterPodAffinity filter lets every node pass",
           _predicates_ignore_pod_affinity),
    Mutant("predicates-ignores-topology-spread", "predicates' PodTopologySpread filter lets every node pass",
           _predicates_ignore_topology_spread),
    Mutant("reclaim-forgets-freed", "reclaim does not count what its victims free, so it evicts them all and gives up",
           _reclaim_forgets_freed),
    Mutant("preempt-ignores-queue-allocatable", "preemptorFitsOnNode skips the queue's Allocatable",
           lambda: _preempt_fits("no-allocatable")),
    Mutant("preempt-uses-idle", "preemptorFitsOnNode measures room with Idle instead of FutureIdle",
           lambda: _preempt_fits("idle")),
    Mutant("no-allocate-events", "allocate events never reach the plugins",
           _no_allocate_events),
    Mutant("predicates-allocate-missed", "predicates' allocate handler does nothing",
           lambda: _handler_missed("schedcheck.reference.plugins.predicates.PredicatesPlugin", "on_allocate")),
    Mutant("predicates-deallocate-missed", "predicates' deallocate handler does nothing",
           lambda: _handler_missed("schedcheck.reference.plugins.predicates.PredicatesPlugin", "on_deallocate")),
    Mutant("proportion-deallocate-missed", "proportion's deallocate handler does nothing",
           lambda: _handler_missed("schedcheck.reference.plugins.proportion.ProportionPlugin", "_on_deallocate")),
    Mutant("capacity-enqueue-always", "capacity's JobEnqueueable always permits",
           _capacity_enqueue_always),
    Mutant("gang-pipelined-always", "gang's JobPipelined always permits",
           _gang_pipelined_always),
    Mutant("priority-starving-never", "priority's JobStarving never holds (no preemptor job)",
           _priority_starving_never),
    Mutant("drf-deallocate-forgotten", "drf's deallocate handler is lost, so undone placements stay charged",
           _drf_deallocate_forgotten),
    Mutant("pdb-ignores-budget", "the pdb plugin keeps every candidate, whatever its budget allows",
           _pdb_ignores_budget),
    Mutant("gpushare-idle-memory-wraps", "a GPU-share card's idle memory is an unsigned subtraction, so a card "
           "charged beyond its memory (a pod pinned by gpu-index) wraps to nearly 2^64 idle and takes more pods",
           _gpushare_idle_memory_wraps, source="volcano-sh/volcano#5470"),
    Mutant("scheduling-gates-not-read", "NewTaskInfo forgets the pod's scheduling gates (SchGated always false), so "
           "gated pods are scheduled", _scheduling_gates_not_read),
)}


@contextlib.contextmanager
def mutant(name: str) -> Iterator[Mutant]:
    """Run the enclosed code with the named bug in place; the clean code is restored on exit."""
    chosen = MUTANTS[name]
    saved = []
    try:
        for owner, attribute, replacement in chosen.patches():
            saved.append((owner, attribute, owner.__dict__.get(attribute, _MISSING)
                          if isinstance(owner, type) else getattr(owner, attribute)))
            setattr(owner, attribute, replacement)
        yield chosen
    finally:
        for owner, attribute, value in reversed(saved):
            if value is _MISSING:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, value)


_MISSING = object()


# -- 2026 upstream fixes re-created (helper mineA) ------------------------------------------------------------------


def _capacity_preemptive_ignores_real_capability():
    from schedcheck.reference.plugins import capacity

    def preemptive(self, queue, candidates):
        if not self.ready or not capacity.queue_is_open(queue):
            return False
        attr = self._queue_opts[queue.uid]
        request = capacity.summed_request(capacity.as_task_list(candidates))
        future = attr.allocated.clone().add(request)
        # the bug: no bound by realCapability before asking whether some dimension is within deserved
        if future.less_equal_partly_with_dimension_zero_filtered(attr.deserved, request)[0]:
            return True
        if not (self.hierarchy and self.ancestor_reclaim_level > 0):
            return False
        for level in range(1, self.ancestor_reclaim_level + 1):
            ancestor_id = capacity.ancestor_at_depth(attr, level)
            ancestor = self._queue_opts.get(ancestor_id) if ancestor_id not in (None, capacity.ROOT_QUEUE) else None
            if ancestor is not None and ancestor.allocated.clone().add(request) \
                    .less_equal_partly_with_dimension_zero_filtered(ancestor.deserved, request)[0]:
                return True
        return False
    return [(capacity.CapacityPlugin, "preemptive", preemptive)]


def _preempt_within_job_drains_shared_tasks():
    from schedcheck.reference.actions import preempt as preempt_action
    from schedcheck.reference.framework.statement import Statement
    from schedcheck.reference.util.priority_queue import PriorityQueue

    def execute(self, ssn):
        self.ssn = ssn
        self._parse_arguments()
        self.helper = preempt_action.PredicateHelper(ssn)
        jobs_by_queue, tasks_by_job, under_request = self._collect_preemptors()
        every_starving = [job for jobs in under_request.values() for job in jobs]
        queues = PriorityQueue(ssn.queue_order_fn)
        for queue_id in jobs_by_queue:
            if ssn.queues.get(queue_id) is not None:
                queues.push(ssn.queues[queue_id])
        while not queues.empty():
            queue = queues.pop()
            self._preempt_between_jobs(jobs_by_queue[queue.uid], tasks_by_job)
            # the bug: the within-job pass walks every queue's starving jobs, refilling and draining the task
            # queues the between-jobs pass of a queue not yet visited still needs
            for job in every_starving:
                tasks_by_job[job.uid] = preempt_action.pending_task_queue(ssn, job)
                tasks = tasks_by_job[job.uid]
                while not tasks.empty():
                    preemptor = tasks.pop()
                    stmt = Statement(ssn)
                    if not self.preempt(stmt, preemptor, preempt_action.within_job_filter(preemptor)):
                        stmt.discard()
                        break
                    stmt.commit()
    return [(preempt_action.Preempt, "execute", execute)]


def _inqueue_counts_allocated(plugin_module: str):
    import importlib

    from schedcheck.reference.api.types import allocated_status
    from schedcheck.reference.plugins import queue_attr

    module = importlib.import_module(f"schedcheck.reference.plugins.{plugin_module}")

    def accumulate_job(attr, job):
        for status, tasks in job.task_status_index.items():
            if allocated_status(status):
                for task in tasks.values():
                    attr.allocated.add(task.resreq)
                    attr.request.add(task.resreq)
            elif status == TaskStatus.Pending:
                for task in tasks.values():
                    attr.request.add(task.resreq)
        pod_group = job.pod_group
        if pod_group.phase == "Inqueue":
            # the bug: an Inqueue job reserves its whole minimum, though its tasks already Allocated or
            # Binding are in allocated too (counted twice)
            attr.inqueue.add(job.deduct_sch_gated_resources(job.get_min_resources()))
        elif (pod_group.phase == "Running" and job.allocated_task_num() >= pod_group.min_member
              and pod_group.min_resources is not None):
            attr.inqueue.add(job.deduct_sch_gated_resources(queue_attr.inqueue_resource(job, job.allocated)))
        attr.elastic.add(job.get_elastic_resources())
    return [(module, "accumulate_job", accumulate_job)]


def _inqueue_scalars_in_whole_units():
    from schedcheck.reference.api.resource_info import CPU, MEMORY, PODS, Resource
    from schedcheck.reference.plugins import overcommit, queue_attr
    from schedcheck.reference.plugins import util as plugin_util

    def inqueue_resource(job, allocated):
        names = job.pod_group.min_resources
        minimum = Resource.from_resource_list(names)
        out = Resource()
        for name in names:
            if name == CPU:
                out.milli_cpu = max(minimum.milli_cpu - allocated.milli_cpu, 0.0)
            elif name == MEMORY:
                out.memory = max(minimum.memory - allocated.memory, 0.0)
            elif name == PODS:
                continue  # the bug: pods is not a scalar name, so nothing of it is reserved
            elif plugin_util._reservable_scalar(name):
                # the bug: the quantity's whole-unit value, against scalars kept in milli-units
                whole = -(-minimum.get(name) // 1000)
                if out.scalars is None:
                    out.scalars = {}
                if allocated.scalars is None or name not in allocated.scalars:
                    out.scalars[name] = whole
                elif whole - allocated.scalars[name] > 0:
                    out.scalars[name] = whole - allocated.scalars[name]
        return out
    return [(queue_attr, "inqueue_resource", inqueue_resource), (overcommit, "inqueue_resource", inqueue_resource)]


def _inqueue_charged_at_vote(plugin_module: str, class_name: str):
    import importlib

    from schedcheck.reference.framework.session import PERMIT

    owner = getattr(importlib.import_module(f"schedcheck.reference.plugins.{plugin_module}"), class_name)
    vote, enqueued = owner.job_enqueueable, owner.job_enqueued

    def job_enqueueable(self, job):
        result = vote(self, job)
        if result == PERMIT:
            enqueued(self, job)  # the bug: reserved on this plugin's own permit, before the session's verdict
        return result
    return [(owner, "job_enqueueable", job_enqueueable), (owner, "job_enqueued", lambda self, job: None)]


def _capacity_best_effort_share_zero():
    from schedcheck.reference.plugins import capacity
    from schedcheck.reference.plugins.queue_attr import QueueAttr

    def compare(left, right):
        if left.share == right.share:
            return 0  # the bug: no tie-break in favour of a queue with deserved
        return -1 if left.share < right.share else 1
    # the bug: a queue without deserved has no dimension to divide by, so its share stays 0 and it goes first
    return [(capacity.CapacityQueueAttr, "update_share", QueueAttr.update_share),
            (capacity, "compare_share_with_deserved", compare)]


def _reclaim_commits_unpipelined_job():
    from schedcheck.reference.actions import reclaim as reclaim_action
    from schedcheck.reference.framework.statement import Statement

    def reclaim_for_job(self, queue, job, tasks):
        ssn = self.ssn
        stmt = Statement(ssn)
        while ssn.job_starving(job) and not tasks.empty():
            task = tasks.pop()
            if reclaim_action.preemption_policy_never(task) or not ssn.preemptive(queue, [task]) \
                    or ssn.pre_predicate_fn(task) is not None:
                continue
            self.reclaim_for_task(stmt, task, job)
        stmt.commit()  # the bug: evictions stand whether or not the job ends up pipelined
    return [(reclaim_action.Reclaim, "_reclaim_for_job", reclaim_for_job)]


def _capacity_reclaim_any_dimension():
    from schedcheck.reference.api.resource_info import Infinity, Zero
    from schedcheck.reference.plugins.capacity import CapacityPlugin

    def reclaim_one(self, reclaimer, reclaimee, allocations):
        job = self.ssn.jobs.get(reclaimee.job)
        attr = self._queue_opts.get(job.queue) if job is not None else None
        if attr is None:
            return False
        allocated = allocations.setdefault(job.queue, attr.allocated.clone())
        # the bug: the queue only has to be above deserved somewhere (a dimension deserved names and allocated
        # lacks counts as above), whatever the reclaimee and the reclaimer ask for
        if allocated.less_equal(attr.deserved, Infinity) \
                or not attr.guarantee.less_equal(allocated.clone().sub(reclaimee.resreq), Zero):
            return False
        allocated.sub(reclaimee.resreq)
        return True
    return [(CapacityPlugin, "_reclaim_one", reclaim_one)]


def _reclaim_ignores_shard():
    from schedcheck.reference.actions import reclaim as reclaim_action
    from schedcheck.reference.util import scheduler_helper

    def reclaim_for_task(self, stmt, task, job):
        ssn = self.ssn
        nodes = ssn.filter_out_unschedulable_and_unresolvable_nodes(task)
        helper = reclaim_action.PredicateHelper(ssn)
        saved = scheduler_helper.outside_shard
        scheduler_helper.outside_shard = lambda session, node: False  # the bug: PredicateNodes without the shard
        try:
            candidates, _ = helper.predicate_nodes(task, nodes, ssn.predicate_for_preempt_action,
                                                   self.enable_predicate_error_cache)
        finally:
            scheduler_helper.outside_shard = saved
        for node in candidates:  # and the nodes in predicate order, not this shard's first
            reclaimees = self._reclaimees(node, job)
            if not reclaimees:
                continue
            victims = ssn.reclaimable(task, reclaimees)
            if not reclaim_action.validate_victims(task, node, victims):
                continue
            node_stmt = reclaim_action.Statement(ssn)
            if self._evict_until_fits(node_stmt, task, node, victims or []):
                stmt.merge(node_stmt)
                return True
        return False
    return [(reclaim_action.Reclaim, "reclaim_for_task", reclaim_for_task)]


MUTANTS.update({m.name: m for m in (
    Mutant("capacity-reclaim-past-real-capability", "capacity's Preemptive lets a queue reclaim for a task that "
           "takes it past realCapability, as long as one requested dimension is still within deserved",
           _capacity_preemptive_ignores_real_capability, "volcano-sh/volcano f28e22fbc (PR #5053, issue #5048)"),
    Mutant("preempt-within-job-drains-other-queues", "preempt's within-job pass, run after each queue, walks the "
           "starving jobs of every queue and refills then drains the task queues their own queue's between-jobs "
           "pass has yet to use, so a starving job of a queue visited later preempts nothing",
           _preempt_within_job_drains_shared_tasks, "volcano-sh/volcano 7910fbd6f (preemptorTasks overwritten in "
           "multi-queue preemption)"),
    Mutant("capacity-inqueue-counts-allocated", "capacity's session open reserves an Inqueue job's whole "
           "minResources, though its Allocated or Binding tasks are already counted in allocated",
           lambda: _inqueue_counts_allocated("capacity"), "volcano-sh/volcano 0b82db775 (capacity inqueue "
           "double-counted for jobs with Binding tasks)"),
    Mutant("proportion-inqueue-counts-allocated", "proportion's session open reserves an Inqueue job's whole "
           "minResources, though its Allocated or Binding tasks are already counted in allocated",
           lambda: _inqueue_counts_allocated("proportion"), "volcano-sh/volcano 6db3122b4 (proportion inqueue "
           "double-counted for jobs with binding tasks)"),
    Mutant("inqueue-scalars-in-whole-units", "GetInqueueResource reserves a scalar minimum in whole units against "
           "milli-unit allocations (a 2-GPU minimum reserves 0.002 GPU) and reserves no pods",
           _inqueue_scalars_in_whole_units, "volcano-sh/volcano 7110813b1 (PR #5391, milli-units for scalar "
           "in-queue resources)"),
    Mutant("capacity-inqueue-charged-at-vote", "capacity adds an admitted job's minimum to inqueue inside its "
           "own JobEnqueueable vote, so a job another plugin then rejects still holds a phantom reservation",
           lambda: _inqueue_charged_at_vote("capacity", "CapacityPlugin"),
           "volcano-sh/volcano 5be98af37 (inqueue mutation moved from JobEnqueueableFn to JobEnqueuedFn)"),
    Mutant("proportion-inqueue-charged-at-vote", "proportion adds an admitted job's minimum to inqueue inside its "
           "own JobEnqueueable vote, so a job another plugin then rejects still holds a phantom reservation",
           lambda: _inqueue_charged_at_vote("proportion", "ProportionPlugin"),
           "volcano-sh/volcano 5be98af37 (inqueue mutation moved from JobEnqueueableFn to JobEnqueuedFn)"),
    Mutant("capacity-best-effort-share-zero", "capacity gives a best-effort queue (no deserved) share 0 and breaks "
           "no share ties, so best-effort queues are served before queues still below their deserved",
           _capacity_best_effort_share_zero, "volcano-sh/volcano 20e9c675c (queue share for best-effort queues)"),
    Mutant("reclaim-commits-unpipelined-job", "reclaim keeps the evictions and pipelines made for a starving job "
           "whether or not the job ends up pipelined (no JobPipelined check, no discard)",
           _reclaim_commits_unpipelined_job, "volcano-sh/volcano cdaaa977b (reclaim: one statement per job, "
           "committed only when JobPipelined)"),
    Mutant("capacity-reclaim-any-dimension", "capacity's Reclaimable takes any reclaimee of a queue above deserved on "
           "some dimension, even one the reclaimee does not ask for or one that shares nothing with the reclaimer",
           _capacity_reclaim_any_dimension, "volcano-sh/volcano d496505d9 (capacity reclaimableFn refactor)"),
    Mutant("reclaim-ignores-shard", "reclaim filters its candidate nodes without this scheduler's node shard (hard "
           "mode: nodes outside the shard pass; soft mode: no shard-first order)", _reclaim_ignores_shard,
           "volcano-sh/volcano 7674fc94e (reclaim's PredicateNodes call without ssn.NodesInShard, after PR #4848 "
           "and #4794)"),
)})


# -- upstream Volcano's 2026 fixes, re-created (helper mineB) ---------------------------------

def _sub_group_tier_name_ignored():
    import copy

    from schedcheck.reference.framework import topology

    original = topology._adjust_network_topology

    def adjust(ssn):
        named = {}  # (job, subjob) -> the subjob's spec as the PodGroup gave it
        for job in ssn.jobs.values():
            for sub in job.sub_jobs.values():
                nt = sub.network_topology
                if sub.uid != job.uid and nt is not None and nt.highest_tier_allowed is None and nt.highest_tier_name:
                    named[(job.uid, sub.uid)] = nt
        original(ssn)
        for (job_uid, sub_uid), nt in named.items():
            # the bug: the subjob keeps its own untranslated copy, so hard_mode sees no highest tier
            ssn.jobs[job_uid].sub_jobs[sub_uid].network_topology = copy.copy(nt)
    return [(topology, "_adjust_network_topology", adjust)]


def _snapshot_shares_pods():
    import copy as _copy
    import types

    from schedcheck.reference import k8s
    from schedcheck.reference.cache import cache

    def shallow(obj):
        return obj if isinstance(obj, k8s.Pod) else _copy.copy(obj)  # the bug: TaskInfo.Clone keeps the pod
    return [(cache, "copy", types.SimpleNamespace(copy=shallow, deepcopy=_copy.deepcopy))]


def _pre_predicate_failure_stops_job():
    import sys

    from schedcheck.reference.api.job_info import JobInfo
    from schedcheck.reference.framework.session import Session

    original_pre, original_continue = Session.pre_predicate_fn, JobInfo.need_continue_allocating
    failed = [False]

    def pre_predicate_fn(self, task):
        err = original_pre(self, task)
        if sys._getframe(1).f_code.co_name == "allocate_resources_for_tasks":
            failed[0] = err is not None
        return err

    def need_continue_allocating(self, sub_job=None):
        if failed[0] and sys._getframe(1).f_code.co_name == "allocate_resources_for_tasks":
            failed[0] = False
            return False  # the bug: after a PrePredicate failure the job's loop stops whatever the job needs
        return original_continue(self, sub_job)
    return [(Session, "pre_predicate_fn", pre_predicate_fn),
            (JobInfo, "need_continue_allocating", need_continue_allocating)]


def _device_allocate_error_swallowed():
    from schedcheck.reference.plugins import predicates

    original = predicates.PredicatesPlugin.on_allocate

    def on_allocate(self, event):
        task = event.task
        node = self.ssn.nodes.get(task.node_name)
        if node is None or task.node_name not in self.mirror.nodes or task.uid not in self.mirror.prefiltered:
            return original(self, event)
        saved = {}
        for name in self.ssn.cache.device_flags.registered():
            pool = node.others.get(name)
            if pool is None or not pool.has_device_request(task.pod):
                continue

            def allocate(pod, now_ns, _pool=pool):
                annotations, err = type(_pool).allocate(_pool, pod, now_ns)
                return (annotations, None) if err is None else ({}, None)  # the bug: the error is only logged
            saved[name] = pool
            pool.allocate = allocate
        try:
            return original(self, event)
        finally:
            for pool in saved.values():
                del pool.allocate
    return [(predicates.PredicatesPlugin, "on_allocate", on_allocate)]


def _vgpu_allocate_charges_twice():
    from schedcheck.reference.api.devices import mig, vgpu

    original = vgpu.GPUDevices.allocate

    def allocate(self, pod, now_ns):
        annotations, err = original(self, pod, now_ns)
        if err is None and annotations and self.mode != mig.MIG:
            # the bug: addResource after the fit, which had charged the cards already, charges them again
            for container in vgpu.decode_pod_devices(annotations.get(vgpu.ASSIGNED_IDS, "")):
                for uuid, _type, mem, cores in container:
                    for dev in self.devices.values():
                        if dev.uuid in uuid:
                            dev.used_num += 1
                            dev.used_mem += mem
                            dev.used_core += cores
                            break
        return annotations, err
    return [(vgpu.GPUDevices, "allocate", allocate)]


MUTANTS.update({m.name: m for m in (
    Mutant("sub-group-tier-name-ignored", "a subgroup policy's highestTierName is never turned into a tier for the "
           "subjob (only the job's own spec is translated), so the subgroup's hard topology does not constrain it",
           _sub_group_tier_name_ignored, source="volcano-sh/volcano 863336447 (adjustNetworkTopologySpec)"),
    Mutant("snapshot-shares-pods", "the snapshot's task clones keep the cache's pod object, so what a session writes "
           "on a pod (spec.nodeName of a tried and discarded placement) reaches the cache",
           _snapshot_shares_pods, source="volcano-sh/volcano 4413f018a (deep copies in snapshot clones)"),
    Mutant("pre-predicate-failure-stops-job", "allocate stops placing a job's tasks at the first task whose "
           "PrePredicate fails, even when the job could still be ready without it (NeedContinueAllocating not asked)",
           _pre_predicate_failure_stops_job, source="volcano-sh/volcano b83a5e7a4 (PR #5528)"),
    Mutant("device-allocate-error-swallowed", "the predicates plugin's allocate handler only logs a shared device's "
           "Allocate error (a held node lock, no card left) without failing the event, so the task stays placed on "
           "the node with no device charged or assigned", _device_allocate_error_swallowed,
           source="volcano-sh/volcano 268bc9ca3 (predicates AllocateFunc sets event.Err)"),
    Mutant("vgpu-allocate-charges-twice", "the vGPU Allocate charges the chosen cards' memory, cores and task count "
           "a second time (addResource after the fit had charged them) instead of only recording the pod",
           _vgpu_allocate_charges_twice, source="volcano-sh/volcano 974e2330d (vGPU addToPodMap)"),
)})


# -- upstream Volcano's 2024-2025 fixes, re-created (helper mineC): schedcheck/mutant_fixes_2024.py ------------

def _fixes_2024() -> dict[str, Mutant]:
    from schedcheck.mutant_fixes_2024 import FIXES_2024

    return {name: Mutant(name, description, patches, source) for name, description, patches, source in FIXES_2024}


MUTANTS.update(_fixes_2024())


# -- device fixes and 2023 fixes, re-created (helper mineD): schedcheck/mutant_fixes_mined.py ------------------

def _fixes_mined() -> dict[str, Mutant]:
    from schedcheck.mutant_fixes_mined import FIXES_MINED

    return {name: Mutant(name, description, patches, source) for name, description, patches, source in FIXES_MINED}


MUTANTS.update(_fixes_mined())
