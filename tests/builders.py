"""Tiny builders for tests: Kubernetes objects with quantities written as strings."""

from __future__ import annotations

from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION, Container, Node, Pod, PodGroup
from schedcheck.reference.quantity import Quantity

GPU = "nvidia.com/gpu"
GI = 1024**3


def rl(**quantities: str) -> dict[str, Quantity]:
    """rl(cpu="2", memory="4Gi", nvidia_com__gpu="1") -> ResourceList (``__`` spells ``/``, ``_`` a dot)."""
    out = {}
    for key, value in quantities.items():
        name = key.replace("__", "/").replace("_", ".")
        out[name] = Quantity.parse(value)
    return out


def res(cpu: float = 0, memory: float = 0, **scalars: float) -> Resource:
    """Resource in upstream units: milli-cpu, bytes, scalars as given (gpu=1000 is one GPU)."""
    names = {k.replace("__", "/").replace("_", "."): v for k, v in scalars.items()}
    return Resource(cpu, memory, names or None)


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **extra) -> Node:
    allocatable = rl(cpu=cpu, memory=memory, pods=pods)
    return Node(name=name, uid=f"uid-{name}", allocatable=allocatable, **extra)


def pod(name: str, group: str = "pg", cpu: str = "1", memory: str = "1Gi", namespace: str = "default",
        **extra) -> Pod:
    requests = {}
    if cpu:
        requests["cpu"] = Quantity.parse(cpu)
    if memory:
        requests["memory"] = Quantity.parse(memory)
    annotations = extra.pop("annotations", {})
    if group:
        annotations = {GROUP_NAME_ANNOTATION: group, **annotations}
    return Pod(name=name, namespace=namespace, uid=f"uid-{namespace}-{name}", annotations=annotations,
               containers=[Container("main", requests)], **extra)


def pod_group(name: str, min_member: int, namespace: str = "default", **extra) -> PodGroup:
    return PodGroup(name=name, namespace=namespace, uid=f"uid-pg-{name}", min_member=min_member, **extra)
