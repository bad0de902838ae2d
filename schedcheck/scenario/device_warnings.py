"""Warnings on the shared-GPU fields (deviceshare, reference_impl/api/devices): values upstream reads
leniently (it logs and ignores them), named here so that a typo does not pass unnoticed."""

from __future__ import annotations

import re

from schedcheck.reference import k8s
from schedcheck.scenario.errors import ScenarioError
from schedcheck.reference.api.devices import ascend310p_vnpu as mc, ascend_hami, gpushare, vgpu
from schedcheck.reference.api.devices.config import VOLCANO_VGPU_REGISTER

_INT = re.compile(r"[+-]?[0-9]+\Z")


def device_warnings(objects: k8s.ClusterObjects, warnings: list[str], source: str = "") -> None:
    for node in objects.nodes:
        _register(node, warnings)
        _ascend_register(node, warnings, source)
        _mindcluster_node(node, warnings)
        value = node.annotations.get(gpushare.UNHEALTHY_GPU_IDS)
        if value is not None and not all(_INT.match(i) for i in value.split(",")):
            warnings.append(f"Node {node.name}: metadata.annotations.{gpushare.UNHEALTHY_GPU_IDS}: {value!r}: an entry "
                            "that is not an integer is skipped, as upstream does")
    for pod in objects.pods:
        value = pod.annotations.get(gpushare.GPU_INDEX)
        if value is not None and gpushare.gpu_index(pod) is None:
            warnings.append(f"Pod {pod.key}: metadata.annotations.{gpushare.GPU_INDEX}: {value!r} is not a comma-separated "
                            "list of integers: upstream ignores it (the pod holds no GPU-share card)")
        value = pod.annotations.get(vgpu.ASSIGNED_IDS)
        if value:
            read = sum(len(c) for c in vgpu.decode_pod_devices(value))
            written = sum(1 for part in value.split(";") for e in part.split(":") if "," in e)
            if read != written:
                warnings.append(f"Pod {pod.key}: metadata.annotations.{vgpu.ASSIGNED_IDS}: {written - read} of {written} "
                                "card entries are not uuid,type,memory,cores with whole numbers: upstream skips them")
        _ascend_pod(pod, warnings)
        _mindcluster_pod(pod, warnings)


def _register(node: k8s.Node, warnings: list[str]) -> None:
    value = node.annotations.get(VOLCANO_VGPU_REGISTER)
    if value is None:
        return
    field = f"Node {node.name}: metadata.annotations.{VOLCANO_VGPU_REGISTER}"
    if vgpu.decode_node_devices(value) is None:
        warnings.append(f"{field}: not a list of uuid,count,memory,type,health,mode entries ended by ':' (an entry "
                        "has fewer than six fields): upstream refuses it, the node has no vGPU cards")
        return
    # mig and mps: device_config.config_map_warnings (their reading depends on the device config)


def _ascend_register(node: k8s.Node, warnings: list[str], source: str) -> None:
    """HAMi Ascend vNPU registration (api/devices/ascend_hami.py): a list upstream refuses leaves the node
    without the kind's pool; a null entry makes upstream's scheduler panic, so it is refused here."""
    for word in ascend_hami.common_words():
        ascend_register_word(node, word, warnings, source)


def ascend_register_word(node: k8s.Node, word: str, warnings: list[str], source: str) -> None:
    """The registration of one vNPU kind (device_config.py calls this for the kinds a ConfigMap configures)."""
    key = ascend_hami.register_annotation(word)
    value = node.annotations.get(key)
    if value is None:
        return
    devices, why = ascend_hami.decode_node_devices(value)
    field = f"Node {node.name}: metadata.annotations.{key}"
    if devices is None and "panics" in why:
        raise ScenarioError(source, f"Node {node.name}", f"metadata.annotations.{key}", why)
    if devices is None:
        warnings.append(f"{field}: {why}: upstream refuses the list, the node has no {word} vNPUs")
        return
    if len({d.id for d in devices}) != len(devices):
        warnings.append(f"{field}: a device id appears twice: upstream keeps the last entry of each id")
    if word.startswith(ascend_hami.ASCEND910_PREFIX):
        _network_ids(node, key, devices, warnings, source)


def _network_ids(node: k8s.Node, key: str, devices, warnings: list[str], source: str) -> None:
    """An Ascend910 kind's custominfo.NetworkID (ascend_hami.select_with_topology): a number beyond int64 is
    refused (Go's conversion is platform-dependent); a value that is not a number, or a key spelled otherwise,
    is warned about."""
    field = f"Node {node.name}: metadata.annotations.{key}"
    for i, dev in enumerate(devices):
        problem = ascend_hami.network_id_problem(dev)
        if problem is not None:
            raise ScenarioError(source, f"Node {node.name}", f"metadata.annotations.{key}", f"entry {i}: {problem}")
        if dev.network is not ascend_hami.NO_NETWORK and ascend_hami.network_number(dev) is None:
            warnings.append(f"{field}: entry {i}: custominfo.NetworkID {dev.network!r} is not a number: upstream "
                            "still counts the key (the node chooses by network when every device has it) but never "
                            "chooses this device there")
        near = [k for k in (dev.custom or {}) if k != ascend_hami.NETWORK_ID and k.lower() == "networkid"]
        if near:
            warnings.append(f"{field}: entry {i}: custominfo.{near[0]} is not read: upstream reads the exact key "
                            f"{ascend_hami.NETWORK_ID}")


def _ascend_pod(pod: k8s.Pod, warnings: list[str]) -> None:
    for word in ascend_hami.common_words():
        key = ascend_hami.allocated_annotation(word)
        value = pod.annotations.get(key)
        if value and ascend_hami.decode_container_devices(value) is None:
            warnings.append(f"Pod {pod.key}: metadata.annotations.{key}: an entry has fewer than four fields "
                            "(id,type,memory,cores): upstream ignores the whole annotation")
        for i, container in enumerate(pod.containers):
            q = container.limits.get(f"huawei.com/{word}")
            if q is not None and not q.value() > 0:
                warnings.append(f"Pod {pod.key}: spec.containers[{i}].resources.limits.huawei.com/{word}: {q}: upstream "
                                "still places the container on one device when one fits, and panics scoring a node "
                                "where none does")


def _mindcluster_node(node: k8s.Node, warnings: list[str]) -> None:
    """mindcluster 310P vNPU (api/devices/ascend310p_vnpu.py): a node offering huawei.com/npu-core whose
    labels or chip annotation upstream cannot read is left without chips (its vNPU predicate fails)."""
    capacity = node.capacity.get(mc.NPU_CORE)
    if capacity is None:
        return
    where = f"Node {node.name}"
    accelerator = node.labels.get(mc.ACCELERATOR)
    if accelerator is None or len(accelerator.split("-")) < 2:
        warnings.append(f"{where}: metadata.labels.{mc.ACCELERATOR}: {accelerator!r} is not like 'huawei-Ascend310P': "
                        "upstream leaves the node's 310P vNPU chips unbuilt")
        return
    kind = accelerator.split("-")[1]
    for key in (mc.SERVER_TYPE, mc.CHIP_TYPE_KEY):
        if key not in node.labels:
            warnings.append(f"{where}: metadata.labels.{key} is missing: upstream leaves the node's vNPU chips unbuilt")
    server = node.labels.get(mc.SERVER_TYPE, "")
    parts = server.split("-")
    per_chip = mc.go_atoi(parts[1]) if len(parts) >= 2 else None
    cores = capacity.milli_value() // 1000
    if server and not per_chip:
        warnings.append(f"{where}: metadata.labels.{mc.SERVER_TYPE}: {server!r} has no core count as its second "
                        "'-' field (like Ascend310P-8): upstream leaves the node's vNPU chips unbuilt")
    elif per_chip and (cores % per_chip or not any(k in (kind, node.labels.get(mc.CHIP_TYPE_KEY)) and c == per_chip
                                                      for k, c, _ in mc.NODE_TEMPLATES)):
        warnings.append(f"{where}: status.capacity.{mc.NPU_CORE}: {cores} cores are not whole {kind} chips of "
                        f"{per_chip} cores that upstream knows (310P: 8 or 10): the node's vNPU chips are unbuilt")
    key = f"metadata.annotations.{mc.HW_PREFIX}{kind}"
    value = node.annotations.get(mc.HW_PREFIX + kind)
    if value is None:
        warnings.append(f"{where}: {key} (the chips, like '{kind}-0,{kind}-1') is missing: upstream leaves the "
                        "node's vNPU chips unbuilt")
        return
    for suffix in ("", mc.UNHEALTHY_SUFFIX):
        text = node.annotations.get(mc.HW_PREFIX + kind + suffix, "")
        bad = [c for c in text.split(",") if c and mc.go_atoi(c[len(kind) + 1:] if c.startswith(kind + "-") else c) is None]
        if bad:
            warnings.append(f"{where}: {key}{suffix}: entries {bad} are not '{kind}-<id>': upstream skips them")


def _mindcluster_pod(pod: k8s.Pod, warnings: list[str]) -> None:
    where = f"Pod {pod.key}"
    if pod.labels.get(mc.JOB_KIND_KEY) == mc.JOB_KIND_310P:
        dvpp = pod.labels.get(mc.VNPU_DVPP)
        if dvpp is not None and dvpp not in (mc.DVPP_ON, mc.DVPP_OFF, mc.DVPP_NULL):
            warnings.append(f"{where}: metadata.labels.{mc.VNPU_DVPP}: {dvpp!r} is not yes, no or null: upstream's "
                            "predicate refuses the pod's vNPU request on every node")
        level = pod.labels.get(mc.VNPU_LEVEL)
        if level is not None and level not in (mc.LOW, mc.HIGH):
            warnings.append(f"{where}: metadata.labels.{mc.VNPU_LEVEL}: {level!r} is not low or high: upstream reads low")
        if mc.pod_asks(pod) and mc.pod_cores(pod) not in (1, 2, 4) and mc.pod_cores(pod) % 8 and mc.pod_cores(pod) % 10:
            warnings.append(f"{where}: spec.containers[*].resources.requests.{mc.NPU_CORE}: {mc.pod_cores(pod)} is "
                            "neither a vNPU (1, 2, 4 cores) nor whole chips: upstream reads an empty request, "
                            "which allocates nothing")
    value = pod.annotations.get(mc.NPU_CORE)
    if value is not None and not re.fullmatch(r"[0-9]+(,[0-9]+)*|[0-9]+-[A-Za-z0-9_]+", value):
        warnings.append(f"{where}: metadata.annotations.{mc.NPU_CORE}: {value!r} is neither chip ids ('0,1') nor "
                        "'<chip>-<template>': upstream charges no chip for it")
