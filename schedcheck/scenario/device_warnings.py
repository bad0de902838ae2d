"""Warnings on the shared-GPU fields (deviceshare, reference_impl/api/devices): values upstream reads
leniently (it logs and ignores them), named here so that a typo does not pass unnoticed."""

from __future__ import annotations

import re

from schedcheck.reference import k8s
from schedcheck.reference.api.devices import gpushare, vgpu
from schedcheck.reference.api.devices.config import VOLCANO_VGPU_REGISTER

_INT = re.compile(r"[+-]?[0-9]+\Z")


def device_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    for node in objects.nodes:
        _register(node, warnings)
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
