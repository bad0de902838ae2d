"""What dynamic resource allocation reads: a DeviceClass, ResourceSlices and ResourceClaims.

Drawn rarely, after every other draw of a scenario (so that the draws of earlier samples stay put). One
driver (`gpu.example.com`) and its DeviceClass (a CEL selector on the driver); some nodes publish a slice of
1 to 3 devices, each with a `model` attribute (`a100` or `t4`); some pending pods ask, in their first
container, for a claim of their own: one device (rarely two), sometimes of one model (a CEL selector).
Devices taken by a claim at one session's bind are seen as allocated in the next. Then, each rarely and after
the draws above: a node's devices as partitions of one GPU whose memory counter they consume (partitionable
devices); claims asking with adminAccess; a DeviceTaintRule tainting one node's pool (without effect at 1.36's
defaults, as upstream); the class naming the extended resource `example.com/gpu`, with some nodes without
devices advertising it and some pending pods without claims asking for it (Volcano never backs it with
devices). Shrinks to no DRA at all.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice, rarely, sometimes

DRIVER = "gpu.example.com"
MODELS = ("a100", "t4")
EXTENDED_RESOURCE = "example.com/gpu"
TAINT_EFFECTS = ("NoSchedule", "None", "NoExecute")


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
    _admin_access(draw, docs)
    _taint_rule(draw, docs)
    _extended_resource(draw, docs, node_docs, pending)
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


def _admin_access(draw: st.DrawFn, docs: list[dict[str, Any]]) -> None:
    """Rarely, some claims ask with adminAccess (they may take devices other claims hold)."""
    claims = [d for d in docs if d["kind"] == "ResourceClaim"]
    if not claims or not draw(rarely(15)):
        return
    for claim in claims:
        if draw(sometimes(50)):
            claim["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True


def _taint_rule(draw: st.DrawFn, docs: list[dict[str, Any]]) -> None:
    """Rarely, a DeviceTaintRule on one slice's pool (read, without effect: DRADeviceTaintRules is off)."""
    pools = [d["spec"]["pool"]["name"] for d in docs if d["kind"] == "ResourceSlice"]
    if not pools or not draw(rarely(10)):
        return
    docs.append({"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "taint-0"},
                 "spec": {"deviceSelector": {"driver": DRIVER, "pool": draw(choice(tuple(pools)))},
                          "taint": {"key": "example.com/broken", "effect": draw(choice(TAINT_EFFECTS))}}})


def _extended_resource(draw: st.DrawFn, docs: list[dict[str, Any]], node_docs: list[dict[str, Any]],
                       pending: list[dict[str, Any]]) -> None:
    """Rarely, the class names example.com/gpu: nodes without a slice sometimes advertise 1 or 2, pending pods
    without a claim sometimes ask for 1 (in their first container's requests and limits)."""
    if not draw(rarely(10)):
        return
    docs[0]["spec"]["extendedResourceName"] = EXTENDED_RESOURCE
    with_slices = {d["spec"]["nodeName"] for d in docs if d["kind"] == "ResourceSlice"}
    for node in node_docs:
        if node["metadata"]["name"] in with_slices or not draw(sometimes(50)):
            continue
        status = node["status"] = dict(node.get("status") or {})
        status["allocatable"] = {**(status.get("allocatable") or {}), EXTENDED_RESOURCE: str(draw(st.integers(1, 2)))}
        if status.get("capacity"):
            status["capacity"] = {**status["capacity"], EXTENDED_RESOURCE: status["allocatable"][EXTENDED_RESOURCE]}
    for pod in pending:
        if pod["spec"].get("resourceClaims") or not draw(sometimes(30)):
            continue
        spec = pod["spec"] = dict(pod["spec"])
        first = dict(spec["containers"][0])
        resources = dict(first.get("resources") or {})
        resources["requests"] = {**(resources.get("requests") or {}), EXTENDED_RESOURCE: "1"}
        resources["limits"] = {**(resources.get("limits") or {}), EXTENDED_RESOURCE: "1"}
        first["resources"] = resources
        spec["containers"] = [first, *spec["containers"][1:]]
