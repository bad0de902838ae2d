"""deviceshare: shared GPUs (pkg/scheduler/plugins/deviceshare/deviceshare.go).

Arguments, as upstream names them: `deviceshare.GPUSharingEnable` (GPU memory sharing, the GpuShare pool),
`deviceshare.GPUNumberEnable` (whole GPUs by number, the same pool), `deviceshare.VGPUEnable` (HAMi vGPU,
the hamivgpu pool), `deviceshare.SchedulePolicy` ("binpack", "spread", or anything else: no preference),
`deviceshare.ScheduleWeight` (node-order weight, 0: no score), `deviceshare.AscendHAMiVNPUEnable` (HAMi Ascend
vNPU, a pool per vNPU kind of the device config; api/devices/ascend_hami.py), `deviceshare.GPUExclusiveRules` (a list of
label maps; gpuexclusive.py), `deviceshare.NodeLockEnable` (the node lock of api/devices/nodelock.py),
`deviceshare.KnownGeometriesCMName` / `KnownGeometriesCMNamespace` (the device ConfigMap of the first
build, api/devices/config.py; the cache loads it from the scenario's ConfigMap objects),
`deviceshare.AscendMindClusterVNPUEnable` (mindcluster 310P vNPU on every node, built at session open;
api/devices/ascend310p_vnpu.py). Upstream exits when GPUSharingEnable and GPUNumberEnable are both true, or when
either is with VGPUEnable; the scenario loader refuses such a conf in one line.

Upstream keeps the switches in package variables, set whenever the plugin is built; the pools a node
carries are decided when the cache adds the node. The reference decides them from the conf when the
cache is built (`device_flags`), as a scheduler that has run a session before the nodes were (re)listed.

PredicateFn: for every registered pool on the node that the pod asks of, FilterNode; a failure is a fit
error with its status (code Unschedulable) and reason: "GpuShare no enough gpu memory on node N",
"GpuNumber no enough gpu number on node N", "hami-vgpuDeviceSharing error", "no ascend device available"
(code Unschedulable when too few devices fit, Error for several devices with partial memory).
NodeOrderFn (ScheduleWeight > 0): floor(Σ pool scores + 0.5) * ScheduleWeight over the pools the pod asks
of; the vGPU pool's score is the one its last FilterNode on that node computed (binpack: 100 * used/total
memory of each chosen card after placing; spread: 0 in practice, see api/devices/vgpu.py); an Ascend pool's
score is the first chosen device's of each container, before placing (binpack 100 * used / total memory,
spread 100 on an unused device), and ScoreNode also sets the policy its Allocate uses.
The mindcluster pool fails the predicate with code Error and reason "preCheckNodePredicate failure" (the
node's idle npu-core) or "" (the chips), scores nothing in NodeOrderFn and is scored in BatchNodeOrderFn
(ScheduleWeight > 0): 8 (or 16) * ScheduleWeight to the candidate with the least idle npu-core
(ascend310p_vnpu.batch_scores). Upstream registers the batch function whatever the switches; the
reference only with the mindcluster switch on (the function scores nothing otherwise).
The device choice itself is made in the predicates plugin's allocate handler (predicates.py), as upstream.
"""

from __future__ import annotations

import math

from schedcheck.reference.api.devices import ascend310p_vnpu
from schedcheck.reference.api.devices.base import DeviceFlags, SUCCESS
from schedcheck.reference.api.devices.config import DEFAULT_CM_NAME, DEFAULT_CM_NAMESPACE
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session

PLUGIN_NAME = "deviceshare"
GPU_SHARING_ENABLE = "deviceshare.GPUSharingEnable"
GPU_NUMBER_ENABLE = "deviceshare.GPUNumberEnable"
NODE_LOCK_ENABLE = "deviceshare.NodeLockEnable"
VGPU_ENABLE = "deviceshare.VGPUEnable"
SCHEDULE_POLICY = "deviceshare.SchedulePolicy"
SCHEDULE_WEIGHT = "deviceshare.ScheduleWeight"
GPU_EXCLUSIVE_RULES = "deviceshare.GPUExclusiveRules"
ASCEND_MINDCLUSTER_VNPU = "deviceshare.AscendMindClusterVNPUEnable"
ASCEND_HAMI_VNPU = "deviceshare.AscendHAMiVNPUEnable"
KNOWN_GEOMETRIES_CM_NAME = "deviceshare.KnownGeometriesCMName"
KNOWN_GEOMETRIES_CM_NAMESPACE = "deviceshare.KnownGeometriesCMNamespace"
ARGUMENTS = (GPU_SHARING_ENABLE, GPU_NUMBER_ENABLE, NODE_LOCK_ENABLE, VGPU_ENABLE, SCHEDULE_POLICY, SCHEDULE_WEIGHT,
             GPU_EXCLUSIVE_RULES, ASCEND_MINDCLUSTER_VNPU, ASCEND_HAMI_VNPU, KNOWN_GEOMETRIES_CM_NAME,
             KNOWN_GEOMETRIES_CM_NAMESPACE)
INT64_MIN = -(2**63)


def flags_from_arguments(arguments: dict | None, before: DeviceFlags | None = None) -> DeviceFlags:
    """The switches after building the plugin with these arguments. Upstream's GetBool leaves a package
    variable alone when the key is absent, so switches accumulate over builds (`before`); the schedule
    policy is the plugin's own field, copied to the vGPU package at every build. The device ConfigMap's
    name and namespace are those of the first build (config.InitDevicesConfig loads once per process)."""
    args = as_arguments(arguments)
    first = before is None
    before = before or DeviceFlags()
    return DeviceFlags(
        gpu_sharing=args.get_bool(GPU_SHARING_ENABLE, before.gpu_sharing),
        gpu_number=args.get_bool(GPU_NUMBER_ENABLE, before.gpu_number),
        vgpu=args.get_bool(VGPU_ENABLE, before.vgpu),
        ascend_hami=args.get_bool(ASCEND_HAMI_VNPU, before.ascend_hami),
        ascend_mindcluster=args.get_bool(ASCEND_MINDCLUSTER_VNPU, before.ascend_mindcluster),
        schedule_policy=args.get_str(SCHEDULE_POLICY, ""),
        node_lock=args.get_bool(NODE_LOCK_ENABLE, False),  # a local false at every build, not accumulated
        cm_name=args.get_str(KNOWN_GEOMETRIES_CM_NAME, DEFAULT_CM_NAME) if first else before.cm_name,
        cm_namespace=args.get_str(KNOWN_GEOMETRIES_CM_NAMESPACE, DEFAULT_CM_NAMESPACE) if first else before.cm_namespace,
    )


def conflict(flags: DeviceFlags) -> str | None:
    """The combinations upstream refuses with klog.Fatal."""
    if flags.gpu_sharing and flags.gpu_number:
        return "can not define true in both gpu sharing and gpu number"
    if (flags.gpu_sharing or flags.gpu_number) and flags.vgpu:
        return "gpu-share and vgpu can't be used together"
    return None


def device_flags(conf) -> DeviceFlags:
    """The switches once every deviceshare entry of the conf has been built, in tier order."""
    flags = None
    for tier in conf.tiers:
        for option in tier.plugins:
            if option.name == PLUGIN_NAME:
                flags = flags_from_arguments(option.arguments, flags)
    return flags or DeviceFlags()


class DeviceSharePlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict) -> None:
        super().__init__(arguments)
        args = as_arguments(arguments)
        self.schedule_policy = flags_from_arguments(arguments).schedule_policy
        self.schedule_weight = args.get_int(SCHEDULE_WEIGHT, 0)

    def on_session_open(self, ssn: Session) -> None:
        from schedcheck.reference.plugins.gpuexclusive import wrap_for_exclusivity

        self.registered = ssn.cache.device_flags.registered()
        self.ssn = ssn
        wrap_for_exclusivity(ssn, self.arguments)
        if ssn.cache.device_flags.ascend_mindcluster:  # initializeDevicesWithSession
            for node in ssn.nodes.values():
                pool = node.others.get(ascend310p_vnpu.DEVICE_NAME)
                if pool is not None:
                    pool.init_session(node)
        ssn.add_fn("predicate", self.name, self.predicate)
        ssn.add_fn("node_order", self.name, self.score)
        if ssn.cache.device_flags.ascend_mindcluster:
            ssn.add_fn("batch_node_order", self.name, self.batch_score)

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Exception | None:
        for name in self.registered:
            pool = node.others.get(name)
            if pool is None or not pool.has_device_request(task.pod):
                continue
            code, reason, err = pool.filter_node(task.pod, self.schedule_policy)
            if err is not None or code != SUCCESS:
                return FitError(task.key, node.name, [Status(StatusCode(code), reason)])
        return None

    def score(self, task: TaskInfo, node: NodeInfo) -> float:
        if self.schedule_weight <= 0:
            return 0.0
        total = 0.0
        for name, pool in node.others.items():
            if name != ascend310p_vnpu.DEVICE_NAME and pool.has_device_request(task.pod):
                total += pool.score_node(task.pod, self.schedule_policy)
        rounded = math.floor(total + 0.5) if math.isfinite(total) else INT64_MIN  # Go's int64(NaN/Inf) on amd64
        return float(rounded) * float(self.schedule_weight)

    def batch_score(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        scores = {node.name: 0.0 for node in nodes}
        if self.schedule_weight <= 0:
            return scores
        pools = [node.others.get(ascend310p_vnpu.DEVICE_NAME) for node in nodes]
        pools = [p for p in pools if p is not None and p.has_device_request(task.pod)]
        if not pools:
            return scores
        chooser = self.ssn.tie_chooser
        by_name = {node.name: node for node in nodes}

        def first(group: list) -> object | None:  # a guided replay: the implementation's node among equal idle
            chosen = chooser(self.ssn, task, [by_name[p.name] for p in group]) if chooser is not None else None
            return next((p for p in group if chosen is not None and p.name == chosen.name), None)

        values = ascend310p_vnpu.batch_scores(task.pod, pools, first)
        if len(values) != len(nodes):  # upstream logs the length mismatch and adds nothing
            return scores
        for node, value in zip(nodes, values):
            scores[node.name] += value * self.schedule_weight
        return scores


register_plugin_builder(PLUGIN_NAME, DeviceSharePlugin)
