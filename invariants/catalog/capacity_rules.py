"""The capacity plugin's queues, flat and hierarchical, recomputed and its bounds judged at every level
(seed 001 queue model; upstream capacity.go; volcano-semantics §9.5)."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from schedcheck.invariants.catalog.queues import _accounted, _dims_differ
from schedcheck.invariants.catalog.queues import topology_aware_preemption
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.recompute import reserved_minimum
from schedcheck.invariants.registry import ACTION, CLOSE, OPERATION, PLACING_OPS, STATEMENT, collect_at_open, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource, intersection, is_ignored_scalar_resource, share
from schedcheck.reference.api.types import allocated_status


def _plugin(ctx: CheckContext):
    plugin = ctx.ssn.plugins.get("capacity")
    if plugin is None or not getattr(plugin, "ready", True) or ctx.ssn.conf.persistent_pipelines:
        return None
    return plugin


def _subtree_allocated(ctx: CheckContext, attrs) -> dict[str, Resource]:
    """Every queue's allocated as its tasks (and, with a hierarchy, its descendants' tasks) hold it."""
    totals: dict[str, Resource] = {}
    for job in ctx.ssn.jobs.values():
        attr = attrs.get(job.queue)
        if attr is None:
            continue
        held = Resource()
        for task in job.tasks.values():
            if _accounted(task.status):
                held.add(task.resreq)
        for queue_id in (job.queue, *getattr(attr, "ancestors", ())):
            totals.setdefault(queue_id, Resource()).add(held)
    return totals


@invariant("queue.capacity-allocated", "capacity's allocated for every queue (and, with a hierarchy, every "
           "ancestor) equals the summed requests of the allocated and pipelined tasks beneath it", "queue",
           "capacity.go event handlers and updateAncestors; semantics §9.5", (STATEMENT, ACTION, CLOSE),
           requires=("capacity",))
def capacity_allocated(ctx: CheckContext) -> Iterator[Violation]:
    plugin = _plugin(ctx)
    if plugin is None or ctx.statement_kind == "commit":
        return
    attrs = plugin.queue_attrs
    expected = _subtree_allocated(ctx, attrs)
    for queue_id, attr in attrs.items():
        want = expected.get(queue_id, Resource())
        wrong = _dims_differ(attr.allocated, want)
        if wrong:
            level = "ancestor queue" if getattr(attr, "children", None) else "queue"
            yield Violation("", f"{level} {attr.name}: capacity counts <{attr.allocated}> allocated but the tasks "
                                f"beneath it hold <{want}> (dimensions {', '.join(wrong)})",
                            [f"queue {attr.name}"], want.as_dict(), attr.allocated.as_dict())


@invariant("queue.capacity-within-real-capability", "allocate (and preempt, for its preemptor) never places a "
           "task that takes its queue, or any ancestor of it, past realCapability on a dimension the task requests",
           "queue",
           "capacity.go Allocatable (queueAllocatable for the leaf and every ancestor); semantics §9.5",
           (OPERATION,), requires=("capacity:enabledAllocatable",), operations=PLACING_OPS)
def capacity_within_real_capability(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or not ((op.op == "allocate" and ctx.action == "allocate")
                          or (op.op == "pipeline" and ctx.action == "preempt"
                              and not topology_aware_preemption(ctx.ssn))):
        return  # preemptorFitsOnNode asks the queue's Allocatable before preempt pipelines
    plugin = _plugin(ctx)
    job = ctx.ssn.jobs.get(op.job)
    if plugin is None or job is None:
        return
    attrs = plugin.queue_attrs
    attr = attrs.get(job.queue)
    task = job.tasks.get(op.task_uid)
    if attr is None or task is None:
        return
    requested = [n for n in task.resreq.resource_names() if n != "pods" and task.resreq.get(n) > 0]
    expected = _subtree_allocated(ctx, attrs)
    for queue_id in (job.queue, *getattr(attr, "ancestors", ())):
        level = attrs.get(queue_id)
        if level is None:
            continue
        held = expected.get(queue_id, Resource())
        real = level.real_capability
        over = [n for n in requested if held.get(n) > real.get(n) + max(0.1, 1e-9 * abs(real.get(n)))]
        if over:
            yield Violation("", f"task {op.task} was allocated to {op.node} although queue {level.name}"
                                f"{' (an ancestor of ' + attr.name + ')' if queue_id != job.queue else ''} then "
                                f"holds <{held}>, past its realCapability <{real}> (dimensions {', '.join(over)})",
                            [f"task {op.task}", f"queue {level.name}"], f"<= {real}", str(held))


def _dra_quota(capability) -> dict[str, tuple[int, dict[str, Fraction]]]:
    """A queue's DRA capability restated from its spec: class -> (device count, 0 for none; dimension limits)."""
    quota: dict[str, tuple[int, dict[str, Fraction]]] = {}
    for name, quantity in (capability or {}).items():
        dim, sep, device_class = name.partition(".deviceclass/")
        if sep and dim and device_class:
            count, dims = quota.get(device_class, (0, {}))
            quota[device_class] = (count, {**dims, dim: quantity.as_fraction()})
        elif name.startswith("deviceclass/") and name[len("deviceclass/"):]:
            _, dims = quota.get(name[len("deviceclass/"):], (0, {}))
            quota[name[len("deviceclass/"):]] = (quantity.value(), dims)
    return quota


DRA_HELD_AT_OPEN = "capacity-dra-held-at-open"
DRA_RULE = "queue.capacity-dra-within-quota"


@collect_at_open(DRA_HELD_AT_OPEN, (DRA_RULE,))
def _dra_held_at_open(ssn: Any) -> frozenset[str]:
    """The tasks holding DRA requests that were already allocated as the session opened."""
    return frozenset(task.uid for job in ssn.jobs.values() for task in job.tasks.values()
                     if task.dra_resreq is not None and _accounted(task.status))


def _own_dra_quota(queue: Any) -> bool:
    """newDRAQuotaAttr: a queue has DRA quota state when its capability, deserved or guarantee names one."""
    spec = queue.queue
    return any(_dra_quota(names) for names in (spec.capability, spec.deserved, spec.guarantee))


def _claims_beneath(ctx: CheckContext, attrs, queue_id: str, skip: str) -> tuple[dict[str, dict], list[str]]:
    """The DRA requests each claim held beneath the queue asks for (a claim shared by tasks once), leaving out
    the task `skip`; a task whose requests name no claim stands for itself. Also the claims upstream leaves out
    of an ancestor: those of tasks already allocated at open in a leaf without a DRA quota of its own."""
    held: dict[str, dict] = {}
    uncharged: dict[str, str] = {}
    at_open = ctx.session_state.get(DRA_HELD_AT_OPEN) or frozenset()
    for job in ctx.ssn.jobs.values():
        attr = attrs.get(job.queue)
        if attr is None or queue_id not in (job.queue, *getattr(attr, "ancestors", ())):
            continue
        leaf = ctx.ssn.queues.get(job.queue)
        open_only = job.queue != queue_id and leaf is not None and not _own_dra_quota(leaf)
        for task in job.tasks.values():
            if task.uid == skip or not _accounted(task.status) or task.dra_resreq is None:
                continue
            claims = task.claim_dra_resreq or {f"task {task.uid}": task.dra_resreq}
            held.update(claims)
            if open_only and task.uid in at_open:
                uncharged.update(dict.fromkeys(claims, job.queue))
    return held, sorted({leaf for key, leaf in uncharged.items()})


def _beyond(held: list[dict], new: list[dict], device_class: str, limit: int, dims: dict[str, Fraction],
            consumable: bool) -> list[str]:
    count = sum(r[device_class].count for r in held if device_class in r)
    wrong = [f"{count} devices > {limit}"] if 0 < limit < count else []
    asked = sorted({d for r in new if device_class in r for d in (r[device_class].capacity or {})})
    for dim in asked if consumable else []:
        total = sum((r[device_class].capacity[dim].as_fraction() for r in held
                     if device_class in r and dim in (r[device_class].capacity or {})), Fraction(0))
        if dim not in dims:
            wrong.append(f"{dim} asked but not in the quota")
        elif total > dims[dim]:
            wrong.append(f"{dim} {float(total):g} > {float(dims[dim]):g}")
    return wrong


@invariant(DRA_RULE, "allocate never places a task whose claims not yet held beneath its "
           "queue take the queue, or an ancestor with a DRA quota, past its DRA capability: devices of a class "
           "past `deviceclass/<class>`, or (consumable capacity on) a capacity dimension past "
           "`<dimension>.deviceclass/<class>` or not named there", "queue",
           "capacity.go checkDRAAllocatable (queueAllocatableWithReserved for the leaf and every ancestor); "
           "cache.go buildTaskDRAInfo", (OPERATION,), requires=("capacity:enabledAllocatable",),
           operations=frozenset({"allocate"}))
def capacity_dra_within_quota(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or op.op != "allocate" or ctx.action != "allocate":
        return
    plugin = _plugin(ctx)
    job = ctx.ssn.jobs.get(op.job)
    if plugin is None or job is None or not getattr(plugin, "dra_enable", False):
        return
    attrs = plugin.queue_attrs
    attr, task = attrs.get(job.queue), job.tasks.get(op.task_uid)
    if attr is None or task is None or task.dra_resreq is None:
        return
    consumable = getattr(plugin, "consumable_enable", True)
    mine = task.claim_dra_resreq or {f"task {task.uid}": task.dra_resreq}
    for queue_id in (job.queue, *getattr(attr, "ancestors", ())):
        queue = ctx.ssn.queues.get(queue_id)
        quota = _dra_quota(queue.queue.capability) if queue is not None else {}
        if not quota:
            continue
        others, uncharged_leaves = _claims_beneath(ctx, attrs, queue_id, task.uid)
        new = [requests for key, requests in mine.items() if key not in others]
        held = [*others.values(), *new]
        for device_class in sorted({c for requests in new for c in requests} & set(quota)):
            limit, dims = quota[device_class]
            wrong = _beyond(held, new, device_class, limit, dims, consumable)
            if wrong:
                leaves = [f"leaf queue {leaf}" for leaf in uncharged_leaves]  # F50's mark (invariants/known.py)
                yield Violation("", f"task {op.task} was allocated to {op.node} although queue {queue.name} then "
                                    f"holds, of DeviceClass {device_class}, {'; '.join(wrong)}"
                                    + (f" (it did not count what {', '.join(uncharged_leaves)} held at session open: "
                                       "no DRA quota of its own)" if uncharged_leaves else ""),
                                [f"task {op.task}", f"queue {queue.name}", *leaves],
                                "within the queue's DRA capability", "; ".join(wrong))


@invariant("queue.capacity-reclaim-within-real-capability", "reclaim pipelines a task only when its queue, with "
           "the task, stays within its own realCapability on every dimension the task requests", "queue",
           "capacity.go Preemptive (futureUsed bounded by realCapability before the deserved test; "
           "volcano-sh/volcano#5048, fixed by #5053)", (OPERATION,), requires=("capacity:enablePreemptive",), operations=frozenset({"pipeline"}))
def capacity_reclaim_within_real_capability(ctx: CheckContext) -> Iterator[Violation]:
    # reclaim asks Preemptive (every plugin must agree) for each task before reclaiming for it; capacity's
    # answer bounds allocated + request by the queue's realCapability, and reclaim's victims are never of the
    # reclaimer's own queue, so what the queue holds once the task is pipelined is what Preemptive measured
    op = ctx.operation
    if op is None or op.op != "pipeline" or ctx.action != "reclaim":
        return
    plugin = _plugin(ctx)
    job = ctx.ssn.jobs.get(op.job)
    if plugin is None or job is None:
        return
    attrs = plugin.queue_attrs
    attr = attrs.get(job.queue)
    task = job.tasks.get(op.task_uid)
    if attr is None or task is None:
        return
    requested = [n for n in task.resreq.resource_names()
                 if n != "pods" and not is_ignored_scalar_resource(n) and task.resreq.get(n) > 0]
    held = _subtree_allocated(ctx, attrs).get(job.queue, Resource())
    real = attr.real_capability
    over = [n for n in requested if held.get(n) > real.get(n) + max(0.1, 1e-9 * abs(real.get(n)))]
    if over:
        yield Violation("", f"reclaim pipelined task {op.task} to {op.node} although its queue {attr.name} then "
                            f"holds <{held}>, past its realCapability <{real}> (dimensions {', '.join(over)})",
                        [f"task {op.task}", f"queue {attr.name}"], f"<= {real}", str(held))


CAPACITY_INQUEUE_OPENING = "capacity_inqueue_opening"


@collect_at_open(CAPACITY_INQUEUE_OPENING, ("queue.capacity-inqueue-recomputed",))
def _capacity_inqueue_at_open(ssn) -> tuple[dict[str, Resource], dict[str, Resource]] | None:
    """Per job queue, what its jobs reserve as the session opens; per job still Pending then, the minimum it
    would reserve once admitted (less its gated tasks, as they stand at open: allocate may lift a gate later)."""
    if "capacity" not in ssn.plugins:
        return None
    reserved: dict[str, Resource] = {}
    pending: dict[str, Resource] = {}
    for job in ssn.jobs.values():
        pod_group = job.pod_group
        if pod_group is None or job.queue not in ssn.queues:
            continue
        if job.is_pending() and pod_group.min_resources is not None:
            pending[job.uid] = job.deduct_sch_gated_resources(Resource.from_resource_list(pod_group.min_resources))
        allocated = Resource()
        count = 0
        for task in job.tasks.values():
            if allocated_status(task.status):
                allocated.add(task.resreq)
                count += 1
        # an Inqueue job, or a Running one holding minMember allocated tasks, reserves what of its
        # minResources is not yet allocated (per named dimension, floored at zero)
        if pod_group.min_resources is not None and (
                pod_group.phase == "Inqueue" or (pod_group.phase == "Running" and count >= pod_group.min_member)):
            share = job.deduct_sch_gated_resources(reserved_minimum(job, allocated))
            reserved.setdefault(job.queue, Resource()).add(share)
    return reserved, pending


@invariant("queue.capacity-inqueue-recomputed", "capacity's inqueue for every queue (and, with a hierarchy, every "
           "ancestor) equals what its jobs reserve: the part of minResources not yet allocated of each job Inqueue "
           "at open (or Running with minMember allocated), plus the minimum of each job enqueue admitted", "queue",
           "capacity.go buildQueueAttrs / buildHierarchicalQueueAttrs (util.GetInqueueResource, volcano-sh/volcano "
           "0b82db775 and 7110813b1) and JobEnqueued (5be98af37)", (ACTION,), requires=("capacity",))
def capacity_inqueue_recomputed(ctx: CheckContext) -> Iterator[Violation]:
    plugin = _plugin(ctx)
    opening = ctx.session_state.get(CAPACITY_INQUEUE_OPENING)
    if plugin is None or opening is None:
        return
    reserved, pending = opening
    expected = {queue_id: total.clone() for queue_id, total in reserved.items()}
    ssn = ctx.ssn
    # enqueue tells capacity of an admission only through JobEnqueued, asked when the flag is on; at close the
    # job updater moves phases on, so the rule is judged at action ends only
    if "enqueue" in ssn.enabled_actions and ctx.plugin_enabled("capacity", "enableJobEnqueued"):
        for job in ssn.jobs.values():
            pod_group = job.pod_group
            if job.uid in pending and pod_group is not None and pod_group.phase == "Inqueue":
                expected.setdefault(job.queue, Resource()).add(pending[job.uid])
    attrs = plugin.queue_attrs
    totals: dict[str, Resource] = {}
    for queue_id, amount in expected.items():
        attr = attrs.get(queue_id)
        if attr is None:
            continue
        for level in (queue_id, *getattr(attr, "ancestors", ())):
            totals.setdefault(level, Resource()).add(amount)
    for queue_id, attr in attrs.items():
        want = totals.get(queue_id, Resource())
        wrong = _dims_differ(attr.inqueue, want)
        if wrong:
            yield Violation("", f"queue {attr.name}: capacity's inqueue is <{attr.inqueue}> but the jobs it reserves "
                                f"for (Inqueue at open, Running with minMember allocated, or admitted by enqueue) "
                                f"add up to <{want}> (dimensions {', '.join(wrong)})", [f"queue {attr.name}"],
                            want.as_dict(), attr.inqueue.as_dict())


@invariant("queue.capacity-share", "capacity's share of every queue it keeps current (each queue flat; each leaf "
           "with a hierarchy) is its largest allocated / deserved ratio over deserved's dimensions, and 1 for a "
           "best-effort queue (no deserved), so best-effort queues are served after every queue below deserved",
           "queue", "capacity.go updateQueueAttrShare and compareShareWithDeserved (volcano-sh/volcano 20e9c675c); "
           "share updated at open and by the allocate/deallocate handlers for the task's own queue",
           (ACTION,), requires=("capacity",))
def capacity_share(ctx: CheckContext) -> Iterator[Violation]:
    plugin = _plugin(ctx)
    if plugin is None:
        return
    hierarchy = getattr(plugin, "hierarchy", False)
    for queue_id, attr in plugin.queue_attrs.items():
        if hierarchy and getattr(attr, "children", None):
            continue  # an ancestor's share is set at open and not moved by the event handlers (upstream)
        if attr.deserved.is_empty():
            want = 1.0
        else:
            want = max((share(attr.allocated.get(n), attr.deserved.get(n)) for n in attr.deserved.resource_names()),
                       default=0.0)
        if abs(want - attr.share) > 1e-9 * max(1.0, abs(want)):
            kind = "best-effort queue" if attr.deserved.is_empty() else "queue"
            yield Violation("", f"{kind} {attr.name}: capacity's share is {attr.share:.6g} but allocated <{attr.allocated}> "
                                f"/ deserved <{attr.deserved}> gives {want:.6g}: queue order reads a wrong share",
                            [f"queue {attr.name}"], want, attr.share)


def _capacity_decides_reclaimable(ssn) -> bool:
    """capacity votes on Reclaimable in the only tier that has voters: victims are then always a subset of its
    answer (a tier's answer is the intersection of its voters'; an earlier tier with victims decides alone,
    and when a tier's intersection is empty the next tier with voters decides without it)."""
    voting = [tier for tier in ssn.registered("reclaimable") if tier]
    return len(voting) == 1 and any(name == "capacity" for name, _ in voting[0])


@invariant("victim.capacity-reclaim-relevant", "with capacity voting on Reclaimable in the only tier that has "
           "voters, every reclaim victim shares a "
           "resource dimension with its reclaimer and, if it asks for a dimension its queue's deserved names, "
           "comes from a queue whose allocated (before this statement's evictions) was above deserved on a "
           "dimension the victim asks for", "victim",
           "capacity.go reclaimableFn (IntersectionWithIgnoredScalarResources, GreaterPartlyWithRelevantDimensions; "
           "volcano-sh/volcano d496505d9)", (STATEMENT,), requires=("capacity:enableReclaimable",))
def capacity_reclaim_relevant(ctx: CheckContext) -> Iterator[Violation]:
    from schedcheck.invariants.catalog.victims import preemptions, task_of

    if ctx.action != "reclaim" or ctx.statement_kind != "commit":
        return
    plugin = _plugin(ctx)
    if plugin is None or not _capacity_decides_reclaimable(ctx.ssn):
        return
    pairs = []
    taken: dict[str, Resource] = {}
    for p in preemptions(ctx):
        reclaimer = task_of(ctx, p.preemptor)
        for record in p.victims:
            victim = task_of(ctx, record)
            job = ctx.ssn.jobs.get(record.job)
            if reclaimer is None or victim is None or job is None:
                continue
            pairs.append((reclaimer, victim, job.queue))
            taken.setdefault(job.queue, Resource()).add(victim.resreq)
    attrs = plugin.queue_attrs
    for reclaimer, victim, queue_id in pairs:
        attr = attrs.get(queue_id)
        if attr is None:
            continue
        if not any(n != "pods" for n in intersection(victim.resreq, reclaimer.init_resreq)):
            yield Violation("", f"reclaim evicted {victim.key} for {reclaimer.key} although they share no resource "
                                f"dimension (<{victim.resreq}> against <{reclaimer.init_resreq}>): the eviction frees "
                                f"nothing the reclaimer asks for", [f"task {victim.key}", f"task {reclaimer.key}"],
                            "a shared dimension", "none")
            continue
        if not intersection(victim.resreq, attr.deserved):
            continue  # no deserved dimension to judge: capacity takes it outright
        # what the queue held when capacity was asked is at most what it holds now plus every victim this
        # statement took from it (evictions only lower it; the reclaimer's own queue is never a victim's)
        before = attr.allocated.clone().add(taken[queue_id])
        if not before.greater_partly_with_relevant_dimensions(attr.deserved, victim.resreq):
            yield Violation("", f"reclaim took {victim.key} from queue {attr.name} although the queue held at most "
                                f"<{before}>, not above its deserved <{attr.deserved}> on any dimension the victim "
                                f"asks for (<{victim.resreq}>)", [f"task {victim.key}", f"queue {attr.name}"],
                            "allocated above deserved on a relevant dimension", before.as_dict())
