"""The DRA objects as the scheduler's shared DRA manager holds them, and the claims' life between sessions.

`ClaimTracker` lives in the scheduler cache (upstream's SharedDRAManager outlasts sessions): the world's
DeviceClasses, ResourceSlices and ResourceClaims by key, and the allocations in flight, which a Reserve
signals (SignalClaimPendingAllocation) and a PreBind or Unreserve ends. The devices in use are those of
every claim's status.allocation plus those in flight (ListAllAllocatedDevices). PreBind writes a claim's
allocation and adds the pod to status.reservedFor (an API update: a new object, the next resource version).

`release_claims` is the resourceclaim controller between sessions: a consumer in reservedFor whose pod is
gone (or terminated) is removed, and a claim that so loses its last consumer is deallocated.
"""

from __future__ import annotations

import copy

from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.k8s_dra import ClaimAllocation, DeviceClass, ResourceClaim, ResourceSlice

RESERVED_FOR_MAX_SIZE = 256  # resourceapi.ResourceClaimReservedForMaxSize


class ClaimTracker:
    def __init__(self, world: ClusterObjects) -> None:
        self.world = world
        self.pending: dict[str, ClaimAllocation] = {}  # claim key -> allocation made in Reserve
        self.refresh()

    def refresh(self) -> None:
        self.claims = {claim.key: claim for claim in self.world.resource_claims}
        self.classes: dict[str, DeviceClass] = {c.name: c for c in self.world.device_classes}

    @property
    def slices(self) -> list[ResourceSlice]:
        return self.world.resource_slices

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def devices_in_use(self) -> set[tuple[str, str, str]]:
        used = set()
        for claim in self.world.resource_claims:
            if claim.allocation is not None:
                used.update(d.device_id for d in claim.allocation.devices)
        for allocation in self.pending.values():
            used.update(d.device_id for d in allocation.devices)
        return used

    def write(self, claim: ResourceClaim, allocation: ClaimAllocation | None, pod_uid: str) -> ResourceClaim:
        """PreBind's status update: the allocation (if the claim had none) and the pod as a consumer."""
        stored = self.claims.get(claim.key)
        if stored is None:
            raise LookupError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        new = copy.deepcopy(stored)
        if new.allocation is None:
            new.allocation = allocation
        if pod_uid not in new.reserved_for:
            new.reserved_for.append(pod_uid)
        new.resource_version = stored.resource_version + 1
        position = next(i for i, item in enumerate(self.world.resource_claims) if item is stored)
        self.world.resource_claims[position] = self.claims[claim.key] = new
        self.pending.pop(claim.key, None)
        return new


def can_be_reserved(claim: ResourceClaim) -> bool:
    return len(claim.reserved_for) < RESERVED_FOR_MAX_SIZE


def release_claims(world: ClusterObjects) -> None:
    """The resourceclaim controller: drop consumers that are gone, deallocate claims nobody uses."""
    live = {pod.uid for pod in world.pods if pod.phase not in ("Succeeded", "Failed")}
    for index, claim in enumerate(world.resource_claims):
        kept = [uid for uid in claim.reserved_for if uid in live]
        if kept == claim.reserved_for:
            continue  # (a claim allocated but never reserved is left as given)
        new = copy.deepcopy(claim)
        new.reserved_for = kept
        if not kept:
            new.allocation = None
        new.resource_version += 1
        world.resource_claims[index] = new
