"""The resource.k8s.io/v1 objects of dynamic resource allocation (DRA) the scheduler reads.

Cut down, as k8s.py, to the fields Kubernetes' DynamicResources plugin and Volcano's DRA accounting
consult: DeviceClass selectors, ResourceSlice devices per node and pool, ResourceClaim requests and
allocation, and a pod's spec.resourceClaims (k8s.Pod.resource_claims).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedcheck.reference.quantity import Quantity

if TYPE_CHECKING:
    from schedcheck.reference.k8s import NodeSelectorTerm

ALLOCATION_MODES = ("ExactCount", "All")


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


@dataclass
class Device:
    name: str
    attributes: dict[str, Any] = field(default_factory=dict)  # qualified name -> bool | int | str (version: str)
    capacity: dict[str, Quantity] = field(default_factory=dict)


@dataclass
class ResourceSlice:
    name: str
    driver: str
    pool: str
    pool_generation: int = 0
    pool_slice_count: int = 1
    node_name: str = ""  # the devices are local to this node
    all_nodes: bool = False  # the devices are reachable from every node
    devices: list[Device] = field(default_factory=list)


@dataclass
class DeviceRequest:
    """spec.devices.requests[i].exactly (firstAvailable is not modelled)."""

    name: str
    device_class_name: str
    allocation_mode: str = "ExactCount"  # ExactCount | All
    count: int = 1
    selectors: list[str] = field(default_factory=list)  # CEL expressions, ANDed


@dataclass
class AllocatedDevice:
    request: str
    driver: str
    pool: str
    device: str

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@dataclass
class ClaimAllocation:
    """status.allocation: the chosen devices and, when they are node-local, the nodes that reach them."""

    devices: list[AllocatedDevice] = field(default_factory=list)
    node_selector: list[NodeSelectorTerm] | None = None  # None: every node


@dataclass
class ResourceClaim:
    name: str
    namespace: str
    uid: str
    requests: list[DeviceRequest] = field(default_factory=list)
    allocation: ClaimAllocation | None = None
    reserved_for: list[str] = field(default_factory=list)  # status.reservedFor[].uid
    deletion_timestamp: str | None = None
    resource_version: int = 0  # moves on with every API write (PreBind's status update)
    controller_uid: str = ""  # metadata.ownerReferences[controller].uid: the pod a template's claim was made for

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
