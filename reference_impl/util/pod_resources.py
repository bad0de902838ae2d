"""A pod's requests and limits as Kubernetes' resource helpers count them (k8s.io/component-helpers v0.36.1
resource/helpers.go), pod-level resources (spec.resources, the PodLevelResources gate on, its v1.36.1 default)
included.

Quantities are exact fractions (cpu in cores, memory in bytes).

- In-place resize (InPlacePodVerticalScaling, GA and locked on; InPlacePodLevelResourcesVerticalScaling, beta and
  on at v1.36): with `use_status` (UseStatusResources), a container whose status entry has `resources` asks for
  the largest of its spec request, its actuated request (status resources) and its allocated resources; when
  the pod's PodResizePending condition says Infeasible, the spec is left out of that maximum. Init containers
  take their status only when they are sidecars. Pod-level requests are resolved the same way from
  status.resources and status.allocatedResources; a supported resource the spec names at pod level and the
  effective list lacks then counts zero (Go's map lookup of a missing key).

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


def is_pod_resize_infeasible(pod: Pod) -> bool:
    """IsPodResizeInfeasible: the pod's first PodResizePending condition has reason Infeasible."""
    for condition in pod.conditions:
        if condition.type == "PodResizePending":
            return condition.reason == "Infeasible"
    return False


def _max_lists(*lists: Mapping[str, Quantity]) -> dict[str, Quantity]:
    """max(a, b...) of ResourceLists: each named resource at its largest quantity."""
    result: dict[str, Quantity] = {}
    for listed in lists:
        for name, quantity in listed.items():
            if name not in result or quantity.as_fraction() > result[name].as_fraction():
                result[name] = quantity
    return result


def effective_requests(infeasible: bool, spec: Mapping[str, Quantity], actuated: Mapping[str, Quantity],
                       allocated: Mapping[str, Quantity]) -> dict[str, Quantity]:
    """determineEffectiveRequests (and Volcano's determineContainerReqs, the same rule)."""
    if infeasible:
        return _max_lists(actuated, allocated)
    return _max_lists(spec, actuated, allocated)


def _aggregate(containers: Iterable[Container], init_containers: Iterable[Container], limits: bool,
               non_missing: Mapping[str, Fraction] | None, status_of: Pod | None = None) -> Amounts:
    infeasible = status_of is not None and is_pod_resize_infeasible(status_of)

    def own(container: Container, sidecar: bool = True) -> Amounts:
        listed = container.limits if limits else container.requests
        if status_of is not None and sidecar and container.status_resources is not None and not limits:
            listed = effective_requests(infeasible, listed, container.status_resources.requests,
                                        container.allocated_resources)
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
        mine = own(container, container.restart_policy == "Always")
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


def pod_requests(pod: Pod, non_missing: Mapping[str, Fraction] | None = None, use_status: bool = False) -> Amounts:
    """PodRequests with the PodLevelResources gate on: the containers' aggregate, pod-level requests of the
    supported resources in its place, overhead added. `use_status`: UseStatusResources with
    InPlacePodLevelResourcesVerticalScalingEnabled (the scheduler's PodInfo.CalculateResource)."""
    requests = _aggregate(pod.containers, pod.init_containers, False, non_missing, pod if use_status else None)
    if pod_level_requests_set(pod):
        effective = None
        if use_status and pod.status_resources is not None:
            effective = effective_requests(is_pod_resize_infeasible(pod), pod.resources.requests,
                                           pod.status_resources.requests, pod.allocated_resources)
        for name, quantity in pod.resources.requests.items():
            if is_supported_pod_level_resource(name):
                if effective is not None:
                    requests[name] = effective[name].as_fraction() if name in effective else Fraction(0)
                else:
                    requests[name] = quantity.as_fraction()
    if pod.overhead:
        _add_into(requests, amounts(pod.overhead))
    return requests
