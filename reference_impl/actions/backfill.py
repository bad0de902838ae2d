"""backfill: place BestEffort tasks (pkg/scheduler/actions/backfill/backfill.go; semantics §8.3).

No resource check: only predicates (e.g. the pod-count limit) bound density.
Each task goes through the session-level allocate, which dispatches all of a
job's allocated tasks once the job is ready.
"""

from __future__ import annotations

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import FitErrors
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.util.priority_queue import PriorityQueue
from schedcheck.reference.util.scheduler_helper import PredicateHelper, best_scored_node, split_by_shard


class Backfill(Action):
    name = "backfill"

    def execute(self, ssn: Session) -> None:
        enable_cache = as_arguments(ssn.action_arguments(self.name)).get_bool("predicateErrorCacheEnable", True)
        for task in self._pick_up_pending_tasks(ssn):
            job = ssn.jobs[task.job]
            helper = PredicateHelper(ssn)
            err = ssn.pre_predicate_fn(task)
            if err is not None:
                fit_errors = FitErrors()
                for node in ssn.node_list:
                    fit_errors.set_node_error(node.name, err)
                job.nodes_fit_errors[task.uid] = fit_errors
                continue
            candidates, fit_errors = helper.predicate_nodes(
                task, ssn.node_list, ssn.predicate_for_allocate_action, enable_cache
            )
            if not candidates:
                job.nodes_fit_errors[task.uid] = fit_errors
                continue
            node = candidates[0]
            if len(candidates) > 1:
                for group in split_by_shard(ssn, candidates):  # soft sharding: this shard's nodes first
                    node = best_scored_node(ssn, task, group)
                    if node is not None:
                        break
            if node is None:
                continue
            err = ssn.allocate(task, node)
            if err is not None:
                fit_errors = FitErrors()
                fit_errors.set_node_error(node.name, err)
                job.nodes_fit_errors[task.uid] = fit_errors

    def _pick_up_pending_tasks(self, ssn: Session) -> list[TaskInfo]:
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        jobs: dict[str, PriorityQueue] = {}
        tasks: dict[str, PriorityQueue] = {}
        for job in ssn.jobs.values():
            if job.is_pending() or ssn.job_valid(job) is not None:
                continue
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            for task in job.tasks_with_status(TaskStatus.Pending):
                if task.best_effort and not task.sch_gated:
                    tasks.setdefault(job.uid, PriorityQueue(ssn.task_order_fn)).push(task)
            for task in job.tasks_with_status(TaskStatus.Pipelined):
                if not task.best_effort:
                    continue
                Statement(ssn).un_pipeline(task)  # a statement never committed nor discarded
                tasks.setdefault(job.uid, PriorityQueue(ssn.task_order_fn)).push(task)
            if job.uid not in tasks:
                continue
            if queue.uid not in jobs:
                queues.push(queue)
                jobs[queue.uid] = PriorityQueue(ssn.job_order_fn)
            jobs[queue.uid].push(job)
        ordered: list[TaskInfo] = []
        while not queues.empty():
            queue = queues.pop()
            while not jobs[queue.uid].empty():
                job = jobs[queue.uid].pop()
                while not tasks[job.uid].empty():
                    ordered.append(tasks[job.uid].pop())
        return ordered


register_action(Backfill)
