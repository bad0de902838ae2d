"""Admission: enqueue lets in only what the queue can hold (proportion.go JobEnqueueable; semantics §8.1, §9.4)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import PODS, Resource
from schedcheck.reference.plugins.util import inqueue_resource


def _requested_dims(minimum: Resource) -> set[str]:
    return {name for name, value in minimum.as_dict().items() if value > 0 and name != PODS}


def decides_admission(ssn, plugin: str) -> bool:
    """A plugin's JobEnqueueable vote counts only if no admission plugin sits in an earlier tier: an
    earlier tier's Permit ends the vote (e.g. sla once the waiting time has passed; semantics §6.2, §9.11)."""
    for tier in ssn.tiers:
        voters = [o.name for o in tier.plugins if o.enabled("enableJobEnqueued") and o.name in ssn.plugins
                  and ssn._fns["job_enqueueable"].get(o.name) is not None]
        if plugin in voters:
            return True
        if voters:
            return False
    return False


def _proportion_decides(ssn) -> bool:
    return decides_admission(ssn, "proportion")


@invariant("enqueue.within-real-capability", "after enqueue, a queue's allocated + admitted minimums - elastic "
           "stays within its realCapability on the dimensions every admitted job asks for", "queue",
           "proportion.go JobEnqueueable/JobEnqueued; semantics §8.1, §9.4", (ACTION,), requires=("proportion:enableJobEnqueued",))
def enqueue_within_real_capability(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    plugin = ssn.plugins.get("proportion")
    if ctx.action != "enqueue" or plugin is None or ssn.operations or not _proportion_decides(ssn):
        return  # only when enqueue ran before anything was placed, so allocations are those of the open
    admitted: dict[str, list] = {}
    for job in ssn.jobs.values():
        was = ssn.pod_group_old_phase.get(job.uid, "")
        if job.pod_group is not None and job.pod_group.min_resources is not None and was in ("", "Pending") \
                and job.pod_group.phase == "Inqueue":
            admitted.setdefault(job.queue, []).append(job)
    for queue, jobs in sorted(admitted.items()):
        attr = plugin.queue_attrs.get(queue)
        if attr is None:
            continue
        dims = set.intersection(*(_requested_dims(j.get_min_resources()) for j in jobs))
        total = attr.allocated.clone()
        elastic = Resource()
        for job in ssn.jobs.values():
            if job.queue != queue:
                continue
            elastic.add(job.get_elastic_resources())
            if job.pod_group is None or job.pod_group.min_resources is None:
                continue
            if job in jobs:
                total.add(job.deduct_sch_gated_resources(job.get_min_resources()))
            elif job.pod_group.phase == "Inqueue" or (
                    job.pod_group.phase == "Running" and job.allocated_task_num() >= job.pod_group.min_member):
                total.add(job.deduct_sch_gated_resources(inqueue_resource(job, job.allocated)))
        total.sub_without_assert(elastic)
        over = sorted(d for d in dims if total.get(d) > attr.real_capability.get(d))
        if over:
            yield Violation("", f"queue {queue}: enqueue admitted {', '.join(j.uid for j in jobs)} although "
                                f"allocated + admitted minimums - elastic <{total}> exceeds realCapability "
                                f"<{attr.real_capability}> on {', '.join(over)}",
                            [f"queue {queue}"] + [f"job {j.uid}" for j in jobs],
                            {d: attr.real_capability.get(d) for d in over}, {d: total.get(d) for d in over})
