"""Read the v1 ConfigMap kind (deviceshare's device config, reference_impl/api/devices/config.py) and warn
about the vGPU fields whose reading depends on that config; objects.py registers the reader and schema.

Read: metadata.name, metadata.namespace, data (string values). A ConfigMap's `data.device-config.yaml` is
decoded as upstream decodes it (a malformed value is a one-line error naming the field under
`data.device-config.yaml`, where upstream would fall back to its default config); a key of that document
the Config type lacks is a warning. Which ConfigMap the scheduler reads is the conf's business
(`deviceshare.KnownGeometriesCMName` / `-Namespace`): any other ConfigMap is warned about as not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.api.devices import mig, vgpu
from schedcheck.reference.api.devices.config import DATA_KEY, DeviceConfigError, load_device_config, \
    parse_device_config, unread_keys, VOLCANO_VGPU_REGISTER
from schedcheck.scenario.fields import Fields

API_VERSION = "v1"
LEAF = None
_META_KEYS = ["name", "namespace", "uid", "labels", "annotations", "creationTimestamp", "resourceVersion",
              "generation", "managedFields", "selfLink", "ownerReferences", "finalizers", "generateName"]
SCHEMAS: dict[str, Any] = {"ConfigMap": {"metadata": dict.fromkeys(_META_KEYS), "data": LEAF}}


def read_config_map(f: Fields, doc: Mapping[str, Any], name: str, namespace: str, _uid: str,
                    out: k8s.ClusterObjects) -> None:
    data = f.str_map(doc.get("data"), "data")
    if DATA_KEY in data:
        try:
            parse_device_config(data[DATA_KEY], f"{namespace}/{name}")
        except DeviceConfigError as exc:
            f.fail(exc.field, exc.reason)
    out.config_maps.append(k8s.ConfigMap(name, namespace, data))


def config_map_document(cm: k8s.ConfigMap) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "ConfigMap", "metadata": {"name": cm.name, "namespace": cm.namespace},
            "data": dict(cm.data)}


def config_map_warnings(objects: k8s.ClusterObjects, conf, warnings: list[str]) -> None:
    """ConfigMaps the conf does not name, unread keys of the one it does, and register annotations whose
    mode the config turns into another (mig without a known geometry, mps)."""
    from schedcheck.reference.plugins.deviceshare import device_flags

    flags = device_flags(conf) if conf is not None else None
    chosen = (flags.cm_namespace, flags.cm_name) if flags is not None and flags.any else None
    for cm in objects.config_maps:
        where = f"ConfigMap {cm.namespace}/{cm.name}"
        if (cm.namespace, cm.name) != chosen:
            warnings.append(f"{where}: not read (the scheduler reads a ConfigMap only as deviceshare's device config, "
                            + (f"here {chosen[0]}/{chosen[1]})" if chosen else "and the conf enables no device)"))
            continue
        if DATA_KEY not in cm.data:
            warnings.append(f"{where}: no data.{DATA_KEY}: upstream uses its default device config")
            continue
        unread = unread_keys(cm.data[DATA_KEY])
        if unread:
            warnings.append(f"{where}: data.{DATA_KEY}: keys not read by the scheduler: {', '.join(unread)}")
    if flags is None or not flags.vgpu:
        return
    cfg = load_device_config(objects.config_maps, flags.cm_name, flags.cm_namespace).nvidia
    for node in objects.nodes:
        value = node.annotations.get(VOLCANO_VGPU_REGISTER)
        if value is None or vgpu.decode_node_devices(value) is None:
            continue
        field = f"Node {node.name}: metadata.annotations.{VOLCANO_VGPU_REGISTER}"
        entries = [e.split(",") for e in value.split(":") if e.count(",") >= 5]
        if any(e[5] == "mps" for e in entries):
            warnings.append(f"{field}: mode mps is read as hami-core (upstream registers no MPS sharing), so a pod "
                            "asking volcano.sh/vgpu-mode: mps fits no node")
        unknown = sorted({e[3] for e in entries if e[5] == mig.MIG and mig.geometry_for_type(e[3], cfg) is None})
        if unknown:
            warnings.append(f"{field}: mig card type {', '.join(unknown)} matches no nvidia.knownMigGeometries model "
                            "of the device config: upstream falls back to hami-core for it")
