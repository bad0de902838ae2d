"""A pod's QoS class as Kubernetes gives it (k8s.io/kubernetes pkg/apis/core/v1/helper/qos GetPodQOS).

numa-aware considers Guaranteed pods only; rescheduling's victim order ranks BestEffort, Burstable,
Guaranteed. Both ask upstream's v1qos.GetPodQOS.
"""

from __future__ import annotations

from schedcheck.reference.k8s import Pod
from schedcheck.reference.quantity import Quantity

_QOS_RESOURCES = ("cpu", "memory")


def _positive(quantity: Quantity) -> bool:
    return not quantity.is_zero() and not quantity.is_negative()


def _add_positive(total: dict[str, Quantity], listed: dict[str, Quantity]) -> set[str]:
    """Adds the positive cpu and memory quantities of `listed` into `total`; returns their names."""
    found = set()
    for name, quantity in listed.items():
        if name in _QOS_RESOURCES and _positive(quantity):
            found.add(name)
            total[name] = Quantity(total[name].as_fraction() + quantity.as_fraction()) \
                if name in total else quantity
    return found


def pod_qos(pod: Pod) -> str:
    """v1qos.GetPodQOS (k8s v1.36.1, PodLevelResources on): status.qosClass when the pod has one, else
    ComputePodQOS: from the pod-level cpu and memory requests and limits when the pod has spec.resources at all
    (even empty: then BestEffort, whatever its containers say), else from its containers' and init containers'."""
    if pod.qos_class:
        return pod.qos_class
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    if pod.resources is not None:
        _add_positive(requests, pod.resources.requests)
        if pod.resources.limits and not {"cpu", "memory"} <= _add_positive(limits, pod.resources.limits):
            guaranteed = False
    else:
        for container in [*pod.containers, *pod.init_containers]:
            _add_positive(requests, container.requests)
            if not {"cpu", "memory"} <= _add_positive(limits, container.limits):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed:
        for name, request in requests.items():
            if name not in limits or limits[name].as_fraction() != request.as_fraction():
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
