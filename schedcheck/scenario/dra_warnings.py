"""Warnings on the DRA objects taken together: claims and classes that are named but missing, device
selectors the reference cannot evaluate, DeviceTaintRules (without effect), extended resources a
DeviceClass names (never backed by devices in Volcano) and devices with binding conditions (F61)."""

from __future__ import annotations

from collections import defaultdict

from schedcheck.reference import k8s
from schedcheck.reference.api.dra_resource import CAPACITY_SEP, COUNT_PREFIX
from schedcheck.reference.util import dra_cel
from schedcheck.scenario.references import listing


def dra_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    _pod_claims(objects, warnings)
    _missing_classes(objects, warnings)
    _selectors(objects, warnings)
    _capacity_quotas(objects, warnings)
    _taint_rules(objects, warnings)
    _extended_resources(objects, warnings)
    _binding_conditions(objects, warnings)


def _binding_conditions(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """Devices with binding conditions: master's PreBind panics for a pod given one (docs/findings.md #61)."""
    named = [f"ResourceSlice {s.name} ({listing([d.name for d in s.devices if d.binding_conditions])})"
             for s in objects.resource_slices if any(d.binding_conditions for d in s.devices)]
    named += [f"ResourceClaim {c.key}" for c in objects.resource_claims if c.allocation is not None
              and any(r.binding_conditions for r in c.allocation.devices)]
    if named:
        warnings.append(f"{listing(named)}: devices with binding conditions; upstream's PreBind panics for a pod "
                        "given one (docs/findings.md #61, F61): the reference raises the upstream assertion there")


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
    """capacity's DRA quotas (plugins/capacity_dra.py): queue resource names upstream passes over, claim
    requests it does not count, and the claims whose capacity requests crash its cache."""
    skipped = sorted({f"Queue {q.name}: {name}" for q in objects.queues
                      for name in (*q.capability, *q.deserved, *q.guarantee)
                      if name.endswith(CAPACITY_SEP) or name.startswith(CAPACITY_SEP)
                      or name == COUNT_PREFIX})
    if skipped:
        warnings.append(f"{listing(skipped)}: no DeviceClass or no dimension in the name; capacity's DRA quotas "
                        "pass it over, as upstream (`deviceclass/<class>` counts devices, "
                        "`<dimension>.deviceclass/<class>` a consumable-capacity dimension)")
    quota = any(CAPACITY_SEP in name or name.startswith(COUNT_PREFIX)
                for q in objects.queues for name in (*q.capability, *q.deserved, *q.guarantee))
    prioritized = sorted({claim.key for claim in objects.resource_claims for r in claim.requests if r.first_available})
    if quota and prioritized:
        warnings.append(f"{listing([f'ResourceClaim {k}' for k in prioritized])}: firstAvailable requests are not "
                        "charged to capacity's DRA quotas (upstream's cache skips them)")
    _nil_map_claims(objects, warnings)


def _nil_map_claims(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """addDRAResource writes a capacity into a nil map when a class's entry was made by a request without
    capacity requests: upstream's scheduler panics on adding such a pod (the reference raises the assertion)."""
    claims = {claim.key: claim for claim in objects.resource_claims}
    for pod in objects.pods:
        if not pod.resource_claims:
            continue
        seen: dict[str, bool] = {}  # class -> its entry has a capacity map (the pod's total)
        for pod_claim in pod.resource_claims:
            name = pod_claim.resource_claim_name or pod.resource_claim_statuses.get(pod_claim.name) or ""
            claim = claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                continue
            for request in claim.requests:
                if request.allocation_mode == "All" or not request.device_class_name:
                    continue
                has_map = seen.setdefault(request.device_class_name, bool(request.capacity_requests))
                if request.capacity_requests and not has_map:
                    warnings.append(f"Pod {pod.key}: ResourceClaim {claim.key} request {request.name} asks for "
                                    f"capacity of DeviceClass {request.device_class_name} after a request of "
                                    "that class without capacity: upstream's cache writes into a nil map and the "
                                    "scheduler panics (DRAConsumableCapacity)")
                    break


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
