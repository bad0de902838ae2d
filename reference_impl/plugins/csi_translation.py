"""In-tree volume sources seen through CSI migration, as the scheduler's volume plugins use the CSI translation
library (k8s.io/csi-translation-lib v0.36.1: translate.go, plugins/*.go) and decide whether a plugin's
migration is on (kubernetes v1.36.1 nodevolumelimits/utils.go isCSIMigrationOn, volumebinding/binder.go
isCSIMigrationOnForPlugin and isPluginMigratedToCSIOnNode).

The library knows seven in-tree plugins. Five have their migration on for both plugins (AWS EBS, GCE PD,
Azure Disk, Cinder, Portworx); Azure File and vSphere are migratable (an inline volume of theirs still makes
NodeVolumeLimits' PreFilter run) but never translated by the scheduler.

Only what the scheduler reads of a translation is modelled: the CSI driver, the volume handle, the errors
a translation can raise, and (VolumeBinding) the PV's node affinity with its zone key turned into the
driver's topology key. Access modes, fsType, partition, read-only and the volume attributes never reach a
filter and are left out.
"""

from __future__ import annotations

import copy
import re

from schedcheck.reference.k8s import (
    CSINode,
    InTreeVolumeSource,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
)
from schedcheck.reference.util.cel.libs.url import parse_url

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
CINDER = "kubernetes.io/cinder"
PORTWORX = "kubernetes.io/portworx-volume"
AZURE_FILE = "kubernetes.io/azure-file"
VSPHERE = "kubernetes.io/vsphere-volume"

# in-tree plugin -> the CSI driver it migrates to
CSI_DRIVERS = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    PORTWORX: "pxd.portworx.com",
    AZURE_FILE: "file.csi.azure.com",
    VSPHERE: "csi.vsphere.vmware.com",
}
# the plugins whose migration the scheduler treats as on (both plugins list the same five)
MIGRATION_ON = frozenset({AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX})
# the volume source field of each plugin, as a pod's spec.volumes[] entry or a PV's spec names it
SOURCE_FIELDS = {
    "awsElasticBlockStore": AWS_EBS,
    "gcePersistentDisk": GCE_PD,
    "azureDisk": AZURE_DISK,
    "cinder": CINDER,
    "portworxVolume": PORTWORX,
    "azureFile": AZURE_FILE,
    "vsphereVolume": VSPHERE,
}
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
AZURE_MANAGED = "Managed"
UNSPECIFIED = "UNSPECIFIED"
_GCE_ZONAL = "projects/{}/zones/{}/disks/{}"
_GCE_REGIONAL = "projects/{}/regions/{}/disks/{}"
# the CSI topology key each translator moves the PV's zone to (Azure Disk and Portworx leave it alone)
TOPOLOGY_KEYS = {AWS_EBS: "topology.ebs.csi.aws.com/zone", GCE_PD: "topology.gke.io/zone",
                 CINDER: "topology.cinder.csi.openstack.org/zone"}
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_MULTI_ZONE_DELIMITER = "__"


class TranslationError(Exception):
    """The translator refused the source (its message is upstream's)."""


def limits_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """NodeVolumeLimits' isCSIMigrationOn: one of the five plugins, on a node with a CSINode (its
    migrated-plugins annotation is not consulted)."""
    return csi_node is not None and plugin in MIGRATION_ON


def migrated_on_node(csi_node: CSINode | None, plugin: str) -> bool:
    """VolumeBinding: the plugin's migration is on and the node's CSINode lists it in the migrated-plugins
    annotation (comma separated, taken as written)."""
    if plugin not in MIGRATION_ON or csi_node is None:
        return False
    listed = csi_node.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return bool(listed) and plugin in listed.split(",")


# -- volume handles ------------------------------------------------------------------------------


def inline_handle(source: InTreeVolumeSource) -> str:
    """TranslateInTreeInlineVolumeToCSI's volume handle for a pod's inline volume."""
    if source.plugin == AWS_EBS:
        return _ebs_volume_id(source.volume_id)
    if source.plugin == GCE_PD:
        return _GCE_ZONAL.format(UNSPECIFIED, UNSPECIFIED, source.volume_id)
    if source.plugin == AZURE_DISK:
        _check_azure_kind(source)
    return source.volume_id


def pv_handle(pv: PersistentVolume) -> str:
    """TranslateInTreePVToCSI's volume handle for a PV with an in-tree source; a GCE PD's depends on the PV's
    zone label (the beta key first), a multi-zone one naming the zones' region."""
    source = pv.in_tree
    assert source is not None
    if source.plugin == AWS_EBS:
        return _ebs_volume_id(source.volume_id)
    if source.plugin == GCE_PD:
        zones = (pv.labels.get(_BETA_ZONE) or pv.labels.get(_ZONE) or "").split(_MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return _GCE_ZONAL.format(UNSPECIFIED, zones[0], source.volume_id)
        if len(zones) > 1:
            try:
                region = _gce_region(zones)
            except TranslationError as err:
                raise TranslationError(f"failed to get region from zones: {err}") from None
            return _GCE_REGIONAL.format(UNSPECIFIED, region, source.volume_id)
        return _GCE_ZONAL.format(UNSPECIFIED, UNSPECIFIED, source.volume_id)
    if source.plugin == AZURE_DISK:
        _check_azure_kind(source)
    return source.volume_id


def _check_azure_kind(source: InTreeVolumeSource) -> None:
    if source.kind and source.kind.lower() != AZURE_MANAGED.lower():
        raise TranslationError(f"kind({source.kind}) is not supported in csi migration")


def _gce_region(zones: list[str]) -> str:
    """gceGetRegionFromZones: every zone <locale>-<region>-<zone>, all in one region."""
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError("zone in unexpected format, expected: {locale}-{region}-{zone}, "
                                   f"got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        shown = " ".join(f"{r}:{{}}" for r in sorted(regions))
        raise TranslationError(f"multiple or no regions gotten from zones, got: map[{shown}]")
    return regions.pop()


_AWS_PREFIX = "aws://"


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: an id without the aws:// prefix is taken as it is; one with it is parsed
    by Go's url.Parse (util/cel/libs/url.py, the port the CEL url library uses) and its path, stripped of
    slashes, must be vol-<anything without a slash>. A byte of the path that is not valid UTF-8 stays a byte
    (a surrogate escape), as in Go's string."""
    if not kubernetes_id.startswith(_AWS_PREFIX):
        return kubernetes_id
    parsed = parse_url(kubernetes_id)
    if isinstance(parsed, str):
        raise _ebs_error(f"Invalid disk name ({kubernetes_id}): {parsed}")
    if parsed.scheme != "aws":
        raise _ebs_error(f"Invalid scheme for AWS volume ({kubernetes_id})")
    aws_id = parsed.path.strip("/")
    if re.fullmatch(r"vol-[^/]*", aws_id, flags=re.DOTALL) is None:
        raise _ebs_error(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _ebs_error(message: str) -> TranslationError:
    return TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {message}")


# -- VolumeBinding: the translated PV's node affinity ----------------------------------------------------


def translated_pv(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    """tryTranslatePVToCSI: `pv` itself unless it has an in-tree source whose migration is on and the node's
    CSINode lists that plugin as migrated; then a copy with the CSI source and the node affinity the
    translator writes (raising TranslationError as upstream's translation would)."""
    source = pv.in_tree
    if source is None or not migrated_on_node(csi_node, source.plugin):
        return pv
    handle = pv_handle(pv)
    out = copy.deepcopy(pv)
    out.in_tree = None
    out.csi_driver, out.csi_volume_handle = CSI_DRIVERS[source.plugin], handle
    key = TOPOLOGY_KEYS.get(source.plugin)
    if key is not None:
        _translate_topology(out, key)
    return out


def _translate_topology(pv: PersistentVolume, csi_key: str) -> None:
    """translateTopologyFromInTreeToCSI: the zone key of the node affinity becomes the CSI key; without one,
    the zone label's zones are added to every term under the CSI key; a beta region key becomes the GA one."""
    zone_key, region_key = _topology_labels(pv)
    if _values(pv, zone_key):
        _replace_key(pv, zone_key, csi_key)
    elif zone_key in pv.labels:
        _add_topology(pv, csi_key, pv.labels[zone_key].split(_MULTI_ZONE_DELIMITER))
    if region_key == _BETA_REGION and _values(pv, region_key):
        _replace_key(pv, region_key, _REGION)


def _topology_labels(pv: PersistentVolume) -> tuple[str, str]:
    """getTopologyLabel: GA keys if the node affinity names the GA zone, else beta if it names the beta zone,
    else by the labels (GA first), else GA."""
    if _has_key(pv, _ZONE):
        return _ZONE, _REGION
    if _has_key(pv, _BETA_ZONE):
        return _BETA_ZONE, _BETA_REGION
    if _ZONE in pv.labels:
        return _ZONE, _REGION
    if _BETA_ZONE in pv.labels:
        return _BETA_ZONE, _BETA_REGION
    return _ZONE, _REGION


def _requirements(pv: PersistentVolume) -> list[NodeSelectorRequirement]:
    return [r for term in pv.node_affinity or [] for r in term.match_expressions]


def _has_key(pv: PersistentVolume, key: str) -> bool:
    return any(r.key == key for r in _requirements(pv))


def _values(pv: PersistentVolume, key: str) -> list[str]:
    return sorted({v for r in _requirements(pv) if r.key == key for v in r.values})


def _replace_key(pv: PersistentVolume, old: str, new: str) -> None:
    for requirement in _requirements(pv):
        if requirement.key == old:
            requirement.key = new


def _add_topology(pv: PersistentVolume, key: str, zones: list[str]) -> None:
    """addTopology: the trimmed, non-empty zones (sorted) as an In requirement on every term (one new term when
    there is none); no zone left: nothing changes (upstream drops that error)."""
    kept = sorted({zone.strip() for zone in zones if zone.strip()})
    if not kept:
        return
    if not pv.node_affinity:
        pv.node_affinity = [NodeSelectorTerm()]
    for term in pv.node_affinity:
        term.match_expressions.append(NodeSelectorRequirement(key, "In", list(kept)))
