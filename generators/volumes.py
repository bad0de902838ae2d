"""What the volume filters read: StorageClasses, PersistentVolumes, PersistentVolumeClaims and CSINodes.

Drawn rarely, after every other draw of a scenario (so that the draws of earlier samples stay put). One
CSI driver (`disk.csi.example.com`) whose CSINode on some nodes allows a small number of attached volumes
(NodeVolumeLimits); some running pods on those nodes already hold a bound claim of that driver, within the
limit (they count against it); some pending pods ask for one claim each, of one of four kinds:

- bound to a CSI volume of the driver with no node affinity (counted by NodeVolumeLimits only);
- bound to a local volume pinned to one node (VolumeBinding's node affinity);
- unbound, of a WaitForFirstConsumer class that allows some zones (provisioned where the pod lands);
- unbound, of an Immediate class (the pod waits until the claim is bound: never, here).

Claims are one per pod and ReadWriteOnce, so no two pods contend for one. Shrinks to no volumes at all.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice, rarely, sometimes
from schedcheck.generators.vocabulary import ZONES, ZONE_LABEL

DRIVER = "disk.csi.example.com"
HOSTNAME = "kubernetes.io/hostname"
CLASSES = ("csi-disk", "local", "zonal", "immediate")


def _class_docs(zones: list[str]) -> list[dict[str, Any]]:
    meta = lambda name: {"name": name}  # noqa: E731
    return [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta("csi-disk"),
         "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta("local"),
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta("zonal"),
         "provisioner": DRIVER, "volumeBindingMode": "WaitForFirstConsumer",
         "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE_LABEL, "values": zones}]}]},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta("immediate"),
         "provisioner": DRIVER, "volumeBindingMode": "Immediate"},
    ]


def _claim(namespace: str, name: str, storage_class: str, volume: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                            "resources": {"requests": {"storage": "10Gi"}}}
    if volume is not None:
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": "Bound" if volume is not None else "Pending"}}


def _volume(name: str, claim: dict[str, Any], storage_class: str, node: str | None) -> dict[str, Any]:
    meta = claim["metadata"]
    spec: dict[str, Any] = {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                            "storageClassName": storage_class,
                            "claimRef": {"namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}}
    if node is None:
        spec["csi"] = {"driver": DRIVER, "volumeHandle": f"handle-{name}"}
    else:
        spec["local"] = {"path": f"/mnt/disks/{name}"}
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
            "status": {"phase": "Bound"}}


def _mount(pod: dict[str, Any], claim_name: str) -> None:
    spec = pod["spec"] = dict(pod["spec"])  # drafts may share their parts between pods: change copies
    spec["volumes"] = [*(spec.get("volumes") or []), {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]
    first = dict(spec["containers"][0])
    first["volumeMounts"] = [*(first.get("volumeMounts") or []), {"name": "data", "mountPath": "/data"}]
    spec["containers"] = [first, *spec["containers"][1:]]


def apply_volumes(draw: st.DrawFn, node_docs: list[dict[str, Any]], job_docs: list[dict[str, Any]],
                  percent: int = 8) -> list[dict[str, Any]]:
    """Rarely (`percent`%), the volume objects of a scenario, with some of its pods mounting a claim (the
    pods change in place); else nothing, and no further draws."""
    if not node_docs or not draw(rarely(percent)):
        return []
    names = tuple(n["metadata"]["name"] for n in node_docs)
    zones = sorted({z for z in (n["metadata"].get("labels", {}).get(ZONE_LABEL) for n in node_docs) if z})
    allowed = zones[: draw(st.integers(1, len(zones)))] if zones else [ZONES[0]]
    docs: list[dict[str, Any]] = _class_docs(allowed)
    room: dict[str, int] = {}  # node -> CSI volumes it can still attach
    for position, name in enumerate(names):
        if not position or draw(sometimes(70)):  # some node attaches the driver's volumes (else a warning)
            room[name] = draw(st.integers(1, 3))
            docs.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
                         "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": room[name]}}]}})
    pods = [d for d in job_docs if d["kind"] == "Pod" and not d["metadata"].get("deletionTimestamp")
            and not d["spec"].get("volumes")]
    for index, pod in enumerate(pods):
        meta, spec = pod["metadata"], pod["spec"]
        # a running pod holds a volume only where its node can attach one (else the node is out of sync)
        running = spec.get("nodeName") and pod.get("status", {}).get("phase") == "Running" \
            and room.get(spec["nodeName"], 0) > 0
        pending = not spec.get("nodeName") and pod.get("status", {}).get("phase", "Pending") == "Pending"
        if not (running or pending) or not draw(sometimes(35)):
            continue
        claim_name, volume_name = f"data-{index}", f"pv-{index}"
        kind = "csi-disk" if running else draw(choice(CLASSES))
        if running:
            room[spec["nodeName"]] -= 1
        if kind in ("csi-disk", "local"):
            node = draw(choice(names)) if kind == "local" else None
            claim = _claim(meta["namespace"], claim_name, kind, volume_name)
            docs += [claim, _volume(volume_name, claim, kind, node)]
        else:
            docs.append(_claim(meta["namespace"], claim_name, kind, None))
        _mount(pod, claim_name)
    return docs
