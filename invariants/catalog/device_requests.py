"""Shared GPUs, judged from the pods' side: what a vGPU assignment gives a pod against what the pod asked,
and whole GPU-share cards (gpu-number) held by one pod each. Both read the pods' device annotations, not
the node's device ledger, so a ledger that lost a pod does not hide the clash."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import CLOSE, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.devices import gpushare, vgpu
from schedcheck.reference.api.types import allocated_status

_WORD = 2**64  # the card memory and cores a vGPU request charges are Go uints


def _card_of(pool, entry_id: str):
    """The card an assignment entry names: its uuid is the entry id or (MIG) the id's prefix."""
    for dev in pool.devices.values():
        if dev.uuid and dev.uuid in entry_id:
            return dev
    return None


def _type_allowed(annotations: dict[str, str], card_type: str) -> bool:
    """nvidia.com/use-gputype: the card type contains one of the listed names (any case); else
    nvidia.com/nouse-gputype: it contains none of them; else any NVIDIA card."""
    upper = card_type.upper()
    if vgpu.GPU_IN_USE in annotations:
        return any(name.upper() in upper for name in annotations[vgpu.GPU_IN_USE].split(","))
    if vgpu.GPU_NO_USE in annotations:
        return not any(name.upper() in upper for name in annotations[vgpu.GPU_NO_USE].split(","))
    return True


def _uuids(text: str) -> set[str]:
    return {u.strip() for u in text.split(",") if u.strip()}


def vgpu_assignment_faults(pod, pool, assignment: str) -> list[str]:
    """How a vGPU assignment (`volcano.sh/vgpu-ids-new`) departs from what the pod asked of this node's
    pool: the sharing mode it names, the card count, type and uuid constraints, and per card the memory
    (the amount asked, or the asked percentage of that card's own memory) and cores."""
    faults = []
    notes = pod.annotations
    mode = notes.get(vgpu.GPU_MODE)
    if mode is not None and mode != pool.mode:
        faults.append(f"asks sharing mode {mode}, node's cards run {pool.mode}")
    allow, deny = _uuids(notes.get(vgpu.VGPU_USE_UUID, "")), _uuids(notes.get(vgpu.VGPU_NOUSE_UUID, ""))
    asked = vgpu.container_requests(pod, pool.cfg)
    given = vgpu.decode_pod_devices(assignment)
    if len(given) != len(asked):
        return faults + [f"{len(asked)} containers ask for cards, the assignment covers {len(given)}"]
    for index, ((nums, memreq, pct, cores), entries) in enumerate(zip(asked, given)):
        if nums > 0 and len(entries) != nums:
            faults.append(f"container {index} asks {nums} cards, given {len(entries)}")
        for entry_id, _kind, mem, entry_cores in entries:
            dev = _card_of(pool, entry_id)
            if dev is None:
                continue  # device.assigned-exists judges that
            if not _type_allowed(notes, dev.type):
                faults.append(f"card {dev.uuid} of type {dev.type} is excluded by the pod's GPU type annotation")
            if (allow and dev.uuid not in allow) or dev.uuid in deny:
                faults.append(f"card {dev.uuid} is excluded by the pod's uuid annotations")
            want = int(dev.memory * pct / 100.0) % _WORD if pct != 101 else memreq % _WORD
            if mem != want:
                faults.append(f"card {dev.uuid} ({dev.memory} memory) charged {mem} memory, the pod asks {want}")
            if entry_cores != cores % _WORD:
                faults.append(f"card {dev.uuid} charged {entry_cores} cores, the pod asks {cores % _WORD}")
    return faults


@invariant("device.vgpu-assignment-as-asked", "every vGPU assignment the scheduler wrote on a pod it bound gives "
           "the pod what it asked of that node's cards: a node in the sharing mode the pod names "
           "(volcano.sh/vgpu-mode), as many cards as each container asks, none of a type or uuid the pod's "
           "annotations exclude, and per card the memory asked (or the asked percentage of that card's own "
           "memory) and the cores asked", "node",
           "api/devices/nvidia/vgpu utils.go checkNodeGPUSharingPredicateAndScore (sharing mode 536b376f7, "
           "per-card memory e3c8e0316), checkGPUtype (f49301a0e); device_info.go Allocate (vgpu-ids-new)",
           (CLOSE,))
def device_vgpu_assignment_as_asked(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    binds = ssn.cache.log.binds[ctx.session_state.get("binds_at_open", 0):]
    if not binds:
        return  # no session's worth of tasks indexed for nothing (judged at every close)
    tasks = {t.key: t for job in ssn.jobs.values() for t in job.tasks.values()}
    for record in binds:
        task = tasks.get(record.task)
        node = ssn.nodes.get(record.node)
        assignment = (task.pod_annotations or {}).get(vgpu.ASSIGNED_IDS) if task is not None else None
        pool = node.others.get(vgpu.DEVICE_NAME) if node is not None else None
        if not assignment or not isinstance(pool, vgpu.GPUDevices):
            continue
        for fault in vgpu_assignment_faults(task.pod, pool, assignment):
            yield Violation("", f"pod {record.task} bound to {record.node}: {fault}",
                            [f"task {record.task}", f"node {record.node}"], "the pod's vGPU request", fault)


def whole_card_holders(jobs) -> dict[str, dict[str, list[str]]]:
    """node -> GPU-share card id -> the keys of the tasks placed there (Allocated, Binding, Bound, Running)
    that ask whole cards (volcano.sh/gpu-number) and whose gpu-index names the card (the session's choice
    over the pod's own annotation)."""
    out: dict[str, dict[str, list[str]]] = {}
    for job in jobs.values():
        for task in job.tasks.values():
            if not task.node_name or not allocated_status(task.status) or gpushare.gpu_number_of_pod(task.pod) <= 0:
                continue
            index = {**task.pod.annotations, **(task.pod_annotations or {})}.get(gpushare.GPU_INDEX, "")
            for card in dict.fromkeys(i for i in index.split(",") if i):
                out.setdefault(task.node_name, {}).setdefault(card, []).append(task.key)
    return out


@invariant("device.gpu-number-cards-exclusive", "no GPU-share card is named (volcano.sh/gpu-index) by two placed "
           "pods that ask whole cards (volcano.sh/gpu-number), beyond what the cache already held at session "
           "open: a whole-card request takes only cards no pod holds", "node",
           "api/devices/nvidia/gpushare device_info.go (AddResource/SubResource record gpu-number pods, "
           "08eeb16f4), share.go (predicateGPUbyNumber: idle cards only)", (CLOSE,))
def device_gpu_number_cards_exclusive(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if not any(gpushare.DEVICE_NAME in node.others for node in ssn.nodes.values()):
        return
    now, at_open = whole_card_holders(ssn.jobs), whole_card_holders(ssn.cache.jobs)
    for node_name, cards in sorted(now.items()):
        node = ssn.nodes.get(node_name)
        if node is None or gpushare.DEVICE_NAME not in node.others:
            continue
        for card, holders in sorted(cards.items()):
            if len(holders) > max(1, len(at_open.get(node_name, {}).get(card, ()))):
                yield Violation("", f"node {node_name} GPU card {card} is held whole by {len(holders)} pods: "
                                    f"{', '.join(sorted(holders))}", [f"node {node_name}", f"device {card}"]
                                + [f"task {t}" for t in sorted(holders)], "<= 1 pod", len(holders))
