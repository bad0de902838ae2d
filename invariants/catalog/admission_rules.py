"""Admission decisions judged against each admission plugin's rule, restated (enqueue; seed 003, semantics §8.1)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from schedcheck.invariants.catalog.admission import decides_admission
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.recompute import reserved_minimum
from schedcheck.invariants.registry import ACTION, collect_at_open, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.types import allocated_status

OVERCOMMIT_OPENING = "overcommit_opening"
DEFAULT_FACTOR = 1.2


@dataclass
class OvercommitOpening:
    idle: Resource  # Σ allocatable · factor − Σ used, at open
    inqueue: Resource  # what Inqueue jobs (and Running ones at minMember) still reserve, at open
    pending: set[str]
    decisive: bool  # no admission plugin sits in a tier before overcommit's, so its Reject stands


def _factor(arguments: dict) -> float:
    raw = arguments.get("overcommit-factor", DEFAULT_FACTOR)
    try:
        factor = float(raw)
    except (TypeError, ValueError):
        factor = DEFAULT_FACTOR
    return DEFAULT_FACTOR if factor < 1.0 else factor


def _arguments(ssn, plugin: str) -> dict:
    for tier in ssn.tiers:
        for option in tier.plugins:
            if option.name == plugin:
                return dict(option.arguments or {})
    return {}


@collect_at_open(OVERCOMMIT_OPENING, ("enqueue.overcommit", "enqueue.overcommit-admits-what-fits"))
def _overcommit_at_open(ssn) -> OvercommitOpening | None:
    if "overcommit" not in ssn.plugins:
        return None
    decisive, arguments = decides_admission(ssn, "overcommit"), _arguments(ssn, "overcommit")
    used = Resource()
    for node in ssn.nodes.values():
        used.add(node.used)
    idle = Resource().add(ssn.total_resource).multi(_factor(arguments)).sub_without_assert(used)
    inqueue = Resource()
    pending = set()
    for job in ssn.jobs.values():
        pod_group = job.pod_group
        if pod_group is None:
            continue
        if job.is_pending():
            pending.add(job.uid)
        if pod_group.min_resources is None:
            continue
        if pod_group.phase == "Inqueue":
            inqueue.add(job.deduct_sch_gated_resources(Resource.from_resource_list(pod_group.min_resources)))
        elif pod_group.phase == "Running":
            allocated = Resource()
            count = 0
            for task in job.tasks.values():
                if allocated_status(task.status):
                    allocated.add(task.resreq)
                    count += 1
            if count >= pod_group.min_member:
                inqueue.add(job.deduct_sch_gated_resources(reserved_minimum(job, allocated)))
    return OvercommitOpening(idle, inqueue, pending, decisive)


def _over(wanted: Resource, idle: Resource, minimum: Resource) -> list[str]:
    """The dimensions minResources asks for (pods aside) on which `wanted` exceeds `idle`."""
    names = [n for n in minimum.resource_names() if n != "pods" and minimum.get(n) > 0]
    return [n for n in names if wanted.get(n) > idle.get(n) + max(0.1, 1e-9 * abs(idle.get(n)))]


@invariant("enqueue.overcommit", "with overcommit deciding admission, enqueue admits a job with minResources only "
           "if what is already inqueue plus its minimum fits the overcommitted idle (Σ allocatable · factor − Σ "
           "used) on the dimensions it asks for", "queue",
           "overcommit.go JobEnqueueable / JobEnqueued; seed 003 (enqueue); semantics §8.1, §9.9", (ACTION,),
           requires=("overcommit:enableJobEnqueued",))
def enqueue_overcommit(ctx: CheckContext) -> Iterator[Violation]:
    opening: OvercommitOpening | None = ctx.session_state.get(OVERCOMMIT_OPENING)
    if ctx.action != "enqueue" or opening is None or not opening.decisive:
        return
    admitted = [job for job in ctx.ssn.jobs.values() if job.uid in opening.pending and job.pod_group is not None
                and job.pod_group.phase == "Inqueue" and job.pod_group.min_resources is not None]
    if not admitted:
        return
    minimums = {job.uid: Resource.from_resource_list(job.pod_group.min_resources) for job in admitted}
    reserved = {job.uid: job.deduct_sch_gated_resources(minimums[job.uid]) for job in admitted}
    for job in admitted:  # each was admitted on top of at least what was inqueue at open
        wanted = opening.inqueue.clone().add(minimums[job.uid])
        over = _over(wanted, opening.idle, minimums[job.uid])
        if over:
            yield Violation("", f"job {job.uid} was admitted, but inqueue at open <{opening.inqueue}> plus its "
                                f"minResources <{minimums[job.uid]}> exceeds overcommit's idle <{opening.idle}> "
                                f"(dimensions {', '.join(over)})", [f"job {job.uid}", f"queue {job.queue}"],
                            f"<= {opening.idle}", str(wanted))
            return
    # the job admitted last saw every other admission in inqueue
    everyone = opening.inqueue.clone()
    for uid in reserved:
        everyone.add(reserved[uid])
    if all(_over(everyone.clone().sub_without_assert(reserved[job.uid]).add(minimums[job.uid]), opening.idle,
                 minimums[job.uid]) for job in admitted):
        names = ", ".join(sorted(job.uid for job in admitted))
        yield Violation("", f"enqueue admitted {len(admitted)} jobs ({names}) whose minimums together with what "
                            f"was inqueue at open <{everyone}> exceed overcommit's idle <{opening.idle}>: whichever "
                            f"came last should have been rejected", [f"job {job.uid}" for job in admitted],
                        f"<= {opening.idle}", str(everyone))


@invariant("enqueue.overcommit-admits-what-fits", "with overcommit alone deciding admission, enqueue leaves no job "
           "Pending whose minResources, on top of what was inqueue at open and every job it admitted, fits the "
           "overcommitted idle on the dimensions it asks for", "queue",
           "overcommit.go JobEnqueueable; enqueue.go (every pending job is tried once); semantics §8.1, §9.9",
           (ACTION,), requires=("overcommit:enableJobEnqueued",))
def enqueue_overcommit_admits_what_fits(ctx: CheckContext) -> Iterator[Violation]:
    # Admission only adds to inqueue, so a job that fits once every admission is counted fitted when its
    # turn came, whatever the order: judged only where overcommit is the deciding tier's only voter, where
    # its verdict is the action's, this progress rule is safety.
    ssn = ctx.ssn
    opening: OvercommitOpening | None = ctx.session_state.get(OVERCOMMIT_OPENING)
    if ctx.action != "enqueue" or opening is None or not _alone_decides(ssn, "overcommit"):
        return
    inqueue = opening.inqueue.clone()
    for job in ssn.jobs.values():
        pod_group = job.pod_group
        if job.uid in opening.pending and pod_group is not None and pod_group.phase == "Inqueue" \
                and pod_group.min_resources is not None:
            inqueue.add(job.deduct_sch_gated_resources(Resource.from_resource_list(pod_group.min_resources)))
    for job in sorted(ssn.jobs.values(), key=lambda j: j.uid):
        pod_group = job.pod_group
        if job.uid not in opening.pending or pod_group is None or not job.is_pending() \
                or pod_group.min_resources is None:
            continue
        minimum = Resource.from_resource_list(pod_group.min_resources)
        wanted = inqueue.clone().add(minimum)
        dims = [n for n in minimum.resource_names() if n != "pods" and minimum.get(n) > 0]
        if dims and all(wanted.get(n) <= opening.idle.get(n) - 0.1 for n in dims):
            yield Violation("", f"job {job.uid} stayed Pending after enqueue although inqueue <{inqueue}> plus its "
                                f"minResources <{minimum}> fits overcommit's idle <{opening.idle}>",
                            [f"job {job.uid}"], "Inqueue", "Pending")


def _alone_decides(ssn, plugin: str) -> bool:
    """The first tier with a JobEnqueueable voter has `plugin` as its only voter."""
    for tier in ssn.registered("job_enqueueable"):
        if tier:
            return [name for name, _ in tier] == [plugin]
    return False


@invariant("enqueue.capacity-within-real-capability", "with capacity deciding admission, the job enqueue admitted "
           "last into a queue's subtree fitted, with every other admission counted, within realCapability of the "
           "queue and of every ancestor (minResources + allocated + inqueue - elastic) on the dimensions it asks for",
           "queue", "capacity.go JobEnqueueable (queue and every ancestor), JobEnqueued; semantics §8.1, §9.5",
           (ACTION,), requires=("capacity:enableJobEnqueued",))
def enqueue_capacity(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    plugin = ssn.plugins.get("capacity")
    if ctx.action != "enqueue" or plugin is None or ssn.operations or not getattr(plugin, "ready", True) \
            or not decides_admission(ssn, "capacity"):
        return  # judged when enqueue ran before anything was placed, so allocations are those of the open
    attrs = plugin.queue_attrs
    admitted_under: dict[str, list] = {}
    for job in ssn.jobs.values():
        was = ssn.pod_group_old_phase.get(job.uid, "")
        pod_group = job.pod_group
        if pod_group is None or pod_group.min_resources is None or was not in ("", "Pending") \
                or pod_group.phase != "Inqueue" or job.queue not in attrs:
            continue
        for queue_id in (job.queue, *getattr(attrs[job.queue], "ancestors", ())):
            admitted_under.setdefault(queue_id, []).append(job)
    for queue_id, jobs in sorted(admitted_under.items()):
        attr = attrs.get(queue_id)
        if attr is None:
            continue
        base = attr.allocated.clone().add(attr.inqueue).sub_without_assert(attr.elastic)

        def fits_last(job) -> bool:
            minimum = job.get_min_resources()
            wanted = base.clone().sub_without_assert(job.deduct_sch_gated_resources(minimum)).add(minimum)
            return not _over(wanted, attr.real_capability, minimum)

        if not any(fits_last(job) for job in jobs):
            names = ", ".join(sorted(job.uid for job in jobs))
            yield Violation("", f"queue {attr.name}: enqueue admitted {names} beneath it, but with every admission "
                                f"counted (allocated + inqueue - elastic <{base}>) none of them fits realCapability "
                                f"<{attr.real_capability}>: whichever came last should have been rejected",
                            [f"queue {attr.name}"] + [f"job {job.uid}" for job in jobs],
                            f"<= {attr.real_capability}", str(base))
