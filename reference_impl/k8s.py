"""The Kubernetes and Volcano API objects the scheduler reads.

Stand-ins for the Go types upstream imports from k8s.io/api (core/v1,
scheduling/v1) and volcano.sh/apis (scheduling/v1beta1), cut down to the
fields the scheduler actually consults (see ../shared/spec/scenario-format.md).
The scenario loader fills them from `kubectl get -o yaml` documents; the cache
turns them into the scheduler's own api objects.

These objects are plain data. The scheduler mutates a few fields in place the
way upstream mutates the shared pod object (for example `Pod.node_name` on
allocate), so the cache deep-copies them when it snapshots.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference import k8s_dra
from schedcheck.reference.k8s_dra import DeviceClass, DeviceTaintRule, PodResourceClaim, ResourceClaim, ResourceSlice
from schedcheck.reference.k8s_numa import Numatopology
from schedcheck.reference.quantity import Quantity

ResourceList = dict[str, Quantity]
"""A Kubernetes ResourceList: resource name -> quantity."""

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
PREEMPTABLE_KEY = "volcano.sh/preemptable"
TASK_SPEC_KEY = "volcano.sh/task-spec"
TASK_PRIORITY_ANNOTATION = "volcano.sh/task-priority"
DEFAULT_SCHEDULER_NAME = "volcano"


@dataclass
class Taint:
    key: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute
    value: str = ""


@dataclass
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # empty matches every effect


@dataclass
class NodeSelectorRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: list[str] = field(default_factory=list)


@dataclass
class NodeSelectorTerm:
    """Requirements ANDed together; terms of a NodeSelector are ORed."""

    match_expressions: list[NodeSelectorRequirement] = field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = field(default_factory=list)


@dataclass
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@dataclass
class NodeAffinity:
    required: list[NodeSelectorTerm] | None = None  # None: no required terms at all
    preferred: list[PreferredSchedulingTerm] = field(default_factory=list)


@dataclass
class LabelSelectorRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: list[str] = field(default_factory=list)


@dataclass
class LabelSelector:
    """metav1.LabelSelector: every matchLabels pair and every expression must hold (an empty one matches all)."""

    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = field(default_factory=list)


@dataclass
class PodAffinityTerm:
    label_selector: LabelSelector | None  # None matches no pod
    topology_key: str
    namespaces: list[str] = field(default_factory=list)
    namespace_selector: LabelSelector | None = None


@dataclass
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass
class PodAffinity:
    """spec.affinity.podAffinity or podAntiAffinity."""

    required: list[PodAffinityTerm] = field(default_factory=list)
    preferred: list[WeightedPodAffinityTerm] = field(default_factory=list)


@dataclass
class TopologySpreadConstraint:
    """spec.topologySpreadConstraints[i] (k8s v1.36 defaults: minDomains 1, nodeAffinityPolicy Honor,
    nodeTaintsPolicy Ignore)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None = None
    min_domains: int = 1
    node_affinity_policy: str = "Honor"  # Honor | Ignore
    node_taints_policy: str = "Ignore"  # Honor | Ignore
    match_label_keys: list[str] = field(default_factory=list)


@dataclass
class ContainerPort:
    container_port: int
    host_port: int = 0  # 0: not exposed on the node
    protocol: str = "TCP"  # TCP | UDP | SCTP
    host_ip: str = ""  # "" or 0.0.0.0: every address of the node


@dataclass
class Container:
    name: str
    requests: ResourceList = field(default_factory=dict)
    restart_policy: str | None = None  # "Always" marks a sidecar init container
    ports: list[ContainerPort] = field(default_factory=list)
    image: str = ""
    claims: list[str] = field(default_factory=list)  # resources.claims[].name (no filter reads them)
    limits: ResourceList = field(default_factory=dict)  # resources.limits (the QoS class for numa-aware; shared devices)
    # In-place resize: the container's entry in status.containerStatuses (status.initContainerStatuses for an
    # init container): `resources` as the kubelet actuated them (None when the entry or its resources is
    # missing) and `allocatedResources` (requests the kubelet admitted)
    status_resources: PodResources | None = None
    allocated_resources: ResourceList = field(default_factory=dict)



class RawDocument:
    """The object as the scenario gave it (a parsed YAML/JSON tree), kept for the extender's request bodies,
    which render every field (plugins/extender_json.py). Shared, never copied or modified: a session's
    deep copy of the object keeps the same document."""

    __slots__ = ("doc",)

    def __init__(self, doc: dict) -> None:
        self.doc = doc

    def __deepcopy__(self, memo: dict) -> RawDocument:
        return self

    def __copy__(self) -> RawDocument:
        return self

    def __repr__(self) -> str:
        return "RawDocument(...)"


@dataclass
class PodResources:
    """spec.resources of a pod (pod-level resources, API defaults applied): requests and limits; the pod's
    `resources` is None when the spec has none (the QoS class tells an empty one from a missing one)."""

    requests: ResourceList = field(default_factory=dict)
    limits: ResourceList = field(default_factory=dict)


@dataclass(frozen=True)
class ContainerImage:
    """One entry of a node's status.images: the names it goes by and its size."""
    names: tuple[str, ...]
    size_bytes: int = 0


@dataclass
class Node:
    name: str
    uid: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    taints: list[Taint] = field(default_factory=list)
    allocatable: ResourceList = field(default_factory=dict)
    capacity: ResourceList = field(default_factory=dict)
    ready: bool = True  # the Ready condition, as read; the scheduler ignores it (upstream setNodeState)
    creation_timestamp: str = ""
    images: list[ContainerImage] = field(default_factory=list)  # status.images (ImageLocality)
    raw: RawDocument | None = field(default=None, repr=False, compare=False)  # the scenario's document


@dataclass
class PodCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""  # RFC 3339, "" when not given (the cdp plugin reads PodScheduled's)


@dataclass
class PodVolume:
    """A spec.volumes[] entry backed by a claim: persistentVolumeClaim.claimName, or a generic ephemeral volume
    (`ephemeral`: its claim is the one the ephemeral volume controller makes from the template, named after the
    pod and the volume: see volume_helpers.volume_claim_name). Other sources are not kept."""

    name: str
    claim_name: str = ""  # persistentVolumeClaim.claimName; "" for an ephemeral volume
    ephemeral: bool = False
    # an ephemeral volume's volumeClaimTemplate, read as a claim without name, namespace or owner: what the
    # ephemeral volume controller copies into the claim it creates (cache/ephemeral_controller.py)
    claim_template: PersistentVolumeClaim | None = None


@dataclass(frozen=True)
class InTreeVolumeSource:
    """An in-tree volume source the CSI translation library knows (a pod's inline volume or a PV's source), as
    NodeVolumeLimits and VolumeBinding read it: `plugin` is the in-tree plugin's name (kubernetes.io/aws-ebs,
    gce-pd, azure-disk, cinder, portworx-volume, azure-file, vsphere-volume); `volume_id` what the translator
    makes the CSI volume handle from (awsElasticBlockStore.volumeID, gcePersistentDisk.pdName,
    azureDisk.diskURI, cinder.volumeID, portworxVolume.volumeID; azureFile.shareName and
    vsphereVolume.volumePath, never translated since their migration is off); `kind` azureDisk.kind (the API
    server defaults it to Shared), "" for the others."""

    plugin: str
    volume_id: str
    kind: str = ""


@dataclass(frozen=True)
class InlineVolume:
    """A spec.volumes[] entry with an in-tree source. `position` is the number of claim-backed volumes
    (Pod.volumes) before it in spec.volumes, so that the two lists can be walked in the pod's order."""

    name: str
    source: InTreeVolumeSource
    position: int = 0


@dataclass(frozen=True)
class ControllerReference:
    """The ownerReferences entry with `controller: true` (metav1.GetControllerOf): what the default spread
    selector looks up (a v1 ReplicationController, an apps/v1 ReplicaSet or StatefulSet by name)."""

    api_version: str
    kind: str
    name: str


@dataclass
class Pod:
    name: str
    namespace: str
    uid: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    deletion_timestamp: str | None = None
    node_name: str = ""
    containers: list[Container] = field(default_factory=list)
    init_containers: list[Container] = field(default_factory=list)
    overhead: ResourceList = field(default_factory=dict)
    resources: PodResources | None = None  # spec.resources (pod-level requests and limits)
    # In-place resize of pod-level resources: status.resources (None when absent) and status.allocatedResources
    status_resources: PodResources | None = None
    allocated_resources: ResourceList = field(default_factory=dict)
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = ""  # "" | PreemptLowerPriority | Never
    node_selector: dict[str, str] = field(default_factory=dict)
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    scheduling_gates: list[str] = field(default_factory=list)
    phase: str = "Pending"  # Pending | Running | Succeeded | Failed | Unknown
    nominated_node_name: str = ""
    start_time: str = ""  # status.startTime (RFC 3339), "" if the pod has not started
    conditions: list[PodCondition] = field(default_factory=list)
    volumes: list[PodVolume] = field(default_factory=list)  # spec.volumes[] with a persistentVolumeClaim
    inline_volumes: list[InlineVolume] = field(default_factory=list)  # spec.volumes[] with an in-tree source
    resource_claims: list[PodResourceClaim] = field(default_factory=list)  # spec.resourceClaims (DRA)
    # status.resourceClaimStatuses: pod claim name -> the claim generated from its template (None: none was)
    resource_claim_statuses: dict[str, str | None] = field(default_factory=dict)
    qos_class: str = ""  # status.qosClass; "" lets GetPodQOS compute it (numa-aware)
    # metadata.ownerReferences' controller entry: PodTopologySpread's system default selector reads it
    controller_ref: ControllerReference | None = None
    raw: RawDocument | None = field(default=None, repr=False, compare=False)  # the scenario's document

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class PodGroupCondition:
    type: str  # Unschedulable | Scheduled
    status: str
    transition_id: str = ""
    reason: str = ""
    message: str = ""


@dataclass
class NetworkTopology:
    """PodGroup spec.networkTopology: keep the job inside one hypernode (hard) or prefer to (soft)."""

    mode: str = "hard"  # hard | soft
    highest_tier_allowed: int | None = None
    highest_tier_name: str = ""


@dataclass
class SubGroupPolicy:
    """PodGroup spec.subGroupPolicy[]: pods matching the selector are grouped by the values of the match
    label keys; each group is a subjob of subGroupSize pods, and minSubGroups of them must be placed."""

    name: str
    sub_group_size: int | None = None
    min_sub_groups: int | None = None
    label_selector: LabelSelector | None = None
    match_label_keys: list[str] = field(default_factory=list)
    network_topology: NetworkTopology | None = None


@dataclass
class PodGroup:
    name: str
    namespace: str
    uid: str
    annotations: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    min_member: int = 0
    min_task_member: dict[str, int] = field(default_factory=dict)
    min_resources: ResourceList | None = None
    queue: str = "default"
    priority_class_name: str = ""
    phase: str = ""  # "" | Pending | Inqueue | Running | Unknown | Completed
    conditions: list[PodGroupCondition] = field(default_factory=list)
    network_topology: NetworkTopology | None = None
    sub_group_policy: list[SubGroupPolicy] = field(default_factory=list)
    raw: RawDocument | None = field(default=None, repr=False, compare=False)  # the scenario's document

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class NodeGroupTerms:
    """Queue spec.affinity.nodeGroupAffinity or .nodeGroupAntiAffinity: nodegroup names (the nodegroup plugin)."""

    required: list[str] = field(default_factory=list)  # requiredDuringSchedulingIgnoredDuringExecution
    preferred: list[str] = field(default_factory=list)  # preferredDuringSchedulingIgnoredDuringExecution


@dataclass
class QueueAffinity:
    """Queue spec.affinity. An empty one ({}) differs from none: it is the queue's own, so nothing is inherited."""

    node_group_affinity: NodeGroupTerms | None = None
    node_group_anti_affinity: NodeGroupTerms | None = None


@dataclass
class Queue:
    name: str
    uid: str
    annotations: dict[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    weight: int = 1
    capability: ResourceList = field(default_factory=dict)
    guarantee: ResourceList = field(default_factory=dict)
    deserved: ResourceList = field(default_factory=dict)
    reclaimable: bool | None = None  # None: upstream treats an unset flag as true
    priority: int = 0
    parent: str = ""
    state: str = "Open"  # status.state: Open | Closed | Closing | Unknown
    affinity: QueueAffinity | None = None  # spec.affinity
    status_allocated: ResourceList = field(default_factory=dict)  # written at session close (queue_status.py)
    raw: RawDocument | None = field(default=None, repr=False, compare=False)  # the scenario's document


@dataclass
class PriorityClass:
    name: str
    value: int
    preemption_policy: str = "PreemptLowerPriority"
    global_default: bool = False


@dataclass
class ResourceQuota:
    name: str
    namespace: str
    hard: ResourceList = field(default_factory=dict)
    used: ResourceList = field(default_factory=dict)


@dataclass
class PodDisruptionBudget:
    """policy/v1 PodDisruptionBudget: what the pdb plugin reads (the disruption controller's status)."""

    name: str
    namespace: str
    selector: LabelSelector | None = None  # None and {} both select nothing, for the pdb plugin
    disruptions_allowed: int = 0
    disrupted_pods: list[str] = field(default_factory=list)  # pod names the API server already evicted


@dataclass
class HyperNodeMember:
    """One spec.members[] entry: a Node or HyperNode picked by exactly one selector."""

    type: str  # Node | HyperNode
    exact: str = ""
    regex: str = ""
    labels: LabelSelector | None = None


@dataclass
class HyperNode:
    """A HyperNode (topology.volcano.sh/v1alpha1): a network domain of nodes or smaller hypernodes."""

    name: str
    tier: int
    tier_name: str = ""
    members: list[HyperNodeMember] = field(default_factory=list)


@dataclass
class NodeShard:
    """A NodeShard (shard.volcano.sh/v1alpha1): the nodes a scheduler instance may use."""

    name: str
    nodes_desired: list[str] = field(default_factory=list)
    nodes_in_use: list[str] = field(default_factory=list)


@dataclass
class ClaimReference:
    """A PersistentVolume's spec.claimRef: the claim it is bound or pre-bound to ("" uid: any claim so named)."""

    namespace: str
    name: str
    uid: str = ""


@dataclass
class PersistentVolume:
    """v1 PersistentVolume: what volume binding, VolumeZone and the CSI counting read. `resource_version`
    stands for metadata.resourceVersion: every API write bumps it (the assume caches compare it)."""

    name: str
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    deletion_timestamp: str | None = None
    capacity: Quantity | None = None  # spec.capacity.storage
    access_modes: list[str] = field(default_factory=list)
    volume_mode: str = "Filesystem"
    storage_class_name: str = ""
    volume_attributes_class_name: str = ""
    claim_ref: ClaimReference | None = None
    node_affinity: list[NodeSelectorTerm] | None = None  # spec.nodeAffinity.required terms; None: no affinity
    csi_driver: str = ""  # spec.csi.driver; "" for every other volume source
    csi_volume_handle: str = ""
    in_tree: InTreeVolumeSource | None = None  # an in-tree source CSI migration may translate (None: none)
    phase: str = "Available"  # status.phase: Pending | Available | Bound | Released | Failed
    resource_version: int = 1


@dataclass
class PersistentVolumeClaim:
    name: str
    namespace: str
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    deletion_timestamp: str | None = None
    access_modes: list[str] = field(default_factory=list)
    request: Quantity | None = None  # spec.resources.requests.storage
    storage_class_name: str | None = None  # None: unset (not the same as "")
    volume_attributes_class_name: str = ""
    volume_name: str = ""
    volume_mode: str = "Filesystem"
    selector: LabelSelector | None = None
    phase: str = "Pending"  # status.phase: Pending | Bound | Lost
    resource_version: int = 1
    controller_uid: str = ""  # metadata.ownerReferences[controller].uid: an ephemeral volume's claim, its pod

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class TopologySelectorRequirement:
    key: str
    values: list[str] = field(default_factory=list)


@dataclass
class StorageClass:
    name: str
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"  # Immediate | WaitForFirstConsumer (the API server's default)
    allowed_topologies: list[list[TopologySelectorRequirement]] = field(default_factory=list)  # terms, ORed
    parameters: dict[str, str] = field(default_factory=dict)


@dataclass
class CSINodeDriver:
    name: str
    allocatable_count: int | None = None  # spec.drivers[].allocatable.count; None: no limit reported


@dataclass
class CSINode:
    """storage.k8s.io/v1 CSINode (named as its node): the CSI drivers on the node and their volume limits."""

    name: str
    annotations: dict[str, str] = field(default_factory=dict)
    drivers: list[CSINodeDriver] = field(default_factory=list)


@dataclass
class VolumeAttachment:
    """storage.k8s.io/v1 VolumeAttachment: a PersistentVolume attached (or being attached) to a node."""

    name: str
    attacher: str
    node_name: str
    persistent_volume_name: str = ""


@dataclass
class Service:
    """v1 Service: only spec.selector (None: a service without a selector, which selects no pod)."""

    name: str
    namespace: str
    selector: dict[str, str] | None = None


@dataclass
class ReplicationController:
    """v1 ReplicationController: only spec.selector (a plain label map)."""

    name: str
    namespace: str
    selector: dict[str, str] = field(default_factory=dict)


@dataclass
class WorkloadController:
    """apps/v1 ReplicaSet or StatefulSet (`kind`): only spec.selector."""

    kind: str  # ReplicaSet | StatefulSet
    name: str
    namespace: str
    selector: LabelSelector | None = None


@dataclass
class ConfigMap:
    """v1 ConfigMap: read only where a plugin reads one by name (deviceshare's device config)."""

    name: str
    namespace: str
    data: dict[str, str] = field(default_factory=dict)


@dataclass
class ClusterObjects:
    """Every object of a scenario, by kind, in document order."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    pod_groups: list[PodGroup] = field(default_factory=list)
    queues: list[Queue] = field(default_factory=list)
    priority_classes: list[PriorityClass] = field(default_factory=list)
    resource_quotas: list[ResourceQuota] = field(default_factory=list)
    pod_disruption_budgets: list[PodDisruptionBudget] = field(default_factory=list)
    node_shards: list[NodeShard] = field(default_factory=list)
    hyper_nodes: list[HyperNode] = field(default_factory=list)
    persistent_volumes: list[PersistentVolume] = field(default_factory=list)
    persistent_volume_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    storage_classes: list[StorageClass] = field(default_factory=list)
    csi_nodes: list[CSINode] = field(default_factory=list)
    volume_attachments: list[VolumeAttachment] = field(default_factory=list)
    device_classes: list[DeviceClass] = field(default_factory=list)
    resource_slices: list[ResourceSlice] = field(default_factory=list)
    resource_claims: list[ResourceClaim] = field(default_factory=list)
    device_taint_rules: list[DeviceTaintRule] = field(default_factory=list)  # read, without effect (k8s_dra.py)
    numatopologies: list[Numatopology] = field(default_factory=list)
    config_maps: list[ConfigMap] = field(default_factory=list)
    # what PodTopologySpread's system default constraints read (helper.DefaultSelector)
    services: list[Service] = field(default_factory=list)
    replication_controllers: list[ReplicationController] = field(default_factory=list)
    workload_controllers: list[WorkloadController] = field(default_factory=list)  # ReplicaSets, StatefulSets


# The cache deep-copies the whole world at start-up (ClusterObjects above), and the gate starts one per
# run: copy.deepcopy's generic reduce/reconstruct path for these plain dataclasses is most of that cost.
# Copying field by field, passing immutable values through, gives the same copy (aliases kept via memo).
_IMMUTABLE = (str, int, float, bool, type(None), Quantity)


def _deepcopy_fields(self: Any, memo: dict[int, Any]) -> Any:
    cls = type(self)
    new = cls.__new__(cls)
    memo[id(self)] = new
    fields = new.__dict__
    for name, value in self.__dict__.items():
        kind = type(value)
        if kind in _IMMUTABLE:
            fields[name] = value
        elif kind is dict and all(type(v) in _IMMUTABLE for v in value.values()):
            fields[name] = dict(value)  # labels, annotations, resource lists: keys are strings
        elif kind is list and all(type(v) in _IMMUTABLE for v in value):
            fields[name] = list(value)
        else:
            fields[name] = copy.deepcopy(value, memo)
    return new


def _copies_field_by_field(module: Any) -> None:
    for cls in list(vars(module).values()):
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__:
            cls.__deepcopy__ = _deepcopy_fields  # type: ignore[attr-defined]


_copies_field_by_field(sys.modules[__name__])
_copies_field_by_field(k8s_dra)
