"""A pod's spec.resources (pod-level requests and limits, the PodLevelResources gate on as in k8s v1.36.1).

Read with the API server's defaulting (pkg/apis/core/v1/defaults.go SetDefaults_Pod, after the containers'
requests are defaulted from their limits):
- hugepage limits: when spec.resources gives any request or limit, a hugepages-<size> that the containers
  limit (aggregated: summed, init containers maxed in) and the pod level neither requests nor limits is limited
  at the containers' aggregate;
- requests: when spec.resources gives limits, cpu and memory not requested at the pod level are requested at
  the containers' aggregate request, when the containers request them; then every supported resource limited
  but still not requested is requested at its limit.

Then the API server's validation of pod-level resources (pkg/apis/core/validation validatePodResources), which
no pod an API server accepted can fail, refuses the document with one line: names other than cpu, memory and
hugepages-<size>; claims; a request above its limit (a hugepage request must equal its limit, which must be
set); hugepages without cpu or memory; a pod-level request below the containers' aggregate request; a
pod-level hugepage limit below the containers' aggregate; a container limit above the pod-level limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.pod_resources import (
    aggregate_container_limits,
    aggregate_container_requests,
    is_huge_page,
    is_supported_pod_level_resource,
)
from schedcheck.scenario.fields import Fields

SCHEMA = {"requests": None, "limits": None}  # LEAF is None in the schema tables
FIELD = "spec.resources"


def _fraction_text(value) -> str:
    return str(Quantity(value))


def read_pod_resources(f: Fields, spec: Mapping[str, Any], containers: list[k8s.Container],
                       init_containers: list[k8s.Container]) -> k8s.PodResources | None:
    raw = spec.get("resources")
    if raw is None:
        return None
    doc = f.mapping(raw, FIELD)
    if doc.get("claims") is not None:
        f.fail(f"{FIELD}.claims", "claims may not be set for resources at pod level (the API server refuses it)")
    requests = f.resources(doc.get("requests"), f"{FIELD}.requests")
    limits = f.resources(doc.get("limits"), f"{FIELD}.limits")
    for part, listed in (("requests", requests), ("limits", limits)):
        for name in listed:
            if not is_supported_pod_level_resource(name):
                f.fail(f"{FIELD}.{part}.{name}", "pod-level resources support only cpu, memory and "
                                                 "hugepages-<size> (the API server refuses others)")
    # defaultHugePagePodLimits
    if requests or limits:
        for name, value in aggregate_container_limits(containers, init_containers).items():
            if is_huge_page(name) and name not in requests and name not in limits:
                limits[name] = Quantity(value)
    # defaultPodRequests
    if limits:
        for name, value in aggregate_container_requests(containers, init_containers).items():
            if name in ("cpu", "memory") and name not in requests:
                requests[name] = Quantity(value)
        for name, quantity in limits.items():
            if name not in requests:
                requests[name] = quantity
    _validate(f, requests, limits, containers, init_containers)
    return k8s.PodResources(requests=requests, limits=limits)


def _validate(f: Fields, requests: dict[str, Quantity], limits: dict[str, Quantity],
              containers: list[k8s.Container], init_containers: list[k8s.Container]) -> None:
    for name, quantity in requests.items():
        limit = limits.get(name)
        if is_huge_page(name):
            if limit is None:
                f.fail(f"{FIELD}.limits.{name}", "a hugepages request needs a limit (the API server refuses it)")
            if quantity.as_fraction() != limit.as_fraction():
                f.fail(f"{FIELD}.requests.{name}", f"{quantity} must equal the {name} limit of {limit} "
                                                   "(the API server refuses it)")
        elif limit is not None and quantity.as_fraction() > limit.as_fraction():
            f.fail(f"{FIELD}.requests.{name}", f"{quantity} must be at most the {name} limit of {limit} "
                                               "(the API server refuses it)")
    names = set(requests) | set(limits)
    if names and not names & {"cpu", "memory"}:
        f.fail(FIELD, "hugepages require cpu or memory at pod level (the API server refuses it)")
    for name, aggregate in aggregate_container_requests(containers, init_containers).items():
        if name in requests and aggregate > requests[name].as_fraction():
            f.fail(f"{FIELD}.requests.{name}", f"{requests[name]} is below the containers' aggregate request of "
                                               f"{_fraction_text(aggregate)} (the API server refuses it)")
    for name, aggregate in aggregate_container_limits(containers, init_containers).items():
        if is_huge_page(name) and name in limits and aggregate > limits[name].as_fraction():
            f.fail(f"{FIELD}.limits.{name}", f"{limits[name]} is below the containers' aggregate limit of "
                                             f"{_fraction_text(aggregate)} (the API server refuses it)")
    for i, container in enumerate(containers):
        for name, limit in container.limits.items():
            if name in limits and limit.as_fraction() > limits[name].as_fraction():
                f.fail(f"spec.containers[{i}].resources.limits.{name}",
                       f"{limit} is above the pod-level limit of {limits[name]} (the API server refuses it)")
