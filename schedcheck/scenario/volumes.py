"""Warnings on the storage objects taken together: names that point at nothing, claims that look bound but
are not to the scheduler, and CSI drivers no node offers (Volcano's cache makes those a resource)."""

from __future__ import annotations

from collections import defaultdict

from schedcheck.reference import k8s
from schedcheck.reference.cache.volumes import (
    DEFAULT_IGNORED_PROVISIONERS,
    ClaimNotForPod,
    VolumeObjects,
    claim_csi_driver,
    csi_limit_resource,
    pod_csi_volumes,
)
from schedcheck.reference.plugins.volume_helpers import (
    ANN_BIND_COMPLETED,
    claim_class,
    volume_claim_name,
    volume_is_for_pod,
)
from schedcheck.reference.util.scheduler_helper import ServerOptions
from schedcheck.scenario.references import listing


def volume_warnings(objects: k8s.ClusterObjects, options: ServerOptions, warnings: list[str]) -> None:
    _claim_warnings(objects, warnings)
    _missing_claims(objects, warnings)
    _unoffered_drivers(objects, options, warnings)


def _claim_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    volumes = {pv.name for pv in objects.persistent_volumes}
    classes = {sc.name for sc in objects.storage_classes}
    for pvc in objects.persistent_volume_claims:
        where = f"PersistentVolumeClaim {pvc.key}"
        if pvc.volume_name and ANN_BIND_COMPLETED not in pvc.annotations:
            warnings.append(f"{where}: spec.volumeName without the {ANN_BIND_COMPLETED} annotation is not bound to "
                            "the scheduler (a pod using it has unbound immediate PersistentVolumeClaims)")
        if pvc.volume_name and pvc.volume_name not in volumes:
            warnings.append(f"{where}: PersistentVolume {pvc.volume_name} is not among the objects")
        if claim_class(pvc) and claim_class(pvc) not in classes and not pvc.volume_name:
            warnings.append(f"{where}: StorageClass {claim_class(pvc)} is not among the objects, so the claim "
                            "counts as Immediate and unbound")


def _missing_claims(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    claims = {pvc.key: pvc for pvc in objects.persistent_volume_claims}
    users: dict[str, list[str]] = defaultdict(list)
    for pod in objects.pods:
        for volume in pod.volumes:
            key = f"{pod.namespace}/{volume_claim_name(pod, volume)}"
            pvc = claims.get(key)
            if pvc is None and volume.ephemeral:
                warnings.append(f"Pod {pod.key}: the claim {key} of ephemeral volume {volume.name} is not among the "
                                "objects: the pod waits a session, until the ephemeral volume controller creates it "
                                "between sessions")
            elif pvc is None:
                users[key].append(f"Pod {pod.key}")
            elif volume.ephemeral and volume_is_for_pod(pod, pvc):
                warnings.append(f"Pod {pod.key}: the claim {key} of ephemeral volume {volume.name} is not controlled "
                                "by the pod: Volcano's cache does not take the pod")
    for key, names in users.items():
        warnings.append(f"PersistentVolumeClaim {key}, named by {listing(names)}, is not among the objects: "
                        "the predicates plugin finds no node for a pending pod using it")


def _unoffered_drivers(objects: k8s.ClusterObjects, options: ServerOptions, warnings: list[str]) -> None:
    store = VolumeObjects(objects)
    ignored = DEFAULT_IGNORED_PROVISIONERS | set(options.ignored_provisioners)
    offered = {driver.name for csi in objects.csi_nodes for driver in csi.drivers}
    users: dict[str, list[str]] = defaultdict(list)
    for pod in objects.pods:
        try:
            if pod.node_name or not pod_csi_volumes(store, pod, ignored):
                continue
        except ClaimNotForPod:
            continue
        for volume in pod.volumes:
            driver = claim_csi_driver(store, store.pvc(pod.namespace, volume_claim_name(pod, volume)))
            if driver and driver not in ignored and driver not in offered:
                users[driver].append(f"Pod {pod.key}")
    for driver, names in users.items():
        warnings.append(f"{listing(sorted(set(names)))}: claims of driver {driver}, which no CSINode lists: Volcano's "
                        f"cache asks for {csi_limit_resource(driver)} per claim and no node has it (add the CSINode "
                        "objects, or name the provisioner in schedulerOptions.ignoredProvisioners)")
