"""A pod's requests and limits as Kubernetes' resource helpers count them (k8s.io/component-helpers v0.36.1
resource/helpers.go), pod-level resources (spec.resources, the PodLevelResources gate on, its v1.36.1 default)
included.

Quantities are exact fractions (cpu in cores, memory in bytes). Status resources (in-place resize) are not part
of the scenario format, so the spec is what counts.

- Pod-level resources are supported for cpu, memory and every hugepages-<size>; a pod "sets" pod-level requests
  (limits) when spec.resources.requests (limits) names at least one supported resource.
- Container aggregation: regular containers summed; each init container in turn asks for its own request plus
  the sidecars (restartPolicy Always) started before it, and the pod asks for at least the largest of these;
  sidecars are also added to the sum. `non_missing` fills a container's missing (not zero) resources.
- PodRequests: the aggregation, then every supported resource the pod level names replaces it, then overhead is
  added.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from schedcheck.reference.k8s import Container, Pod
from schedcheck.reference.quantity import Quantity

HUGEPAGES_PREFIX = "hugepages-"
_SUPPORTED = frozenset({"cpu", "memory"})

Amounts = dict[str, Fraction]


def is_supported_pod_level_resource(name: str) -> bool:
    """IsSupportedPodLevelResource: cpu, memory, hugepages-*."""
    return name in _SUPPORTED or name.startswith(HUGEPAGES_PREFIX)


def is_huge_page(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def pod_level_requests_set(pod: Pod) -> bool:
    """IsPodLevelRequestsSet."""
    return pod.resources is not None and any(is_supported_pod_level_resource(n) for n in pod.resources.requests)


def pod_level_limits_set(pod: Pod) -> bool:
    """IsPodLevelLimitsSet."""
    return pod.resources is not None and any(is_supported_pod_level_resource(n) for n in pod.resources.limits)


def amounts(resource_list: Mapping[str, Quantity]) -> Amounts:
    return {name: q.as_fraction() for name, q in resource_list.items()}


def _add_into(total: Amounts, extra: Mapping[str, Fraction]) -> None:
    for name, value in extra.items():
        total[name] = total.get(name, 0) + value


def _max_into(total: Amounts, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        if name not in total or value > total[name]:
            total[name] = value


def _aggregate(containers: Iterable[Container], init_containers: Iterable[Container], limits: bool,
               non_missing: Mapping[str, Fraction] | None) -> Amounts:
    def own(container: Container) -> Amounts:
        listed = container.limits if limits else container.requests
        result = amounts(listed)
        for name, default in (non_missing or {}).items():
            if name not in listed:  # missing, not zero: an explicit 0 stays 0
                result[name] = default
        return result

    total: Amounts = {}
    for container in containers:
        _add_into(total, own(container))
    restartable: Amounts = {}
    init_max: Amounts = {}
    for container in init_containers:
        mine = own(container)
        if container.restart_policy == "Always":
            _add_into(total, mine)
            _add_into(restartable, mine)
            use = restartable
        else:
            use = dict(mine)
            _add_into(use, restartable)
        _max_into(init_max, use)
    _max_into(total, init_max)
    return total


def aggregate_container_requests(containers: Iterable[Container], init_containers: Iterable[Container],
                                 non_missing: Mapping[str, Fraction] | None = None) -> Amounts:
    """AggregateContainerRequests (NonMissingContainerRequests as `non_missing`)."""
    return _aggregate(containers, init_containers, False, non_missing)


def aggregate_container_limits(containers: Iterable[Container], init_containers: Iterable[Container]) -> Amounts:
    """AggregateContainerLimits."""
    return _aggregate(containers, init_containers, True, None)


def pod_requests(pod: Pod, non_missing: Mapping[str, Fraction] | None = None) -> Amounts:
    """PodRequests with the PodLevelResources gate on: the containers' aggregate, pod-level requests of the
    supported resources in its place, overhead added."""
    requests = aggregate_container_requests(pod.containers, pod.init_containers, non_missing)
    if pod_level_requests_set(pod):
        for name, quantity in pod.resources.requests.items():
            if is_supported_pod_level_resource(name):
                requests[name] = quantity.as_fraction()
    if pod.overhead:
        _add_into(requests, amounts(pod.overhead))
    return requests
