"""In-tree volume sources (a pod's spec.volumes[] entry or a PersistentVolume's spec) that CSI migration can
translate: what NodeVolumeLimits and VolumeBinding read of them (reference_impl/plugins/csi_translation.py),
checked as the API server validates them (k8s v1.36.1 pkg/apis/core/validation: a volume has one source, the
disk's id is required, partition 0-255, azureDisk's kind and cachingMode among the supported values and its
diskURI in the form its kind wants) and defaulted as it defaults them (azureDisk.kind Shared)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.plugins.csi_translation import AZURE_DISK, SOURCE_FIELDS
from schedcheck.scenario.fields import Fields

LEAF = None
# the fields of each source; the id the translator reads is the first
_ID_FIELDS = {
    "awsElasticBlockStore": "volumeID",
    "gcePersistentDisk": "pdName",
    "azureDisk": "diskURI",
    "cinder": "volumeID",
    "portworxVolume": "volumeID",
    "azureFile": "shareName",
    "vsphereVolume": "volumePath",
}
SCHEMAS: dict[str, Any] = {
    "awsElasticBlockStore": dict.fromkeys(["volumeID", "fsType", "partition", "readOnly"]),
    "gcePersistentDisk": dict.fromkeys(["pdName", "fsType", "partition", "readOnly"]),
    "azureDisk": dict.fromkeys(["diskName", "diskURI", "cachingMode", "fsType", "readOnly", "kind"]),
    "cinder": {**dict.fromkeys(["volumeID", "fsType", "readOnly"]), "secretRef": LEAF},
    "portworxVolume": dict.fromkeys(["volumeID", "fsType", "readOnly"]),
    "azureFile": dict.fromkeys(["secretName", "shareName", "readOnly", "secretNamespace"]),
    "vsphereVolume": dict.fromkeys(["volumePath", "fsType", "storagePolicyName", "storagePolicyID"]),
}
_AZURE_KINDS = {"Shared", "Dedicated", "Managed"}
_AZURE_CACHING = {"None", "ReadOnly", "ReadWrite"}


def read_in_tree(f: Fields, doc: Mapping[str, Any], prefix: str, other_sources: list[str]) -> k8s.InTreeVolumeSource | None:
    """The in-tree source of a volume (`prefix` is its field path: "spec.volumes[0]" or "spec"), None when it has
    none. `other_sources` are the volume's other source fields: one of them set as well is an error."""
    present = [name for name in SOURCE_FIELDS if doc.get(name) is not None]
    if not present:
        return None
    name = present[0]
    field = f"{prefix}.{name}" if prefix else name
    others = [o for o in [*present[1:], *other_sources] if doc.get(o) is not None]
    if others:
        f.fail(field, f"a volume has one source: {others[0]} is set as well")
    source = f.mapping(doc[name], field)
    volume_id = f.string(source.get(_ID_FIELDS[name]), f"{field}.{_ID_FIELDS[name]}", required=True)
    if "readOnly" in source:
        f.boolean(source.get("readOnly"), f"{field}.readOnly")
    for text in ("fsType", "diskName", "secretName", "secretNamespace", "storagePolicyName", "storagePolicyID"):
        if text in source:
            f.string(source.get(text), f"{field}.{text}")
    if name in ("awsElasticBlockStore", "gcePersistentDisk"):
        partition = f.integer(source.get("partition"), f"{field}.partition", default=0, minimum=0)
        if partition > 255:
            f.fail(f"{field}.partition", f"must be at most 255, got {partition}")
    if name == "azureFile":
        f.string(source.get("secretName"), f"{field}.secretName", required=True)
    kind = ""
    if SOURCE_FIELDS[name] == AZURE_DISK:
        kind = _azure_disk(f, source, field, volume_id)
    return k8s.InTreeVolumeSource(SOURCE_FIELDS[name], volume_id, kind)


def _azure_disk(f: Fields, source: Mapping[str, Any], field: str, uri: str) -> str:
    f.string(source.get("diskName"), f"{field}.diskName", required=True)
    f.choice(source.get("cachingMode"), f"{field}.cachingMode", _AZURE_CACHING, default="ReadWrite")
    kind = f.choice(source.get("kind"), f"{field}.kind", _AZURE_KINDS, default="Shared")
    wanted = "/subscriptions/" if kind == "Managed" else "https://"
    if not uri.startswith(wanted):
        f.fail(f"{field}.diskURI", f"a {kind} disk's URI starts with {wanted}, got {uri!r}")
    return kind


def in_tree_document(source: k8s.InTreeVolumeSource) -> dict[str, Any]:
    """The source as the API writes it (for dumps): its field and the fields the reader needs."""
    name = next(n for n, plugin in SOURCE_FIELDS.items() if plugin == source.plugin)
    body: dict[str, Any] = {_ID_FIELDS[name]: source.volume_id}
    if name == "azureDisk":
        body.update(diskName=source.volume_id.rstrip("/").rsplit("/", 1)[-1] or "disk", kind=source.kind or "Shared")
    if name == "azureFile":
        body["secretName"] = "azure-secret"
    return {name: body}
