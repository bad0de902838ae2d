"""capacity's DRA device-class quotas (upstream capacity.go, `capacity.DynamicResourceAllocationEnable`).

A queue's spec.capability (and deserved, guarantee) may name `deviceclass/<class>` (a device count) and
`<dimension>.deviceclass/<class>` (a consumable-capacity dimension). A queue whose three lists name none
has no DRA quota. The queue's DRA allocated counts, per DeviceClass, the device requests of its allocated
tasks (cache/dra.py), a claim shared by several tasks once (a reference count per claim key); its DRA
inqueue the minimum DRA requests of the jobs admitted this session (JobInfo.GetMinDRAResources).
Allocatable: allocated + the candidate's not-yet-charged claims' requests within each configured class's
count (a class without capability passes; a capability count of 0 does not limit). JobEnqueueable: the
same with inqueue added and the job's minimum DRA requests. Counts saturate at int64's maximum, as upstream.

Not modelled: consumable capacity's quotas (`capacity.DRAConsumableCapacityEnable`, on by default with the
DRAConsumableCapacity gate at k8s 1.36): the cache does not add claims' capacity requests to the tasks' DRA
requests, so the dimension checks have nothing to check (the allocator does read them: dra_allocator.py;
the loader warns when a queue names a dimension quota and a claim asks for capacity).
"""

from __future__ import annotations

from collections.abc import Mapping

from schedcheck.reference.api.dra_resource import COUNT_PREFIX, INT64_MAX, Counts, charge_task, merge, saturating_add
from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.quantity import Quantity

__all__ = ["COUNT_PREFIX", "INT64_MAX", "Counts", "merge", "saturating_add"]  # re-exported for the plugin's users
ENABLE = "capacity.DynamicResourceAllocationEnable"
CAPACITY_SEP = ".deviceclass/"


def parse_counts(resources: Mapping[str, Quantity]) -> Counts | None:
    """parseDRAResourceList, counts only: a class named by a capacity dimension alone has count 0."""
    out: Counts = {}
    for name, quantity in resources.items():
        index = name.find(CAPACITY_SEP)
        if index > 0:
            device_class = name[index + len(CAPACITY_SEP):]
            if device_class:
                out.setdefault(device_class, 0)
        elif name.startswith(COUNT_PREFIX) and name[len(COUNT_PREFIX):]:
            out[name[len(COUNT_PREFIX):]] = quantity.value()
    return out or None


class DRAQuota:
    """One queue's draQuotaAttr (counts only)."""

    __slots__ = ("capability", "allocated", "inqueue")

    def __init__(self, capability: Counts | None) -> None:
        self.capability: Counts = capability or {}
        self.allocated: Counts = {}
        self.inqueue: Counts = {}

    def clone(self) -> DRAQuota:
        c = DRAQuota(self.capability)
        c.allocated, c.inqueue = dict(self.allocated), dict(self.inqueue)
        return c

    def fits(self, request: Mapping[str, int], include_inqueue: bool) -> bool:
        """checkDRAAllocatable: every configured class stays within its count."""
        for device_class, count in request.items():
            capability = self.capability.get(device_class)
            if capability is None or capability <= 0:
                continue
            used = self.allocated.get(device_class, 0)
            if include_inqueue:
                used = saturating_add(used, self.inqueue.get(device_class, 0))
            if saturating_add(used, count) > capability:
                return False
        return True


def new_quota(capability: Mapping[str, Quantity], deserved: Mapping[str, Quantity],
              guarantee: Mapping[str, Quantity]) -> DRAQuota | None:
    parsed = parse_counts(capability)
    if parsed is None and parse_counts(deserved) is None and parse_counts(guarantee) is None:
        return None
    return DRAQuota(parsed)


def incremental(claim_refs: Mapping[str, int], task: TaskInfo) -> Counts | None:
    """incrementalTaskDRA: the task's requests minus the claims its queue already charged."""
    if not task.claim_dra_resreq:
        return dict(task.dra_resreq) if task.dra_resreq else None
    out: Counts = {}
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


def _subtract(dst: Counts, src: Mapping[str, int] | None) -> None:
    for device_class, count in (src or {}).items():
        if device_class in dst:
            dst[device_class] = max(0, dst[device_class] - count)


def delta(new: Counts, old: Counts) -> Counts:
    """getDRADelta on allocated counts: new minus old for every class either names."""
    return {c: new.get(c, 0) - old.get(c, 0) for c in set(new) | set(old)}


def min_dra_resources(job: JobInfo) -> Counts | None:
    """JobInfo.GetMinDRAResources: with minTaskMember, each role's first task's requests times its minimum;
    without, the first minAvailable tasks with DRA requests in namespace/name/uid order."""
    if not job.tasks:
        return None
    result: Counts = {}
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
