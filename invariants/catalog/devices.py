"""Shared GPUs and Ascend vNPUs (deviceshare): the device pools a node keeps (reference_impl/api/devices)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import CLOSE, LEDGER_OPS, OPERATION, invariant
from schedcheck.reference.api.devices import ascend310p_vnpu, ascend_hami
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.types import allocated_status

# (used key, capacity key, what) of a device ledger entry; a vGPU card offers 100 cores, an Ascend vNPU
# device its devcore (100 on a node that supports hami-core), a mindcluster 310P chip its AI cores
_LIMITS = (("used_memory", "memory", "memory"), ("used_cores", "cores", "cores"), ("used_num", "number", "tasks"))
GPU_INDEX = "volcano.sh/gpu-index"
VGPU_IDS = "volcano.sh/vgpu-ids-new"
NPU_IDS_PREFIX, NPU_IDS_SUFFIX = ascend_hami.allocated_annotation("|").split("|")  # any vNPU kind's


def device_excess(pool) -> dict[tuple[str, str], int]:
    """(device id, what) -> how far the pool's ledger has the device beyond what it offers (positive only)."""
    return device_excess_of(pool.ledger())


def device_excess_of(ledger: list[dict]) -> dict[tuple[str, str], int]:
    out = {}
    for entry in ledger:
        for used, cap, what in _LIMITS:
            if used in entry and entry[used] > entry[cap]:
                out[(entry["id"], what)] = entry[used] - entry[cap]
    return out


def assigned_ids(annotations: dict[str, str]) -> list[str]:
    """The device ids a pod's device annotations name: GPU-share card indexes, vGPU card uuids, Ascend
    vNPU device ids (every container's, ";"-separated) and mindcluster 310P chip ids ("0,1" or "0-vir02")."""
    ids = [i for i in annotations.get(GPU_INDEX, "").split(",") if i]
    ids += ascend310p_vnpu.core_ids(annotations.get(ascend310p_vnpu.NPU_CORE, ""))
    npu_keys = [k for k in annotations if k.startswith(NPU_IDS_PREFIX) and k.endswith(NPU_IDS_SUFFIX)]
    for key in (VGPU_IDS, *npu_keys):
        for part in annotations.get(key, "").split(";"):
            ids += [entry.split(",")[0] for entry in part.split(":") if "," in entry]
    return ids


def mig_instance_holders(jobs) -> dict[str, dict[str, list[str]]]:
    """node -> MIG instance id (`uuid[group-position]`) -> the keys of the tasks placed there (Allocated,
    Binding, Bound, Running) whose vGPU annotation names it (the session's choice over the pod's own)."""
    out: dict[str, dict[str, list[str]]] = {}
    for job in jobs.values():
        for task in job.tasks.values():
            if not task.node_name or not allocated_status(task.status):
                continue
            annotations = {**task.pod.annotations, **(task.pod_annotations or {})}
            for dev in dict.fromkeys(assigned_ids({VGPU_IDS: annotations.get(VGPU_IDS, "")})):
                if "[" in dev:
                    out.setdefault(task.node_name, {}).setdefault(dev, []).append(task.key)
    return out


def has_device_pools(ssn) -> bool:
    """a node of the session has a device pool (shared GPUs, vGPUs, MIG instances, Ascend NPUs)"""
    return any(node.others for node in ssn.nodes.values())


@invariant("device.within-capacity", "no shared GPU's or Ascend vNPU's memory, cores or task count in a node's device "
           "ledger goes beyond what the device offers, and no MIG instance is held by two pods (beyond what the "
           "cache already held at session open; for a mindcluster 310P chip, beyond what the session-open "
           "initialisation charged it)", "node",
           "api/devices/nvidia/gpushare share.go (predicateGPUbyMemory), vgpu utils.go "
           "(checkNodeGPUSharingPredicateAndScore), vgpu mig.go (one pod per MIG instance), ascend/hami "
           "device_info.go (fit), ascend/mindcluster/ascend310p/vnpu device_manage.go (SelectChipFromNode)", (OPERATION, CLOSE), operations=LEDGER_OPS,
           applies_when=has_device_pools)
def device_within_capacity(ctx: CheckContext) -> Iterator[Violation]:
    nodes = [node for node in ctx.nodes() if node.others]  # the operation's node at an operation, else all
    at_close = ctx.checkpoint == CLOSE and nodes
    holders_now = mig_instance_holders(ctx.ssn.jobs) if at_close else {}
    holders_open = mig_instance_holders(ctx.ssn.cache.jobs) if holders_now else {}
    for node in nodes:
        name = node.name
        cached = ctx.ssn.cache.nodes.get(name)
        for dev, holders in sorted(holders_now.get(name, {}).items()):
            if len(holders) > max(1, len(holders_open.get(name, {}).get(dev, ()))):
                yield Violation("", f"node {name} MIG instance {dev} is held by {len(holders)} pods: "
                                    f"{', '.join(sorted(holders))}", [f"node {name}", f"device {dev}"]
                                + [f"task {t}" for t in sorted(holders)], "<= 1 pod", len(holders))
        for device_name, pool in node.others.items():
            base_pool = cached.others.get(device_name) if cached is not None else None
            base = device_excess(base_pool) if base_pool is not None else {}
            opening = getattr(pool, "opening", None)  # a pool built at session open: its ledger then
            if opening is not None:
                base = device_excess_of(opening)
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


def _assignment_key(pool) -> str | None:
    """The pod annotation a successful device Allocate of this pool always writes (None: a pool whose
    Allocate may succeed without one, the mindcluster 310P chips, which this rule leaves aside)."""
    from schedcheck.reference.api.devices import gpushare, vgpu

    if isinstance(pool, gpushare.GPUDevices):
        return gpushare.GPU_INDEX
    if isinstance(pool, vgpu.GPUDevices):
        return vgpu.ASSIGNED_IDS
    if isinstance(pool, ascend_hami.AscendDevices):
        return ascend_hami.allocated_annotation(pool.type)
    return None


@invariant("device.bound-with-assignment", "every pod bound in a session whose node's GPU-share, vGPU or HAMi Ascend "
           "pool it asks devices of carries that pool's device assignment (the allocate handler's device Allocate "
           "succeeded; a failed one fails the allocation, so the task is not placed)", "node",
           "plugins/predicates AllocateFunc (device Allocate error -> event.Err, 268bc9ca3); api/devices "
           "(Allocate: gpu-index, vgpu-ids-new, Ascend devices-allocated); cache.go Bind (PodAnnotations)",
           (CLOSE,), requires=("predicates",))
def device_bound_with_assignment(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ssn.conf.persistent_pipelines:
        return  # a kept pipelined task is allocated without an event (its devices were charged when pipelined)
    registered = ssn.cache.device_flags.registered()
    if not registered:
        return
    start = ctx.session_state.get("binds_at_open", 0)
    tasks = {t.key: t for job in ssn.jobs.values() for t in job.tasks.values()}
    for record in ssn.cache.log.binds[start:]:
        task = tasks.get(record.task)
        node = ssn.nodes.get(record.node)
        if record.pre_bind or task is None or node is None:
            continue
        for name in registered:
            pool = node.others.get(name)
            key = _assignment_key(pool) if pool is not None else None
            if key is None or not pool.has_device_request(task.pod):
                continue
            if key not in (task.pod_annotations or {}):
                yield Violation("", f"pod {record.task} asks {name} devices and was bound to {record.node} without a "
                                    f"device assignment ({key})", [f"task {record.task}", f"node {record.node}"],
                                f"{key} written", "none")
