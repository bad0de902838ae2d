"""The storage objects the scheduler reads, and the volume binder's assume caches.

`VolumeObjects` is the informer view: the world's PersistentVolumes, PersistentVolumeClaims,
StorageClasses, CSINodes and VolumeAttachments, looked up by key (VolumeZone, NodeVolumeLimits and the
cache's CSI counting read only this). `AssumeCache` is k8s volumebinding's passive assume cache: an
object assumed by a Reserve stands in for the API object until that object's resource version moves on
(an API write) or the assumption is restored (Unreserve). The caches live in the scheduler cache, so
they outlast a session, as upstream's VolumeBinding plugin is built once per process.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

from schedcheck.reference.k8s import (
    ClusterObjects,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from schedcheck.reference.plugins.volume_helpers import (
    CSI_DRIVER_NAME_PARAMETER,
    claim_class,
    volume_class,
    volume_claim_name,
    volume_is_for_pod,
)
from schedcheck.reference.quantity import Quantity

T = TypeVar("T", PersistentVolume, PersistentVolumeClaim)


@dataclass
class VolumeWait:
    """PreBind wrote its API updates; the bind waits until the PV controller has bound these claims."""

    node: str
    claims: list[str]  # namespace/name


class AssumeError(Exception):
    """Assume refused: the API object changed since the one the decision was made on."""


class VolumeObjects:
    def __init__(self, world: ClusterObjects) -> None:
        self.world = world
        self.refresh()

    def refresh(self) -> None:
        """Re-index after the world changed (the informers catching up between sessions)."""
        world = self.world
        self.pvs = {pv.name: pv for pv in world.persistent_volumes}
        self.pvcs = {pvc.key: pvc for pvc in world.persistent_volume_claims}
        self.classes = {sc.name: sc for sc in world.storage_classes}
        self.csi_nodes = {csi.name: csi for csi in world.csi_nodes}

    def pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def write_pv(self, pv: PersistentVolume) -> None:
        """An API update: a new object of the next resource version replaces the stored one."""
        self._write(self.world.persistent_volumes, self.pvs, pv.name, pv)

    def write_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self._write(self.world.persistent_volume_claims, self.pvcs, pvc.key, pvc)

    @staticmethod
    def _write(stored: list, index: dict, key: str, obj) -> None:
        old = index.get(key)
        if old is None:
            return
        new = copy.deepcopy(obj)
        new.resource_version = old.resource_version + 1
        position = next(i for i, item in enumerate(stored) if item is old)
        stored[position] = index[key] = new


class AssumeCache(Generic[T]):
    """Assumed copies over API objects, each valid while the API object keeps the version it was made from."""

    def __init__(self, lookup: Callable[[str], T | None], key: Callable[[T], str]) -> None:
        self.lookup = lookup
        self.key = key
        self.assumed: dict[str, T] = {}

    def get_api(self, key: str) -> T | None:
        return self.lookup(key)

    def get(self, key: str) -> T | None:
        api = self.lookup(key)
        if api is None:
            return None
        assumed = self.assumed.get(key)
        return assumed if assumed is not None and assumed.resource_version == api.resource_version else api

    def listed(self, objects: list[T]) -> list[T]:
        """The API objects with each still-valid assumption in its place."""
        return [self.get(self.key(obj)) or obj for obj in objects]

    def assume(self, obj: T) -> None:
        key = self.key(obj)
        stored = self.lookup(key)
        if stored is None:
            raise AssumeError(f'"{key}" not found')
        if stored.resource_version != obj.resource_version:
            raise AssumeError(f'"{key}" is out of sync (stored: {stored.resource_version}, '
                              f"assume: {obj.resource_version})")
        self.assumed[key] = obj

    def restore(self, obj: T) -> None:
        key = self.key(obj)
        assumed = self.assumed.get(key)
        if assumed is not None and assumed.resource_version == obj.resource_version:
            del self.assumed[key]


class VolumeCaches:
    """The informer view and the binder's two assume caches (PVs by name, claims by namespace/name)."""

    def __init__(self, world: ClusterObjects) -> None:
        self.objects = VolumeObjects(world)
        self.pvs: AssumeCache[PersistentVolume] = AssumeCache(self.objects.pvs.get, lambda pv: pv.name)
        self.pvcs: AssumeCache[PersistentVolumeClaim] = AssumeCache(self.objects.pvcs.get, lambda pvc: pvc.key)

    def refresh(self) -> None:
        self.objects.refresh()
        self.pvs.lookup = self.objects.pvs.get
        self.pvcs.lookup = self.objects.pvcs.get

    def pvs_of_class(self, name: str) -> list[PersistentVolume]:
        """ListPVs: the PVs of a storage class, assumed ones as assumed (in the world's order, where upstream's
        index has none)."""
        return self.pvs.listed([pv for pv in self.objects.world.persistent_volumes if volume_class(pv) == name])


CSI_LIMIT_PREFIX = "attachable-volumes-csi-"
# Provisioners upstream's cache always ignores when counting CSI volumes (added to --ignored-provisioners).
DEFAULT_IGNORED_PROVISIONERS = frozenset({"rancher.io/local-path", "hostpath.csi.k8s.io"})
UNLIMITED_ATTACHABLE = 2**31 - 1  # DefaultAttachableVolumeQuantity: a driver without a count


def csi_limit_resource(driver: str) -> str:
    """The node resource standing for a CSI driver's volume limit."""
    return CSI_LIMIT_PREFIX + driver.replace("/", "-")


class ClaimNotForPod(Exception):
    """An ephemeral volume's claim controlled by something else than the pod (VolumeIsForPod)."""


def pod_csi_volumes(objects: VolumeObjects, pod: Pod, ignored: frozenset[str]) -> dict[str, int]:
    """getPodCSIVolumes: how many of the pod's claims each CSI driver serves, by limit resource. A claim not
    found yet (an ephemeral volume's included: "<pod>-<volume>") counts nothing for the whole pod (upstream
    adds the task without its volumes and resyncs); an ephemeral volume's claim the pod does not control
    raises ClaimNotForPod (upstream's addPod fails: the pod is not in the cache)."""
    counts: dict[str, int] = {}
    for volume in pod.volumes:
        pvc = objects.pvc(pod.namespace, volume_claim_name(pod, volume))
        if pvc is None:
            return {}
        if volume.ephemeral and (problem := volume_is_for_pod(pod, pvc)):
            raise ClaimNotForPod(problem)
        driver = claim_csi_driver(objects, pvc)
        if driver and driver not in ignored:
            resource = csi_limit_resource(driver)
            counts[resource] = counts.get(resource, 0) + 1
    return counts


def claim_csi_driver(objects: VolumeObjects, pvc: PersistentVolumeClaim) -> str:
    """The cache's getCSIDriverInfo: the bound PV's CSI driver ("" for another source), else the class's
    csi-driver-name parameter or provisioner."""
    pv = objects.pv(pvc.volume_name) if pvc.volume_name else None
    if pv is not None:
        return pv.csi_driver
    name = claim_class(pvc)
    sc = objects.storage_class(name) if name else None
    if sc is None:
        return ""
    return sc.parameters.get(CSI_DRIVER_NAME_PARAMETER, sc.provisioner)


def csi_node_resources(csi_node: CSINode | None) -> dict[str, Quantity]:
    """setCSIResourceOnNode: each driver's count as an allocatable resource (milli-scaled, as the task's
    request is), a driver without a count as practically unlimited."""
    if csi_node is None:
        return {}
    out = {}
    for driver in csi_node.drivers:
        count = driver.allocatable_count if driver.allocatable_count is not None else UNLIMITED_ATTACHABLE
        out[csi_limit_resource(driver.name)] = Quantity(Fraction(count, 1000))
    return out
