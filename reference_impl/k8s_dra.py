"""The resource.k8s.io/v1 objects of dynamic resource allocation (DRA) the scheduler reads.

Cut down, as k8s.py, to the fields Kubernetes' DynamicResources plugin and Volcano's DRA accounting
consult: DeviceClass selectors, ResourceSlice devices per node and pool (and which nodes reach them, and
the counter sets partitionable devices consume from),
ResourceClaim requests (exactly or a firstAvailable list of subrequests), constraints and allocation, and
a pod's spec.resourceClaims (k8s.Pod.resource_claims).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedcheck.reference.quantity import Quantity

if TYPE_CHECKING:
    from schedcheck.reference.k8s import NodeSelectorTerm

ALLOCATION_MODES = ("ExactCount", "All")
FIRST_AVAILABLE_MAX = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize (also the score's base)
CONSTRAINTS_MAX = 32  # resourceapi.DeviceConstraintsMaxSize


class SemVer(str):
    """A device attribute of type version: a string to CEL's subset, but a type of its own to claim
    constraints (a version and a string never match)."""


@dataclass
class PodResourceClaim:
    """pod.spec.resourceClaims[i]: a name the containers use and the claim (or template) behind it."""

    name: str
    resource_claim_name: str = ""
    resource_claim_template_name: str = ""  # a controller generates the claim and names it in pod status


@dataclass
class DeviceClass:
    name: str
    selectors: list[str] = field(default_factory=list)  # CEL expressions, ANDed
    # spec.extendedResourceName (DRAExtendedResource): read, but Volcano never backs it with devices (README)
    extended_resource_name: str = ""


@dataclass
class CapacityPolicy:
    """capacity.<name>.requestPolicy of a device: what a request may consume of it (consumable capacity)."""

    default: Quantity | None = None  # consumed when the request names no amount (else the whole capacity)
    valid_values: list[Quantity] = field(default_factory=list)  # ascending; a request rounds up to one
    valid_min: Quantity | None = None  # validRange (present when min is set): round up to min + k * step
    valid_max: Quantity | None = None
    valid_step: Quantity | None = None


@dataclass(frozen=True)
class DeviceTaint:
    """A ResourceSlice device's taint (DeviceTaints, beta and on at k8s 1.36): NoSchedule and NoExecute keep
    the device from every request that does not tolerate it; None (and any other effect) keeps it from none."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True)
class DeviceToleration:
    """A request's toleration of device taints (resourceclaim.ToleratesTaint)."""

    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # "": every effect

    def tolerates(self, taint: DeviceTaint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("", "Equal") and self.value == taint.value


@dataclass
class CounterSet:
    """spec.sharedCounters[i] of a ResourceSlice (DRAPartitionableDevices, GA at 1.36): named counters the
    pool's devices consume from when allocated (a slice carries counter sets or devices, never both)."""

    name: str
    counters: dict[str, Quantity] = field(default_factory=dict)


@dataclass
class CounterConsumption:
    """devices[i].consumesCounters[j]: what allocating the device takes from a counter set of its pool."""

    counter_set: str
    counters: dict[str, Quantity] = field(default_factory=dict)


@dataclass
class Device:
    name: str
    attributes: dict[str, Any] = field(default_factory=dict)  # qualified name -> bool | int | str | SemVer
    capacity: dict[str, Quantity] = field(default_factory=dict)
    capacity_policies: dict[str, CapacityPolicy] = field(default_factory=dict)
    allow_multiple_allocations: bool = False  # consumable capacity: several allocations share the device
    # which nodes reach the device, read only when its slice has perDeviceNodeSelection (at most one is set)
    node_name: str = ""
    all_nodes: bool = False
    node_selector: list[NodeSelectorTerm] | None = None
    taints: list[DeviceTaint] = field(default_factory=list)
    consumes_counters: list[CounterConsumption] = field(default_factory=list)
    # DRADeviceBindingConditions (beta and on at k8s 1.36): the conditions a pod using the device waits for in
    # PreBind (all True), those that fail its binding (any True), and whether the allocation pins the node
    binding_conditions: list[str] = field(default_factory=list)
    binding_failure_conditions: list[str] = field(default_factory=list)
    binds_to_node: bool = False


@dataclass
class ResourceSlice:
    name: str
    driver: str
    pool: str
    pool_generation: int = 0
    pool_slice_count: int = 1
    # which nodes reach the devices: exactly one of these four is set
    node_name: str = ""  # the devices are local to this node
    all_nodes: bool = False  # the devices are reachable from every node
    node_selector: list[NodeSelectorTerm] | None = None  # one term: the nodes it selects
    per_device_node_selection: bool = False  # each device says (Device.node_name / all_nodes / node_selector)
    devices: list[Device] = field(default_factory=list)
    shared_counters: list[CounterSet] = field(default_factory=list)  # a counter slice: always reaches every node


@dataclass
class DeviceSubRequest:
    """spec.devices.requests[i].firstAvailable[j]: one alternative of a prioritized list."""

    name: str
    device_class_name: str
    allocation_mode: str = "ExactCount"  # ExactCount | All
    count: int = 1
    selectors: list[str] = field(default_factory=list)  # CEL expressions, ANDed
    capacity_requests: dict[str, Quantity] = field(default_factory=dict)  # capacity.requests
    tolerations: list[DeviceToleration] = field(default_factory=list)


@dataclass
class DeviceRequest:
    """spec.devices.requests[i]: `exactly` (device_class_name and the rest) or `firstAvailable`
    (first_available, tried in order; device_class_name is then "")."""

    name: str
    device_class_name: str
    allocation_mode: str = "ExactCount"  # ExactCount | All
    count: int = 1
    selectors: list[str] = field(default_factory=list)  # CEL expressions, ANDed
    capacity_requests: dict[str, Quantity] = field(default_factory=dict)  # capacity.requests
    tolerations: list[DeviceToleration] = field(default_factory=list)
    first_available: list[DeviceSubRequest] = field(default_factory=list)
    admin_access: bool = False  # exactly.adminAccess (DRAAdminAccess, GA at 1.36; a subrequest has none)


@dataclass
class DeviceConstraint:
    """spec.devices.constraints[i]: exactly one of match_attribute and distinct_attribute (a fully qualified
    attribute name), over the devices of `requests` (`<request>` or `<request>/<subrequest>`; none: all)."""

    requests: list[str] = field(default_factory=list)
    match_attribute: str = ""
    distinct_attribute: str = ""


@dataclass
class AllocatedDevice:
    request: str  # the request's name, or `<request>/<subrequest>` for a firstAvailable alternative
    driver: str
    pool: str
    device: str
    share_id: str = ""  # a share of a device that allows multiple allocations
    consumed_capacity: dict[str, Quantity] = field(default_factory=dict)
    admin_access: bool = False  # the request asked for admin access: the device is not taken from others
    # copied from the device by the allocator (DRADeviceBindingConditions): what PreBind waits for
    binding_conditions: list[str] = field(default_factory=list)
    binding_failure_conditions: list[str] = field(default_factory=list)

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@dataclass
class DeviceTaintRule:
    """resource.k8s.io/v1beta2 DeviceTaintRule: a taint for the devices its selector names (each of driver,
    pool and device unset: any). Read, without effect: DRADeviceTaintRules is off by default at k8s 1.36,
    so Volcano's slice tracker never applies them (README)."""

    name: str
    taint: DeviceTaint
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


@dataclass
class ClaimAllocation:
    """status.allocation: the chosen devices and, when they are node-local, the nodes that reach them."""

    devices: list[AllocatedDevice] = field(default_factory=list)
    node_selector: list[NodeSelectorTerm] | None = None  # None: every node
    # allocationTimestamp (seconds since the epoch): PreBind writes it when binding conditions are on; the
    # binding timeout counts from it
    timestamp: float | None = None


@dataclass
class DeviceCondition:
    """A metav1.Condition of a device status; the scheduler reads its status (and names reason and message in
    a binding failure)."""

    status: str  # True | False | Unknown
    reason: str
    message: str = ""
    last_transition_time: str = ""


@dataclass
class DeviceStatus:
    """status.devices[i] of a claim: what a driver reports about one allocated device (DRAResourceClaimDeviceStatus);
    the scheduler reads only its conditions (binding conditions)."""

    driver: str
    pool: str
    device: str
    share_id: str = ""
    conditions: dict[str, DeviceCondition] = field(default_factory=dict)  # by type

    def is_true(self, kind: str) -> bool:
        condition = self.conditions.get(kind)
        return condition is not None and condition.status == "True"


@dataclass
class ResourceClaim:
    name: str
    namespace: str
    uid: str
    requests: list[DeviceRequest] = field(default_factory=list)
    constraints: list[DeviceConstraint] = field(default_factory=list)
    allocation: ClaimAllocation | None = None
    reserved_for: list[str] = field(default_factory=list)  # status.reservedFor[].uid
    deletion_timestamp: str | None = None
    resource_version: int = 0  # moves on with every API write (PreBind's status update)
    controller_uid: str = ""  # metadata.ownerReferences[controller].uid: the pod a template's claim was made for
    device_statuses: list[DeviceStatus] = field(default_factory=list)  # status.devices

    def device_status(self, device: AllocatedDevice) -> DeviceStatus | None:
        """getAllocatedDeviceStatus: the first status entry naming the result's driver, pool and device (a share
        id is not compared)."""
        return next((s for s in self.device_statuses
                     if (s.driver, s.pool, s.device) == (device.driver, device.pool, device.device)), None)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
