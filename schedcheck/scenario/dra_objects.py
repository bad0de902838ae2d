"""Read the resource.k8s.io/v1 kinds of dynamic resource allocation (DeviceClass, ResourceSlice,
ResourceClaim) and a pod's spec.resourceClaims; objects.py registers the readers and schemas here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schedcheck.reference import k8s, k8s_dra
from schedcheck.reference.quantity import Quantity
from schedcheck.scenario.errors import describe
from schedcheck.scenario.fields import Fields

API_VERSION = "resource.k8s.io/v1"
LEAF = None
_META_KEYS = ["name", "namespace", "uid", "labels", "annotations", "creationTimestamp", "deletionTimestamp",
              "resourceVersion", "generation", "managedFields", "selfLink", "ownerReferences", "finalizers",
              "generateName", "deletionGracePeriodSeconds"]
_META = dict.fromkeys(_META_KEYS)
_SELECTOR = {"cel": {"expression": LEAF}}
_REQUIREMENT = dict.fromkeys(["key", "operator", "values"])
_NODE_SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}]}
# Fields named here are read, or carry nothing the modelled allocation consults (config, driver data).
SCHEMAS: dict[str, Any] = {
    "DeviceClass": {"metadata": _META, "spec": {"selectors": [_SELECTOR], "config": LEAF}},
    "ResourceSlice": {"metadata": _META, "spec": {
        **dict.fromkeys(["driver", "nodeName", "allNodes"]),
        "pool": dict.fromkeys(["name", "generation", "resourceSliceCount"]),
        "devices": [{"name": LEAF, "attributes": LEAF, "capacity": LEAF}]}},
    "ResourceClaim": {"metadata": _META, "spec": {"devices": {
        "requests": [{"name": LEAF, "exactly": {**dict.fromkeys(["deviceClassName", "allocationMode", "count"]),
                                                 "selectors": [_SELECTOR]}}],
        "config": LEAF}},
        "status": {"allocation": {"devices": {"results": [dict.fromkeys(["request", "driver", "pool", "device"])],
                                              "config": LEAF},
                                  "nodeSelector": _NODE_SELECTOR},
                   "reservedFor": [dict.fromkeys(["resource", "name", "uid", "apiGroup"])]}},
}
POD_CLAIM: dict[str, Any] = dict.fromkeys(["name", "resourceClaimName", "resourceClaimTemplateName"])
POD_CLAIM_STATUS: dict[str, Any] = dict.fromkeys(["name", "resourceClaimName"])


def pod_resource_claims(f: Fields, spec: Mapping[str, Any]) -> list[k8s_dra.PodResourceClaim]:
    claims = []
    for i, item in enumerate(f.sequence(spec.get("resourceClaims"), "spec.resourceClaims")):
        field = f"spec.resourceClaims[{i}]"
        doc = f.mapping(item, field)
        claim = k8s_dra.PodResourceClaim(
            f.string(doc.get("name"), f"{field}.name", required=True),
            f.string(doc.get("resourceClaimName"), f"{field}.resourceClaimName"),
            f.string(doc.get("resourceClaimTemplateName"), f"{field}.resourceClaimTemplateName"))
        if bool(claim.resource_claim_name) == bool(claim.resource_claim_template_name):
            f.fail(field, "expected exactly one of resourceClaimName and resourceClaimTemplateName")
        claims.append(claim)
    return claims


def pod_claim_statuses(f: Fields, status: Mapping[str, Any]) -> dict[str, str | None]:
    """status.resourceClaimStatuses: each pod claim's generated claim (resourceClaimName absent or null: the
    controller made none, and upstream's plugin then skips that claim)."""
    out: dict[str, str | None] = {}
    for i, item in enumerate(f.sequence(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")):
        field = f"status.resourceClaimStatuses[{i}]"
        doc = f.mapping(item, field)
        name = f.string(doc.get("name"), f"{field}.name", required=True)
        out.setdefault(name, f.string(doc.get("resourceClaimName"), f"{field}.resourceClaimName") or None)
    return out


def controller_uid(f: Fields, meta: Mapping[str, Any]) -> str:
    """The uid of metadata.ownerReferences' controller entry (a template's claim, DRA or ephemeral volume: the pod
    it was made for)."""
    for i, item in enumerate(f.sequence(meta.get("ownerReferences"), "metadata.ownerReferences")):
        field = f"metadata.ownerReferences[{i}]"
        ref = f.mapping(item, field)
        if f.boolean(ref.get("controller"), f"{field}.controller"):
            return f.string(ref.get("uid"), f"{field}.uid", required=True)
    return ""


def container_claims(f: Fields, resources: Mapping[str, Any], field: str) -> list[str]:
    return [f.string(f.mapping(item, f"{field}.claims[{i}]").get("name"), f"{field}.claims[{i}].name", required=True)
            for i, item in enumerate(f.sequence(resources.get("claims"), f"{field}.claims"))]


def _selectors(f: Fields, value: Any, field: str) -> list[str]:
    out = []
    for i, item in enumerate(f.sequence(value, field)):
        cel = f.mapping(f.mapping(item, f"{field}[{i}]").get("cel"), f"{field}[{i}].cel")
        out.append(f.string(cel.get("expression"), f"{field}[{i}].cel.expression", required=True))
    return out


def read_device_class(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                      out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    out.device_classes.append(k8s_dra.DeviceClass(name, _selectors(f, spec.get("selectors"), "spec.selectors")))


def _attribute(f: Fields, value: Any, field: str) -> Any:
    """A DeviceAttribute: exactly one of bool, int, string and version."""
    doc = f.mapping(value, field)
    kinds = {"bool": f.boolean, "int": lambda v, p: f.integer(v, p, bits=64), "string": f.string,
             "version": f.string}
    given = [k for k in kinds if doc.get(k) is not None]
    if len(given) != 1 or set(doc) - set(kinds):
        f.fail(field, f"expected exactly one of bool, int, string, version; got {describe(dict(doc))}")
    return kinds[given[0]](doc[given[0]], f"{field}.{given[0]}")


def _device(f: Fields, value: Any, field: str) -> k8s_dra.Device:
    doc = f.mapping(value, field)
    capacity = {}
    for key, item in f.mapping(doc.get("capacity"), f"{field}.capacity").items():
        raw = f.mapping(item, f"{field}.capacity.{key}").get("value")
        try:
            capacity[key] = Quantity.parse(raw)
        except ValueError as err:
            f.fail(f"{field}.capacity.{key}.value", str(err))
    return k8s_dra.Device(
        f.string(doc.get("name"), f"{field}.name", required=True),
        {key: _attribute(f, item, f"{field}.attributes.{key}")
         for key, item in f.mapping(doc.get("attributes"), f"{field}.attributes").items()},
        capacity)


def read_resource_slice(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                        out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    pool = f.mapping(spec.get("pool"), "spec.pool")
    node_name = f.string(spec.get("nodeName"), "spec.nodeName")
    all_nodes = f.boolean(spec.get("allNodes"), "spec.allNodes", False)
    if bool(node_name) == all_nodes:
        f.fail("spec", "expected exactly one of nodeName and allNodes: true (nodeSelector and perDeviceNodeSelection "
                       "are not modelled)")
    out.resource_slices.append(k8s_dra.ResourceSlice(
        name=name, driver=f.string(spec.get("driver"), "spec.driver", required=True),
        pool=f.string(pool.get("name"), "spec.pool.name", required=True),
        pool_generation=f.integer(pool.get("generation"), "spec.pool.generation", default=0, minimum=0, bits=64),
        pool_slice_count=f.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", default=1,
                                   minimum=1, bits=64),
        node_name=node_name, all_nodes=all_nodes,
        devices=[_device(f, d, f"spec.devices[{i}]") for i, d in enumerate(f.sequence(spec.get("devices"),
                                                                                        "spec.devices"))]))


def _request(f: Fields, value: Any, field: str) -> k8s_dra.DeviceRequest:
    doc = f.mapping(value, field)
    name = f.string(doc.get("name"), f"{field}.name", required=True)
    if doc.get("exactly") is None:
        f.fail(f"{field}.exactly", "missing (firstAvailable sub-requests are not modelled)")
    exactly = f.mapping(doc["exactly"], f"{field}.exactly")
    mode = f.choice(exactly.get("allocationMode"), f"{field}.exactly.allocationMode", set(k8s_dra.ALLOCATION_MODES),
                    default="ExactCount")
    count = f.integer(exactly.get("count"), f"{field}.exactly.count", minimum=0, bits=64)
    return k8s_dra.DeviceRequest(
        name, f.string(exactly.get("deviceClassName"), f"{field}.exactly.deviceClassName", required=True), mode,
        count or 1, _selectors(f, exactly.get("selectors"), f"{field}.exactly.selectors"))


def _allocation(f: Fields, value: Any, terms: Callable[[Fields, Any, str], Any]) -> k8s_dra.ClaimAllocation | None:
    if value is None:
        return None
    doc = f.mapping(value, "status.allocation")
    devices = f.mapping(doc.get("devices"), "status.allocation.devices")
    results = []
    for i, item in enumerate(f.sequence(devices.get("results"), "status.allocation.devices.results")):
        field = f"status.allocation.devices.results[{i}]"
        result = f.mapping(item, field)
        results.append(k8s_dra.AllocatedDevice(*(f.string(result.get(k), f"{field}.{k}", required=True)
                                                 for k in ("request", "driver", "pool", "device"))))
    node_selector = None
    if doc.get("nodeSelector") is not None:
        field = "status.allocation.nodeSelector"
        selector = f.mapping(doc["nodeSelector"], field)
        node_selector = [terms(f, t, f"{field}.nodeSelectorTerms[{i}]")
                         for i, t in enumerate(f.sequence(selector.get("nodeSelectorTerms"),
                                                          f"{field}.nodeSelectorTerms"))]
    return k8s_dra.ClaimAllocation(results, node_selector)


def claim_reader(terms: Callable[[Fields, Any, str], Any]) -> Callable[..., None]:
    """The ResourceClaim reader; `terms` reads one NodeSelectorTerm (objects.py's)."""

    def read(f: Fields, doc: Mapping[str, Any], name: str, ns: str, uid: str, out: k8s.ClusterObjects) -> None:
        meta = f.mapping(doc.get("metadata"), "metadata")
        spec = f.mapping(doc.get("spec"), "spec")
        status = f.mapping(doc.get("status"), "status")
        devices = f.mapping(spec.get("devices"), "spec.devices")
        requests = [_request(f, r, f"spec.devices.requests[{i}]")
                    for i, r in enumerate(f.sequence(devices.get("requests"), "spec.devices.requests"))]
        reserved = [f.string(f.mapping(r, f"status.reservedFor[{i}]").get("uid"), f"status.reservedFor[{i}].uid",
                             required=True)
                    for i, r in enumerate(f.sequence(status.get("reservedFor"), "status.reservedFor"))]
        out.resource_claims.append(k8s_dra.ResourceClaim(
            name, ns, uid, requests, _allocation(f, status.get("allocation"), terms), reserved,
            f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
            controller_uid=controller_uid(f, meta)))

    return read
