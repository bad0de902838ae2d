"""GPU sharing by memory, or whole GPUs by number (api/devices/nvidia/gpushare).

A node has the pool when its capacity names both `volcano.sh/gpu-memory` (the node's total) and a non-zero
`volcano.sh/gpu-number`; each card gets total // number (integer division), ids 0..number-1, minus the ids
listed in the node annotation `volcano.sh/gpu-unhealthy-ids` (comma-separated; a bad entry is skipped).
A card holds the pods placed on it (by uid). A pod asks for memory with container limits
`volcano.sh/gpu-memory` (summed over containers, the larger of that and the largest init container), or
for whole cards with `volcano.sh/gpu-number` (likewise). Its cards are read from its annotation
`volcano.sh/gpu-index` ("0" or "0,2"), which the scheduler writes at allocation with
`volcano.sh/predicate-time`.

Memory fit: the lowest card whose memory minus the memory of its pods (Succeeded and Failed pods not
counted, clamped at 0) is at least the request. Number fit: that many cards holding no pod at all.
Upstream takes them in Go map order (random); the reference takes the lowest ids (the node decision is
the same, only the ids written may differ).
"""

from __future__ import annotations

import re

from schedcheck.reference.api.devices.nodelock import GPUSHARE_LOCK, lock_node
from schedcheck.reference.api.devices.base import GPUSHARE_DEVICE, DeviceFlags, SUCCESS, UNSCHEDULABLE

DEVICE_NAME = GPUSHARE_DEVICE
VOLCANO_GPU_RESOURCE = "volcano.sh/gpu-memory"
VOLCANO_GPU_NUMBER = "volcano.sh/gpu-number"
PREDICATE_TIME = "volcano.sh/predicate-time"
GPU_INDEX = "volcano.sh/gpu-index"
UNHEALTHY_GPU_IDS = "volcano.sh/gpu-unhealthy-ids"
_ATOI = re.compile(r"[+-]?[0-9]+\Z")  # strconv.Atoi


def _container_value(container, name: str) -> int:
    q = container.limits.get(name)
    return q.value() if q is not None else 0


def gpu_memory_of_pod(pod) -> int:
    init = max((_container_value(c, VOLCANO_GPU_RESOURCE) for c in pod.init_containers), default=0)
    mem = sum(_container_value(c, VOLCANO_GPU_RESOURCE) for c in pod.containers)
    return max(mem, init)


def gpu_number_of_pod(pod) -> int:
    gpus = sum(_container_value(c, VOLCANO_GPU_NUMBER) for c in pod.containers)
    init = max((_container_value(c, VOLCANO_GPU_NUMBER) for c in pod.init_containers), default=0)
    return max(gpus, init)


def gpu_index(pod) -> list[int] | None:
    """GetGPUIndex: the ids of the pod's annotation, None when absent or when any id is not an integer."""
    value = pod.annotations.get(GPU_INDEX)
    if value is None:
        return None
    ids = []
    for item in value.split(","):
        if not _ATOI.match(item):
            return None
        ids.append(int(item))
    return ids


def unhealthy_ids(node) -> list[int]:
    value = node.annotations.get(UNHEALTHY_GPU_IDS)
    if value is None:
        return []
    ids = []
    for item in value.split(","):
        if _ATOI.match(item):
            ids.append(int(item))  # upstream logs and skips a bad entry
    return ids


class GPUDevice:
    __slots__ = ("id", "memory", "pods")

    def __init__(self, dev_id: int, memory: int) -> None:
        self.id = dev_id
        self.memory = memory
        self.pods: dict[str, object] = {}  # pod uid -> pod (PodMap)

    def used_memory(self) -> int:
        return sum(gpu_memory_of_pod(p) for p in self.pods.values() if p.phase not in ("Succeeded", "Failed"))

    def idle_memory(self) -> int:
        return max(self.memory - self.used_memory(), 0)

    def is_idle(self) -> bool:
        return not self.pods


class GPUDevices:
    name_ = DEVICE_NAME

    def __init__(self, node_name: str, devices: dict[int, GPUDevice], flags: DeviceFlags) -> None:
        self.name = node_name
        self.devices = devices
        self.flags = flags
        self.locks = None  # the node's annotations in the API server (nodelock.py), set by the cache

    @classmethod
    def from_node(cls, node, flags: DeviceFlags) -> GPUDevices | None:
        memory = node.capacity.get(VOLCANO_GPU_RESOURCE)
        number = node.capacity.get(VOLCANO_GPU_NUMBER)
        if memory is None or number is None or number.value() == 0:
            return None
        count = number.value()
        per_card = memory.value() // count  # Go's int64 division truncates towards zero; both are >= 0
        devices = {i: GPUDevice(i, per_card) for i in range(count)}
        for bad in unhealthy_ids(node):
            devices.pop(bad, None)
        return cls(node.name, devices, flags)

    def deep_copy(self) -> GPUDevices:
        copied = {}
        for i, dev in self.devices.items():
            c = GPUDevice(dev.id, dev.memory)
            c.pods = dict(dev.pods)
            copied[i] = c
        out = GPUDevices(self.name, copied, self.flags)
        out.locks = self.locks
        return out

    # -- ledger ----------------------------------------------------------------------------

    def add_resource(self, pod) -> None:
        if gpu_memory_of_pod(pod) > 0 or gpu_number_of_pod(pod) > 0:
            for i in gpu_index(pod) or []:
                dev = self.devices.get(i)
                if dev is not None:
                    dev.pods[pod.uid] = pod

    def sub_resource(self, pod) -> None:
        if gpu_memory_of_pod(pod) > 0 or gpu_number_of_pod(pod) > 0:
            self._remove(pod, gpu_index(pod))

    def _remove(self, pod, ids: list[int] | None) -> None:
        if not ids:
            for dev in self.devices.values():
                dev.pods.pop(pod.uid, None)
            return
        for i in ids:
            dev = self.devices.get(i)
            if dev is not None:
                dev.pods.pop(pod.uid, None)

    def add_queue_resource(self, pod) -> dict[str, float]:
        return {}

    # -- scheduling ------------------------------------------------------------------------

    def has_device_request(self, pod) -> bool:
        return (self.flags.gpu_sharing and gpu_memory_of_pod(pod) > 0) or \
            (self.flags.gpu_number and gpu_number_of_pod(pod) > 0)

    def _by_memory(self, pod) -> list[int]:
        request = gpu_memory_of_pod(pod)
        return sorted(i for i, dev in self.devices.items() if dev.idle_memory() >= request)

    def _by_number(self, pod) -> list[int] | None:
        request = gpu_number_of_pod(pod)
        idle = sorted(i for i, dev in self.devices.items() if dev.is_idle())
        if len(idle) < request:
            return None
        return idle[:request]

    def filter_node(self, pod, policy: str) -> tuple[int, str, str | None]:
        if self.flags.gpu_sharing and gpu_memory_of_pod(pod) > 0 and not self._by_memory(pod):
            err = f"no enough gpu memory on node {self.name}"
            return UNSCHEDULABLE, f"GpuShare {err}", err
        if self.flags.gpu_number and gpu_number_of_pod(pod) > 0 and not self._by_number(pod):
            err = f"no enough gpu number on node {self.name}"
            return UNSCHEDULABLE, f"GpuNumber {err}", err
        return SUCCESS, "", None

    def score_node(self, pod, policy: str) -> float:
        return 0.0

    def allocate(self, pod, now_ns: int) -> tuple[dict[str, str] | None, str | None]:
        """(annotations to write, error)."""
        if gpu_memory_of_pod(pod) > 0:
            if self.flags.node_lock and self.locks is not None:
                lock_err = lock_node(self.locks, self.name, GPUSHARE_LOCK, now_ns)
                if lock_err is not None:
                    return None, f"node {self.name} locked for lockname gpushare {lock_err}"
            ids = self._by_memory(pod)
            if not ids:
                return None, f"the node {pod.node_name} can't place the pod {pod.name} in ns {pod.namespace}"
            self.devices[ids[0]].pods[pod.uid] = pod
            return _index_annotations([ids[0]], now_ns), None
        if gpu_number_of_pod(pod) > 0:
            ids = self._by_number(pod)
            if not ids:
                return None, f"the node {pod.node_name} can't place the pod {pod.name} in ns {pod.namespace}"
            for i in ids:
                self.devices[i].pods[pod.uid] = pod
            return _index_annotations(ids, now_ns), None
        return None, None

    def release(self, pod) -> list[str]:
        """The annotation keys to take off the task."""
        self._remove(pod, gpu_index(pod))
        return [PREDICATE_TIME, GPU_INDEX]

    # -- what the invariants read ---------------------------------------------------------------

    def ledger(self) -> list[dict]:
        return [{"id": str(i), "memory": d.memory, "used_memory": d.used_memory(), "pods": sorted(d.pods)}
                for i, d in sorted(self.devices.items())]

    def device_ids(self) -> set[str]:
        return {str(i) for i in self.devices}


def _index_annotations(ids: list[int], now_ns: int) -> dict[str, str]:
    return {PREDICATE_TIME: str(now_ns), GPU_INDEX: ",".join(str(i) for i in ids)}
