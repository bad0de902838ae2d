"""Plugin state recomputed from scratch (invariants/recompute.py) and compared with what the plugin holds."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.catalog.queues import _dims_differ
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.recompute import ProportionOpening, proportion_opening, share_of
from schedcheck.invariants.registry import ACTION, collect_at_open, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource

PROPORTION_OPENING = "proportion_opening"
SESSION_CONSTANT = ("guarantee", "capability", "real_capability", "request", "elastic", "deserved")
WORDS = {"real_capability": "realCapability"}


@collect_at_open(PROPORTION_OPENING, ("queue.proportion-recomputed", "enqueue.admits-what-fits"))
def _proportion_at_open(ssn) -> ProportionOpening | None:
    return proportion_opening(ssn) if "proportion" in ssn.plugins else None


def _admitted_this_session(ctx: CheckContext, opening: ProportionOpening) -> dict[str, Resource]:
    """What enqueue's JobEnqueued added to each queue's inqueue: the full minimum of every job it admitted.
    Judged at action ends only: at close the job updater moves phases on (Inqueue to Running, Completed)."""
    added: dict[str, Resource] = {}
    if "enqueue" not in ctx.ssn.enabled_actions:
        return added  # allocate lets pending jobs through itself, without JobEnqueued
    for job in ctx.ssn.jobs.values():
        pod_group = job.pod_group
        if job.uid in opening.pending_jobs and pod_group is not None and pod_group.phase == "Inqueue" \
                and pod_group.min_resources is not None:
            minimum = Resource.from_resource_list(pod_group.min_resources)
            added.setdefault(job.queue, Resource()).add(job.deduct_sch_gated_resources(minimum))
    return added


@invariant("queue.proportion-recomputed", "proportion's per-queue deserved, realCapability, capability, "
           "guarantee, request, elastic, inqueue and share equal a from-scratch recomputation (water-filling "
           "on every dimension, the queues' jobs, the jobs enqueue admitted)", "queue",
           "seed 001 (queue model, Deserved); proportion.go OnSessionOpen, JobEnqueued, updateShare; "
           "semantics §9.4", (ACTION,), requires=("proportion",))
def proportion_recomputed(ctx: CheckContext) -> Iterator[Violation]:
    plugin = ctx.ssn.plugins.get("proportion")
    opening: ProportionOpening | None = ctx.session_state.get(PROPORTION_OPENING)
    if plugin is None or opening is None:
        return
    # enqueue tells proportion of an admission only through JobEnqueued, asked when the flag is on
    admitted = _admitted_this_session(ctx, opening) if ctx.plugin_enabled("proportion", "enableJobEnqueued") else {}
    for name, attr in plugin.queue_attrs.items():
        want = opening.queues.get(name)
        if want is None:
            yield Violation("", f"queue {name}: proportion keeps attributes for a queue with no job in the "
                                f"session", [f"queue {name}"], "no attributes", "attributes")
            continue
        for field in SESSION_CONSTANT:
            held, expected = getattr(attr, field), getattr(want, field)
            wrong = _dims_differ(held, expected)
            if wrong:
                word = WORDS.get(field, field)
                yield Violation("", f"queue {name}: proportion's {word} is <{held}> but recomputed from the "
                                    f"queues and jobs at session open it is <{expected}> (dimensions "
                                    f"{', '.join(wrong)})", [f"queue {name}"], expected.as_dict(), held.as_dict())
        inqueue = want.inqueue.clone().add(admitted.get(name, Resource()))
        wrong = _dims_differ(attr.inqueue, inqueue)
        if wrong:
            yield Violation("", f"queue {name}: proportion's inqueue is <{attr.inqueue}> but the jobs it reserves "
                                f"for (Inqueue at open, reaching minMember, or admitted by enqueue) add up to "
                                f"<{inqueue}> (dimensions {', '.join(wrong)})", [f"queue {name}"],
                            inqueue.as_dict(), attr.inqueue.as_dict())
        share = share_of(attr.allocated, attr.deserved)
        if abs(share - attr.share) > 1e-9 * max(1.0, abs(share)):
            yield Violation("", f"queue {name}: proportion's share is {attr.share:.6g} but allocated / deserved "
                                f"gives {share:.6g}: queue order and reclaim read a stale share",
                            [f"queue {name}"], share, attr.share)


@invariant("enqueue.admits-what-fits", "with proportion alone deciding admission, enqueue leaves no job Pending whose "
           "minResources + allocated + inqueue - elastic fits its queue's realCapability on the dimensions it "
           "asks for, counting every job it admitted", "queue",
           "proportion.go JobEnqueueable; enqueue.go (every pending job is tried once); semantics §8.1, §9.4",
           (ACTION,), requires=("proportion:enableJobEnqueued",))
def enqueue_admits_what_fits(ctx: CheckContext) -> Iterator[Violation]:
    # Admission only adds to inqueue, so a job that fits once every admission is counted also fitted
    # when its turn came, whatever the order: rejecting it was not proportion's rule. Judged only where
    # proportion is the deciding tier's only voter, where its verdict is the action's, so this progress
    # rule is safety.
    ssn = ctx.ssn
    opening: ProportionOpening | None = ctx.session_state.get(PROPORTION_OPENING)
    if ctx.action != "enqueue" or opening is None or ssn.operations or not _proportion_alone_decides(ssn):
        return
    admitted = _admitted_this_session(ctx, opening)
    for job in sorted(ssn.jobs.values(), key=lambda j: j.uid):
        pod_group, queue = job.pod_group, ssn.queues.get(job.queue)
        want = opening.queues.get(job.queue)
        if job.uid not in opening.pending_jobs or pod_group is None or not job.is_pending() \
                or pod_group.min_resources is None or queue is None or want is None \
                or queue.queue.state != "Open":
            continue
        minimum = job.get_min_resources()
        needed = minimum.clone().add(want.allocated).add(want.inqueue).add(admitted.get(job.queue, Resource()))
        needed.sub_without_assert(want.elastic)
        fits, _ = needed.less_equal_with_dimension_and_resources_name(want.real_capability, minimum)
        if fits:
            yield Violation("", f"job {job.uid} stayed Pending after enqueue although minResources + allocated + "
                                f"inqueue - elastic <{needed}> fits queue {job.queue}'s realCapability "
                                f"<{want.real_capability}>", [f"job {job.uid}", f"queue {job.queue}"],
                            "Inqueue", "Pending")


def _proportion_alone_decides(ssn) -> bool:
    """The first tier with a JobEnqueueable voter has proportion as its only voter."""
    for tier in ssn.registered("job_enqueueable"):
        if tier:
            return [name for name, _ in tier] == ["proportion"]
    return False


@invariant("queue.drf-share", "drf's share of every job is its largest allocated / cluster-total ratio over the "
           "cluster's dimensions (the dominant share), as the job's allocated now stands", "queue",
           "drf.go calculateShare / updateJobShare; seed 003 (DRF); semantics §9.3", (ACTION,),
           requires=("drf",), state_only=True)
def drf_share(ctx: CheckContext) -> Iterator[Violation]:
    plugin = ctx.ssn.plugins.get("drf")
    if plugin is None:
        return
    total = Resource().add(ctx.ssn.total_resource)
    names = total.resource_names()
    for uid, attr in plugin.job_attrs.items():
        want = 0.0
        for name in names:
            t, a = total.get(name), attr.allocated.get(name)
            want = max(want, (0.0 if a == 0 else 1.0) if t == 0 else a / t)
        if abs(want - attr.share) > 1e-9 * max(1.0, want):
            yield Violation("", f"job {uid}: drf's share is {attr.share:.6g} but its allocated <{attr.allocated}> "
                                f"over the cluster <{total}> gives a dominant share of {want:.6g}: job order and "
                                f"drf's preemption read a stale share", [f"job {uid}"], want, attr.share)
