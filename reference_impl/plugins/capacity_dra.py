"""capacity's DRA quotas (upstream capacity.go, `capacity.DynamicResourceAllocationEnable` and
`capacity.DRAConsumableCapacityEnable`).

A queue's spec.capability (and deserved, guarantee) may name `deviceclass/<class>` (a device count) and
`<dimension>.deviceclass/<class>` (a consumable-capacity dimension of the class: the queue may hold that much
of what its tasks' claims ask for in `capacity.requests`). A queue whose three lists name none has no DRA
quota. The queue's DRA allocated adds up, per DeviceClass, the device counts and capacity dimensions of its
allocated tasks (cache/dra.py), a claim shared by several tasks once (a reference count per claim key); its
DRA inqueue the minimum DRA requests of the jobs admitted this session (JobInfo.GetMinDRAResources).
Allocatable: allocated + the candidate's not-yet-charged claims' requests within each configured class
(checkDRAAllocatable): the count within the capability's count (a class without capability passes; a count
of 0, as for a class named only by dimensions, does not limit), and, with DRAConsumableCapacityEnable (on by
default, as the k8s gate DRAConsumableCapacity at 1.36), every dimension the request asks for within the
capability's quantity of it: a dimension the capability does not name refuses the request, even where the
queue limits only the count (upstream's rule). JobEnqueueable: the same with inqueue added and the job's
minimum DRA requests. Counts saturate at int64's maximum, as upstream; quantities add exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

from schedcheck.reference.api.dra_resource import (
    CAPACITY_SEP,
    COUNT_PREFIX,
    INT64_MAX,
    DRAResource,
    Requests,
    charge_task,
    clone_requests,
    merge,
    quantity_sub,
    saturating_add,
)
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.quantity import Quantity

# re-exported for the plugin
__all__ = ["CAPACITY_SEP", "COUNT_PREFIX", "INT64_MAX", "Requests", "clone_requests", "merge", "saturating_add"]
ENABLE = "capacity.DynamicResourceAllocationEnable"
CONSUMABLE_ENABLE = "capacity.DRAConsumableCapacityEnable"


def parse_quota(resources: Mapping[str, Quantity]) -> Requests | None:
    """parseDRAResourceList: `deviceclass/<class>` sets the class's count (Value(), rounded up),
    `<dim>.deviceclass/<class>` one of its dimensions; a name with an empty dimension or class is passed over
    (the loader warns)."""
    out: Requests = {}
    for name, quantity in resources.items():
        index = name.find(CAPACITY_SEP)
        if index > 0:
            dim, device_class = name[:index], name[index + len(CAPACITY_SEP):]
            if not device_class:
                continue
            entry = out.setdefault(device_class, DRAResource(0, {}))
            if entry.capacity is None:
                entry.capacity = {}
            entry.capacity[dim] = quantity
        elif name.startswith(COUNT_PREFIX) and name[len(COUNT_PREFIX):]:
            out.setdefault(name[len(COUNT_PREFIX):], DRAResource()).count = quantity.value()
    return out or None


class DRAQuota:
    """One queue's draQuotaAttr."""

    __slots__ = ("capability", "allocated", "inqueue")

    def __init__(self, capability: Requests | None) -> None:
        self.capability: Requests = capability or {}
        self.allocated: Requests = {}
        self.inqueue: Requests = {}

    def clone(self) -> DRAQuota:
        c = DRAQuota(self.capability)
        c.allocated, c.inqueue = clone_requests(self.allocated), clone_requests(self.inqueue)
        return c

    def fits(self, request: Mapping[str, DRAResource], include_inqueue: bool, consumable: bool = True) -> bool:
        """checkDRAAllocatable: every class the capability names stays within its count and, with consumable
        capacity on, within every dimension the request asks for."""
        for device_class, asked in request.items():
            capability = self.capability.get(device_class)
            if capability is None:
                continue
            allocated = self.allocated.get(device_class)
            inqueue = self.inqueue.get(device_class) if include_inqueue else None
            used = saturating_add(allocated.count if allocated else 0, inqueue.count if inqueue else 0)
            if capability.count > 0 and saturating_add(used, asked.count) > capability.count:
                return False
            if not consumable:
                continue
            for dim, quantity in (asked.capacity or {}).items():
                limit = (capability.capacity or {}).get(dim)
                if limit is None:
                    return False  # a dimension the capability does not name
                future = quantity.as_fraction()
                for held in (allocated, inqueue):
                    if held is not None and held.capacity and dim in held.capacity:
                        future += held.capacity[dim].as_fraction()
                if future > limit.as_fraction():
                    return False
        return True


def new_quota(capability: Mapping[str, Quantity], deserved: Mapping[str, Quantity],
              guarantee: Mapping[str, Quantity]) -> DRAQuota | None:
    parsed = parse_quota(capability)
    if parsed is None and parse_quota(deserved) is None and parse_quota(guarantee) is None:
        return None
    return DRAQuota(parsed)


def incremental(claim_refs: Mapping[str, int], task: TaskInfo) -> Requests | None:
    """incrementalTaskDRA: the task's requests minus the claims its queue already charged."""
    if not task.claim_dra_resreq:
        return task.dra_resreq or None
    out: Requests = {}
    for key in task.claim_keys:
        if claim_refs.get(key, 0) <= 0:
            merge(out, task.claim_dra_resreq.get(key))
    return out or None


def add_task(quota: DRAQuota, claim_refs: dict[str, int], task: TaskInfo) -> None:
    """addTaskDRAAllocated: a shared claim is charged by its first task only."""
    charge_task(quota.allocated, claim_refs, task)


def remove_task(quota: DRAQuota, claim_refs: dict[str, int], task: TaskInfo) -> None:
    """removeTaskDRAAllocated: the last task holding a claim gives its devices back (never below zero)."""
    if not task.claim_dra_resreq:
        _subtract(quota.allocated, task.dra_resreq)
        return
    for key in task.claim_keys:
        request = task.claim_dra_resreq.get(key)
        if not request:
            continue
        refs = claim_refs.get(key, 0)
        if refs <= 1:
            _subtract(quota.allocated, request)
            claim_refs.pop(key, None)
        else:
            claim_refs[key] = refs - 1


def _subtract(dst: Requests, src: Mapping[str, DRAResource] | None) -> None:
    """subtractDRAAllocated: DRAResource.Sub for every class dst holds."""
    for device_class, request in (src or {}).items():
        held = dst.get(device_class)
        if held is not None:
            held.sub(request)


def delta(new: Requests, old: Requests) -> Requests:
    """getDRADelta on allocated: new minus old for every class either names, per dimension too (may be
    negative)."""
    out: Requests = {}
    for device_class in set(new) | set(old):
        res = DRAResource(0, {})
        assert res.capacity is not None
        now, before = new.get(device_class), old.get(device_class)
        if now is not None:
            res.count = now.count
            res.capacity.update(now.capacity or {})
        if before is not None:
            res.count -= before.count
            for dim, value in (before.capacity or {}).items():
                res.capacity[dim] = quantity_sub(res.capacity.get(dim, Quantity(0)), value)
        out[device_class] = res
    return out


def min_dra_resources(job: JobInfo) -> Requests | None:
    """JobInfo.GetMinDRAResources: with minTaskMember, each role's first task's requests times its minimum;
    without, the first minAvailable tasks with DRA requests in namespace/name/uid order."""
    if not job.tasks:
        return None
    result: Requests = {}
    if not job.task_min_available:
        if job.min_available <= 0:
            return None
        tasks = sorted((t for t in job.tasks.values() if t.dra_resreq is not None),
                       key=lambda t: (t.namespace, t.name, t.uid))
        for task in tasks[:job.min_available]:
            merge(result, task.dra_resreq)
        return result or None
    roles: set[str] = set()
    for task in job.tasks.values():  # upstream walks a Go map: the first task of a role is arbitrary there
        if task.dra_resreq is None:
            continue
        minimum = job.task_min_available.get(task.task_role, 0)
        if minimum <= 0 or task.task_role in roles:
            continue
        roles.add(task.task_role)
        merge(result, task.dra_resreq, minimum)
    return result or None
