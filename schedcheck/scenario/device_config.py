"""Read the v1 ConfigMap kind (deviceshare's device config, reference_impl/api/devices/config.py) and warn
about what of it the scheduler does not read; objects.py registers the reader and schema.

Read: metadata.name, metadata.namespace, data (string values). The `data.device-config.yaml` of the ConfigMap
deviceshare reads is decoded as upstream decodes it (yaml.v2): a document upstream refuses is a warning naming
the file, the ConfigMap and the first refused field under `data.device-config.yaml`, and the scheduler then
uses its default device config, as upstream does; a key of that document the Config type lacks is a warning. Which ConfigMap the scheduler reads is the conf's business
(`deviceshare.KnownGeometriesCMName` / `-Namespace`): any other ConfigMap is warned about as not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.api.devices.config import DATA_KEY, device_config_problem, unread_keys
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.fields import Fields

API_VERSION = "v1"
LEAF = None
_META_KEYS = ["name", "namespace", "uid", "labels", "annotations", "creationTimestamp", "resourceVersion",
              "generation", "managedFields", "selfLink", "ownerReferences", "finalizers", "generateName"]
SCHEMAS: dict[str, Any] = {"ConfigMap": {"metadata": dict.fromkeys(_META_KEYS), "data": LEAF}}


def read_config_map(f: Fields, doc: Mapping[str, Any], name: str, namespace: str, _uid: str,
                    out: k8s.ClusterObjects) -> None:
    data = f.str_map(doc.get("data"), "data")
    out.config_maps.append(k8s.ConfigMap(name, namespace, data))


def config_map_document(cm: k8s.ConfigMap) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "ConfigMap", "metadata": {"name": cm.name, "namespace": cm.namespace},
            "data": dict(cm.data)}


def config_map_warnings(objects: k8s.ClusterObjects, conf, warnings: list[str], source: str = "") -> None:
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
        problem = device_config_problem([cm], cm.name, cm.namespace)
        if problem is not None:
            warnings.append(f"{source + ': ' if source else ''}{where}: {problem.field}: {problem.reason} (upstream's "
                            "yaml.v2 refuses the document, keeps none of it and uses its default device config; "
                            "so does the reference)")
            continue
        unread = unread_keys(cm.data[DATA_KEY])
        if unread:
            warnings.append(f"{where}: data.{DATA_KEY}: keys not read by the scheduler: {', '.join(unread)}")
    _refuse_mig_positions_upstream_panics_on(objects, flags, source)
    _configured_ascend_kinds(objects, flags, warnings, source)


def _config_or_none(objects: k8s.ClusterObjects, flags):
    """The device config the flags name (upstream's default when the ConfigMap's document is refused)."""
    from schedcheck.reference.api.devices.config import load_device_config

    return load_device_config(objects.config_maps, flags.cm_name, flags.cm_namespace)


def _configured_ascend_kinds(objects: k8s.ClusterObjects, flags, warnings: list[str], source: str) -> None:
    """The registrations of the HAMi Ascend kinds the device ConfigMap configures beyond the default's
    (device_warnings checks the default kind's): the same warnings and refusals, an Ascend910 kind's
    NetworkIDs included."""
    from schedcheck.reference.api.devices import ascend_hami
    from schedcheck.scenario.device_warnings import ascend_register_word

    if flags is None or not flags.ascend_hami or (config := _config_or_none(objects, flags)) is None:
        return
    words = [w for w in ascend_hami.common_words(config) if w not in ascend_hami.common_words()]
    for node in objects.nodes:
        for word in dict.fromkeys(words):
            ascend_register_word(node, word, warnings, source)


def _refuse_mig_positions_upstream_panics_on(objects: k8s.ClusterObjects, flags, source: str) -> None:
    """A placed pod's MIG instance id whose position lies beyond its group's instances: upstream's scheduler
    panics adding the pod to its node (mig.go addMigUsed indexes the group's instances with -1), so such
    input is refused in one line rather than run (the scheduler itself only writes positions that exist)."""
    import dataclasses

    from schedcheck.reference.api.devices import mig, node_devices, vgpu
    from schedcheck.reference.api.devices.base import VGPU_DEVICE

    if flags is None or not flags.vgpu or (config := _config_or_none(objects, flags)) is None:
        return
    flags = dataclasses.replace(flags, config=config)
    nodes = {node.name: node for node in objects.nodes}
    for pod in objects.pods:
        ids = pod.annotations.get(vgpu.ASSIGNED_IDS)
        node = nodes.get(pod.node_name or "")
        if not ids or node is None:
            continue
        pool = node_devices(node, flags).get(VGPU_DEVICE)
        if pool is None or pool.mode != mig.MIG:
            continue
        for container in vgpu.decode_pod_devices(ids):
            for uuid, *_ in container:
                dev, decoded = pool._match(uuid), mig.decode_mig_id(uuid)
                if dev is None or decoded is None:
                    continue
                group = next((g for g in dev.mig_template if g.group == decoded[0]), None)
                if group is not None and mig.find_position(group, decoded[1])[0] < 0:
                    raise ScenarioError(source, f"Pod {pod.key}", f"metadata.annotations.{vgpu.ASSIGNED_IDS}",
                                        f"MIG instance {uuid}: position {decoded[1]} lies beyond the instances of "
                                        f"group {decoded[0]} (upstream's scheduler panics adding the pod: mig.go "
                                        "addMigUsed)")
