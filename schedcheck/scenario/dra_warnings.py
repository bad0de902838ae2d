"""Warnings on the DRA objects taken together: claims and classes that are named but missing, and device
selectors the reference cannot evaluate."""

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
            except dra_cel.CompileError:
                pass  # the reader refuses these
