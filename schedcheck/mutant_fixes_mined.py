"""More of upstream Volcano's scheduler fixes re-created as pre-fix mutants (helper mineD): the shared-device
fixes of 2024-2025 and fix commits of 2023.

Each entry re-creates, against the reference (which follows master, the fixed behaviour), what one upstream
fix commit removed; `schedcheck.mutants` wraps them as `Mutant`s. Each patch function returns (owner,
attribute, replacement) triples, as the other mutants do. docs/selftest.md, section "Device fixes and 2023
fixes re-created (helper mineD)", lists them with the rule that catches each.
"""

from __future__ import annotations

import copy
from typing import Any

Patches = list[tuple[Any, str, Any]]


def _vgpu_memory_from_first_card() -> Patches:
    """e3c8e0316: before it, a container asking a percentage of each card's memory (100 when it names no
    memory) had its request turned into bytes once, from the first card the loop reached past the task
    count check, as memory * (percentage / 100) in integer division, and that amount was charged on
    whichever card it then landed."""
    from schedcheck.reference.api.devices import vgpu

    def fit(self, pod, replicate: bool, policy: str):
        cfg = self.cfg
        if not vgpu.has_vgpu_request(pod, cfg):
            return True, [], 0.0, None
        mode = pod.annotations.get(vgpu.GPU_MODE)
        if mode is not None and mode != self.mode:
            return False, [], 0.0, f"pod required sharing mode {mode} is not the same as the node mode {self.mode}"
        requests = vgpu.container_requests(pod, cfg)
        if not requests:
            return True, [], 0.0, None
        pool = self.deep_copy() if replicate else self
        group = vgpu.pod_group_key(pod) if pod.annotations.get(vgpu.PODGROUP_POLICY) == vgpu.SPREAD else ""
        allow = vgpu._uuid_list(pod.annotations.get(vgpu.VGPU_USE_UUID, ""))
        deny = vgpu._uuid_list(pod.annotations.get(vgpu.VGPU_NOUSE_UUID, ""))
        filtering = bool(allow or deny)
        tentative: list = []

        def rollback() -> None:
            for dev, mem, core in tentative:
                dev.used_num = dev.used_num - 1 if dev.used_num > 0 else 0
                dev.used_mem = dev.used_mem - mem if dev.used_mem >= mem else 0
                dev.used_core = dev.used_core - core if dev.used_core >= core else 0

        score, chosen, word = 0.0, [], vgpu.UINT_MOD
        for nums, memreq, pct, cores in requests:
            devs, uuid_matched, memreq = [], False, memreq % word
            if nums > len(pool.devices):
                rollback()
                return False, [], 0.0, f"no enough gpu cards on node {pool.name}"
            for i in pool._order(policy):
                dev = pool.devices.get(i)
                if dev is None:
                    continue
                if (dev.uuid == "" and filtering) or (allow and dev.uuid not in allow) or dev.uuid in deny:
                    continue
                uuid_matched = True
                if dev.number <= dev.used_num:
                    continue
                if group and any(u.group == group and (u.used_mem > 0 or u.used_core > 0) for u in dev.pods.values()):
                    continue
                if pct != 101 and memreq == 0:  # the bug: set once, from this card, with an integer percentage
                    memreq = dev.memory * (pct // 100) % word
                mem = memreq
                if dev.memory - dev.used_mem < mem:
                    continue
                if dev.used_core + cores % word > 100:
                    continue
                if cores == 100 and dev.used_num > 0:
                    continue
                if dev.used_core == 100 and cores == 0:
                    continue
                if vgpu.NVIDIA not in dev.type or not vgpu._check_gpu_type(pod.annotations, dev.type):
                    continue
                fitted, dev_id = pool._try_add_pod(dev, mem, cores % word)
                if not fitted:
                    continue
                tentative.append((dev, mem, cores % word))
                if nums > 0:
                    nums -= 1
                    devs.append((dev_id, vgpu.NVIDIA, mem, cores % word))
                    score += vgpu.gpu_score(policy, dev)
                if nums == 0:
                    break
            if nums > 0:
                rollback()
                if filtering and not uuid_matched:
                    return False, [], 0.0, "no GPU matches UUID constraints"
                return False, [], 0.0, "not enough gpu fitted on this node"
            chosen.append(devs)
        return True, chosen, score, None
    return [(vgpu.GPUDevices, "fit", fit)]


def _vgpu_mode_only_mig_checked() -> Patches:
    """536b376f7: before it, a pod's volcano.sh/vgpu-mode was read through getSharingMode (mig, or hami-core
    for anything else) and only a pod asking mig was refused by a node not in mig mode; any other named mode
    fitted every node."""
    from schedcheck.reference.api.devices import mig, vgpu

    original = vgpu.GPUDevices.fit

    def fit(self, pod, replicate: bool, policy: str):
        named = pod.annotations.get(vgpu.GPU_MODE)
        if named is None or not vgpu.has_vgpu_request(pod, self.cfg):
            return original(self, pod, replicate, policy)
        if mig.sharing_mode(named) == mig.MIG and self.mode != mig.MIG:
            return False, [], 0.0, "pod required MIG but the node is not in MIG mode"
        view = copy.copy(pod)  # the rest of the fit as for a pod naming no mode
        view.annotations = {k: v for k, v in pod.annotations.items() if k != vgpu.GPU_MODE}
        return original(self, view, replicate, policy)
    return [(vgpu.GPUDevices, "fit", fit)]


def _vgpu_single_nouse_type_accepted() -> Patches:
    """f49301a0e: before it, checkGPUtype answered yes when nvidia.com/nouse-gputype held a single name that
    the card type contains (the comma-separated form was right), so the one excluded type was taken."""
    from schedcheck.reference.api.devices import vgpu

    def check_gpu_type(annotations: dict, card_type: str) -> bool:
        upper = card_type.upper()
        if vgpu.GPU_IN_USE in annotations:
            return any(v.upper() in upper for v in annotations[vgpu.GPU_IN_USE].split(","))
        nouse = annotations.get(vgpu.GPU_NO_USE)
        if nouse is not None and "," in nouse:
            return not any(v.upper() in upper for v in nouse.split(","))
        return True  # the bug: a single listed type the card matches is accepted
    return [(vgpu, "_check_gpu_type", check_gpu_type)]


def _gpushare_number_pods_not_recorded() -> Patches:
    """08eeb16f4 (issue #3824): before it, the GPU-share pool's AddResource and SubResource acted only for a
    pod asking gpu-memory, so a placed pod holding whole cards by gpu-number left its cards idle."""
    from schedcheck.reference.api.devices import gpushare

    def add_resource(self, pod) -> None:
        if gpushare.gpu_memory_of_pod(pod) > 0:
            for i in gpushare.gpu_index(pod) or []:
                dev = self.devices.get(i)
                if dev is not None:
                    dev.pods[pod.uid] = pod

    def sub_resource(self, pod) -> None:
        if gpushare.gpu_memory_of_pod(pod) > 0:
            self._remove(pod, gpushare.gpu_index(pod))
    return [(gpushare.GPUDevices, "add_resource", add_resource), (gpushare.GPUDevices, "sub_resource", sub_resource)]


def _preempt_stops_when_queue_not_overused() -> Patches:
    """af5c56308 (issue #3161): before it, preempt took a preemptor as fitting a node (no more victims needed)
    when its queue was not Overused and the node's future idle held it, not when the queue was Allocatable
    with it, so a preemptor its queue's deserved cannot hold was pipelined without evicting anyone."""
    from schedcheck.reference.actions.preempt import Preempt
    from schedcheck.reference.api.resource_info import Zero

    def fits_on_node(self, queue, preemptor, node) -> bool:
        ssn = self.ssn
        return (not ssn.overused(queue)  # the bug: Overused, not Allocatable(queue, preemptor)
                and preemptor.init_resreq.less_equal(node.future_idle_view(), Zero)
                and ssn.predicate_fn(preemptor, node) is None)
    return [(Preempt, "_fits_on_node", fits_on_node)]


def _nodeorder_adds_pods_to_node_map() -> Patches:
    """9167045b7: before it, nodeorder registered its own allocate and deallocate handlers that added (and
    removed) the task's pod to the session's shared k8s NodeMap, as the predicates plugin's handlers also
    do, so with both plugins every pod placed in the session was counted twice by PodTopologySpread's
    filter (and by everything else reading the NodeMap)."""
    from schedcheck.reference.framework.event import EventHandler
    from schedcheck.reference.plugins.nodeorder import NodeOrderPlugin

    original = NodeOrderPlugin.on_session_open

    def on_session_open(self, ssn) -> None:
        original(self, ssn)
        mirror = self.mirror

        def allocate(event) -> None:
            mirror.add_pod(event.task.node_name, event.task.pod)

        def deallocate(event) -> None:
            mirror.remove_pod(event.task.node_name, event.task.pod)
        ssn.add_event_handler(EventHandler(allocate, deallocate))
    return [(NodeOrderPlugin, "on_session_open", on_session_open)]


# (name, description, patches, source)
FIXES_MINED: tuple[tuple[str, str, Any, str], ...] = (
    ("vgpu-memory-from-first-card", "a vGPU container asking a share of each card's memory (the whole card when "
     "it names no memory) is charged the memory of the first card the loop reached, whichever card it lands on",
     _vgpu_memory_from_first_card, "volcano-sh/volcano e3c8e0316 (VGPU request with cards of different memory)"),
    ("vgpu-mode-only-mig-checked", "a pod's volcano.sh/vgpu-mode refuses a node only when it asks mig and the "
     "node is not in mig mode; a pod naming hami-core fits a mig node", _vgpu_mode_only_mig_checked,
     "volcano-sh/volcano 536b376f7 (exactly match the node GPU sharing mode)"),
    ("vgpu-single-nouse-type-accepted", "a single GPU type in nvidia.com/nouse-gputype is taken, not excluded, "
     "when the card's type contains it", _vgpu_single_nouse_type_accepted,
     "volcano-sh/volcano f49301a0e (fix bug for vgpu type check)"),
    ("gpushare-number-pods-not-recorded", "the GPU-share pool records a placed pod on its cards only when it asks "
     "gpu-memory, so cards held whole by a gpu-number pod look idle and are given again",
     _gpushare_number_pods_not_recorded, "volcano-sh/volcano 08eeb16f4 (issue #3824, take gpu-number into "
     "consideration)"),
    ("preempt-stops-when-queue-not-overused", "preempt stops looking for victims for a preemptor as soon as its "
     "queue is not Overused and the node's future idle holds it, instead of when the queue is Allocatable with it, so "
     "a preemptor past its queue's deserved is pipelined without evictions", _preempt_stops_when_queue_not_overused,
     "volcano-sh/volcano af5c56308 (issue #3161, high priority job can not preempt low priority)"),
    ("nodeorder-adds-pods-to-node-map", "nodeorder adds each pod placed in the session to the shared k8s NodeMap "
     "on top of the predicates plugin's own handler, so PodTopologySpread counts those pods twice and lets a pod "
     "into a domain past maxSkew", _nodeorder_adds_pods_to_node_map,
     "volcano-sh/volcano 9167045b7 (fix PodTopologySpread plugin violates maxSkew)"),
)
