"""shuffle: evict the victims the VictimTasks plugins choose (pkg/scheduler/actions/shuffle/shuffle.go;
semantics §8.6).

Every Running task of every job is a candidate; ssn.victim_tasks picks the victims (the first tier
whose plugins name any, as a union), and each is evicted at once through the session-level
ssn.evict: no statement, no gang check, no JobPipelined vote. An eviction the cache refuses is
skipped. Upstream walks maps here (jobs, tasks, the victim set), so its order is random; the
reference keeps the session's order.
"""

from __future__ import annotations

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.cache.errors import CacheError
from schedcheck.reference.framework.session import Session

EVICT_REASON = "shuffle"


def running_tasks(ssn: Session) -> list[TaskInfo]:
    return [task for job in ssn.jobs.values() for task in job.tasks.values() if task.status == TaskStatus.Running]


class Shuffle(Action):
    name = "shuffle"

    def execute(self, ssn: Session) -> None:
        for victim in ssn.victim_tasks(running_tasks(ssn)):
            try:
                ssn.evict(victim, EVICT_REASON)
            except CacheError:
                continue  # upstream logs the failure and goes on with the next victim


register_action(Shuffle)
