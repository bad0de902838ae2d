"""shuffle: evict the victims the VictimTasks plugins choose (pkg/scheduler/actions/shuffle/shuffle.go;
semantics §8.6).

Every Running task of every job is a candidate; ssn.victim_tasks picks the victims (the first tier
whose plugins name any, as a union), and each is evicted at once through the session-level
ssn.evict: no statement, no gang check, no JobPipelined vote. An eviction the cache refuses is
skipped. Upstream walks maps here (jobs, tasks, the victim set), so its order is random; the
reference keeps the session's order.
"""

from __future__ import annotations

from reference_impl.actions.base import Action, register_action
from reference_impl.api.task_info import TaskInfo
from reference_impl.api.types import TaskStatus
from reference_impl.cache.errors import CacheError
from reference_impl.framework.session import Session

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
