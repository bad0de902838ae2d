"""allocate: place pending tasks, a gang at a time (pkg/scheduler/actions/allocate/allocate.go; semantics §8.2).

Queues are popped in queue order, one job per pop; a job's tasks are taken in
task order until the job is ready, and its statement is committed only then.
A merely pipelined job's statement is neither committed nor discarded: its
decisions stay applied for the rest of the session, as upstream leaves them.

Persistent pipelines (conf pipelinePersistence: persistent; seed 004, unmerged upstream): a task
an earlier session pipelined comes back Pipelined on its node, its reservation charged to the
plugins. Before the main loop, a fast path walks those tasks (job order, then task order): one whose
node now has Idle room is allocated there, without predicates (the PR's short-cut on the pipelined
node) and without the queue checks (its share is charged already); the job's statement commits when
the job is ready (Pipelined counting as ready, as the PR has it) and is discarded otherwise, which
puts the tasks back Pipelined. A kept decision whose node left the session is released, and the task
is placed afresh by the main loop as a pending one.

Not modelled: hard network topology and subgroup policies (the hypernode
path), the gang* nomination fast path, scheduling-gate removal and sharding.
"""

from __future__ import annotations

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import (
    FitError,
    FitErrors,
    Status,
    StatusCode,
)
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import (
    PredicateHelper,
    best_node_by_idle_then_future_idle,
)

PREDICATE_ERROR_CACHE_KEY = "predicateErrorCacheEnable"


def insufficient_resource_reason(names: list[str]) -> str:
    return f"Insufficient {names[0]}" if names else "Insufficient resources"


class Allocate(Action):
    name = "allocate"

    def execute(self, ssn: Session) -> None:
        self.ssn = ssn
        self.enable_predicate_error_cache = as_arguments(ssn.action_arguments(self.name)).get_bool(
            PREDICATE_ERROR_CACHE_KEY, True
        )
        if ssn.conf.persistent_pipelines:
            self._allocate_kept_pipelines()
        queues, jobs_by_queue, tasks_by_job = self._build_context()
        self._allocate_resources(queues, jobs_by_queue, tasks_by_job)

    # -- persistent pipelines: the fast path ---------------------------------------------

    def _allocate_kept_pipelines(self) -> None:
        ssn = self.ssn
        jobs: PriorityQueue = PriorityQueue(ssn.job_order_fn)
        for job in ssn.jobs.values():
            if job.task_status_index.get(TaskStatus.Pipelined):
                jobs.push(job)
        while not jobs.empty():
            job = jobs.pop()
            tasks: PriorityQueue = PriorityQueue(ssn.task_order_fn, job.tasks_with_status(TaskStatus.Pipelined))
            stmt = Statement(ssn)
            while not tasks.empty():
                task = tasks.pop()
                node = ssn.nodes.get(task.node_name)
                if node is None:
                    ssn.release_pipelined(task)  # the node left: the main loop places it afresh
                    continue
                if task.init_resreq.less_equal(node.idle, Zero):
                    try:
                        stmt.allocate(task, node)
                    except StatementError:
                        continue  # rolled back: pipelined again
            if ssn.job_ready(job):
                stmt.commit()
            else:
                stmt.discard()

    # -- context ------------------------------------------------------------------------

    def _build_context(self):
        ssn = self.ssn
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        jobs_by_queue: dict[str, PriorityQueue] = {}
        tasks_by_job: dict[str, PriorityQueue] = {}
        for job in ssn.jobs.values():  # upstream walks a Go map here; the reference uses snapshot order
            if job.is_pending():
                if "enqueue" in ssn.enabled_actions:
                    continue
                job.pod_group.phase = "Inqueue"  # type: ignore[union-attr]
            if ssn.job_valid(job) is not None:
                continue
            if job.queue not in ssn.queues:
                continue
            tasks = self._organize_tasks(job)
            if tasks.empty():
                continue
            if job.queue not in jobs_by_queue:
                jobs_by_queue[job.queue] = PriorityQueue(ssn.job_order_fn)
                queues.push(ssn.queues[job.queue])
            jobs_by_queue[job.queue].push(job)
            tasks_by_job[job.uid] = tasks
        return queues, jobs_by_queue, tasks_by_job

    def _organize_tasks(self, job: JobInfo) -> PriorityQueue:
        tasks: PriorityQueue = PriorityQueue(self.ssn.task_order_fn)
        for task in job.tasks_with_status(TaskStatus.Pending):
            if task.sch_gated and task.is_sch_gated_by_others():
                continue
            if task.resreq.is_empty():
                continue  # BestEffort: left to backfill
            tasks.push(task)
        return tasks

    # -- main loop ----------------------------------------------------------------------

    def _allocate_resources(self, queues, jobs_by_queue, tasks_by_job) -> None:
        ssn = self.ssn
        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                continue  # dropped for the rest of the action
            jobs = jobs_by_queue.get(queue.uid)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            tasks = tasks_by_job[job.uid]
            stmt = self.allocate_resources_for_tasks(job, tasks)
            if stmt is not None and ssn.job_ready(job):
                stmt.commit()
                if len(tasks) > 0:
                    jobs.push(job)
            queues.push(queue)

    def allocate_resources_for_tasks(self, job: JobInfo, tasks: PriorityQueue) -> Statement | None:
        ssn = self.ssn
        queue = ssn.queues[job.queue]
        nodes = ssn.node_list
        if not nodes:
            return None
        stmt = Statement(ssn)
        helper = PredicateHelper(ssn)
        while not tasks.empty():
            task = tasks.pop()
            if not ssn.allocatable(queue, task):
                continue
            if task.sch_gated:
                continue
            if job.task_has_fit_errors(task):
                fit_errors = FitErrors()
                fit_errors.set_error(f"Task {task.name} with role spec {task.task_role} has already predicated failed, skip")
                job.nodes_fit_errors[task.uid] = fit_errors
                continue
            err = ssn.pre_predicate_fn(task)
            if err is not None:
                fit_errors = FitErrors()
                for node in nodes:
                    fit_errors.set_node_error(node.name, err)
                job.nodes_fit_errors[task.uid] = fit_errors
                if job.need_continue_allocating():
                    continue
                break
            candidates: list[NodeInfo] = []
            fit_errors = None
            nominated = ssn.nodes.get(task.pod.nominated_node_name) if task.pod.nominated_node_name else None
            if nominated is not None and task.init_resreq.less_equal(nominated.future_idle_view(), Zero):
                candidates, fit_errors = helper.predicate_nodes(task, [nominated], self.predicate,
                                                                self.enable_predicate_error_cache)
            if not candidates:
                candidates, fit_errors = helper.predicate_nodes(task, nodes, self.predicate,
                                                                self.enable_predicate_error_cache)
            if not candidates:
                job.nodes_fit_errors[task.uid] = fit_errors  # type: ignore[assignment]
                if job.need_continue_allocating():
                    continue
                break
            best = self.prioritize_nodes(task, candidates)
            if best is None:
                continue
            try:
                self.allocate_resources_for_task(stmt, task, best)
            except StatementError:
                continue
            if ssn.job_ready(job):
                break
        if ssn.job_ready(job):
            return stmt
        if ssn.job_pipelined(job):
            return stmt
        stmt.discard()
        return None

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        ok, names = task.init_resreq.less_equal_with_resources_name(node.future_idle_view(), Zero)
        if not ok:
            return FitError(task.key, node.name, [Status(StatusCode.Unschedulable, insufficient_resource_reason(names))])
        return self.ssn.predicate_for_allocate_action(task, node)

    def prioritize_nodes(self, task: TaskInfo, candidates: list[NodeInfo]) -> NodeInfo | None:
        """Idle-fitting nodes first, then FutureIdle-fitting ones; score only when several remain."""
        return best_node_by_idle_then_future_idle(self.ssn, task, candidates)

    def allocate_resources_for_task(self, stmt: Statement, task: TaskInfo, node: NodeInfo) -> None:
        if task.init_resreq.less_equal(node.idle, Zero):
            stmt.allocate(task, node)
        elif task.init_resreq.less_equal(node.future_idle_view(), Zero):
            stmt.pipeline(task, node.name, False)


register_action(Allocate)
