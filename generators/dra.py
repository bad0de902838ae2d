"""What dynamic resource allocation reads: a DeviceClass, ResourceSlices and ResourceClaims.

Drawn rarely, after every other draw of a scenario (so that the draws of earlier samples stay put). One
driver (`gpu.example.com`) and its DeviceClass (a CEL selector on the driver); some nodes publish a slice of
1 to 3 devices, each with a `model` attribute (`a100` or `t4`) and the `driverVersion` (a version) that
goes with the model; some pending pods ask, in their first container, for a claim of their own: one device
(rarely two), sometimes of one model (a CEL selector; rarely a richer one: semver, string functions, a
macro, the ternary, each as true of that model's devices as the plain equality).
Devices taken by a claim at one session's bind are seen as allocated in the next. Shrinks to no DRA at all.
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
    return docs
