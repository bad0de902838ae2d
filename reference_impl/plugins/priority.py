"""priority: order and preemption by priority (pkg/scheduler/plugins/priority/priority.go; semantics §9.2)."""

from __future__ import annotations

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.sub_job_info import SubJobInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import EvictionContext, EvictionKind
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, Session


def _higher_first(left: int, right: int) -> int:
    if left == right:
        return 0
    return -1 if left > right else 1


def task_order(left: TaskInfo, right: TaskInfo) -> int:
    return _higher_first(left.priority, right.priority)


def job_order(left: JobInfo, right: JobInfo) -> int:
    return _higher_first(left.priority, right.priority)


def sub_job_order(left: SubJobInfo, right: SubJobInfo) -> int:
    """SubJobOrderFn: the subjob of the higher priority first (its highest task priority, see sub_job_info)."""
    return _higher_first(left.priority, right.priority)


def job_starving(job: JobInfo) -> bool:
    """Fewer ready-or-pipelined tasks than tasks of any status."""
    return job.ready_task_num() + job.waiting_task_num() < len(job.tasks)


class PriorityPlugin(Plugin):
    name = "priority"

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_fn("task_order", self.name, task_order)
        ssn.add_fn("job_order", self.name, job_order)
        ssn.add_fn("sub_job_order", self.name, sub_job_order)

        def preemptable(preemptor: TaskInfo, preemptees: list[TaskInfo]):
            preemptor_job = ssn.jobs.get(preemptor.job)
            if preemptor_job is None:
                return None, PERMIT
            victims = []
            for preemptee in preemptees:
                preemptee_job = ssn.jobs.get(preemptee.job)
                if preemptee_job is None:
                    continue
                if preemptee_job.uid != preemptor_job.uid:
                    if preemptee_job.priority < preemptor_job.priority:
                        victims.append(preemptee)
                elif preemptee.priority < preemptor.priority:
                    victims.append(preemptee)
            return victims, PERMIT

        ssn.add_fn("preemptable", self.name, preemptable)
        ssn.add_fn("job_starving", self.name, job_starving)

        def unified_evictable(context: EvictionContext, candidates: list[TaskInfo]):
            if context.kind == EvictionKind.GangReclaim:
                return list(candidates), PERMIT
            victims = [c for c in candidates if ssn.jobs[c.job].priority < context.job.priority]
            return victims, PERMIT

        ssn.add_fn("unified_evictable", self.name, unified_evictable)


register_plugin_builder(PriorityPlugin.name, PriorityPlugin)
