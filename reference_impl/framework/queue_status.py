"""updateQueueStatus at session close (framework/session.go, session_dra_queue_status.go): each queue's
status.allocated is the sum of its allocated tasks' requests, and each ancestor's up to root (every queue
of the session hangs below root, whose parent is itself). DRA (upstream master): a queue's entry
`deviceclass/<class>` counts the devices its allocated tasks' claims ask for, a claim shared by several of
its tasks once (a per-queue reference count), for the queue and each ancestor alike, and, with
DRAConsumableCapacity, `<dim>.deviceclass/<class>` the capacity its claims ask for per dimension (a zero
count or quantity is left out). A task on a node with shared-device pools
counts what the pools say it holds (addNodeSharableDeviceUsage: a placed vGPU pod's `volcano.sh/vgpu-memory`
and `-cores` become the sums over its cards from its own annotation, replacing its request; upstream writes
them into the task's request itself at close, the reference into a copy). The status goes to the world's Queue objects (read by nothing in
the scheduler; tests and reports read it).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from schedcheck.reference.api.dra_resource import CAPACITY_SEP, COUNT_PREFIX, Requests, charge_task
from schedcheck.reference.api.resource_info import PODS, Resource
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import allocated_status
from schedcheck.reference.k8s import ResourceList
from schedcheck.reference.quantity import BINARY_SI, Quantity

ROOT = "root"


def _charge(dra: dict[str, Requests], refs: dict[str, dict[str, int]], queue: str, task: TaskInfo) -> None:
    """addTaskDRAAllocatedByQueue."""
    charge_task(dra.setdefault(queue, {}), refs.setdefault(queue, {}), task)


def resource_list(allocated: Resource, dra: Requests | None) -> ResourceList:
    """ConvertRes2ResList (cpu in milli, memory in bytes, pods whole, other scalars in milli) plus the
    DRA counts and capacity dimensions (mergeDRAAllocatedIntoResourceList: a zero is left out)."""
    out: ResourceList = {"cpu": Quantity(Fraction(int(allocated.milli_cpu), 1000)),
                         "memory": Quantity(int(allocated.memory), BINARY_SI)}
    for name, value in (allocated.scalars or {}).items():
        out[name] = Quantity(int(value)) if name == PODS else Quantity(Fraction(int(value), 1000))
    for device_class, request in (dra or {}).items():
        if request.count > 0:
            out[COUNT_PREFIX + device_class] = Quantity(request.count)
        for dim, quantity in (request.capacity or {}).items():
            if not quantity.is_zero():
                out[dim + CAPACITY_SEP + device_class] = quantity
    return out


def _with_device_usage(ssn: Any, task: TaskInfo) -> Resource:
    node = ssn.nodes.get(task.node_name)
    if node is None or not node.others:
        return task.resreq
    request = task.resreq
    for pool in node.others.values():
        if pool.has_device_request(task.pod):
            for name, value in pool.add_queue_resource(task.pod).items():
                if request is task.resreq:
                    request = task.resreq.clone()
                request.set_scalar(name, value)
    return request


def update_queue_status(ssn: Any) -> None:
    allocated = {queue_id: Resource() for queue_id in ssn.queues}
    dra: dict[str, Requests] = {}
    refs: dict[str, dict[str, int]] = {}
    for job in ssn.jobs.values():
        if job.queue not in allocated:
            continue  # the snapshot drops such jobs; a test may put one back
        for status, tasks in job.task_status_index.items():
            if not allocated_status(status):
                continue
            for task in tasks.values():
                task_request = _with_device_usage(ssn, task)
                allocated[job.queue].add(task_request)
                _charge(dra, refs, job.queue, task)
                queue = ssn.queues[job.queue].queue
                while ROOT in ssn.queues:  # upstream: only when the session has a root queue
                    parent = queue.parent or ROOT
                    if parent not in allocated:
                        break
                    allocated[parent].add(task_request)
                    _charge(dra, refs, parent, task)
                    if parent == ROOT or queue.parent not in ssn.queues:
                        break  # (a parent missing from the session: upstream dereferences nil there)
                    queue = ssn.queues[queue.parent].queue
    for queue_id, info in ssn.queues.items():
        info.queue.status_allocated = resource_list(allocated[queue_id], dra.get(queue_id))
