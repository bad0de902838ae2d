"""VolumeZone and NodeVolumeLimits (CSI) as the predicates plugin runs them (k8s v1.36.1 plugins/volumezone,
plugins/nodevolumelimits/csi.go). Both read the informer view (the world's objects), not the assume caches.

VolumeZone: PreFilter collects the zone and region labels (beta and GA keys, values split on "__") of every
bound claim's PV (persistentVolumeClaim volumes only: upstream passes generic ephemeral volumes over); a
claim of a WaitForFirstConsumer class without a volume is passed over, any other
unresolved claim fails the pod. Filter: a node with none of those labels passes; otherwise each PV label's
key (or its GA key) must be on the node with one of the PV's values.

NodeVolumeLimits: the pod's claims resolve to (CSI driver, volume handle): the bound PV's spec.csi, else the
claim's StorageClass (its provisioner, and a handle per claim); in-tree provisioners count under their CSI
driver only when the node has a CSINode. Volumes already on the node (its pods' and its
VolumeAttachments') are not counted again; a driver whose CSINode entry reports allocatable.count fails
the node (Unschedulable) when attached + new exceeds it. A generic ephemeral volume counts through its claim
("<pod>-<volume>") like a named one, once the claim is controlled by the pod: one of another owner is an
error (an Error status, for the pod placed or for a pod on the node). In-tree PV sources are not read (they
would need CSI translation), nor inline volumes.
"""

from __future__ import annotations

from collections import Counter

from schedcheck.reference.api.unschedule_info import Status, StatusCode
from schedcheck.reference.cache.volumes import VolumeObjects
from schedcheck.reference.k8s import CSINode, Node, PersistentVolumeClaim, Pod
from schedcheck.reference.plugins.volume_helpers import (
    WAIT_FOR_FIRST_CONSUMER,
    claim_class,
    volume_claim_name,
    volume_is_for_pod,
)

ZONE_NAME = "VolumeZone"
ZONE_STATE = "PreFilterVolumeZone"
LIMITS_NAME = "NodeVolumeLimits"
REASON_NO_VOLUME_ZONE = "node(s) had no available volume zone"
REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
UAU = StatusCode.UnschedulableAndUnresolvable
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, "topology.kubernetes.io/zone", "topology.kubernetes.io/region")
_GA_LABEL = {_BETA_ZONE: "topology.kubernetes.io/zone", _BETA_REGION: "topology.kubernetes.io/region"}
MULTI_ZONE_DELIMITER = "__"
# in-tree provisioner -> CSI driver, for the plugins whose migration counts on a node with a CSINode
MIGRATED_PROVISIONERS = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}
# migratable, but never counted (their migration is not "on" for volume limits)
UNCOUNTED_PROVISIONERS = {"kubernetes.io/azure-file", "kubernetes.io/vsphere-volume"}
VOLUME_HANDLE_PREFIX = "schedcheck"  # upstream draws a random prefix per plugin instance

PVTopology = tuple[str, str, frozenset[str]]  # (PV name, label key, values)


# -- VolumeZone ------------------------------------------------------------------------------


def zone_pre_filter(objects: VolumeObjects, pod: Pod) -> tuple[list[PVTopology], Status | None]:
    """The PVs' topologies, or a Skip (none) or failing status."""
    topologies: list[PVTopology] = []
    for volume in pod.volumes:
        if volume.ephemeral:
            continue  # getPersistentVolumeClaimNameFromPod reads persistentVolumeClaim sources only
        pvc = objects.pvc(pod.namespace, volume.claim_name)
        if pvc is None:
            return [], Status(UAU, f'persistentvolumeclaim "{volume.claim_name}" not found')
        if not pvc.volume_name:
            problem = _unbound_problem(objects, pvc)
            if problem is None:
                continue
            return [], Status(UAU, problem)
        pv = objects.pv(pvc.volume_name)
        if pv is None:
            return [], Status(UAU, f'persistentvolume "{pvc.volume_name}" not found')
        topologies.extend(pv_topologies(pv.name, pv.labels))
    return topologies, (None if topologies else Status(StatusCode.Skip))


def _unbound_problem(objects: VolumeObjects, pvc: PersistentVolumeClaim) -> str | None:
    """A claim without a volume is fine only in a WaitForFirstConsumer class."""
    name = claim_class(pvc)
    if not name:
        return "PersistentVolumeClaim had no pv name and storageClass name"
    sc = objects.storage_class(name)
    if sc is None:
        return f'storageclass.storage.k8s.io "{name}" not found'
    return None if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER else "PersistentVolume had no name"


def pv_topologies(pv_name: str, labels: dict[str, str]) -> list[PVTopology]:
    """The PV's zone and region labels; a value with an empty element is ignored (LabelZonesToSet fails)."""
    found = []
    for key in TOPOLOGY_LABELS:
        if key not in labels:
            continue
        values = [part.strip() for part in labels[key].split(MULTI_ZONE_DELIMITER)]
        if all(values):
            found.append((pv_name, key, frozenset(values)))
    return found


def zone_filter(topologies: list[PVTopology], node: Node) -> Status | None:
    labels = node.labels
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return None
    for _, key, values in topologies:
        value = labels.get(key, labels.get(_GA_LABEL.get(key, key)))
        if value is None or value not in values:
            return Status(UAU, REASON_NO_VOLUME_ZONE)
    return None


# -- NodeVolumeLimits (CSI) ------------------------------------------------------------------


def limits_pre_filter(pod: Pod) -> bool:
    """Run the filter at all: the pod has a claim."""
    return bool(pod.volumes)


def limits_filter(objects: VolumeObjects, pod: Pod, node_name: str, node_pods: list[Pod]) -> Status | None:
    csi_node = objects.csi_node(node_name)
    new: dict[str, str] = {}
    try:
        _attachable(objects, pod, csi_node, new, new_pod=True)
    except MissingClaim as err:
        return Status(UAU, str(err))
    except NotForPod as err:
        return Status(StatusCode.Error, str(err))
    limits = volume_limits(csi_node)
    if not new or not limits:
        return None
    try:
        attached = _attached_counts(objects, node_name, node_pods, csi_node, new)
    except NotForPod as err:
        return Status(StatusCode.Error, str(err))
    for driver, count in Counter(new.values()).items():
        if driver in limits and attached[driver] + count > limits[driver]:
            return Status(StatusCode.Unschedulable, REASON_MAX_VOLUME_COUNT)
    return None


def _attached_counts(objects: VolumeObjects, node_name: str, node_pods: list[Pod], csi_node: CSINode | None,
                     new: dict[str, str]) -> Counter[str]:
    """Volumes per driver already on the node: its pods' (dropped from `new`, being there already) and its
    VolumeAttachments' not among them."""
    attached: dict[str, str] = {}
    for existing in node_pods:
        _attachable(objects, existing, csi_node, attached, new_pod=False)
    for unique in attached:
        new.pop(unique, None)
    counts = Counter(attached.values())
    for unique, driver in _attachments(objects, node_name).items():
        if unique not in attached:
            counts[driver] += 1
    return counts


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    if csi_node is None:
        return {}
    return {d.name: d.allocatable_count for d in csi_node.drivers if d.allocatable_count is not None}


class MissingClaim(Exception):
    """The pod being placed uses a claim that does not exist: UnschedulableAndUnresolvable."""


class NotForPod(Exception):
    """An ephemeral volume's claim is not controlled by the pod (VolumeIsForPod): an Error status."""


def _attachable(objects: VolumeObjects, pod: Pod, csi_node: CSINode | None, out: dict[str, str],
                new_pod: bool) -> None:
    """filterAttachableVolumes: add the pod's volumes (unique name -> driver). A claim that does not exist
    stops the pod being placed (MissingClaim); another pod's is passed over. An ephemeral volume's claim of
    another owner stops either (NotForPod)."""
    for volume in pod.volumes:
        name = volume_claim_name(pod, volume)
        pvc = objects.pvc(pod.namespace, name)
        if pvc is None:
            if new_pod:
                raise MissingClaim(f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" not found')
            continue
        if volume.ephemeral and (problem := volume_is_for_pod(pod, pvc)):
            raise NotForPod(problem)
        driver, handle = csi_driver_info(objects, pvc, csi_node)
        if driver and handle:
            out[f"{driver}/{handle}"] = driver


def csi_driver_info(objects: VolumeObjects, pvc: PersistentVolumeClaim, csi_node: CSINode | None) -> tuple[str, str]:
    """getCSIDriverInfo: the bound PV's CSI source, else the claim's StorageClass."""
    if pvc.volume_name:
        pv = objects.pv(pvc.volume_name)
        if pv is not None:
            return (pv.csi_driver, pv.csi_volume_handle) if pv.csi_driver else ("", "")
    name = claim_class(pvc)
    sc = objects.storage_class(name) if name else None
    if sc is None:
        return "", ""
    handle = f"{VOLUME_HANDLE_PREFIX}-{pvc.namespace}/{pvc.name}"
    if sc.provisioner in MIGRATED_PROVISIONERS:
        return (MIGRATED_PROVISIONERS[sc.provisioner], handle) if csi_node is not None else ("", "")
    if sc.provisioner in UNCOUNTED_PROVISIONERS:
        return "", ""
    return sc.provisioner, handle


def _attachments(objects: VolumeObjects, node_name: str) -> dict[str, str]:
    """The node's VolumeAttachments of CSI PVs, by unique volume name."""
    found = {}
    for va in objects.world.volume_attachments:
        if va.node_name != node_name or not va.attacher or not va.persistent_volume_name:
            continue
        pv = objects.pv(va.persistent_volume_name)
        if pv is not None and pv.csi_driver:
            found[f"{va.attacher}/{pv.csi_volume_handle}"] = va.attacher
    return found
