"""The capacity plugin's queues, flat and hierarchical, recomputed and its bounds judged at every level
(seed 001 queue model; upstream capacity.go; volcano-semantics §9.5)."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from schedcheck.invariants.catalog.queues import _accounted, _dims_differ
from schedcheck.invariants.catalog.queues import topology_aware_preemption
from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, CLOSE, OPERATION, STATEMENT, collect_at_open, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource


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
           (OPERATION,), requires=("capacity:enabledAllocatable",))
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
           "cache.go buildTaskDRAInfo", (OPERATION,), requires=("capacity:enabledAllocatable",))
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
