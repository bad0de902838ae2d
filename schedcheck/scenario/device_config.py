"""Read the v1 ConfigMap kind (deviceshare's device config, reference_impl/api/devices/config.py) and warn
about what of it the scheduler does not read; objects.py registers the reader and schema.

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
from schedcheck.reference.api.devices.config import DATA_KEY, DeviceConfigError, parse_device_config, unread_keys
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
    """ConfigMaps the conf does not name and unread keys of the one it does. A card registered as mps, or as mig
    with no geometry for its type, is read as hami-core without a warning: upstream does the same, silently,
    and the generators draw both (README, the device config)."""
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
            continue  # upstream's default device config, as the reference's (the generators draw this too)
        unread = unread_keys(cm.data[DATA_KEY])
        if unread:
            warnings.append(f"{where}: data.{DATA_KEY}: keys not read by the scheduler: {', '.join(unread)}")
