"""reclaim: take resources back from other, reclaimable queues for starving jobs
(pkg/scheduler/actions/reclaim/reclaim.go; semantics §8.5).

Queues of every non-pending, valid job enter a heap in queue order; starving jobs enter per-queue
job heaps with their Pending, non-gated tasks. A popped queue that is Overused is dropped. Each
starving job gets one statement: its tasks (while the job starves) skip preemptionPolicy Never,
a failed Preemptive(queue, task) and a failed PrePredicate, and otherwise try reclaimForTask. The
statement is committed when JobPipelined holds, discarded otherwise; the queue is pushed back
while it has jobs left (the inner loop drains them anyway, so a re-pop finds nothing).

reclaimForTask takes nodes in predicate order (no scoring): reclaimees are clones of Running (not
Bound), preemptable tasks of jobs in a different, reclaimable queue; the victims are the
Reclaimable vote, checked by ValidateVictims, evicted in victims-queue order on a per-node statement
until the task's InitResreq fits FutureIdle + evicted; then Pipeline(task, node, evicted) and merge.
Only resources are re-checked after eviction (no predicate or allocatable check).

Not modelled: scheduler sharding (the shard groups are flattened upstream, one group here).
"""

from __future__ import annotations

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.actions.victims import (
    guided_order,
    preemption_policy_never,
    validate_victims,
)
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import PredicateHelper, split_by_shard

PREDICATE_ERROR_CACHE_KEY = "predicateErrorCacheEnable"


class Reclaim(Action):
    name = "reclaim"

    def execute(self, ssn: Session) -> None:
        """Execute: queues in order, overused ones dropped, each starving job once."""
        self.ssn = ssn
        self.enable_predicate_error_cache = as_arguments(ssn.action_arguments(self.name)).get_bool(
            PREDICATE_ERROR_CACHE_KEY, True
        )
        queues, jobs_by_queue, tasks_by_job = self._build_context()
        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                continue
            jobs = jobs_by_queue.get(queue.uid)
            while jobs is not None and not jobs.empty():
                job = jobs.pop()
                self._reclaim_for_job(queue, job, tasks_by_job[job.uid])
                if not jobs.empty():
                    queues.push(queue)

    def _build_context(self) -> tuple[PriorityQueue, dict[str, PriorityQueue], dict[str, PriorityQueue]]:
        """Queues of non-pending valid jobs; starving jobs per queue; their pending tasks."""
        ssn = self.ssn
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        seen: set[str] = set()
        jobs_by_queue: dict[str, PriorityQueue] = {}
        tasks_by_job: dict[str, PriorityQueue] = {}
        for job in ssn.jobs.values():  # upstream walks a Go map; the reference uses snapshot order
            if job.is_pending() or ssn.job_valid(job) is not None:
                continue
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            if queue.uid not in seen:
                seen.add(queue.uid)
                queues.push(queue)
            if not ssn.job_starving(job):
                continue
            if job.queue not in jobs_by_queue:
                jobs_by_queue[job.queue] = PriorityQueue(ssn.job_order_fn)
            jobs_by_queue[job.queue].push(job)
            tasks: PriorityQueue = PriorityQueue(ssn.task_order_fn)
            for task in job.tasks_with_status(TaskStatus.Pending):
                if not task.sch_gated:
                    tasks.push(task)
            tasks_by_job[job.uid] = tasks
        return queues, jobs_by_queue, tasks_by_job

    def _reclaim_for_job(self, queue: QueueInfo, job: JobInfo, tasks: PriorityQueue) -> None:
        """One statement per starving job; committed only if the job ends up pipelined."""
        ssn = self.ssn
        stmt = Statement(ssn)
        while ssn.job_starving(job) and not tasks.empty():
            task = tasks.pop()
            if preemption_policy_never(task):
                continue
            if not ssn.preemptive(queue, [task]):  # upstream passes the candidates as a list
                continue
            if ssn.pre_predicate_fn(task) is not None:
                continue
            self.reclaim_for_task(stmt, task, job)
        if ssn.job_pipelined(job):
            stmt.commit()
        else:
            stmt.discard()

    def reclaim_for_task(self, stmt: Statement, task: TaskInfo, job: JobInfo) -> bool:
        """reclaimForTask: the first node (predicate order) where reclaiming makes the task fit."""
        ssn = self.ssn
        nodes = ssn.filter_out_unschedulable_and_unresolvable_nodes(task)
        helper = PredicateHelper(ssn)  # upstream builds a fresh helper per task
        candidates, _ = helper.predicate_nodes(task, nodes, ssn.predicate_for_preempt_action,
                                               self.enable_predicate_error_cache)
        inside, outside = split_by_shard(ssn, candidates)  # soft sharding: this shard's nodes first
        for node in inside + outside:
            reclaimees = self._reclaimees(node, job)
            if not reclaimees:
                continue
            victims = ssn.reclaimable(task, reclaimees)
            if not validate_victims(task, node, victims):
                continue
            node_stmt = Statement(ssn)
            if self._evict_until_fits(node_stmt, task, node, victims or []):
                stmt.merge(node_stmt)
                return True
        return False

    def _reclaimees(self, node: NodeInfo, job: JobInfo) -> list[TaskInfo]:
        """Clones of Running, preemptable tasks of jobs in another queue that is reclaimable."""
        jobs, queues, own_queue = self.ssn.jobs, self.ssn.queues, job.queue
        out = []
        for task in node.tasks.values():
            if task.status != TaskStatus.Running or not task.preemptable:
                continue
            victim_job = jobs.get(task.job)
            if victim_job is None or victim_job.queue == own_queue:
                continue
            victim_queue = queues.get(victim_job.queue)
            if victim_queue is None or not victim_queue.reclaimable():
                continue
            out.append(task.clone())
        return guided_order(self.ssn, out)

    def _evict_until_fits(self, node_stmt: Statement, task: TaskInfo, node: NodeInfo,
                          victims: list[TaskInfo]) -> bool:
        """Evict in victims-queue order until InitResreq <= FutureIdle + evicted; pipeline or discard."""
        victims_queue = self.ssn.build_victims_priority_queue(victims, task)
        request = task.init_resreq
        available = node.future_idle()
        evicted = False
        while not victims_queue.empty() and not request.less_equal(available, Zero):
            victim = victims_queue.pop()
            node_stmt.evict(victim, "reclaim")
            available.add(victim.resreq)
            evicted = True
        if request.less_equal(available, Zero):
            try:
                node_stmt.pipeline(task, node.name, evicted)
                return True
            except StatementError:
                pass
        node_stmt.discard()
        return False


register_action(Reclaim)
