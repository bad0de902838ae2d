"""The PV controller and dynamic provisioners, as the world runs them between sessions.

They finish what the scheduler's PreBind started: a claim named by a PV's claimRef is bound to that PV,
and a claim annotated with a selected node (volume.kubernetes.io/selected-node) whose class has a
provisioner gets a new PV, bound to it. Nothing else moves: claims of Immediate classes stay as the
scenario gives them (the controller's own matching of those is not modelled), and a provisioned PV has no
node affinity (a real driver may add its topology).
"""

from __future__ import annotations

from schedcheck.reference.k8s import (
    ClaimReference,
    ClusterObjects,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from schedcheck.reference.plugins.volume_helpers import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_PROVISIONED_BY,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    claim_class,
    fully_bound,
)

IN_TREE_PREFIX = "kubernetes.io/"


def sync_claims(objects: ClusterObjects) -> None:
    claims = {pvc.key: pvc for pvc in objects.persistent_volume_claims}
    for pv in objects.persistent_volumes:
        pvc = _claim_of(pv, claims)
        if pvc is not None:
            bind(pv, pvc)
    classes = {sc.name: sc for sc in objects.storage_classes}
    for pvc in objects.persistent_volume_claims:
        if pvc.volume_name or ANN_SELECTED_NODE not in pvc.annotations:
            continue
        sc = classes.get(claim_class(pvc))
        if sc is None or sc.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            continue
        pv = provisioned(pvc, sc)
        objects.persistent_volumes.append(pv)
        bind(pv, pvc)


def _claim_of(pv: PersistentVolume, claims: dict[str, PersistentVolumeClaim]) -> PersistentVolumeClaim | None:
    """The unbound claim a PV is pre-bound to, if it exists and may take this PV."""
    ref = pv.claim_ref
    if ref is None:
        return None
    pvc = claims.get(f"{ref.namespace}/{ref.name}")
    if pvc is None or fully_bound(pvc) or pvc.volume_name not in ("", pv.name):
        return None
    return pvc if not ref.uid or ref.uid == pvc.uid else None


def bind(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> None:
    pv.claim_ref = ClaimReference(pvc.namespace, pvc.name, pvc.uid)
    pv.phase = "Bound"
    pv.resource_version += 1
    pvc.volume_name = pv.name
    pvc.annotations[ANN_BIND_COMPLETED] = "yes"
    if ANN_BOUND_BY_CONTROLLER in pv.annotations:
        pvc.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    pvc.phase = "Bound"
    pvc.resource_version += 1


def provisioned(pvc: PersistentVolumeClaim, sc: StorageClass) -> PersistentVolume:
    """The PV a provisioner creates for a claim (named pvc-<claim uid>, as the external provisioner names it)."""
    name = f"pvc-{pvc.uid}"
    csi = not sc.provisioner.startswith(IN_TREE_PREFIX)
    return PersistentVolume(
        name=name, uid=name, annotations={ANN_PROVISIONED_BY: sc.provisioner}, capacity=pvc.request,
        access_modes=list(pvc.access_modes), volume_mode=pvc.volume_mode, storage_class_name=sc.name,
        volume_attributes_class_name=pvc.volume_attributes_class_name,
        csi_driver=sc.provisioner if csi else "", csi_volume_handle=name if csi else "")
