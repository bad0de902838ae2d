"""The cache's DRA accounting of a task (upstream cache.go buildTaskDRAInfo), and the claims it reads.

Each of the pod's spec.resourceClaims names a ResourceClaim (resourceClaimName) or a template whose claim
a controller generates and records in pod.status.resourceClaimStatuses. A template's claim that the status
does not name yet, or that is not among the claims yet, leaves the task without DRA requests (upstream adds
the task and retries: the claim is pending). Of
each claim's requests, the ExactCount ones (count, 1 when unset) are added up per DeviceClass: for the
task (DRAResreq) and per claim (ResourceClaimDRAResreq), the claim keys sorted; allocationMode All is
skipped, as upstream (so is a firstAvailable request). A claim named directly but missing makes upstream
drop the pod from the cache (addPod fails and retries): MissingClaim.

With DRAConsumableCapacity (beta, on by default at k8s 1.36) a request's `capacity.requests` are added too,
per DeviceClass and dimension, each times the request's count (addDRAResource): what the claim asks for, not
what the allocator's requestPolicy rounds it up to. A class's entry is made with a capacity map only when
the request that makes it asks for capacity; a later request of the same class (in the same claim, or, for
the task's total, a later claim) that asks for capacity then writes into upstream's nil map, and the
scheduler panics (docs/findings.md): the reference raises the assertion there.
"""

from __future__ import annotations

from schedcheck.reference.api.dra_resource import DRAResource, Requests, quantity_add
from schedcheck.reference.k8s import Pod
from schedcheck.reference.k8s_dra import PodResourceClaim, ResourceClaim
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.assertion import assertf


class MissingClaim(Exception):
    """A pod names a ResourceClaim that is not there: upstream's cache does not take the pod."""


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> str:
    """resolvePodClaimName: the claim the pod names, else the one its status says was generated from the
    template ("" while there is none)."""
    if pod_claim.resource_claim_name:
        return pod_claim.resource_claim_name
    return pod.resource_claim_statuses.get(pod_claim.name) or ""


def add_dra_resource(dst: Requests, device_class: str, count: int, capacity: dict[str, Quantity],
                     where: str) -> None:
    """addDRAResource: `count` devices of the class and, per dimension, count times what one asks for."""
    entry = dst.get(device_class)
    if entry is None:
        entry = dst[device_class] = DRAResource(0, {} if capacity else None)
    entry.count += count
    if capacity:
        assertf(entry.capacity is not None,
                f"assignment to entry in nil map: {where} asks for capacity of DeviceClass {device_class} after a "
                "request of that class without capacity (upstream's cache addDRAResource)")
        assert entry.capacity is not None  # (assertf returns only with panic-on-error off)
        for dim, value in capacity.items():
            total = Quantity(value.as_fraction() * count, value.format)
            entry.capacity[dim] = quantity_add(entry.capacity.get(dim, Quantity(0)), total)


def task_dra_info(pod: Pod, claims: dict[str, ResourceClaim]
                  ) -> tuple[Requests | None, dict[str, Requests], list[str]]:
    """(requests per DeviceClass or None, requests per claim key, the claim keys sorted)."""
    total: Requests = {}
    per_claim: dict[str, Requests] = {}
    for pod_claim in pod.resource_claims:
        name = claim_name(pod, pod_claim)
        template = bool(pod_claim.resource_claim_template_name)
        if not name:
            return None, {}, []  # a template's claim not resolved yet: pending, no DRA requests
        key = f"{pod.namespace}/{name}"
        if key in per_claim:
            continue
        claim = claims.get(key)
        if claim is None and template:
            return None, {}, []  # a template's claim not synced yet: pending as well (upstream retries)
        if claim is None:
            raise MissingClaim(f"failed to get ResourceClaim {key}")
        mine: Requests = {}
        for request in claim.requests:
            if request.allocation_mode == "All" or not request.device_class_name:
                continue
            where = f"ResourceClaim {key} request {request.name}"
            add_dra_resource(mine, request.device_class_name, request.count, request.capacity_requests, where)
            add_dra_resource(total, request.device_class_name, request.count, request.capacity_requests,
                             f"{where} (pod {pod.namespace}/{pod.name})")
        if mine:
            per_claim[key] = mine
    if not per_claim:
        return None, {}, []
    return total or None, per_claim, sorted(per_claim)
