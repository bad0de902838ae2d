"""DRA requests per DeviceClass (upstream api.DRAResource): a device count and, with DRAConsumableCapacity (beta,
on by default at k8s 1.36), the capacity the requests ask for per dimension. Shared by the cache (a task's
requests), the capacity plugin's quotas and the session's queue status.

Counts add saturating at int64's maximum, as upstream's SaturatingAdd / SaturatingMul; capacities add exactly,
and a quantity's format follows Go's Quantity.Add (a zero sum takes the addend's format). Subtraction never
goes below zero (DRAResource.Sub), except in a delta (capacity_dra.delta), which may be negative.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference.quantity import Quantity

COUNT_PREFIX = "deviceclass/"  # a queue resource name counting devices of a class
CAPACITY_SEP = ".deviceclass/"  # `<dimension>.deviceclass/<class>`: a consumable-capacity dimension of a class
INT64_MAX = 2**63 - 1
ZERO = Quantity(0)


def saturating_add(left: int, right: int) -> int:
    return min(left + right, INT64_MAX)


def quantity_add(left: Quantity, right: Quantity) -> Quantity:
    """Go's left.Add(right): the sum keeps left's format unless left is zero."""
    return Quantity(left.as_fraction() + right.as_fraction(), right.format if left.is_zero() else left.format)


def quantity_sub(left: Quantity, right: Quantity) -> Quantity:
    """Go's left.Sub(right), with the same format rule."""
    return Quantity(left.as_fraction() - right.as_fraction(), right.format if left.is_zero() else left.format)


class DRAResource:
    """The devices (count) and the capacity per dimension asked of one DeviceClass. `capacity` is None where
    upstream's map is nil (a request without capacity requests): Sub then leaves it alone, as upstream."""

    __slots__ = ("count", "capacity")

    def __init__(self, count: int = 0, capacity: Mapping[str, Quantity] | None = None) -> None:
        self.count = count
        self.capacity: dict[str, Quantity] | None = dict(capacity) if capacity is not None else None

    def clone(self) -> DRAResource:
        return DRAResource(self.count, self.capacity)

    def add(self, other: DRAResource | None, times: int = 1) -> None:
        """self += other * times (DRAResource.Add; GetMinDRAResources multiplies by a role's minimum)."""
        if other is None:
            return
        self.count = saturating_add(self.count, min(other.count * times, INT64_MAX))
        if other.capacity is None:
            return
        if self.capacity is None:
            self.capacity = {}
        for dim, value in other.capacity.items():
            if times != 1:
                value = Quantity(value.as_fraction() * times, value.format)
            have = self.capacity.get(dim)
            self.capacity[dim] = value if have is None else quantity_add(have, value)

    def sub(self, other: DRAResource | None) -> None:
        """self -= other, never below zero (DRAResource.Sub: a dimension self lacks stays absent)."""
        if other is None:
            return
        self.count = max(0, self.count - other.count)
        if other.capacity is None or self.capacity is None:
            return
        for dim, value in other.capacity.items():
            have = self.capacity.get(dim)
            if have is not None:
                left = quantity_sub(have, value)
                self.capacity[dim] = ZERO if left.is_negative() else left

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DRAResource):
            return NotImplemented
        return self.count == other.count and (self.capacity or {}) == (other.capacity or {})

    def __repr__(self) -> str:
        return f"DRAResource({self.count}, {self.capacity})"


Requests = dict[str, DRAResource]  # DeviceClass -> what is asked of it


def merge(dst: Requests, src: Mapping[str, DRAResource | None] | None, times: int = 1) -> None:
    """dst += src * times, a class dst lacks starting from nothing (mergeTaskDRA, mergeDRAResourceMap)."""
    for device_class, request in (src or {}).items():
        if request is None:
            continue
        mine = dst.get(device_class)
        if mine is None:
            mine = dst[device_class] = DRAResource(0, {})
        mine.add(request, times)


def clone_requests(src: Mapping[str, DRAResource]) -> Requests:
    return {device_class: request.clone() for device_class, request in src.items()}


def charge_task(requests: Requests, claim_refs: dict[str, int], task: Any) -> None:
    """A task's DRA requests into `requests`; a claim shared by several tasks is charged by its first holder
    only (`claim_refs` counts the holders per claim). Capacity's addTaskDRAAllocated and the session's
    addTaskDRAAllocatedByQueue both count this way."""
    if not task.claim_dra_resreq:
        merge(requests, task.dra_resreq)
        return
    for key in task.claim_keys:
        request = task.claim_dra_resreq.get(key)
        if not request:
            continue
        if claim_refs.get(key, 0) == 0:
            merge(requests, request)
        claim_refs[key] = claim_refs.get(key, 0) + 1
