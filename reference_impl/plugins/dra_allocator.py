"""Structured-parameters device allocation for one node (k8s.io/dynamic-resource-allocation/structured,
the allocator Kubernetes' DynamicResources Filter calls), for the subset the reference reads.

Which implementation: upstream keeps three (stable, incubating, experimental) and takes the first whose
features cover the enabled ones. With k8s 1.36's defaults Volcano's predicates plugin enables admin
access, prioritized lists, partitionable devices, device taints, binding conditions and consumable
capacity, which only "incubating" (and "experimental") support: this module follows incubating.

Pools: a ResourceSlice reaches a node through exactly one of spec.nodeName (that node), allNodes (every
node), nodeSelector (the nodes its one term selects: labels and metadata.name) or perDeviceNodeSelection
(the slice counts for the node when any of its devices reaches it, each device by its own nodeName /
allNodes / nodeSelector; a device that does not reach the node is not selectable there). The slices
reaching the node are grouped by driver and pool; only the newest generation counts, and a pool whose
slices at that generation (cluster-wide) number fewer than resourceSliceCount is incomplete (skipped; a
request for All of its devices is an error). A pool whose slices on the node repeat a device name is
invalid (skipped; All of it is an error; an allocation that fails with one around fails the node with
"invalid resource pools were encountered" instead of no result). Pools are visited by driver, then pool
name; a pool's slices by name; a slice's devices in order.

The search: the claims in order, each request in order. An `exactly` request takes `count` free devices
(ExactCount) or every selectable device (All; none selectable: no allocation). A firstAvailable request
tries its subrequests in order and keeps the first that lets the whole rest of the search succeed; its
devices are reported as `<request>/<subrequest>`. A device is selectable when every selector of its
DeviceClass, then of the (sub)request, holds (dra_cel.py), and, in a per-device slice, it reaches the node.
The devices of one ExactCount request are chosen as combinations: each next device comes after the one
before in the visiting order (upstream's start location). A device already allocated (a claim's status or
an allocation in flight) or chosen for another request is not free. Claim constraints
(spec.devices.constraints) are checked as each device is added: matchAttribute (all the constraint's
devices carry the attribute, with one type and value) and distinctAttribute (on by default at 1.36, with
DRAConsumableCapacity). A distinctAttribute constraint remembers one value per request, as upstream's:
the devices of one request are only compared with those of other requests, and removing one device
forgets its request's value (upstream's behaviour, reproduced). An All request whose device breaks a
constraint is an error. The results per claim are capped at 32 (AllocationResultsMaxSize): the smallest
choice over the subrequests must fit, and a subrequest that would overflow is passed over.
Errors (a selector failing to evaluate, a missing class) abort the whole Filter, as upstream.

The allocation's node selector (createNodeSelector): a device from a node-local slice (or a per-device
nodeName) pins it to the node; otherwise the one terms of the devices' node selectors are merged into one
term (requirements deduplicated); all-nodes devices add nothing, and no requirement at all means none.

Consumable capacity (DRAConsumableCapacity, beta and on by default at 1.36): every candidate device must
hold what the (sub)request consumes of each of its capacities (CmpRequestOverCapacity): a request naming a
capacity the device lacks skips it; the amount consumed is the request's (rounded up to the policy's
validRange min + k * step, or to the next of its validValues), else the policy's default, else the whole
capacity; an amount the policy does not allow skips the device, and so does one that, added to what the
device's shares already consume (allocated claims and allocations in flight) and to what this search has
given it, passes the capacity. A device with allowMultipleAllocations is not taken whole: it may serve
other requests and claims, each allocation getting a share id and recording what it consumes. As upstream,
an All request's device that fails this check a second time when it is added (another request of the
search took a share of it meanwhile) fails the branch without undoing the constraints it already joined.

Partitionable devices (DRAPartitionableDevices, GA at 1.36): a slice with sharedCounters (counter sets, no
devices) belongs to its pool on every node, whatever its node selection, and counts towards the pool's
slices. A pool whose counter slices repeat a set name, or one of whose devices (on any slice of the pool at
its generation, reaching the node or not) consumes a set or a counter the pool lacks, is invalid. A device
that consumes counters is taken only if, adding its consumption to what this search's devices consume, no
counter of any of the pool's sets passes what is available: the set's value less what the devices allocated
whole (claims' status and in flight) consume, on every slice of the pool. As upstream: a shared device that
some share already holds (allocated or in this search) is not counted again, allocated shares are never
counted; the available counters are computed once per pool and kept on the allocator (every node of one
PreFilter), and both tables are keyed by the pool's name alone, whatever the driver (docs/findings.md #47);
a device refused after its counters were taken (a taint, a constraint, the capacity re-check) leaves them
taken for the rest of the search, and a share's rollback never gives its counters back (#46).

Admin access (DRAAdminAccess, GA at 1.36): a (sub)request with adminAccess may take a device that is in use
(allocated to another claim, in flight, or chosen in this search for another claim's request), only not one
its own claim has chosen; the devices it takes are marked as chosen by its claim all the same (so a later
request without admin access, of any claim in the search, passes them over), and its results carry
adminAccess. Such results are not counted as in use afterwards (cache/dra_claims.py).

Device taints (DeviceTaints, beta and on at 1.36): a NoSchedule or NoExecute taint of a device that the
(sub)request does not tolerate keeps it from the request, checked before the claim's constraints.

Binding conditions (DRADeviceBindingConditions, beta and on by default at 1.36): the pools with a device
that has bindingConditions (on a slice reaching the node) are visited after all others (gatherPools sorts
the two groups apart), a result copies its device's bindingConditions and bindingFailureConditions, and a
device with bindsToNode pins the allocation to the node as a node-local one does (what PreBind then waits
for: cache/dra_binding.py).

Not modelled: list-typed attributes (DRAListTypeAttributes, alpha). Share ids are `share-<n>`, numbered per
Allocate call, where upstream draws random ones (nothing compares them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fractions import Fraction

from schedcheck.reference.k8s import Node, NodeSelectorRequirement, NodeSelectorTerm
from schedcheck.reference.k8s_dra import (
    AllocatedDevice,
    CapacityPolicy,
    ClaimAllocation,
    CounterSet,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceToleration,
    ResourceClaim,
    ResourceSlice,
)
from schedcheck.reference.plugins.k8s_mirror import SelectorTerm, node_selector_terms_match
from schedcheck.reference.quantity import BINARY_SI, Quantity
from schedcheck.reference.util import dra_cel

RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize
DeviceID = tuple[str, str, str]  # driver, pool, device
Consumed = dict[DeviceID, dict[str, Quantity]]  # per shared device, what its shares consume
Counters = dict[str, dict[str, Fraction]]  # counter set -> counter -> amount
REASON_INVALID_POOLS = "invalid resource pools were encountered"


class AllocationError(Exception):
    """A fatal allocation problem: the Filter answers Error with this message."""


class NodeFailure(Exception):
    """Allocation failed on this node only (ErrFailedAllocationOnNode): unschedulable here, with this message."""


class _Exceeded(Exception):
    """errAllocationResultMaxSizeExceeded: the claim's results would pass 32."""


@dataclass
class Pool:
    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)  # the pool's slices reaching the node, by name
    incomplete: bool = False
    invalid: bool = False
    # partitionable devices: the pool's counter sets by name, and its device slices not reaching the node
    # (their allocated devices consume counters too)
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    other_slices: list[ResourceSlice] = field(default_factory=list)

    def devices(self) -> list[tuple[ResourceSlice, Device]]:
        return [(slice_, device) for slice_ in self.slices for device in slice_.devices]


def node_matches(node: Node, node_name: str, all_nodes: bool, selector: list[NodeSelectorTerm] | None) -> bool:
    """NodeMatches: by name, every node, or the node selector; none of them set: no node. A selector that
    nodeaffinity.NewNodeSelector refuses is an error (AllocationError), as upstream's."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        problem = selector_problem(selector)
        if problem:
            raise AllocationError(f"failed to parse node selector: {problem}")
        return node_selector_terms_match(selector, node)
    return False


def selector_problem(terms: list[NodeSelectorTerm]) -> str:
    """Why NewNodeSelector would refuse the terms ("" when it would not): a label requirement that does not
    parse, or a field requirement other than metadata.name In / NotIn one value."""
    for index, term in enumerate(terms):
        if not SelectorTerm(NodeSelectorTerm(match_expressions=term.match_expressions)).valid:
            return f"term {index}: invalid matchExpressions"
        for req in term.match_fields:
            if req.key != "metadata.name" or req.operator not in ("In", "NotIn") or len(req.values) != 1:
                return f"term {index}: unsupported matchFields requirement {req.key} {req.operator} {req.values}"
    return ""


def slice_reaches(slice_: ResourceSlice, node: Node) -> bool:
    """GatherPools' relevance test: the slice's own node selection, or (per device) any device reaching the node."""
    where = "gather pool information: failed to perform node selection for"
    if slice_.node_name or slice_.all_nodes or slice_.node_selector is not None:
        try:
            return node_matches(node, slice_.node_name, slice_.all_nodes, slice_.node_selector)
        except AllocationError as err:
            raise AllocationError(f"{where} slice {slice_.name}: {err}") from err
    if slice_.per_device_node_selection:
        for device in slice_.devices:
            try:
                if node_matches(node, device.node_name, device.all_nodes, device.node_selector):
                    return True
            except AllocationError as err:
                raise AllocationError(f"{where} device {device.name} in slice {slice_.name}: {err}") from err
    return False


def gather_pools(slices: list[ResourceSlice], node: Node) -> list[Pool]:
    by_id: dict[tuple[str, str], list[ResourceSlice]] = {}
    for slice_ in slices:
        if not slice_.shared_counters and not slice_reaches(slice_, node):
            continue  # (a slice of counter sets belongs to every node's view of its pool)
        found = by_id.setdefault((slice_.driver, slice_.pool), [])
        if found and slice_.pool_generation < found[0].pool_generation:
            continue
        if found and slice_.pool_generation > found[0].pool_generation:
            found.clear()
        found.append(slice_)
    pools = []
    for (driver, name), members in sorted(by_id.items()):
        generation, wanted = members[0].pool_generation, members[0].pool_slice_count
        others: list[ResourceSlice] = []
        if len(members) != wanted:
            everywhere = [s for s in slices if (s.driver, s.pool) == (driver, name)]
            if any(s.pool_generation > generation for s in everywhere):
                continue  # obsolete: a newer generation is being published
            current = [s for s in everywhere if s.pool_generation == generation]
            if len(current) != wanted:
                pools.append(Pool(driver, name, incomplete=True))
                continue
            seen = {s.name for s in members}
            others = [s for s in current if s.name not in seen]
        members = sorted(members, key=lambda s: s.name)
        names = [d.name for s in members for d in s.devices]
        if len(names) != len(set(names)):
            pools.append(Pool(driver, name, invalid=True))
            continue
        counter_sets = pool_counter_sets(members)
        if counter_sets is None or not counters_exist(counter_sets, members + others):
            pools.append(Pool(driver, name, invalid=True))
            continue
        pools.append(Pool(driver, name, members, counter_sets=counter_sets, other_slices=others))
    # pools with a device that has binding conditions come last, each group by driver and pool name
    return sorted(pools, key=lambda pool: any(d.binding_conditions for _, d in pool.devices()))


def pool_counter_sets(slices: list[ResourceSlice]) -> dict[str, CounterSet] | None:
    """The counter sets of a pool's slices (getAndValidateCounterSets); None when two share a name (the pool is
    invalid)."""
    found: dict[str, CounterSet] = {}
    for slice_ in slices:
        for counter_set in slice_.shared_counters:
            if counter_set.name in found:
                return None
            found[counter_set.name] = counter_set
    return found


def counters_exist(counter_sets: dict[str, CounterSet], slices: list[ResourceSlice]) -> bool:
    """validateDeviceCounterConsumption: every counter a device consumes is one of a counter set of the pool
    (false: the pool is invalid). The API cannot check it: since 1.35 the sets live in slices of their own."""
    for slice_ in slices:
        for device in slice_.devices:
            for consumption in device.consumes_counters:
                counter_set = counter_sets.get(consumption.counter_set)
                if counter_set is None or any(c not in counter_set.counters for c in consumption.counters):
                    return False
    return True


def _same(left: object, right: object) -> bool:
    """Attribute values match when they have one type (bool, int, string, version) and one value."""
    return type(left) is type(right) and left == right


def lookup_attribute(device: Device, driver: str, name: str) -> object | None:
    """A fully qualified attribute: as written on the device, or, in the driver's own domain, unqualified."""
    if name in device.attributes:
        return device.attributes[name]
    domain, _, short = name.partition("/")
    if domain != driver or not short:
        return None
    return device.attributes.get(short)


class _Constraint:
    def __init__(self, spec: DeviceConstraint) -> None:
        self.requests = set(spec.requests)
        self.attribute = spec.match_attribute or spec.distinct_attribute

    def applies(self, request: str, subrequest: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or bool(subrequest) and f"{request}/{subrequest}" in self.requests

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        raise NotImplementedError

    def remove(self, request: str, subrequest: str) -> None:
        raise NotImplementedError


class _MatchAttribute(_Constraint):
    def __init__(self, spec: DeviceConstraint) -> None:
        super().__init__(spec)
        self.value: object = None
        self.devices = 0

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        if not self.applies(request, subrequest):
            return True
        value = lookup_attribute(device, driver, self.attribute)
        if value is None:
            return False
        if self.devices == 0:
            self.value = value
        elif not _same(value, self.value):
            return False
        self.devices += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if self.applies(request, subrequest):
            self.devices -= 1


class _DistinctAttribute(_Constraint):
    def __init__(self, spec: DeviceConstraint) -> None:
        super().__init__(spec)
        self.values: dict[str, object] = {}  # one per request name, as upstream's
        self.devices = 0

    def add(self, request: str, subrequest: str, device: Device, driver: str) -> bool:
        if not self.applies(request, subrequest):
            return True
        value = lookup_attribute(device, driver, self.attribute)
        if value is None:
            return False
        if self.devices and any(_same(value, seen) for seen in self.values.values()):
            return False
        self.values[request] = value
        self.devices += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if self.applies(request, subrequest):
            self.values.pop(request, None)
            self.devices -= 1


def _constraint(spec: DeviceConstraint) -> _Constraint:
    return _MatchAttribute(spec) if spec.match_attribute else _DistinctAttribute(spec)


@dataclass
class _Request:
    """One `exactly` request or one subrequest of a firstAvailable list."""

    claim: int
    name: str
    parent: str  # the firstAvailable request it belongs to, "" for an `exactly` request
    device_class: DeviceClass
    allocation_mode: str
    count: int
    selectors: list[str]
    capacity_requests: dict[str, Quantity]
    tolerations: list[DeviceToleration]
    all_devices: list[tuple[ResourceSlice, Device]] | None = None  # allocationMode All
    admin_access: bool = False

    @property
    def result_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base(self) -> tuple[str, str]:
        """(request, subrequest) as constraints see it."""
        return (self.parent, self.name) if self.parent else (self.name, "")


@dataclass
class _Slot:
    alternatives: list[_Request]  # one for `exactly`, the subrequests in order for firstAvailable
    first_available: bool


class Allocator:
    """One PreFilter's allocator: the classes, slices and devices in use are fixed when it is made."""

    def __init__(self, classes: dict[str, DeviceClass], slices: list[ResourceSlice], in_use: set[DeviceID],
                 consumed: Consumed | None = None) -> None:
        self.classes, self.slices, self.in_use = classes, slices, in_use
        self.consumed: Consumed = consumed or {}
        self._compiled: dict[str, dra_cel.Program | dra_cel.NotModelled | dra_cel.CompileError] = {}
        # partitionable devices: per pool *name* (upstream's key, whatever the driver), what its counter sets
        # hold less what allocated devices consume; computed at the first need and kept for every node
        self.available: dict[str, Counters] = {}

    def allocate(self, node: Node, claims: list[ResourceClaim]) -> list[ClaimAllocation] | None:
        """One allocation per claim, or None when the node cannot satisfy them all (NodeFailure: nor can it
        because of an invalid pool)."""
        return _Search(self, node, claims).run()

    def selectable(self, item: _Request, claim: ResourceClaim, slice_: ResourceSlice, device: Device,
                   node: Node) -> bool:
        variable = dra_cel.device_variable(slice_.driver, device.attributes, device.capacity,
                                           device.allow_multiple_allocations)
        for where, selectors in ((f"class {item.device_class.name}", item.device_class.selectors),
                                 (f"claim {claim.key}", item.selectors)):
            for index, expression in enumerate(selectors):
                if not self._match(expression, variable, f"{where}: selector #{index}"):
                    return False
        if slice_.per_device_node_selection:
            return node_matches(node, device.node_name, device.all_nodes, device.node_selector)
        return True

    def _match(self, expression: str, variable: dict, where: str) -> bool:
        compiled = self._compiled.get(expression)
        if compiled is None:
            try:
                compiled = dra_cel.compile_selector(expression)
            except (dra_cel.NotModelled, dra_cel.CompileError) as err:
                compiled = err
            self._compiled[expression] = compiled
        if isinstance(compiled, dra_cel.NotModelled):
            raise AllocationError(f"{where}: CEL expression not modelled by schedcheck ({compiled}): {expression}")
        if isinstance(compiled, dra_cel.CompileError):  # the API server refuses these; a dump may still hold one
            raise AllocationError(f"{where}: CEL compile error: {compiled}")
        try:  # DeviceMatches: the attributes converted, the program run under the cost limit, a bool required
            return dra_cel.matches(compiled, variable)
        except dra_cel.CelRuntimeError as err:
            raise AllocationError(f"{where}: CEL runtime error: {err}") from err


class _Search:
    """One Allocate call: upstream's allocateOne, recursion for recursion."""

    def __init__(self, allocator: Allocator, node: Node, claims: list[ResourceClaim]) -> None:
        self.allocator, self.node, self.claims = allocator, node, claims
        self.pools = gather_pools(allocator.slices, node)
        self.visit = [(s, d) for pool in self.pools if not (pool.incomplete or pool.invalid) for s, d in pool.devices()]
        self.pool_of = {(pool.driver, pool.name): pool for pool in self.pools}
        self.counting: dict[str, Counters] = {}  # per pool name, what this search's devices consume
        self.slots: list[list[_Slot]] = []
        self.constraints: list[list[_Constraint]] = []
        self.results: list[Chosen] = [[] for _ in claims]
        self.taken: dict[DeviceID, set[int]] = {}  # device -> the claims (indices) this search chose it for
        self.allocating: dict[DeviceID, dict[str, Fraction]] = {}  # capacity this search gave shared devices
        self.shares = 0
        self._selectable: dict[tuple[DeviceID, int, int, int], bool] = {}

    def run(self) -> list[ClaimAllocation] | None:
        for index, claim in enumerate(self.claims):
            slots, least = [], 0
            for request in claim.requests:
                if request.first_available:
                    alternatives = [self._request(index, claim, sub.name, request.name, sub.device_class_name,
                                                  sub.allocation_mode, sub.count, sub.selectors, sub.capacity_requests,
                                                  sub.tolerations)
                                    for sub in request.first_available]
                    least += min(item.count for item in alternatives)
                else:
                    alternatives = [self._request(index, claim, request.name, "", request.device_class_name,
                                                  request.allocation_mode, request.count, request.selectors,
                                                  request.capacity_requests, request.tolerations,
                                                  request.admin_access)]
                    least += alternatives[0].count
                slots.append(_Slot(alternatives, bool(request.first_available)))
            if least > RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim.key}: number of requested devices {least} exceeds the "
                                      f"claim limit of {RESULTS_MAX_SIZE}")
            self.slots.append(slots)
            self.constraints.append([_constraint(c) for c in claim.constraints])
        try:
            done = self._one(0, 0, 0, False, 0, 0)
        except _Exceeded as err:
            raise AllocationError("allocation max size exceeded") from err
        if not done:
            if any(pool.invalid for pool in self.pools):
                raise NodeFailure(REASON_INVALID_POOLS)
            return None
        return [_result(devices, self.node.name) for devices in self.results]

    def _request(self, index: int, claim: ResourceClaim, name: str, parent: str, class_name: str, mode: str,
                 count: int, selectors: list[str], capacity: dict[str, Quantity],
                 tolerations: list[DeviceToleration], admin_access: bool = False) -> _Request:
        device_class = self.allocator.classes.get(class_name)
        if device_class is None:
            # upstream names a subrequest by its own name here
            raise AllocationError(f"claim {claim.key}, request {name}: could not retrieve device class "
                                  f'{class_name}: deviceclass.resource.k8s.io "{class_name}" not found')
        item = _Request(index, name, parent, device_class, mode, count, selectors, capacity, tolerations,
                        admin_access=admin_access)
        if mode == "All":
            item.all_devices = []
            for pool in self.pools:
                state = "being updated" if pool.incomplete else "invalid" if pool.invalid else ""
                if state:
                    raise AllocationError(f"claim {claim.key}, request {name}: asks for all devices, but resource "
                                          f"pool {pool.driver}/{pool.name} is currently {state}")
                item.all_devices += [(s, d) for s, d in pool.devices()
                                     if self.allocator.selectable(item, claim, s, d, self.node)
                                     and self._capacity_fits(item, s, d)]
            item.count = len(item.all_devices)
        return item

    def _unavailable(self, item: _Request, device_id: DeviceID) -> bool:
        """deviceInUse (allocated, or chosen in this search for any claim); with admin access only a device this
        search chose for the request's own claim (allocatingDeviceForClaim)."""
        if item.admin_access:
            return item.claim in self.taken.get(device_id, ())
        return device_id in self.allocator.in_use or bool(self.taken.get(device_id))

    def _one(self, claim: int, request: int, sub: int, in_sub: bool, done: int, start: int) -> bool:
        if claim == len(self.claims):
            return True
        if request == len(self.slots[claim]):
            try:
                return self._one(claim + 1, 0, 0, False, 0, 0)
            except _Exceeded:
                return False
        slot = self.slots[claim][request]
        if slot.first_available and not in_sub:
            all_exceeded = True
            for index in range(len(slot.alternatives)):
                try:
                    if self._one(claim, request, index, True, 0, 0):
                        return True
                except _Exceeded:
                    continue
                all_exceeded = False
            if all_exceeded:
                raise _Exceeded
            return False
        item = slot.alternatives[sub]
        if item.all_devices is not None and not item.all_devices:
            return False
        if done >= item.count:
            return self._one(claim, request + 1, 0, False, 0, 0)
        if len(self.results[claim]) + item.count - done > RESULTS_MAX_SIZE:
            raise _Exceeded
        if item.all_devices is not None:
            slice_, device = item.all_devices[done]
            undo = self._add(item, slice_, device, must=True)
            if undo is None:
                return False
            try:
                if self._one(claim, request, sub, in_sub, done + 1, 0):
                    return True
            except BaseException:
                undo()
                raise
            undo()
            return False
        for position in range(start, len(self.visit)):
            slice_, device = self.visit[position]
            if self._unavailable(item, (slice_.driver, slice_.pool, device.name)):
                continue
            if not self._is_selectable(item, request, sub, slice_, device):
                continue
            if not self._capacity_fits(item, slice_, device):
                continue
            undo = self._add(item, slice_, device, must=False)
            if undo is None:
                continue
            try:
                if self._one(claim, request, sub, in_sub, done + 1, position + 1):
                    return True
            except BaseException:
                undo()
                raise
            undo()
        return False

    def _is_selectable(self, item: _Request, request: int, sub: int, slice_: ResourceSlice, device: Device) -> bool:
        key = ((slice_.driver, slice_.pool, device.name), item.claim, request, sub)
        found = self._selectable.get(key)
        if found is None:
            found = self._selectable[key] = self.allocator.selectable(item, self.claims[item.claim], slice_, device,
                                                                      self.node)
        return found

    def _add(self, item: _Request, slice_: ResourceSlice, device: Device, must: bool) -> Callable[[], None] | None:
        """allocateDevice: the device for the request, if free and every constraint of the claim takes it; the
        undo, or None."""
        device_id = (slice_.driver, slice_.pool, device.name)
        if self._unavailable(item, device_id):
            return None
        shared = device.allow_multiple_allocations
        # partitionable devices: a shared device some share already holds is not counted again
        if device.consumes_counters and not (shared and self._capacity_in_use(device_id)):
            if not self._take_counters(slice_, device):
                return None
        # as upstream, the counters taken above stay taken when the taint, a constraint or (below) the
        # capacity refuses the device, for the rest of this search (docs/findings.md #46)
        if taint_prevents_allocation(device, item.tolerations):  # DeviceTaints, on at 1.36
            return None
        request, subrequest = item.base
        constraints = self.constraints[item.claim]
        for index, constraint in enumerate(constraints):
            if not constraint.add(request, subrequest, device, slice_.driver):
                if must:
                    claim = self.claims[item.claim]
                    raise AllocationError(f"claim {claim.key}, request {item.name}: cannot add device "
                                          f"{'/'.join(device_id)} because a claim constraint would not be satisfied")
                for earlier in constraints[:index]:
                    earlier.remove(request, subrequest)
                return None
        if not shared:  # with admin access too: the claim's other requests and other claims' pass it over
            self.taken.setdefault(device_id, set()).add(item.claim)
        if not self._capacity_fits(item, slice_, device):
            return None  # as upstream: what was joined above is not undone (reached only by an All request)
        share, consumed = "", {}
        if shared:
            asked, policies = item.capacity_requests, device.capacity_policies
            consumed = {name: consumed_amount(asked.get(name), value, policies.get(name))
                        for name, value in device.capacity.items()}
            self.shares += 1
            share = f"share-{self.shares}"
            self._give(device_id, consumed, 1)
        results = self.results[item.claim]
        results.append((item, slice_, device, share, consumed))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(request, subrequest)
            self.taken.get(device_id, set()).discard(item.claim)
            if shared:
                if consumed:  # (upstream records no consumed capacity when it is empty, and removes none)
                    self._give(device_id, consumed, -1)
            elif device.consumes_counters:
                self._count(slice_.pool, device, -1)  # a share's counters are never given back, as upstream
            results.pop()

        return undo

    def _give(self, device_id: DeviceID, consumed: dict[str, Quantity], sign: int) -> None:
        totals = self.allocating.setdefault(device_id, {})
        for name, amount in consumed.items():
            totals[name] = totals.get(name, Fraction(0)) + sign * amount.as_fraction()
        if sign < 0 and not any(totals.values()):
            del self.allocating[device_id]  # ConsumedCapacityCollection.Remove drops an entry left empty

    def _capacity_in_use(self, device_id: DeviceID) -> bool:
        """deviceCapacityInUse: some share of the device consumes capacity, allocated, in flight or in this search."""
        return device_id in self.allocator.consumed or device_id in self.allocating

    def _available(self, pool: Pool) -> Counters:
        """What the pool's counter sets hold less what its allocated devices (allocated whole, or in flight)
        consume, on every slice of the pool; kept on the allocator under the pool's name, as upstream."""
        found = self.allocator.available.get(pool.name)
        if found is None:
            found = {name: {c: q.as_fraction() for c, q in cs.counters.items()} for name, cs in pool.counter_sets.items()}
            for slice_ in pool.slices + pool.other_slices:
                for device in slice_.devices:
                    if (slice_.driver, slice_.pool, device.name) not in self.allocator.in_use:
                        continue
                    for consumption in device.consumes_counters:
                        counters = found.get(consumption.counter_set, {})
                        for name, amount in consumption.counters.items():
                            if name in counters:
                                counters[name] -= amount.as_fraction()  # may go below 0: nothing left
            self.allocator.available[pool.name] = found
        return found

    def _count(self, pool_name: str, device: Device, sign: int) -> None:
        sets = self.counting.setdefault(pool_name, {})
        for consumption in device.consumes_counters:
            counters = sets.setdefault(consumption.counter_set, {})
            for name, amount in consumption.counters.items():
                counters[name] = counters.get(name, Fraction(0)) + sign * amount.as_fraction()

    def _take_counters(self, slice_: ResourceSlice, device: Device) -> bool:
        """checkAvailableCounters: count the device's consumption in and keep it if no counter of any of the
        pool's sets is then consumed beyond what it has available; else take it back out."""
        available = self._available(self.pool_of[(slice_.driver, slice_.pool)])
        self._count(slice_.pool, device, 1)
        used = self.counting[slice_.pool]
        for set_name, counters in available.items():
            for name, amount in counters.items():
                if amount < used.get(set_name, {}).get(name, 0):
                    self._count(slice_.pool, device, -1)
                    return False
        return True

    def _capacity_fits(self, item: _Request, slice_: ResourceSlice, device: Device) -> bool:
        """CmpRequestOverCapacity: the request's amounts fit each capacity of the device, with what its shares
        consume already and what this search gave it."""
        if any(name not in device.capacity for name in item.capacity_requests):
            return False  # "some requested capacity has not been defined": the device is skipped
        device_id = (slice_.driver, slice_.pool, device.name)
        before = self.allocator.consumed.get(device_id, {})
        giving = self.allocating.get(device_id, {})
        for name, value in device.capacity.items():
            policy = device.capacity_policies.get(name)
            amount = consumed_amount(item.capacity_requests.get(name), value, policy)
            if violates_policy(amount, policy):
                return False
            total = before.get(name, Quantity()).as_fraction() + amount.as_fraction() + giving.get(name, 0)
            if total > value.as_fraction():
                return False
        return True


def taint_prevents_allocation(device: Device, tolerations: list[DeviceToleration]) -> bool:
    """A NoSchedule or NoExecute taint of the device that none of the request's tolerations tolerates (other
    effects, None included, keep nothing away)."""
    return any(taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in tolerations)
               for taint in device.taints)


def consumed_amount(requested: Quantity | None, value: Quantity, policy: CapacityPolicy | None) -> Quantity:
    """calculateConsumedCapacity: what a request takes of a capacity."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else value
    if policy is None:
        return requested
    if policy.valid_min is not None:
        if requested < policy.valid_min:
            return policy.valid_min
        if policy.valid_step is None:
            return requested
        low, step = policy.valid_min.value(), policy.valid_step.value()
        steps, rest = divmod(requested.value() - low, step)
        return Quantity(low + step * (steps + (1 if rest else 0)), BINARY_SI)
    for allowed in policy.valid_values:
        if requested <= allowed:
            return allowed
    return requested


def violates_policy(amount: Quantity, policy: CapacityPolicy | None) -> bool:
    """violatesPolicy: the default is always allowed; else the range's max and step, or the valid values."""
    if policy is None or policy.default is not None and amount == policy.default:
        return False
    if policy.valid_min is not None:
        if policy.valid_max is not None and amount > policy.valid_max:
            return True
        if policy.valid_step is not None:
            return (amount.value() - policy.valid_min.value()) % policy.valid_step.value() != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


Chosen = list[tuple[_Request, ResourceSlice, Device, str, dict[str, Quantity]]]


def _result(devices: Chosen, node_name: str) -> ClaimAllocation:
    """The claim's devices and the nodes that reach them all (createNodeSelector)."""
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for _, slice_, device, _, _ in devices:
        if slice_.per_device_node_selection:
            node_local, selector = device.node_name, device.node_selector
        else:
            node_local, selector = slice_.node_name, slice_.node_selector
        if node_local or device.binds_to_node:
            return ClaimAllocation(_results(devices), [NodeSelectorTerm(match_fields=[
                NodeSelectorRequirement("metadata.name", "In", [node_name])])])
        if selector:
            _merge(selector[0].match_fields, fields)
            _merge(selector[0].match_expressions, expressions)
    term = NodeSelectorTerm(match_expressions=expressions, match_fields=fields) if fields or expressions else None
    return ClaimAllocation(_results(devices), [term] if term is not None else None)


def _results(devices: Chosen) -> list[AllocatedDevice]:
    return [AllocatedDevice(r.result_name, s.driver, s.pool, d.name, share, consumed, r.admin_access,
                            list(d.binding_conditions), list(d.binding_failure_conditions))
            for r, s, d, share, consumed in devices]


def _merge(found: list[NodeSelectorRequirement], into: list[NodeSelectorRequirement]) -> None:
    """addNewNodeSelectorRequirements: a requirement equal to one already there (key, operator, set of values)
    is not added again."""
    for requirement in found:
        if not any(r.key == requirement.key and r.operator == requirement.operator
                   and set(r.values) == set(requirement.values) for r in into):
            into.append(NodeSelectorRequirement(requirement.key, requirement.operator, list(requirement.values)))
