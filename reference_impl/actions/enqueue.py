"""enqueue: admit PodGroups from Pending to Inqueue (pkg/scheduler/actions/enqueue/enqueue.go; semantics §8.1).

Every pending job is tried exactly once, interleaved across queues in queue
order. A job without minResources is always admitted and the admission
plugins are not asked.
"""

from __future__ import annotations

from schedcheck.reference.actions.base import Action, register_action
from schedcheck.reference.framework.session import Session
from schedcheck.reference.util.priority_queue import PriorityQueue


class Enqueue(Action):
    name = "enqueue"

    def execute(self, ssn: Session) -> None:
        queues: PriorityQueue = PriorityQueue(ssn.queue_order_fn)
        seen: set[str] = set()
        jobs_by_queue: dict[str, PriorityQueue] = {}
        for job in ssn.jobs.values():
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            if queue.uid not in seen:
                seen.add(queue.uid)
                queues.push(queue)
            if job.is_pending():
                jobs_by_queue.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
        while not queues.empty():
            queue = queues.pop()
            jobs = jobs_by_queue.get(queue.uid)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            assert job.pod_group is not None
            if job.pod_group.min_resources is None or ssn.job_enqueueable(job):
                ssn.job_enqueued(job)
                job.pod_group.phase = "Inqueue"
            queues.push(queue)


register_action(Enqueue)
