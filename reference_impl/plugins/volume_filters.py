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
error (an Error status, for the pod placed or for a pod on the node). In-tree sources go through CSI
migration (csi_translation.py) on a node with a CSINode, for the five plugins whose migration is on: a bound
PV's in-tree source counts under its CSI driver with the handle the translator derives from it (a PV it
cannot translate is not counted), and so does a pod's inline volume, whose handle is the same for every pod
using the disk, so that a disk shared by two pods counts once; an inline volume the translator refuses is an
error (an Error status). The pods' volumes are walked in spec.volumes order, claims and inline volumes
interleaved, so that the first problem decides the status.
"""

from __future__ import annotations

from collections import Counter

from schedcheck.reference.api.unschedule_info import Status, StatusCode
from schedcheck.reference.cache.volumes import VolumeObjects
from schedcheck.reference.k8s import (
    CSINode,
    InlineVolume,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodVolume,
)
from schedcheck.reference.plugins import csi_translation as csitrans
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
MIGRATED_PROVISIONERS = {plugin: csitrans.CSI_DRIVERS[plugin] for plugin in sorted(csitrans.MIGRATION_ON)}
# migratable, but never counted (their migration is not "on" for volume limits)
UNCOUNTED_PROVISIONERS = set(csitrans.CSI_DRIVERS) - set(csitrans.MIGRATION_ON)
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
    """Run the filter at all: the pod has a claim or an inline volume the translation library knows."""
    return bool(pod.volumes or pod.inline_volumes)


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
    """An ephemeral volume's claim is not controlled by the pod (VolumeIsForPod), or an inline volume the
    translator refuses: an Error status."""


def pod_volumes_in_order(pod: Pod) -> list[PodVolume | InlineVolume]:
    """The pod's claim-backed and inline volumes in spec.volumes order."""
    if not pod.inline_volumes:
        return list(pod.volumes)
    ordered: list[PodVolume | InlineVolume] = []
    inline = iter(sorted(pod.inline_volumes, key=lambda v: v.position))
    pending = next(inline, None)
    for index, volume in enumerate([*pod.volumes, None]):
        while pending is not None and pending.position <= index:
            ordered.append(pending)
            pending = next(inline, None)
        if volume is not None:
            ordered.append(volume)
    return ordered


def _attachable(objects: VolumeObjects, pod: Pod, csi_node: CSINode | None, out: dict[str, str],
                new_pod: bool) -> None:
    """filterAttachableVolumes: add the pod's volumes (unique name -> driver). A claim that does not exist
    stops the pod being placed (MissingClaim); another pod's is passed over. An ephemeral volume's claim of
    another owner stops either (NotForPod), and so does an inline volume the translator refuses."""
    for volume in pod_volumes_in_order(pod):
        if isinstance(volume, InlineVolume):
            _attachable_inline(volume, csi_node, out)
            continue
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


def _attachable_inline(volume: InlineVolume, csi_node: CSINode | None, out: dict[str, str]) -> None:
    """checkAttachableInlineVolume: counted only where the plugin's migration is on (a CSINode on the node),
    under the translated handle."""
    plugin = volume.source.plugin
    if not csitrans.limits_migration_on(csi_node, plugin):
        return
    try:
        handle = csitrans.inline_handle(volume.source)
    except csitrans.TranslationError as err:
        raise NotForPod(f"converting volume({volume.name}) from inline to csi: {err}") from None
    driver = csitrans.CSI_DRIVERS[plugin]
    out[f"{driver}/{handle}"] = driver


def csi_driver_info(objects: VolumeObjects, pvc: PersistentVolumeClaim, csi_node: CSINode | None) -> tuple[str, str]:
    """getCSIDriverInfo: the bound PV's CSI source (an in-tree one translated where its migration is on), else
    the claim's StorageClass."""
    if pvc.volume_name:
        pv = objects.pv(pvc.volume_name)
        if pv is not None:
            if pv.csi_driver:
                return pv.csi_driver, pv.csi_volume_handle
            return _in_tree_pv_info(pv, csi_node)
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


def _in_tree_pv_info(pv: PersistentVolume, csi_node: CSINode | None) -> tuple[str, str]:
    """A PV with an in-tree source: its CSI driver and translated handle, or nothing when the source is not
    migratable, its migration is off on the node, or the translator refuses it."""
    source = pv.in_tree
    if source is None or not csitrans.limits_migration_on(csi_node, source.plugin):
        return "", ""
    try:
        handle = csitrans.pv_handle(pv)
    except csitrans.TranslationError:
        return "", ""
    return csitrans.CSI_DRIVERS[source.plugin], handle


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
