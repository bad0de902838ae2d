"""The cache's DRA accounting of a task (upstream cache.go buildTaskDRAInfo), and the claims it reads.

Each of the pod's spec.resourceClaims names a ResourceClaim (resourceClaimName) or a template whose claim
a controller generates and records in pod.status.resourceClaimStatuses. A template's claim that the status
does not name yet, or that is not among the claims yet, leaves the task without DRA requests (upstream adds
the task and retries: the claim is pending). Of
each claim's requests, the ExactCount ones (count, 1 when unset) are added up per DeviceClass: for the
task (DRAResreq) and per claim (ResourceClaimDRAResreq), the claim keys sorted; allocationMode All is
skipped, as upstream (so is a firstAvailable request). A claim named directly but missing makes upstream
drop the pod from the cache (addPod fails and retries): MissingClaim. The capacity a request asks for
(DRAConsumableCapacity, which upstream adds per dimension for capacity's quotas) is not counted here: the
requests carry device counts only.
"""

from __future__ import annotations

from schedcheck.reference.k8s import Pod
from schedcheck.reference.k8s_dra import PodResourceClaim, ResourceClaim


class MissingClaim(Exception):
    """A pod names a ResourceClaim that is not there: upstream's cache does not take the pod."""


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> str:
    """resolvePodClaimName: the claim the pod names, else the one its status says was generated from the
    template ("" while there is none)."""
    if pod_claim.resource_claim_name:
        return pod_claim.resource_claim_name
    return pod.resource_claim_statuses.get(pod_claim.name) or ""


def task_dra_info(pod: Pod, claims: dict[str, ResourceClaim]
                  ) -> tuple[dict[str, int] | None, dict[str, dict[str, int]], list[str]]:
    """(requests per DeviceClass or None, requests per claim key, the claim keys sorted)."""
    total: dict[str, int] = {}
    per_claim: dict[str, dict[str, int]] = {}
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
        mine: dict[str, int] = {}
        for request in claim.requests:
            if request.allocation_mode == "All" or not request.device_class_name:
                continue
            mine[request.device_class_name] = mine.get(request.device_class_name, 0) + request.count
            total[request.device_class_name] = total.get(request.device_class_name, 0) + request.count
        if mine:
            per_claim[key] = mine
    if not per_claim:
        return None, {}, []
    return total or None, per_claim, sorted(per_claim)
