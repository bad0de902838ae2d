"""preempt: evict lower-priority work of the same queue for starving jobs
(pkg/scheduler/actions/preempt/preempt.go; semantics §8.4).

Candidate jobs are those not pending, valid, with a known queue and starving. Queues are popped in
queue order, each once. Within a queue:

- phase A (between jobs): each preemptor job is popped once; its pending tasks preempt tasks of
  other jobs of the same queue while the job is starving; the job's statement is committed when
  JobPipelined holds, discarded otherwise. The job is never pushed back.
- phase B (within a job): for every starving job of the queue, its currently pending tasks preempt
  lower-priority tasks of the same job, one statement per task, committed on success; the first
  failure discards and ends that job. No JobStarving / JobPipelined check here.

The preemptor is always Pipelined (never allocated) on the chosen node, with EvictionOccurred set
when something was evicted for it. The topology-aware variant lives in preempt_topology.py.

A job with a network topology (its own or a subgroup's) never preempts, as upstream (its TODO names
volcano-sh/volcano#4374). Not modelled: scheduler sharding (one node group; upstream's second,
other-shard group is then empty).
"""

from __future__ import annotations

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.actions.preempt_topology import (
    TopologySettings,
    topology_aware_preempt,
)
from schedcheck.reference.actions.victims import (
    TaskFilter,
    clone_filtered_tasks,
    guided_order,
    pod_priority,
    pod_terminating_by_preemption,
    preemption_policy_never,
    validate_victims,
)
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus, preemptable_status
from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import (
    PredicateHelper,
    split_by_shard,
    prioritize_nodes,
    sort_nodes,
)

PREDICATE_ERROR_CACHE_KEY = "predicateErrorCacheEnable"
ENABLE_TOPOLOGY_AWARE_PREEMPTION_KEY = "enableTopologyAwarePreemption"
TOPOLOGY_AWARE_PREEMPT_WORKER_NUM_KEY = "topologyAwarePreemptWorkerNum"
MIN_CANDIDATE_NODES_PERCENTAGE_KEY = "minCandidateNodesPercentage"
MIN_CANDIDATE_NODES_ABSOLUTE_KEY = "minCandidateNodesAbsolute"
MAX_CANDIDATE_NODES_ABSOLUTE_KEY = "maxCandidateNodesAbsolute"


def pending_task_queue(ssn: Session, job: JobInfo) -> PriorityQueue:
    """The job's Pending, non-gated tasks in task order (preemptorTasks / intraJobPreemptors)."""
    tasks: PriorityQueue = PriorityQueue(ssn.task_order_fn)
    for task in job.tasks_with_status(TaskStatus.Pending):
        if not task.sch_gated:
            tasks.push(task)
    return tasks


def between_jobs_filter(ssn: Session, preemptor_job: JobInfo, preemptor: TaskInfo) -> TaskFilter:
    """Phase A victims: Bound|Running, preemptable, BestEffort rule, another job of the same queue."""
    jobs, queue, job_uid, best_effort = ssn.jobs, preemptor_job.queue, preemptor.job, preemptor.best_effort

    def accept(task: TaskInfo) -> bool:
        if not preemptable_status(task.status):
            return False
        if best_effort and not task.best_effort:
            return False
        if not task.preemptable:
            return False
        job = jobs.get(task.job)
        if job is None:
            return False
        return job.queue == queue and task.job != job_uid

    return accept


def within_job_filter(preemptor: TaskInfo) -> TaskFilter:
    """Phase B victims: Bound|Running, preemptable, BestEffort rule, the preemptor's own job."""
    job_uid, best_effort = preemptor.job, preemptor.best_effort

    def accept(task: TaskInfo) -> bool:
        if not preemptable_status(task.status):
            return False
        if best_effort and not task.best_effort:
            return False
        return task.preemptable and task.job == job_uid

    return accept


class Preempt(Action):
    name = "preempt"

    def execute(self, ssn: Session) -> None:
        """Execute: collect preemptors, then per queue phase A and phase B."""
        self.ssn = ssn
        self._parse_arguments()
        self.helper = PredicateHelper(ssn)  # one helper (and error cache) for the whole action
        jobs_by_queue, tasks_by_job, under_request = self._collect_preemptors()
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        for queue_id in jobs_by_queue:
            queue = ssn.queues.get(queue_id)
            if queue is not None:
                queues.push(queue)
        while not queues.empty():
            queue = queues.pop()
            self._preempt_between_jobs(jobs_by_queue[queue.uid], tasks_by_job)
            for job in under_request.get(queue.uid, ()):
                self._preempt_within_job(job)

    def _parse_arguments(self) -> None:
        args = as_arguments(self.ssn.action_arguments(self.name))
        self.enable_predicate_error_cache = args.get_bool(PREDICATE_ERROR_CACHE_KEY, True)
        self.enable_topology_aware_preemption = args.get_bool(ENABLE_TOPOLOGY_AWARE_PREEMPTION_KEY, False)
        self.topology = TopologySettings(
            worker_num=args.get_int(TOPOLOGY_AWARE_PREEMPT_WORKER_NUM_KEY, 16),  # read, unused: sequential
            min_candidate_nodes_percentage=args.get_int(MIN_CANDIDATE_NODES_PERCENTAGE_KEY, 10),
            min_candidate_nodes_absolute=args.get_int(MIN_CANDIDATE_NODES_ABSOLUTE_KEY, 1),
            max_candidate_nodes_absolute=args.get_int(MAX_CANDIDATE_NODES_ABSOLUTE_KEY, 100),
        )

    def _collect_preemptors(
        self,
    ) -> tuple[dict[str, PriorityQueue], dict[str, PriorityQueue], dict[str, list[JobInfo]]]:
        """Starving, valid, non-pending jobs with a queue: per-queue job heaps and task heaps."""
        ssn = self.ssn
        jobs_by_queue: dict[str, PriorityQueue] = {}
        tasks_by_job: dict[str, PriorityQueue] = {}
        under_request: dict[str, list[JobInfo]] = {}
        for job in ssn.jobs.values():  # upstream walks a Go map; the reference uses snapshot order
            if job.is_pending() or ssn.job_valid(job) is not None:
                continue
            if job.queue not in ssn.queues or not ssn.job_starving(job):
                continue
            if job.contains_network_topology():
                continue  # upstream: jobs with a network topology do not preempt yet (volcano-sh/volcano#4374)
            if job.queue not in jobs_by_queue:
                jobs_by_queue[job.queue] = PriorityQueue(ssn.job_order_fn)
            jobs_by_queue[job.queue].push(job)
            under_request.setdefault(job.queue, []).append(job)
            tasks_by_job[job.uid] = pending_task_queue(ssn, job)
        return jobs_by_queue, tasks_by_job, under_request

    # -- phases -------------------------------------------------------------------------

    def _preempt_between_jobs(self, jobs: PriorityQueue, tasks_by_job: dict[str, PriorityQueue]) -> None:
        """Phase A: one statement per preemptor job, committed only when the job is pipelined."""
        ssn = self.ssn
        while not jobs.empty():
            job = jobs.pop()
            tasks = tasks_by_job[job.uid]
            stmt = Statement(ssn)
            while ssn.job_starving(job) and not tasks.empty():
                preemptor = tasks.pop()
                self.preempt(stmt, preemptor, between_jobs_filter(ssn, job, preemptor))
            if ssn.job_pipelined(job):
                stmt.commit()
            else:
                stmt.discard()

    def _preempt_within_job(self, job: JobInfo) -> None:
        """Phase B: a statement per pending task, committed on success; stop at the first failure."""
        ssn = self.ssn
        tasks = pending_task_queue(ssn, job)
        while not tasks.empty():
            preemptor = tasks.pop()
            stmt = Statement(ssn)
            if not self.preempt(stmt, preemptor, within_job_filter(preemptor)):
                stmt.discard()
                return
            stmt.commit()

    # -- one preemptor ------------------------------------------------------------------

    def preempt(self, stmt: Statement, preemptor: TaskInfo, task_filter: TaskFilter) -> bool:
        """preempt(): eligibility, PrePredicate, node filtering (no resource check), then a strategy."""
        ssn = self.ssn
        if not self.task_eligible_to_preempt(preemptor):
            return False
        if ssn.pre_predicate_fn(preemptor) is not None:
            return False
        nodes = ssn.filter_out_unschedulable_and_unresolvable_nodes(preemptor)
        candidates, _ = self.helper.predicate_nodes(preemptor, nodes, ssn.predicate_for_preempt_action,
                                                    self.enable_predicate_error_cache)
        for group in split_by_shard(ssn, candidates):  # soft sharding: this shard's nodes first
            if self.enable_topology_aware_preemption:
                if topology_aware_preempt(ssn, self.topology, stmt, preemptor, task_filter, group):
                    return True
            elif self.normal_preempt(stmt, preemptor, task_filter, group):
                return True
        return False

    def task_eligible_to_preempt(self, preemptor: TaskInfo) -> bool:
        """taskEligibleToPreempt: preemptionPolicy Never, and the nominated-node rules."""
        if preemption_policy_never(preemptor):
            return False
        nominated = preemptor.pod.nominated_node_name
        if not nominated:
            return True
        node = self.ssn.nodes.get(nominated)
        if node is None:
            return False  # the nominated node is not in the session
        err = self.ssn.predicate_fn(preemptor, node)
        if err is None or not isinstance(err, FitError):
            return False  # already schedulable there, or a non-FitError
        if StatusCode.UnschedulableAndUnresolvable in err.codes():
            return True
        priority = pod_priority(preemptor.pod)
        for task in node.tasks.values():
            if pod_priority(task.pod) < priority and pod_terminating_by_preemption(task.pod):
                return False  # an earlier preemption for it is still terminating there
        return True

    def normal_preempt(self, stmt: Statement, preemptor: TaskInfo, task_filter: TaskFilter,
                       nodes: list[NodeInfo]) -> bool:
        """normalPreempt: nodes by descending score; the first node where evicting suffices wins."""
        ssn = self.ssn
        ordered = sort_nodes(prioritize_nodes(ssn, preemptor, nodes), ssn, preemptor) if nodes else []
        job = ssn.jobs.get(preemptor.job)
        if job is None:
            return False
        queue = ssn.queues.get(job.queue)
        for node in ordered:
            victims = ssn.preemptable(preemptor, guided_order(ssn, clone_filtered_tasks(node, task_filter)))
            if not validate_victims(preemptor, node, victims):
                continue
            node_stmt = Statement(ssn)
            if self._evict_until_fits(node_stmt, queue, preemptor, node, victims or []):
                stmt.merge(node_stmt)
                return True
        return False

    def _evict_until_fits(self, node_stmt: Statement, queue: QueueInfo | None, preemptor: TaskInfo,
                          node: NodeInfo, victims: list[TaskInfo]) -> bool:
        """Evict in victims-queue order until the preemptor fits, then pipeline it; discard otherwise."""
        ssn = self.ssn
        victims_queue = ssn.build_victims_priority_queue(victims, preemptor)
        preempted = Resource()
        fits = self._fits_on_node(queue, preemptor, node)
        while not fits and not victims_queue.empty():
            victim = victims_queue.pop()
            node_stmt.evict(victim, "preempt")
            preempted.add(victim.resreq)
            fits = self._fits_on_node(queue, preemptor, node)
        if fits:
            try:
                node_stmt.pipeline(preemptor, node.name, not preempted.is_empty())
                return True
            except StatementError:
                pass
        node_stmt.discard()
        return False

    def _fits_on_node(self, queue: QueueInfo | None, preemptor: TaskInfo, node: NodeInfo) -> bool:
        """preemptorFitsOnNode: Allocatable(queue) && InitResreq <= FutureIdle && PredicateFn."""
        ssn = self.ssn
        return (ssn.allocatable(queue, preemptor)  # type: ignore[arg-type]
                and preemptor.init_resreq.less_equal(node.future_idle_view(), Zero)
                and ssn.predicate_fn(preemptor, node) is None)


register_action(Preempt)
