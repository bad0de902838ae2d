"""The DRA objects as the scheduler's shared DRA manager holds them, and the claims' life between sessions.

`ClaimTracker` lives in the scheduler cache (upstream's SharedDRAManager outlasts sessions): the world's
DeviceClasses, ResourceSlices and ResourceClaims by key, and the allocations in flight, which a Reserve
signals (SignalClaimPendingAllocation) and a PreBind or Unreserve ends: nothing else does, so the claim of a
task placed in a session that never bound it (pipelined, or allocated for a job left pipelined) stays in
flight in every later session, as upstream's (docs/findings.md #57). The devices in use are those of
every claim's status.allocation plus those in flight (GatherAllocatedState): a result with a share id
(consumable capacity) does not take its device whole but adds its consumed capacity to the device's, and a
result with adminAccess is not counted at all.
PreBind writes a claim's allocation (with its allocationTimestamp) and adds the pod to status.reservedFor (an
API update: a new object, the next resource version).

`release_claims` is the resourceclaim controller between sessions: a consumer in reservedFor whose pod is
gone (or terminated) is removed, and a claim that so loses its last consumer is deallocated.
"""

from __future__ import annotations

import copy

from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.k8s_dra import ClaimAllocation, DeviceClass, ResourceClaim, ResourceSlice
from schedcheck.reference.quantity import Quantity

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
        return self.allocated_state()[0]

    def allocated_state(self) -> tuple[set[tuple[str, str, str]], dict[tuple[str, str, str], dict[str, Quantity]]]:
        """GatherAllocatedState (DRAConsumableCapacity on): the devices allocated whole, and per shared device
        the capacity its shares consume, over every claim's status.allocation and the allocations in flight."""
        used: set[tuple[str, str, str]] = set()
        consumed: dict[tuple[str, str, str], dict[str, Quantity]] = {}
        allocations = [c.allocation for c in self.world.resource_claims if c.allocation is not None]
        for allocation in allocations + list(self.pending.values()):
            for device in allocation.devices:
                if device.admin_access:
                    continue  # admin access takes no device from others (foreachAllocatedDevice)
                if not device.share_id:
                    used.add(device.device_id)
                    continue
                if not device.consumed_capacity:
                    continue  # a share recording no consumed capacity adds no entry (deviceCapacityInUse)
                totals = consumed.setdefault(device.device_id, {})
                for name, amount in device.consumed_capacity.items():
                    totals[name] = Quantity(totals.get(name, Quantity()).as_fraction() + amount.as_fraction())
        return used, consumed

    def write(self, claim: ResourceClaim, allocation: ClaimAllocation | None, pod_uid: str,
              now: float | None = None) -> ResourceClaim:
        """PreBind's status update: the allocation (if the claim had none) and the pod as a consumer; with binding
        conditions on (k8s 1.36), the allocation's timestamp `now` if it has none."""
        stored = self.claims.get(claim.key)
        if stored is None:
            raise LookupError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        new = copy.deepcopy(stored)
        if new.allocation is None:
            new.allocation = copy.deepcopy(allocation)
        if new.allocation is not None and new.allocation.timestamp is None and now is not None:
            new.allocation.timestamp = now
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
