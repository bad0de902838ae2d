"""What dynamic resource allocation reads: a DeviceClass, ResourceSlices and ResourceClaims.

Drawn rarely, after every other draw of a scenario (so that the draws of earlier samples stay put). One
driver (`gpu.example.com`) and its DeviceClass (a CEL selector on the driver); some nodes publish a slice of
1 to 3 devices, each with a `model` attribute (`a100` or `t4`) and the `driverVersion` (a version) that
goes with the model; some pending pods ask, in their first container, for a claim of their own: one device
(rarely two), sometimes of one model (a CEL selector; rarely a richer one: semver, string functions, a
macro, the ternary, each as true of that model's devices as the plain equality).
Devices taken by a claim at one session's bind are seen as allocated in the next. Then, each rarely and after
the draws above: a node's devices as partitions of one GPU whose memory counter they consume (partitionable
devices); claims asking with adminAccess. Shrinks to no DRA at all. Not drawn: DeviceTaintRules and DeviceClass
extended resources, which change nothing at 1.36's defaults in Volcano and load with a warning saying so
(their hand-derived scenarios show them).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice, rarely, sometimes

DRIVER = "gpu.example.com"
MODELS = ("a100", "t4")
VERSIONS = {"a100": "2.1.0", "t4": "2.0.0-rc.1"}  # a prerelease of 2.0.0 is below 2.0.0
RICHER = (  # each holds for exactly the devices of {model}
    'device.attributes["{d}"].driverVersion.isGreaterThan(semver("2.0.0")) == ("{model}" == "a100")',
    'device.attributes["{d}"].model.upperAscii().startsWith("{upper}") && has(device.attributes["{d}"].model)',
    '["{model}"].exists(m, m == device.attributes["{d}"].model)',
    'device.attributes["{d}"].model.size() == {size} ? device.attributes["{d}"].model.matches("^{model}$") : false',
)


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
        models = [draw(choice(MODELS)) for _ in range(draw(st.integers(1, 3)))]
        devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": model},
                                                      "driverVersion": {"version": VERSIONS[model]}}}
                   for i, model in enumerate(models)]
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
            expression = f'device.attributes["{DRIVER}"].model == "{model}"'
            if draw(rarely(20)):
                expression = draw(choice(RICHER)).format(d=DRIVER, model=model, upper=model.upper(), size=len(model))
            request["selectors"] = [{"cel": {"expression": expression}}]
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


CAPACITY_DIMENSION = "memory"  # the one consumable-capacity dimension drawn
SHARED_CAPACITY = ("16Gi", "40Gi")
CLAIM_CAPACITY = ("4Gi", "6Gi", "10Gi")
QUEUE_COUNT = (1, 2, 4)
QUEUE_CAPACITY = ("8Gi", "12Gi", "32Gi")


def _capacity_enabled(conf: dict[str, Any]) -> bool:
    return any(p.get("name") == "capacity" for tier in conf.get("tiers", []) for p in tier.get("plugins", []))


def apply_dra_quotas(draw: st.DrawFn, doc: dict[str, Any], percent: int = 50) -> None:
    """capacity's DRA quotas, drawn after every other draw of a scenario and only where the scenario drew DRA
    claims and its conf enables capacity (else no draw at all). Sometimes (`percent`%): some devices shared
    (allowMultipleAllocations) with a `memory` capacity, some claims asking for `memory` of their device, and
    some queues a `deviceclass/<class>` count and a `memory.deviceclass/<class>` quantity in spec.capability.
    Each pod has one claim of one request here, so upstream's nil-map panic (docs/findings.md #51) is never
    drawn. Shrinks to no quota and no capacity."""
    objects = doc["objects"]
    claims = [o for o in objects if o["kind"] == "ResourceClaim"]
    if not claims or not _capacity_enabled(doc.get("schedulerConf") or {}) or not draw(sometimes(percent)):
        return
    for slice_doc in (o for o in objects if o["kind"] == "ResourceSlice"):
        for device in slice_doc["spec"].get("devices", ()):  # a counter slice has none
            if draw(sometimes(50)):
                device["allowMultipleAllocations"] = True
                device["capacity"] = {CAPACITY_DIMENSION: {"value": draw(choice(SHARED_CAPACITY))}}
    for claim in claims:
        if draw(sometimes(50)):
            request = claim["spec"]["devices"]["requests"][0]["exactly"]
            request["capacity"] = {"requests": {CAPACITY_DIMENSION: draw(choice(CLAIM_CAPACITY))}}
    for index, queue in enumerate(objects):
        if queue["kind"] != "Queue" or not draw(sometimes(50)):
            continue
        queue = objects[index] = dict(queue)  # queue documents may be shared with other drafts: change a copy
        spec = queue["spec"] = dict(queue.get("spec") or {})
        capability = spec["capability"] = dict(spec.get("capability") or {})
        if draw(sometimes(50)):
            capability[f"deviceclass/{DRIVER}"] = str(draw(choice(QUEUE_COUNT)))
        if draw(sometimes(70)):
            capability[f"{CAPACITY_DIMENSION}.deviceclass/{DRIVER}"] = draw(choice(QUEUE_CAPACITY))
