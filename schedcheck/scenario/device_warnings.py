"""Warnings on the shared-GPU fields (deviceshare, reference_impl/api/devices): values upstream reads
leniently (it logs and ignores them), named here so that a typo does not pass unnoticed."""

from __future__ import annotations

import re

from schedcheck.reference import k8s
from schedcheck.scenario.errors import ScenarioError
from schedcheck.reference.api.devices import ascend_hami, gpushare, vgpu
from schedcheck.reference.api.devices.config import VOLCANO_VGPU_REGISTER

_INT = re.compile(r"[+-]?[0-9]+\Z")


def device_warnings(objects: k8s.ClusterObjects, warnings: list[str], source: str = "") -> None:
    for node in objects.nodes:
        _register(node, warnings)
        _ascend_register(node, warnings, source)
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
        key = ascend_hami.register_annotation(word)
        value = node.annotations.get(key)
        if value is None:
            continue
        devices, why = ascend_hami.decode_node_devices(value)
        field = f"Node {node.name}: metadata.annotations.{key}"
        if devices is None and "panics" in why:
            raise ScenarioError(source, f"Node {node.name}", f"metadata.annotations.{key}", why)
        if devices is None:
            warnings.append(f"{field}: {why}: upstream refuses the list, the node has no {word} vNPUs")
        elif len({d.id for d in devices}) != len(devices):
            warnings.append(f"{field}: a device id appears twice: upstream keeps the last entry of each id")


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
