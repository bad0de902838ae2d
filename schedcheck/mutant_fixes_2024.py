"""Upstream Volcano's 2024-2025 scheduler fixes, re-created as pre-fix mutants (helper mineC).

Each entry re-creates, against the reference (which follows master, the fixed behaviour), what one
upstream fix commit of 2024-01 to 2025-11 removed; `schedcheck.mutants` wraps them as `Mutant`s. Each
patch function returns (owner, attribute, replacement) triples, as the other mutants do. docs/selftest.md,
section "Upstream's 2024-2025 fixes re-created (helper mineC)", lists them with the rule that catches each.
"""

from __future__ import annotations

from typing import Any

Patches = list[tuple[Any, str, Any]]


def _intra_job_preempt_ignores_preemptable() -> Patches:
    from schedcheck.reference.actions import preempt
    from schedcheck.reference.api.types import preemptable_status

    def within_job_filter(preemptor):
        job_uid, best_effort = preemptor.job, preemptor.best_effort

        def accept(task) -> bool:
            if not preemptable_status(task.status):
                return False
            if best_effort and not task.best_effort:
                return False
            return task.job == job_uid  # the bug: no look at the task's volcano.sh/preemptable mark
        return accept
    return [(preempt, "within_job_filter", within_job_filter)]


def _podgroup_running_while_binding() -> Patches:
    from schedcheck.reference.api.types import TaskStatus, allocated_status, completed_status
    from schedcheck.reference.framework import framework

    def pod_group_phase(job, unschedulable: bool) -> str:
        if job.task_status_index.get(TaskStatus.Running) and unschedulable:
            return "Unknown"
        # the bug: every allocated status (Allocated and Binding too) counts as scheduled
        counted = sum(len(b) for s, b in job.task_status_index.items() if allocated_status(s) or completed_status(s))
        counted += job.releasing_scheduled_task_num()
        completed = sum(len(b) for s, b in job.task_status_index.items() if completed_status(s))
        if counted >= job.pod_group.min_member:
            return "Completed" if counted == completed else "Running"
        if job.pod_group.phase != "Inqueue":
            return "Pending"
        return job.pod_group.phase
    return [(framework, "pod_group_phase", pod_group_phase)]


def _podgroup_failed_not_completed() -> Patches:
    from schedcheck.reference.api.types import TaskStatus
    from schedcheck.reference.framework import framework

    def pod_group_phase(job, unschedulable: bool) -> str:
        if job.task_status_index.get(TaskStatus.Running) and unschedulable:
            return "Unknown"
        # the bug: a Failed task is neither scheduled nor completed (only Succeeded ones count)
        failed = len(job.task_status_index.get(TaskStatus.Failed, {}))
        scheduled = job.scheduled_task_num() + job.releasing_scheduled_task_num() - failed
        completed = len(job.task_status_index.get(TaskStatus.Succeeded, {}))
        if scheduled >= job.pod_group.min_member:
            return "Completed" if scheduled == completed else "Running"
        if job.pod_group.phase != "Inqueue":
            return "Pending"
        return job.pod_group.phase
    return [(framework, "pod_group_phase", pod_group_phase)]


def _predicates_stop_after_volume_limits() -> Patches:
    from schedcheck.reference.plugins.predicates import PredicatesPlugin

    original_filters, original_wanted = PredicatesPlugin._per_node_filters, PredicatesPlugin._filters_to_run
    last = 2  # NodePorts, InterPodAffinity, NodeVolumeLimits: the filters that ran before the early return

    def per_node_filters(self):
        filters = original_filters(self)
        return filters[:last + 1] if self.node_volume_limits_enable else filters

    def filters_to_run(self, pod, state):
        wanted = original_wanted(self, pod, state)
        # the bug: with NodeVolumeLimits on, predicate returns right after it, whatever it said, so VolumeZone,
        # PodTopologySpread, VolumeBinding and DynamicResources never judge a node
        return tuple(i for i in wanted if i <= last) if self.node_volume_limits_enable else wanted
    return [(PredicatesPlugin, "_per_node_filters", per_node_filters),
            (PredicatesPlugin, "_filters_to_run", filters_to_run)]


def _proportion_real_capability_drops_unset_scalars() -> Patches:
    from schedcheck.reference.api.resource_info import MAX_FLOAT, Resource
    from schedcheck.reference.plugins import proportion
    from schedcheck.reference.plugins.queue_attr import exceeded_part

    def init_quota(attr, queue, total, guarantees) -> None:
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
            # the bug: helpers.Min, not MinDimensionResource(capability, Infinity): a scalar the capability
            # does not name is 0 (every scalar when it names none), not unlimited
            capped = Resource(milli_cpu=min(real.milli_cpu, capability.milli_cpu),
                              memory=min(real.memory, capability.memory))
            if real.scalars is not None and capability.scalars is not None:
                capped.scalars = {name: min(value, capability.scalars.get(name, 0.0))
                                  for name, value in real.scalars.items()}
            real = capped
            attr.capability = capability
        attr.real_capability = real
    return [(proportion, "init_quota", init_quota)]


def _without_queue_state(method_name: str) -> Patches:
    """proportion's and capacity's `method_name` as if every queue were Open (the module's queue_is_open answers
    yes while that method runs), the other extension points untouched."""
    from schedcheck.reference.plugins import capacity, proportion

    patches: Patches = []
    for module, owner in ((proportion, proportion.ProportionPlugin), (capacity, capacity.CapacityPlugin)):
        original = getattr(owner, method_name)

        def wrapped(self, *args, _original=original, _module=module):
            saved = _module.queue_is_open
            _module.queue_is_open = lambda queue: True
            try:
                return _original(self, *args)
            finally:
                _module.queue_is_open = saved
        patches.append((owner, method_name, wrapped))
    return patches


def _reclaim_for_jobs_with_pending_tasks() -> Patches:
    from schedcheck.reference.actions import reclaim as reclaim_action
    from schedcheck.reference.api.types import TaskStatus
    from schedcheck.reference.framework.statement import Statement
    from schedcheck.reference.util.priority_queue import PriorityQueue

    def build_context(self):
        ssn = self.ssn
        queues, seen = PriorityQueue(ssn.queue_order_fn), set()
        jobs_by_queue: dict = {}
        tasks_by_job: dict = {}
        for job in ssn.jobs.values():
            if job.is_pending() or ssn.job_valid(job) is not None:
                continue
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            if queue.uid not in seen:
                seen.add(queue.uid)
                queues.push(queue)
            if not job.task_status_index.get(TaskStatus.Pending):
                continue  # the bug: a job with a pending task is a reclaimer, starving or not
            jobs_by_queue.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
            tasks = PriorityQueue(ssn.task_order_fn)
            for task in job.tasks_with_status(TaskStatus.Pending):
                if not task.sch_gated:
                    tasks.push(task)
            tasks_by_job[job.uid] = tasks
        return queues, jobs_by_queue, tasks_by_job

    def reclaim_for_job(self, queue, job, tasks) -> None:
        ssn = self.ssn
        stmt = Statement(ssn)
        while not tasks.empty():  # the bug: no JobStarving check before each task either
            task = tasks.pop()
            if reclaim_action.preemption_policy_never(task) or not ssn.preemptive(queue, [task]) \
                    or ssn.pre_predicate_fn(task) is not None:
                continue
            self.reclaim_for_task(stmt, task, job)
        if ssn.job_pipelined(job):
            stmt.commit()
        else:
            stmt.discard()
    return [(reclaim_action.Reclaim, "_build_context", build_context),
            (reclaim_action.Reclaim, "_reclaim_for_job", reclaim_for_job)]


def _statement_ignores_event_errors() -> Patches:
    import sys

    from schedcheck.reference.framework.session import Session

    original = Session.fire_allocate

    def fire_allocate(self, task):
        err = original(self, task)
        if sys._getframe(1).f_code.co_name == "_place":
            return None  # the bug: Statement.Allocate / Pipeline never look at event.Err, so nothing is rolled back
        return err
    return [(Session, "fire_allocate", fire_allocate)]


def _best_node_needs_a_score_above_minus_one() -> Patches:
    from schedcheck.reference.util import scheduler_helper

    original = scheduler_helper.select_best_node_and_score

    def select_best_node_and_score(ssn, task, node_scores):
        if node_scores and max(node_scores) <= -1.0:
            return None, -1.0  # the bug: the running maximum starts at -1, so no score below it ever wins
        return original(ssn, task, node_scores)
    return [(scheduler_helper, "select_best_node_and_score", select_best_node_and_score)]


def _overcommit_compares_every_dimension() -> Patches:
    from schedcheck.reference.api.resource_info import Resource, Zero
    from schedcheck.reference.framework.session import PERMIT, REJECT
    from schedcheck.reference.plugins import overcommit

    def job_enqueueable(self, job) -> int:
        if job.pod_group.min_resources is None:
            return PERMIT
        wanted = Resource().add(self.inqueue).add(job.get_min_resources())
        # the bug: inqueue + minResources against the overcommitted idle on every dimension, so what other
        # admitted jobs hold on a resource this job does not ask for can keep it out
        return PERMIT if wanted.less_equal(self.idle, Zero) else REJECT
    return [(overcommit.OvercommitPlugin, "job_enqueueable", job_enqueueable)]


def _queue_status_counts_running_only() -> Patches:
    from schedcheck.reference.api.types import TaskStatus
    from schedcheck.reference.framework import framework, queue_status

    original = queue_status.update_queue_status

    def update_queue_status(ssn) -> None:
        saved = queue_status.allocated_status
        queue_status.allocated_status = lambda status: status == TaskStatus.Running  # the bug: Running tasks only
        try:
            original(ssn)
        finally:
            queue_status.allocated_status = saved
    return [(framework, "update_queue_status", update_queue_status)]


# (name, description, patches, source)
FIXES_2024: tuple[tuple[str, str, Any, str], ...] = (
    ("intra-job-preempt-ignores-preemptable", "preempt's within-job pass takes any Running or Bound task of the "
     "preemptor's own job as a victim, even one marked volcano.sh/preemptable=false",
     _intra_job_preempt_ignores_preemptable, "volcano-sh/volcano a84d8f229 (PR #3683)"),
    ("podgroup-running-while-binding", "the PodGroup phase written at session close counts every allocated task "
     "(Allocated and Binding too) towards minMember, so a gang allocate has only just dispatched is Running",
     _podgroup_running_while_binding, "volcano-sh/volcano 15a6a5a65 (PR #4384, issue #4383)"),
    ("podgroup-failed-not-completed", "the PodGroup phase counts a Failed task neither as scheduled nor as "
     "completed, so a gang whose pods all ended, some failed, is not Completed",
     _podgroup_failed_not_completed, "volcano-sh/volcano 9ac1c8c4f (mark PodGroup completed when pod fails)"),
    ("predicates-stop-after-volume-limits", "with NodeVolumeLimits on, the predicates plugin returns right after "
     "that filter, so VolumeZone, PodTopologySpread, VolumeBinding and DynamicResources never refuse a node",
     _predicates_stop_after_volume_limits, "volcano-sh/volcano f909a47de (volumeZone and podTopologySpread "
     "don't work if nodeVolumeLimits is enabled)"),
    ("proportion-real-capability-drops-unset-scalars", "proportion caps realCapability with helpers.Min: a scalar "
     "resource the queue's capability does not name gets realCapability 0 instead of the cluster's",
     _proportion_real_capability_drops_unset_scalars, "volcano-sh/volcano b5764b960 (realCapability as the "
     "min dimension of capability and the cluster's)"),
    ("closed-queue-still-allocates", "proportion's and capacity's Allocatable do not look at the queue's state, "
     "so the pods of admitted jobs of a Closed queue keep being placed", lambda: _without_queue_state("allocatable"),
     "volcano-sh/volcano e5ee5168b (PR #4274, issue #4189)"),
    ("closed-queue-still-admits", "proportion's and capacity's JobEnqueueable do not look at the queue's state, so "
     "enqueue moves a Pending job of a Closed queue to Inqueue", lambda: _without_queue_state("job_enqueueable"),
     "volcano-sh/volcano 5756e5e70 (PR #4263, issue #4189)"),
    ("closed-queue-still-reclaims", "proportion's and capacity's Preemptive do not look at the queue's state, so "
     "a starving job of a Closed queue reclaims other queues' pods and is pipelined",
     lambda: _without_queue_state("preemptive"), "volcano-sh/volcano 2123494a5 (PR #4307)"),
    ("reclaim-for-jobs-with-pending-tasks", "reclaim takes every job with a pending task as a reclaimer, not only "
     "starving ones, so a gang already at its minimum reclaims other queues' pods to grow",
     _reclaim_for_jobs_with_pending_tasks, "volcano-sh/volcano a561215e0 (PR #3951)"),
    ("statement-ignores-event-errors", "Statement's Allocate and Pipeline ignore an error an allocate event "
     "handler reports (a device that cannot be allocated, a claim or volume that cannot be reserved): the task "
     "stays placed on the node and is bound", _statement_ignores_event_errors,
     "volcano-sh/volcano 4a0c7d7bb (rollback when the allocate callback fails)"),
    ("best-node-needs-a-score-above-minus-one", "SelectBestNodeAndScore starts its running maximum at -1, so when "
     "every candidate node scores -1 or less (a negative nodeorder weight) no node is chosen and the task is not "
     "placed", _best_node_needs_a_score_above_minus_one, "volcano-sh/volcano 2f2edcac5 (SelectBestNode returns nil "
     "when plugin scores are negative)"),
    ("overcommit-compares-every-dimension", "overcommit's JobEnqueueable compares inqueue + minResources with the "
     "overcommitted idle on every dimension, not only those the job asks for, so a cpu-only job is kept Pending "
     "while admitted jobs' gpu minimums exceed the idle gpus", _overcommit_compares_every_dimension,
     "volcano-sh/volcano 3ee5e8ef4 (resource compare only considers the requested resource items)"),
    ("queue-status-counts-running-only", "the status.allocated written on each queue at session close sums its "
     "Running tasks only, leaving out those Allocated, Binding or Bound", _queue_status_counts_running_only,
     "volcano-sh/volcano 94ff6b205 (queue status allocated included allocated tasks)"),
)
