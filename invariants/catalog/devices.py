"""Shared GPUs and Ascend vNPUs (deviceshare): the device pools a node keeps (reference_impl/api/devices)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import CLOSE, LEDGER_OPS, OPERATION, invariant
from schedcheck.reference.api.devices import ascend_hami
from schedcheck.invariants.violation import Violation

# (used key, capacity key, what) of a device ledger entry; a vGPU card offers 100 cores, an Ascend vNPU
# device its devcore (100 on a node that supports hami-core)
_LIMITS = (("used_memory", "memory", "memory"), ("used_cores", "cores", "cores"), ("used_num", "number", "tasks"))
GPU_INDEX = "volcano.sh/gpu-index"
VGPU_IDS = "volcano.sh/vgpu-ids-new"
NPU_IDS = tuple(ascend_hami.allocated_annotation(word) for word in ascend_hami.common_words())


def device_excess(pool) -> dict[tuple[str, str], int]:
    """(device id, what) -> how far the pool's ledger has the device beyond what it offers (positive only)."""
    out = {}
    for entry in pool.ledger():
        for used, cap, what in _LIMITS:
            if used in entry and entry[used] > entry[cap]:
                out[(entry["id"], what)] = entry[used] - entry[cap]
    return out


def assigned_ids(annotations: dict[str, str]) -> list[str]:
    """The device ids a pod's device annotations name: GPU-share card indexes, vGPU card uuids and Ascend
    vNPU device ids (every container's, ";"-separated)."""
    ids = [i for i in annotations.get(GPU_INDEX, "").split(",") if i]
    for key in (VGPU_IDS, *NPU_IDS):
        for part in annotations.get(key, "").split(";"):
            ids += [entry.split(",")[0] for entry in part.split(":") if "," in entry]
    return ids


@invariant("device.within-capacity", "no shared GPU's or Ascend vNPU's memory, cores or task count in a node's device "
           "ledger goes beyond what the device offers (beyond what the cache already held at session open)", "node",
           "api/devices/nvidia/gpushare share.go (predicateGPUbyMemory), vgpu utils.go "
           "(checkNodeGPUSharingPredicateAndScore), ascend/hami device_info.go (fit)", (OPERATION, CLOSE),
           operations=LEDGER_OPS)
def device_within_capacity(ctx: CheckContext) -> Iterator[Violation]:
    for node in ctx.nodes():  # the operation's node at an operation, every node at close
        if not node.others:
            continue
        name = node.name
        cached = ctx.ssn.cache.nodes.get(name)
        for device_name, pool in node.others.items():
            base_pool = cached.others.get(device_name) if cached is not None else None
            base = device_excess(base_pool) if base_pool is not None else {}
            for (dev, what), excess in sorted(device_excess(pool).items()):
                if excess > base.get((dev, what), 0):
                    yield Violation("", f"node {name} {device_name} device {dev} holds {excess} {what} beyond what "
                                        f"it offers", [f"node {name}", f"device {dev}"],
                                    f"<= {base.get((dev, what), 0)} over", excess)


@invariant("device.assigned-exists", "every device id the scheduler assigned to a pod it bound exists on that pod's "
           "node", "node", "plugins/predicates AllocateFunc (device Allocate: GPU share, vGPU, Ascend vNPU), cache.go "
           "Bind (PodAnnotations)",
           (CLOSE,))
def device_assigned_exists(ctx: CheckContext) -> Iterator[Violation]:
    start = ctx.session_state.get("binds_at_open", 0)
    tasks = {t.key: t for job in ctx.ssn.jobs.values() for t in job.tasks.values()}
    for record in ctx.ssn.cache.log.binds[start:]:
        task = tasks.get(record.task)
        if task is None or not task.pod_annotations:
            continue
        node = ctx.ssn.cache.nodes.get(record.node)
        known: set[str] = set()
        for pool in (node.others.values() if node is not None else ()):
            known |= pool.device_ids()
        for dev in assigned_ids(task.pod_annotations):
            if dev not in known:
                yield Violation("", f"pod {record.task} bound to {record.node} was given device {dev}, which the "
                                    f"node does not have", [f"task {record.task}", f"node {record.node}"],
                                f"one of {sorted(known)}", dev)
