"""What dynamic resource allocation reads: a DeviceClass, ResourceSlices and ResourceClaims.

Drawn rarely, after every other draw of a scenario (so that the draws of earlier samples stay put). One
driver (`gpu.example.com`) and its DeviceClass (a CEL selector on the driver); some nodes publish a slice of
1 to 3 devices, each with a `model` attribute (`a100` or `t4`); some pending pods ask, in their first
container, for a claim of their own: one device (rarely two), sometimes of one model (a CEL selector).
Devices taken by a claim at one session's bind are seen as allocated in the next. Rarely, last, a node's devices
are partitions of one GPU whose memory counter they consume (partitionable devices). Shrinks to no DRA at all.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice, rarely, sometimes

DRIVER = "gpu.example.com"
MODELS = ("a100", "t4")


def apply_dra(draw: st.DrawFn, node_docs: list[dict[str, Any]], job_docs: list[dict[str, Any]],
              percent: int = 8) -> list[dict[str, Any]]:
    """Rarely (`percent`%), the DRA objects of a scenario, with some pending pods asking for a claim (the pods
    change in place); else nothing, and no further draws."""
    if not node_docs or not draw(rarely(percent)):
        return []
    docs: list[dict[str, Any]] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}]
    for node in node_docs:
        name = node["metadata"]["name"]
        if not draw(sometimes(60)):
            continue
        devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": draw(choice(MODELS))}}}
                   for i in range(draw(st.integers(1, 3)))]
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": f"{name}-gpus"},
                     "spec": {"driver": DRIVER, "nodeName": name,
                              "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                              "devices": devices}})
    pending = [d for d in job_docs if d["kind"] == "Pod" and not d["spec"].get("nodeName")
               and d.get("status", {}).get("phase", "Pending") == "Pending"
               and not d["metadata"].get("deletionTimestamp") and not d["spec"].get("resourceClaims")]
    for index, pod in enumerate(pending):
        if not draw(sometimes(40)):
            continue
        meta = pod["metadata"]
        request: dict[str, Any] = {"deviceClassName": DRIVER, "count": 2 if draw(rarely(15)) else 1}
        if draw(sometimes(40)):
            model = draw(choice(MODELS))
            request["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "{model}"'}}]
        claim = f"gpu-{index}"
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": claim, "namespace": meta["namespace"]},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": request}]}}})
        spec = pod["spec"] = dict(pod["spec"])  # drafts may share their parts between pods: change copies
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        first = dict(spec["containers"][0])
        first["resources"] = {**(first.get("resources") or {}), "claims": [{"name": "gpu"}]}
        spec["containers"] = [first, *spec["containers"][1:]]
    docs += partition_slices(draw, docs)
    return docs


GPU_MEMORY_GI = (40, 80)
PARTITION_GI = (10, 20, 40)


def partition_slices(draw: st.DrawFn, docs: list[dict[str, Any]], percent: int = 20) -> list[dict[str, Any]]:
    """Rarely (`percent`% of the node slices, drawn after every other DRA draw), a node's GPUs become partitions
    of one physical GPU (partitionable devices): a second slice of the pool publishes counter set `gpu` (memory
    40Gi or 80Gi) and each device consumes 10, 20 or 40Gi of it. The slices change in place; the new counter
    slices are returned. Shrinks to no partitions."""
    added: list[dict[str, Any]] = []
    for doc in docs:
        if doc["kind"] != "ResourceSlice" or not draw(rarely(percent)):
            continue
        spec = doc["spec"]
        total = draw(choice(GPU_MEMORY_GI))
        spec["pool"] = {**spec["pool"], "resourceSliceCount": 2}
        spec["devices"] = [{**device, "consumesCounters": [
            {"counterSet": "gpu", "counters": {"memory": {"value": f"{draw(choice(PARTITION_GI))}Gi"}}}]}
            for device in spec["devices"]]
        added.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{doc['metadata']['name']}-counters"},
                      "spec": {"driver": spec["driver"], "nodeName": spec["nodeName"], "pool": dict(spec["pool"]),
                               "sharedCounters": [{"name": "gpu", "counters": {"memory": {"value": f"{total}Gi"}}}]}})
    return added
