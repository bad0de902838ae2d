"""gang: all-or-nothing placement (pkg/scheduler/plugins/gang/gang.go; semantics §9.1)."""

from __future__ import annotations

from collections import Counter

from schedcheck.reference.api.job_info import JobInfo, task_scheduling_reason
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus, allocated_status
from schedcheck.reference.framework.framework import (
    SCHEDULED_CONDITION,
    UNSCHEDULABLE_CONDITION,
    update_pod_group_condition,
)
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session, ValidateResult
from schedcheck.reference.k8s import PodGroupCondition

NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"
NOT_ENOUGH_PODS = "NotEnoughTasks"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"


def job_valid(job: JobInfo) -> ValidateResult | None:
    if not job.check_task_valid():
        return ValidateResult(False, NOT_ENOUGH_PODS_OF_TASK,
                              "Not enough valid pods of each task for gang-scheduling")
    if not job.check_sub_job_valid():
        return ValidateResult(False, NOT_ENOUGH_PODS_OF_TASK,
                              "Not enough valid subGroups of each task for gang-scheduling")
    valid = job.valid_task_num()
    if valid < job.min_available:
        return ValidateResult(False, NOT_ENOUGH_PODS,
                              f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_available}")
    return None


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Jobs that are not ready yet go first."""
    left_ready, right_ready = left.is_ready(), right.is_ready()
    if left_ready == right_ready:
        return 0
    return 1 if left_ready else -1


def job_ready(job: JobInfo) -> bool:
    return job.check_task_ready() and job.check_sub_job_ready() and job.is_ready()


def job_pipelined(job: JobInfo) -> int:
    return PERMIT if job.check_task_pipelined() and job.check_sub_job_pipelined() and job.is_pipelined() else REJECT


def sub_job_order(left, right) -> int:
    """SubJobs that are not ready yet go first."""
    left_ready, right_ready = left.is_ready(), right.is_ready()
    if left_ready == right_ready:
        return 0
    return 1 if left_ready else -1


def job_starving(job: JobInfo) -> bool:
    return job.is_starving()


def _skip_unschedulable_for_releasing(job: JobInfo) -> bool:
    """A job short only because its tasks are still releasing is not marked unschedulable."""
    releasing_with_node = job.releasing_scheduled_task_num()
    if releasing_with_node == 0:
        return False
    if job.task_status_index.get(TaskStatus.Pending) or job.task_status_index.get(TaskStatus.Pipelined):
        return False
    return job.scheduled_task_num() + releasing_with_node >= job.min_available


class GangPlugin(Plugin):
    name = "gang"

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_fn("job_valid", self.name, job_valid)

        def preemptable(preemptor: TaskInfo, preemptees: list[TaskInfo]):
            victims = []
            occupied: dict[str, int] = {}
            for preemptee in preemptees:
                job = ssn.jobs.get(preemptee.job)
                if job is None:
                    continue
                if job.uid not in occupied:
                    occupied[job.uid] = job.ready_task_num()
                if occupied[job.uid] > job.min_available:
                    occupied[job.uid] -= 1
                    victims.append(preemptee)
            return victims, PERMIT

        ssn.add_fn("preemptable", self.name, preemptable)
        ssn.add_fn("reclaimable", self.name, preemptable)
        # Gang-aware actions handle gang safety through their bundles: permit every candidate.
        ssn.add_fn("unified_evictable", self.name, lambda context, candidates: (list(candidates), PERMIT))
        ssn.add_fn("job_order", self.name, job_order)
        ssn.add_fn("job_ready", self.name, job_ready)
        ssn.add_fn("job_pipelined", self.name, job_pipelined)
        ssn.add_fn("job_starving", self.name, job_starving)
        ssn.add_fn("sub_job_order", self.name, sub_job_order)
        ssn.add_fn("sub_job_ready", self.name, lambda sub: sub.is_ready())
        ssn.add_fn("sub_job_pipelined", self.name, lambda sub: PERMIT if sub.is_pipelined() else REJECT)

    def on_session_close(self, ssn: Session) -> None:
        for job in ssn.jobs.values():
            if not job.tasks or job.pod_group is None:
                continue
            if not job.is_ready():
                if _skip_unschedulable_for_releasing(job):
                    continue
                schedulable = job.ready_task_num()
                for task in job.tasks_with_status(TaskStatus.Pending):
                    ctx_status = task.last_transaction.status if task.last_transaction else task.status
                    if allocated_status(ctx_status):
                        schedulable += 1
                unready = job.min_available - schedulable
                message = f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {job_fit_error(job)}"
                condition = PodGroupCondition(UNSCHEDULABLE_CONDITION, "True", ssn.uid, NOT_ENOUGH_RESOURCES, message)
            else:
                condition = PodGroupCondition(SCHEDULED_CONDITION, "True", ssn.uid,
                                              "tasks in gang are ready to be scheduled", "")
            update_pod_group_condition(job, condition)


def job_fit_error(job: JobInfo) -> str:
    """Why the job is not ready, in the shape of upstream's JobInfo.FitError."""
    histogram = {status.name: len(bucket) for status, bucket in job.task_status_index.items()}
    histogram["minAvailable"] = job.min_available
    parts = sorted(f"{n} {name}" for name, n in histogram.items())
    message = f"{'pod group is ready' if job.is_ready() else 'pod group is not ready'}, {', '.join(parts)}"
    pending: Counter[str] = Counter(task_scheduling_reason(job.tasks[uid])[0]
                                    for uid in job.task_status_index.get(TaskStatus.Pending, {}) if uid in job.tasks)
    if pending:  # the pending tasks' histogram of scheduling reasons
        message += "; Pending: " + ", ".join(sorted(f"{n} {reason}" for reason, n in pending.items()))
    if job.job_fit_errors:
        return f"{message}. Origin reason is: {job.job_fit_errors}"
    for task in job.tasks.values():
        fit_errors = job.nodes_fit_errors.get(task.uid)
        if fit_errors is not None:
            return f"{message}. Origin reason is {task.name}: {fit_errors.error()}"
    return message


register_plugin_builder(GangPlugin.name, GangPlugin)
