"""Structured-parameters device allocation for one node (k8s.io/dynamic-resource-allocation/structured,
the allocator Kubernetes' DynamicResources Filter calls), for the subset the reference reads.

Pools: the ResourceSlices on the node (spec.nodeName) or on every node (allNodes), grouped by driver and
pool; only the newest generation counts, and a pool whose slices at that generation (cluster-wide) number
fewer than resourceSliceCount is incomplete (skipped; a request for All of its devices is an error). Go
visits pools in map order; the reference visits them by driver, then pool name (deterministic, and one
of upstream's orders). The claims are allocated in order, each request in order: ExactCount takes
`count` free devices, All takes every selectable device (none selectable: no allocation). A device is
selectable when every selector of its DeviceClass, then of the request, holds (dra_cel.py); the search
backtracks through all candidates, as upstream's, and the first full solution wins. A device already
allocated (a claim's status or an allocation in flight) or chosen for another request is not free.
Errors (a selector failing to evaluate, a missing class) abort the whole Filter, as upstream.

Not modelled: claim constraints (matchAttribute), firstAvailable, admin access, partitionable devices,
device taints, binding conditions, consumable capacity.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from schedcheck.reference.k8s import NodeSelectorRequirement, NodeSelectorTerm
from schedcheck.reference.k8s_dra import (
    AllocatedDevice,
    ClaimAllocation,
    Device,
    DeviceClass,
    DeviceRequest,
    ResourceClaim,
    ResourceSlice,
)
from schedcheck.reference.util import dra_cel

RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
DeviceID = tuple[str, str, str]  # driver, pool, device


class AllocationError(Exception):
    """A fatal allocation problem: the Filter answers Error with this message."""


@dataclass
class Pool:
    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False

    def devices(self) -> Iterator[tuple[ResourceSlice, Device]]:
        for slice_ in self.slices:
            for device in slice_.devices:
                yield slice_, device


def gather_pools(slices: list[ResourceSlice], node_name: str) -> list[Pool]:
    by_id: dict[tuple[str, str], list[ResourceSlice]] = {}
    for slice_ in slices:
        if not (slice_.all_nodes or slice_.node_name == node_name):
            continue
        found = by_id.setdefault((slice_.driver, slice_.pool), [])
        if found and slice_.pool_generation < found[0].pool_generation:
            continue
        if found and slice_.pool_generation > found[0].pool_generation:
            found.clear()
        found.append(slice_)
    pools = []
    for (driver, name), members in sorted(by_id.items()):
        generation, wanted = members[0].pool_generation, members[0].pool_slice_count
        if len(members) != wanted:
            everywhere = [s for s in slices if (s.driver, s.pool) == (driver, name)]
            if any(s.pool_generation > generation for s in everywhere):
                continue  # obsolete: a newer generation is being published
            if sum(1 for s in everywhere if s.pool_generation == generation) != wanted:
                pools.append(Pool(driver, name, incomplete=True))
                continue
        pools.append(Pool(driver, name, members))
    return pools


@dataclass
class _Request:
    claim: int
    request: DeviceRequest
    device_class: DeviceClass
    count: int
    all_devices: list[tuple[ResourceSlice, Device]] | None = None  # allocationMode All


class Allocator:
    """One PreFilter's allocator: the classes, slices and devices in use are fixed when it is made."""

    def __init__(self, classes: dict[str, DeviceClass], slices: list[ResourceSlice], in_use: set[DeviceID]) -> None:
        self.classes, self.slices, self.in_use = classes, slices, in_use
        self._compiled: dict[str, dra_cel.Expr | dra_cel.NotModelled] = {}

    def allocate(self, node_name: str, claims: list[ResourceClaim]) -> list[ClaimAllocation] | None:
        """One allocation per claim, or None when the node cannot satisfy them all."""
        pools = gather_pools(self.slices, node_name)
        requests: list[_Request] = []
        for index, claim in enumerate(claims):
            per_claim = 0
            for request in claim.requests:
                item = self._request(index, claim, request, pools)
                per_claim += item.count
                requests.append(item)
            if per_claim > RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim.key}: number of requested devices {per_claim} exceeds the "
                                      f"claim limit of {RESULTS_MAX_SIZE}")
        chosen: list[list[tuple[DeviceRequest, ResourceSlice, Device]]] = [[] for _ in claims]
        taken: set[DeviceID] = set()
        if not self._search(requests, 0, 0, pools, claims, chosen, taken):
            return None
        return [_result(devices) for devices in chosen]

    def _request(self, index: int, claim: ResourceClaim, request: DeviceRequest, pools: list[Pool]) -> _Request:
        device_class = self.classes.get(request.device_class_name)
        if device_class is None:
            raise AllocationError(f"claim {claim.key}, request {request.name}: could not retrieve device class "
                                  f"{request.device_class_name}: deviceclass.resource.k8s.io "
                                  f'"{request.device_class_name}" not found')
        item = _Request(index, request, device_class, request.count)
        if request.allocation_mode == "All":
            item.all_devices = []
            for pool in pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {claim.key}, request {request.name}: asks for all devices, but "
                                          f"resource pool {pool.driver}/{pool.name} is currently being updated")
                item.all_devices += [(s, d) for s, d in pool.devices() if self._selectable(item, claim, s, d)]
            item.count = len(item.all_devices)
        return item

    def _search(self, requests: list[_Request], position: int, done: int, pools: list[Pool],
                claims: list[ResourceClaim], chosen: list, taken: set[DeviceID]) -> bool:
        if position == len(requests):
            return True
        item = requests[position]
        if item.all_devices is not None and not item.all_devices:
            return False
        if done == item.count:
            return self._search(requests, position + 1, 0, pools, claims, chosen, taken)
        candidates: Iterator[tuple[ResourceSlice, Device]] | list[tuple[ResourceSlice, Device]]
        if item.all_devices is not None:
            slice_, device = item.all_devices[done]
            candidates = [(slice_, device)] if _free((slice_.driver, slice_.pool, device.name),
                                                      self.in_use, taken) else []
        else:
            # lazily, as upstream: a selector is evaluated only on the devices the search reaches
            candidates = ((s, d) for pool in pools if not pool.incomplete for s, d in pool.devices()
                          if _free((s.driver, s.pool, d.name), self.in_use, taken)
                          and self._selectable(item, claims[item.claim], s, d))
        for slice_, device in candidates:
            device_id = (slice_.driver, slice_.pool, device.name)
            taken.add(device_id)
            chosen[item.claim].append((item.request, slice_, device))
            if self._search(requests, position, done + 1, pools, claims, chosen, taken):
                return True
            chosen[item.claim].pop()
            taken.discard(device_id)
        return False

    def _selectable(self, item: _Request, claim: ResourceClaim, slice_: ResourceSlice, device: Device) -> bool:
        variable = dra_cel.device_variable(slice_.driver, device.attributes, device.capacity)
        for where, selectors in ((f"class {item.device_class.name}", item.device_class.selectors),
                                 (f"claim {claim.key}", item.request.selectors)):
            for index, expression in enumerate(selectors):
                if not self._match(expression, variable, f"{where}: selector #{index}"):
                    return False
        return True

    def _match(self, expression: str, variable: dict, where: str) -> bool:
        compiled = self._compiled.get(expression)
        if compiled is None:
            try:
                compiled = dra_cel.parse(expression)
            except dra_cel.NotModelled as err:
                compiled = err
            self._compiled[expression] = compiled
        if isinstance(compiled, dra_cel.NotModelled):
            raise AllocationError(f"{where}: CEL expression not modelled by schedcheck ({compiled}): {expression}")
        try:
            value = dra_cel.evaluate(compiled, variable)
        except dra_cel.CelRuntimeError as err:
            raise AllocationError(f"{where}: CEL runtime error: {err}") from err
        if not isinstance(value, bool):
            raise AllocationError(f"{where}: CEL result of type {type(value).__name__} could not be converted to bool")
        return value


def _free(device_id: DeviceID, in_use: set[DeviceID], taken: set[DeviceID]) -> bool:
    return device_id not in in_use and device_id not in taken


def _result(devices: list[tuple[DeviceRequest, ResourceSlice, Device]]) -> ClaimAllocation:
    """The claim's devices; a node-local device pins the allocation to its node (createNodeSelector)."""
    selector = None
    for _, slice_, _ in devices:
        if slice_.node_name:
            selector = [NodeSelectorTerm(match_fields=[NodeSelectorRequirement("metadata.name", "In",
                                                                               [slice_.node_name])])]
            break
    return ClaimAllocation([AllocatedDevice(r.name, s.driver, s.pool, d.name) for r, s, d in devices], selector)
