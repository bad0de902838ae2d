"""Progress: an evicting action leaves no starving job stuck when the rules give it a way in.

Quality rules (upstream may break them by design, e.g. through Go map order): judged at the end of
preempt and reclaim, for the cases where the answer does not depend on what the action saw first.
A job is judged only when nothing of its queue was evicted in the action (so its queue's accounting
at the end is what the action saw), its gang needs one task (minAvailable 1: one pipelined task
ends its starvation), its pending task asks for no node selector, affinity or toleration and has no
nomination, and the node is plainly open to it: Ready, not cordoned, untainted, with a free pod
slot, and no plugin but `predicates` filters nodes. Evictions only shrink what is left to evict and
the room it makes, so a way in that exists at the end of the action existed when the job's turn came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from schedcheck.invariants.catalog.queues import topology_aware_preemption
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, QUALITY, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.plugins.predicates import required_terms_conflict

NODE_FILTERS = {"predicates"}  # whose filters a plainly open node passes (restated below)


def starving(ssn: Any, job: JobInfo) -> bool:
    """The session's JobStarving with priority's and gang's votes restated from the job's counters:
    the first tier with a voter decides, every voter there must agree."""
    restated: dict[str, Callable[[JobInfo], bool]] = {
        "priority": lambda j: j.ready_task_num() + j.waiting_task_num() < len(j.tasks),
        "gang": lambda j: j.waiting_task_num() + j.ready_task_num() < j.min_available,
    }
    for tier in ssn.registered("job_starving"):
        if tier:
            return all(restated.get(name, fn)(job) for name, fn in tier)
    return False


def overused(ssn: Any, queue: Any) -> bool:
    """The session's Overused with proportion's vote restated (deserved <= allocated on every dimension,
    pods included), read from its queue attributes; other plugins' votes are asked as they are."""
    for tier in ssn.registered("overused"):
        for name, fn in tier:
            if name == "proportion":
                attr = ssn.plugins["proportion"].queue_attrs.get(queue.uid)
                if attr is not None and attr.deserved.less_equal(attr.allocated, Zero):
                    return True
            elif fn(queue):
                return True
    return False


def _plainly_open(ssn: Any, node: NodeInfo, task: TaskInfo) -> bool:
    if node.node is None or not node.ready() or node.node.unschedulable:
        return False
    if ssn.cache.server_options.sharding_mode == "hard" and node.name not in ssn.nodes_in_shard:
        return False  # PredicateNodes turns away a node outside this scheduler's hard shard
    if any(t.effect in ("NoSchedule", "NoExecute") for t in node.node.taints):
        return False
    return len(node.tasks) + 1 <= node.allocatable.max_task_num


def _simple_task(task: TaskInfo) -> bool:
    pod = task.pod
    return (task.status == TaskStatus.Pending and not task.sch_gated and not task.best_effort
            and not pod.node_selector and pod.node_affinity is None and not pod.tolerations
            and not pod.nominated_node_name and pod.preemption_policy != "Never"
            and not pod.resource_claims  # devices (DRA) close nodes this restatement does not see
            and not pod.volumes  # so do claims (VolumeBinding, VolumeZone, NodeVolumeLimits)
            and not pod.inline_volumes  # and in-tree disks (NodeVolumeLimits, through CSI migration)
            and not _required_pod_terms(pod)
            and not any(c.when_unsatisfiable == "DoNotSchedule" for c in pod.topology_spread_constraints))


def _required_pod_terms(pod: Any) -> bool:
    return any(a is not None and a.required for a in (pod.pod_affinity, pod.pod_anti_affinity))


def _judgeable(ctx: CheckContext) -> bool:
    ssn = ctx.ssn
    filters = {name for tier in ssn.registered("predicate") for name, _ in tier}
    if not filters <= NODE_FILTERS or ssn.node_list == []:
        return False
    # a pod's required anti-affinity closes its whole topology domain to the pods it selects
    return not any(t.pod.pod_anti_affinity is not None and t.pod.pod_anti_affinity.required
                   for n in ssn.node_list for t in n.tasks.values())


def _room_with(node: NodeInfo, victims: list[TaskInfo], task: TaskInfo) -> bool:
    room = node.future_idle()
    for victim in victims:
        room.add(victim.resreq)
    return task.init_resreq.less_equal(room, Zero)


def _stuck_jobs(ctx: CheckContext) -> Iterator[JobInfo]:
    """Starving, non-pending, valid jobs needing one task, in a queue the action evicted nothing from."""
    ssn, action = ctx.ssn, ctx.action
    evicted: dict[str, str] = {}  # task uid -> job uid, evictions of this action not taken back
    for op in ssn.operations:
        if op.action == action and op.op == "evict":
            evicted[op.task_uid] = op.job
        elif op.action == action and op.op == "unevict":
            evicted.pop(op.task_uid, None)
    evicted_queues = {ssn.jobs[job].queue for job in evicted.values() if job in ssn.jobs}
    for job in sorted(ssn.jobs.values(), key=lambda j: j.uid):
        if job.queue in evicted_queues or job.queue not in ssn.queues:
            continue
        if job.min_available != 1 or job.is_pending() or ssn.job_valid(job) is not None:
            continue
        if starving(ssn, job):
            yield job


def _way_in(ctx: CheckContext, job: JobInfo, queue_admits: Callable[[Any, TaskInfo], bool],
            candidates: Callable[[TaskInfo, NodeInfo], list[TaskInfo] | None]
            ) -> tuple[TaskInfo, NodeInfo, list[TaskInfo]] | None:
    ssn = ctx.ssn
    queue = ssn.queues[job.queue]
    for task in sorted(job.tasks_with_status(TaskStatus.Pending), key=lambda t: t.uid):
        if not _simple_task(task) or not queue_admits(queue, task):
            continue
        for node in ssn.node_list:
            if not _plainly_open(ssn, node, task):
                continue
            victims = candidates(task, node)
            if victims and _room_with(node, victims, task):
                return task, node, victims
    return None


@invariant("eviction.preempt-progress", "preempt leaves no starving job (minAvailable 1) without a pipelined task "
           "when evicting the legal victims of one plainly open node would make room for one of its tasks", "eviction",
           "preempt.go (phase A: every starving job's tasks, nodes by score, evict until the preemptor fits); "
           "seed 000 §7 (preemption); semantics §8.4", (ACTION,), severity=QUALITY)
def preempt_progress(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action != "preempt" or not _judgeable(ctx):
        return
    if topology_aware_preemption(ssn):
        return

    def victims(task: TaskInfo, node: NodeInfo) -> list[TaskInfo] | None:
        job = ssn.jobs[task.job]
        offered = [t.clone() for t in node.tasks.values()
                   if t.status in (TaskStatus.Running, TaskStatus.Bound) and t.preemptable and t.job != task.job
                   and t.job in ssn.jobs and ssn.jobs[t.job].queue == job.queue]
        return ssn.preemptable(task, offered) if offered else None

    for job in _stuck_jobs(ctx):
        found = _way_in(ctx, job, ssn.allocatable, victims)
        if found is not None:
            task, node, chosen = found
            yield Violation("", f"preempt left job {job.uid} starving: evicting {', '.join(v.key for v in chosen)} "
                                f"on node {node.name} (legal victims, in its queue) would make room for {task.key}",
                            [f"job {job.uid}", f"task {task.key}", f"node {node.name}"]
                            + [f"task {v.key}" for v in chosen], "a pipelined task", "none")


@invariant("eviction.reclaim-progress", "reclaim leaves no starving job (minAvailable 1) of a queue that is not "
           "overused without a pipelined task when reclaiming the legal victims of one plainly open node would make "
           "room for one of its tasks", "eviction",
           "reclaim.go (every starving job of every queue not overused; Preemptive; reclaimees of other, "
           "reclaimable queues; evict until the task fits); seed 001 (Reclaimable); semantics §8.5", (ACTION,),
           severity=QUALITY)
def reclaim_progress(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action != "reclaim" or not _judgeable(ctx):
        return

    def victims(task: TaskInfo, node: NodeInfo) -> list[TaskInfo] | None:
        own = ssn.jobs[task.job].queue
        offered = []
        for t in node.tasks.values():
            job = ssn.jobs.get(t.job)
            queue = ssn.queues.get(job.queue) if job is not None else None
            if t.status == TaskStatus.Running and t.preemptable and queue is not None and job.queue != own \
                    and queue.reclaimable():
                offered.append(t.clone())
        return ssn.reclaimable(task, offered) if offered else None

    for job in _stuck_jobs(ctx):
        if overused(ssn, ssn.queues[job.queue]):
            continue
        found = _way_in(ctx, job, lambda queue, task: ssn.preemptive(queue, [task]), victims)
        if found is not None:
            task, node, chosen = found
            yield Violation("", f"reclaim left job {job.uid} starving: reclaiming {', '.join(v.key for v in chosen)} "
                                f"on node {node.name} (legal victims of other queues) would make room for {task.key}",
                            [f"job {job.uid}", f"queue {job.queue}", f"task {task.key}", f"node {node.name}"]
                            + [f"task {v.key}" for v in chosen], "a pipelined task", "none")


@invariant("allocate.work-conserving", "allocate leaves no job Pending-short when the tasks it still needs to be "
           "ready or pipelined (or one more, once it is) are identical simple pods, its queue is not overused and "
           "admits them all, and one plainly open node's FutureIdle and pod slots fit them all (jobs with a network "
           "topology aside; pending tasks PrePredicate refuses on their pod spec alone are set aside when the job "
           "can be ready without them)", "job",
           "allocate.go (every job of every queue not overused; Allocatable; predicates; Idle then FutureIdle; a "
           "PrePredicate failure continues while NeedContinueAllocating, b83a5e7a4); seed 000 (allocate); "
           "semantics §8.2", (ACTION,), severity=QUALITY)
def allocate_work_conserving(ctx: CheckContext) -> Iterator[Violation]:
    # Allocate only consumes Idle and only adds to queues' allocated, so what fits at the end of the
    # action fitted when the job's turn came; with identical tasks task order cannot matter, and with
    # one node holding them all, no node choice allocate makes can leave one without a place.
    ssn = ctx.ssn
    if ctx.action != "allocate" or not _judgeable(ctx) or ssn.conf.persistent_pipelines:
        return
    gang_only = all({name for tier in ssn.registered(point) for name, _ in tier} <= {"gang"}
                    for point in ("job_ready", "job_pipelined"))
    if not gang_only:
        return
    for job in sorted(ssn.jobs.values(), key=lambda j: j.uid):
        pending = sorted(job.tasks_with_status(TaskStatus.Pending), key=lambda t: t.uid)
        refused = [t for t in pending if _pre_predicate_refuses(ssn, t)]
        if refused:
            # each refused task is a PrePredicate failure that marks its role failed and asks
            # NeedContinueAllocating, which goes on only for a job of more tasks than minMember with no
            # role minimums or subgroups; a task of a failed role is skipped afterwards
            roles = {t.task_role for t in refused}
            pending = [t for t in pending if t not in refused]
            if job.min_available >= len(job.tasks) or job.contains_sub_job_policy() \
                    or any(t.task_role and t.task_role in roles for t in pending):
                continue
        queue = ssn.queues.get(job.queue)
        if not pending or queue is None or job.task_min_available or not all(_simple_task(t) for t in pending):
            continue
        if any(not t.init_resreq.equal(pending[0].init_resreq, Zero) or not t.resreq.equal(pending[0].resreq, Zero)
               for t in pending):
            continue
        if (job.is_pending() and "enqueue" in ssn.enabled_actions) or ssn.job_valid(job) is not None:
            continue
        if job.contains_network_topology():
            continue  # the hypernode a job may use is a constraint this rule does not restate
        need = max(1, job.min_available - job.ready_task_num() - job.waiting_task_num())
        if need > len(pending) or overused(ssn, queue) or not _queue_admits(ssn, queue, pending[0], need):
            continue
        task = pending[0]
        room = task.init_resreq.clone().multi(need)
        node = next((n for n in ssn.node_list if _plainly_open(ssn, n, task)
                     and len(n.tasks) + need <= n.allocatable.max_task_num
                     and room.less_equal(n.future_idle(), Zero)), None)
        if node is not None:
            yield Violation("", f"allocate left job {job.uid} with {len(pending)} task(s) Pending although node "
                                f"{node.name} is open to them with FutureIdle <{node.future_idle()}> for the {need} "
                                f"it needs (<{task.init_resreq}> each) and queue {job.queue} admits them",
                            [f"job {job.uid}", f"task {task.key}", f"node {node.name}"],
                            f"{need} task(s) placed", "none")


def _pre_predicate_refuses(ssn: Any, task: TaskInfo) -> bool:
    """The predicates plugin's PrePredicate fails on the pod spec alone, whatever the cluster holds: one of
    NodeAffinity's required terms pins no node name (an empty intersection of metadata.name In lists)."""
    if not task.pod.node_affinity or not required_terms_conflict(task.pod):
        return False
    return any(name == "predicates" and getattr(getattr(fn, "__self__", None), "node_affinity_enable", False)
               for tier in ssn.registered("pre_predicate") for name, fn in tier)


def _queue_admits(ssn: Any, queue: Any, task: TaskInfo, count: int) -> bool:
    """Allocatable for `count` tasks like this one at once (the plugins read only the request)."""
    if count == 1:
        return ssn.allocatable(queue, task)
    probe = task.clone()
    probe.resreq = task.resreq.clone().multi(count)
    probe.init_resreq = task.init_resreq.clone().multi(count)
    return ssn.allocatable(queue, probe)
