"""gangreclaim: gang-aware reclaim across queues (pkg/scheduler/actions/gangreclaim/gangreclaim.go;
semantics §8.7).

The same loop as gangpreempt (see reference_impl/actions/gangpreempt.py for the bundles, the
nomination plan and what the single-domain model leaves out), with these differences:
- an Overused queue is skipped entirely;
- a job's pending tasks must pass ssn.preemptive(queue, pending) (all of them at once) before any
  victim is looked for;
- candidates are Running (not Bound) preemptable tasks of jobs in OTHER queues, whose PodGroup does
  not opt out of preemption and whose queue is reclaimable; job priority plays no part;
- bundles of different victim queues are ordered by VictimQueueOrderFn(l, r, reclaimer's queue)
  (QueueOrderFn when the reclaimer's queue is unknown); within a queue by ROI, then job UID;
- UnifiedEvictable is asked with kind GangReclaim.
"""

from __future__ import annotations

from schedcheck.reference.actions.base import register_action
from schedcheck.reference.actions.gangpreempt import (
    REASON_GANG_RECLAIM,
    GangEvictionAction,
    is_job_preemptable_for_gang_eviction,
)
from schedcheck.reference.actions.utils.bundle import (
    Bundle,
    BundleLess,
    sort_bundles,
)
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.queue_info import QueueInfo
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import EvictionKind, TaskStatus
from schedcheck.reference.framework.session import Session


def victim_queue_less(ssn: Session, reclaimer_queue: str) -> BundleLess:
    """SortBundlesForReclaim's queue key, decided only between bundles of different queues."""

    def queue_less(left: QueueInfo, right: QueueInfo) -> bool:
        own = ssn.queues.get(reclaimer_queue)
        if own is None:
            return ssn.queue_order_fn(left, right)
        return ssn.victim_queue_order_fn(left, right, own)

    def less(left: Bundle, right: Bundle) -> bool | None:
        left_queue, right_queue = ssn.queues.get(left.job.queue), ssn.queues.get(right.job.queue)
        if left_queue is None or right_queue is None or left_queue.uid == right_queue.uid:
            return None
        ij, ji = queue_less(left_queue, right_queue), queue_less(right_queue, left_queue)
        return ij if ij != ji else None

    return less


class GangReclaim(GangEvictionAction):
    name = "gangreclaim"
    reason = REASON_GANG_RECLAIM
    kind = EvictionKind.GangReclaim
    skip_overused_queues = True

    def admits(self, queue: QueueInfo, pending: list[TaskInfo]) -> bool:
        return self.ssn.preemptive(queue, pending)  # all pending tasks at once, as upstream

    def is_candidate(self, job: JobInfo, task: TaskInfo) -> bool:
        """Running, preemptable, another queue, a job that allows it, a reclaimable queue."""
        if task.status != TaskStatus.Running or not task.preemptable:
            return False
        victim_job = self.ssn.jobs.get(task.job)
        if victim_job is None or victim_job.queue == job.queue:
            return False
        if not is_job_preemptable_for_gang_eviction(victim_job):
            return False
        victim_queue = self.ssn.queues.get(victim_job.queue)
        return victim_queue is not None and victim_queue.reclaimable()

    def sort(self, bundles: list[Bundle], need: Resource, job: JobInfo) -> None:
        sort_bundles(bundles, need, victim_queue_less(self.ssn, job.queue))


register_action(GangReclaim)
