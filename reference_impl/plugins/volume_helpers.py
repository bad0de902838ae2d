"""Storage helpers shared by volume binding, VolumeZone, NodeVolumeLimits, the cache's CSI counting and the
world's PV controller (k8s component-helpers storage/volume and storage/ephemeral v0.36.1, core/v1 helper
v1.36.1)."""

from __future__ import annotations

from fractions import Fraction

from schedcheck.reference.k8s import (
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodVolume,
    TopologySelectorRequirement,
)
from schedcheck.reference.plugins.interpod_affinity import selector_matches
from schedcheck.reference.plugins.k8s_mirror import node_selector_terms_match, requirement_holds

BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
CSI_DRIVER_NAME_PARAMETER = "csi.storage.k8s.io/csi-driver-name"


def volume_claim_name(pod: Pod, volume: PodVolume) -> str:
    """The claim a pod volume uses: the one it names, or for a generic ephemeral volume the one the ephemeral
    volume controller creates, named "<pod name>-<volume name>" (ephemeral.VolumeClaimName)."""
    return f"{pod.name}-{volume.name}" if volume.ephemeral else volume.claim_name


def ephemeral_claim_missing(name: str) -> str:
    """VolumeBinding's reason for an ephemeral volume whose claim does not exist (yet)."""
    return f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'


def volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str:
    """ephemeral.VolumeIsForPod: "" when the claim is in the pod's namespace and controlled by the pod (its
    controller owner reference carries the pod's uid), else the error upstream returns."""
    if pvc.namespace == pod.namespace and pvc.controller_uid and pvc.controller_uid == pod.uid:
        return ""
    return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} "
            "(pod is not owner)")


def claim_class(pvc: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName; "" when neither."""
    if BETA_STORAGE_CLASS in pvc.annotations:
        return pvc.annotations[BETA_STORAGE_CLASS]
    return pvc.storage_class_name or ""


def volume_class(pv: PersistentVolume) -> str:
    if BETA_STORAGE_CLASS in pv.annotations:
        return pv.annotations[BETA_STORAGE_CLASS]
    return pv.storage_class_name


def storage(quantity) -> Fraction:
    """A storage quantity as an exact number (a missing one is zero, as Go's zero Quantity)."""
    return quantity.as_fraction() if quantity is not None else Fraction(0)


def pv_fits_node(pv: PersistentVolume, labels: dict[str, str]) -> bool:
    """CheckNodeAffinity: the PV's required terms against a node known only by its labels (so matchFields,
    which need a node name, are not evaluated)."""
    if pv.node_affinity is None:
        return True
    return node_selector_terms_match(pv.node_affinity, Node(name="", uid="", labels=labels))


def topology_allows(terms: list[list[TopologySelectorRequirement]], labels: dict[str, str]) -> bool:
    """MatchTopologySelectorTerms: no terms allow every node; an empty or invalid term allows none."""
    if not terms:
        return True
    return any(term and all(requirement_holds(labels, r.key, "In", r.values) for r in term) for term in terms)


def bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim: claimRef names the claim (and, when it has a uid, the claim's uid)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.uid


def fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """isPVCFullyBound: a volume name and the PV controller's bind-completed annotation."""
    return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.annotations


def access_modes_fit(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    return set(pvc.access_modes) <= set(pv.access_modes)


def find_matching_volume(claim: PersistentVolumeClaim, volumes: list[PersistentVolume], labels: dict[str, str],
                         excluded: set[str]) -> PersistentVolume | None:
    """FindMatchingVolume on the scheduler's path (a node, delayed binding, VolumeAttributesClass on): a PV
    pre-bound to the claim if it fits the node, else the smallest Available one that matches the claim."""
    requested = storage(claim.request)
    wanted_class = claim_class(claim)
    best: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded or (pv.claim_ref is not None and not bound_to_claim(pv, claim)):
            continue
        size = storage(pv.capacity)
        if size < requested or pv.volume_mode != claim.volume_mode or pv.deletion_timestamp:
            continue
        if pv.volume_attributes_class_name != claim.volume_attributes_class_name:
            continue
        fits = pv_fits_node(pv, labels)
        if bound_to_claim(pv, claim):
            return pv if fits else None
        if pv.phase != "Available" or volume_class(pv) != wanted_class or not fits:
            continue
        if claim.selector is not None and not selector_matches(claim.selector, pv.labels):
            continue
        if not access_modes_fit(claim, pv):
            continue
        if best is None or storage(best.capacity) > size:
            best = pv
    return best
