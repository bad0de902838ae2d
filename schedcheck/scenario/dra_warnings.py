"""Warnings on the DRA objects taken together: claims and classes that are named but missing, device
selectors the reference cannot evaluate, DeviceTaintRules (without effect) and extended resources a
DeviceClass names (never backed by devices in Volcano)."""

from __future__ import annotations

from collections import defaultdict

from schedcheck.reference import k8s
from schedcheck.reference.util import dra_cel
from schedcheck.scenario.references import listing


def dra_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    _pod_claims(objects, warnings)
    _missing_classes(objects, warnings)
    _selectors(objects, warnings)
    _capacity_quotas(objects, warnings)
    _taint_rules(objects, warnings)
    _extended_resources(objects, warnings)


EXTENDED_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"  # a class's implicit extended resource name


def _taint_rules(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """DeviceTaintRules are read but change nothing: DRADeviceTaintRules is off by default at k8s 1.36."""
    if objects.device_taint_rules:
        names = listing(sorted(r.name for r in objects.device_taint_rules))
        warnings.append(f"DeviceTaintRule {names}: without effect, as upstream's: the feature gate DRADeviceTaintRules "
                        "is off by default at Kubernetes 1.36, so the scheduler's slice tracker does not apply them")


def _extended_resources(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """A pod asking for an extended resource a DeviceClass names (or deviceclass.resource.kubernetes.io/<class>)
    is not given devices in Volcano (its DRA manager's class resolver is never fed): only nodes advertising the
    resource can take it."""
    classes = {c.extended_resource_name: c.name for c in objects.device_classes if c.extended_resource_name}
    classes.update({EXTENDED_RESOURCE_PREFIX + c.name: c.name for c in objects.device_classes})
    asking: dict[str, list[str]] = defaultdict(list)
    for pod in objects.pods:
        for container in [*pod.containers, *pod.init_containers]:
            for name in {*container.requests, *container.limits}:
                if name in classes and f"Pod {pod.key}" not in asking[name]:
                    asking[name].append(f"Pod {pod.key}")
    for name, pods in sorted(asking.items()):
        warnings.append(f"{listing(pods)} asks for {name}, DeviceClass {classes[name]}'s extended resource: Volcano "
                        "does not allocate devices for it (DRAExtendedResource's class resolver is never fed in its "
                        "cache), so only nodes advertising the resource can take the pod")


def _capacity_quotas(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """Claims' capacity requests steer the allocator, but capacity's consumable-capacity quotas
    (`<dimension>.deviceclass/<class>`) and the queues' capacity dimensions do not count them."""
    asking = sorted({claim.key for claim in objects.resource_claims for r in claim.requests
                     if r.capacity_requests or any(sub.capacity_requests for sub in r.first_available)})
    quotas = sorted({f"Queue {q.name}: {name}" for q in objects.queues
                     for name in (*q.capability, *q.deserved, *q.guarantee) if ".deviceclass/" in name})
    if asking and quotas:
        claims = listing([f"ResourceClaim {k}" for k in asking])
        warnings.append(f"{listing(quotas)} and the capacity requests of {claims}: consumable-capacity quotas are "
                        "not modelled (capacity counts devices only)")


def _pod_claims(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    claims = {claim.key for claim in objects.resource_claims}
    missing: dict[str, list[str]] = defaultdict(list)
    for pod in objects.pods:
        for index, pod_claim in enumerate(pod.resource_claims):
            if pod_claim.resource_claim_template_name:
                continue  # its claim is the one pod status names, if any (none yet: upstream waits for it)
            key = f"{pod.namespace}/{pod_claim.resource_claim_name}"
            if key not in claims:
                missing[key].append(f"Pod {pod.key}")
    for key, names in missing.items():
        warnings.append(f"ResourceClaim {key}, named by {listing(names)}, is not among the objects: upstream's cache "
                        "does not take a pod whose claim it cannot find, so the scheduler never sees it")


def _missing_classes(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    classes = {c.name for c in objects.device_classes}
    users: dict[str, list[str]] = defaultdict(list)
    for claim in objects.resource_claims:
        for request in claim.requests:
            for name in [sub.device_class_name for sub in request.first_available] or [request.device_class_name]:
                if name not in classes and claim.allocation is None:
                    users[name].append(f"ResourceClaim {claim.key}")
    if not users or not objects.device_classes and not objects.resource_slices:
        return  # no DRA inventory at all: the claims only count against queue quotas
    for name, names in users.items():
        warnings.append(f"DeviceClass {name}, named by {listing(sorted(set(names)))}, is not among the objects: with "
                        "the DynamicResources filter on, a pod using such a claim is unschedulable")


def _selectors(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    found = [(f"DeviceClass {c.name}", "spec.selectors", c.selectors) for c in objects.device_classes]
    for claim in objects.resource_claims:
        for i, r in enumerate(claim.requests):
            found.append((f"ResourceClaim {claim.key}", f"spec.devices.requests[{i}].exactly.selectors", r.selectors))
            found += [(f"ResourceClaim {claim.key}", f"spec.devices.requests[{i}].firstAvailable[{j}].selectors",
                       sub.selectors) for j, sub in enumerate(r.first_available)]
    for owner, field, selectors in found:
        for index, expression in enumerate(selectors):
            try:
                dra_cel.parse(expression)
            except dra_cel.NotModelled as err:
                warnings.append(f"{owner}: {field}[{index}].cel.expression {expression!r} is not modelled ({err}): "
                                "a pod whose claim reaches it is filtered out with an Error saying so")
