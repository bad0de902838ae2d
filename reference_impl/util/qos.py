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


def pod_qos(pod: Pod) -> str:
    """v1qos.GetPodQOS (k8s v1.36.1, pod-level resources not modelled): status.qosClass when the pod has one,
    else computed from its containers' and init containers' cpu and memory requests and limits."""
    if pod.qos_class:
        return pod.qos_class
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    for container in [*pod.containers, *pod.init_containers]:
        for name, quantity in container.requests.items():
            if name in _QOS_RESOURCES and _positive(quantity):
                requests[name] = Quantity(requests[name].as_fraction() + quantity.as_fraction()) \
                    if name in requests else quantity
        found = set()
        for name, quantity in container.limits.items():
            if name in _QOS_RESOURCES and _positive(quantity):
                found.add(name)
                limits[name] = Quantity(limits[name].as_fraction() + quantity.as_fraction()) \
                    if name in limits else quantity
        if not {"cpu", "memory"} <= found:
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
