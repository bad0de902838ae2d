"""Read the resource.k8s.io/v1 kinds of dynamic resource allocation (DeviceClass, ResourceSlice,
ResourceClaim) and a pod's spec.resourceClaims; objects.py registers the readers and schemas here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schedcheck.reference import k8s, k8s_dra
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util import dra_cel
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
_EXACTLY = {**dict.fromkeys(["deviceClassName", "allocationMode", "count"]), "selectors": [_SELECTOR],
            "capacity": {"requests": LEAF},
            "tolerations": [dict.fromkeys(["key", "operator", "value", "effect", "tolerationSeconds"])]}
SCHEMAS: dict[str, Any] = {
    "DeviceClass": {"metadata": _META, "spec": {"selectors": [_SELECTOR], "config": LEAF}},
    "ResourceSlice": {"metadata": _META, "spec": {
        **dict.fromkeys(["driver", "nodeName", "allNodes", "perDeviceNodeSelection"]),
        "nodeSelector": _NODE_SELECTOR,
        "pool": dict.fromkeys(["name", "generation", "resourceSliceCount"]),
        "devices": [{**dict.fromkeys(["name", "attributes", "capacity", "nodeName", "allNodes",
                                      "allowMultipleAllocations"]),
                     "nodeSelector": _NODE_SELECTOR,
                     "taints": [dict.fromkeys(["key", "value", "effect", "timeAdded"])]}]}},
    "ResourceClaim": {"metadata": _META, "spec": {"devices": {
        "requests": [{"name": LEAF, "exactly": _EXACTLY, "firstAvailable": [{"name": LEAF, **_EXACTLY}]}],
        "constraints": [dict.fromkeys(["requests", "matchAttribute", "distinctAttribute"])],
        "config": LEAF}},
        "status": {"allocation": {"devices": {"results": [dict.fromkeys(["request", "driver", "pool", "device",
                                                                         "shareID", "consumedCapacity"])],
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
        expression = f.string(cel.get("expression"), f"{field}[{i}].cel.expression", required=True)
        try:
            dra_cel.parse(expression)
        except dra_cel.CompileError as err:  # the API server compiles every selector and refuses these
            f.fail(f"{field}[{i}].cel.expression", f"CEL expression {expression!r} does not compile: {err}")
        except dra_cel.NotModelled:
            pass  # warned about (dra_warnings.py)
        out.append(expression)
    return out


def read_device_class(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                      out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    out.device_classes.append(k8s_dra.DeviceClass(name, _selectors(f, spec.get("selectors"), "spec.selectors")))


def _version(f: Fields, value: Any, field: str) -> k8s_dra.SemVer:
    """A version attribute: the API server refuses one that is not a semantic version (semver 2.0.0)."""
    text = f.string(value, field, required=True)
    try:
        dra_cel.parse_semver(text)
    except dra_cel.CelRuntimeError as err:
        f.fail(field, f"{text!r} is not a semantic version (semver.org 2.0.0): {err}")
    return k8s_dra.SemVer(text)


def _attribute(f: Fields, value: Any, field: str) -> Any:
    """A DeviceAttribute: exactly one of bool, int, string and version."""
    doc = f.mapping(value, field)
    kinds = {"bool": f.boolean, "int": lambda v, p: f.integer(v, p, bits=64), "string": f.string,
             "version": lambda v, p: _version(f, v, p)}
    given = [k for k in kinds if doc.get(k) is not None]
    if len(given) != 1 or set(doc) - set(kinds):
        f.fail(field, f"expected exactly one of bool, int, string, version; got {describe(dict(doc))}")
    return kinds[given[0]](doc[given[0]], f"{field}.{given[0]}")


TermReader = Callable[[Fields, Any, str], Any]


def _node_selector(f: Fields, value: Any, field: str, terms: TermReader) -> list[k8s.NodeSelectorTerm] | None:
    """A ResourceSlice's (or a device's) nodeSelector: exactly one term, as the API requires."""
    if value is None:
        return None
    selector = f.mapping(value, field)
    found = [terms(f, t, f"{field}.nodeSelectorTerms[{i}]")
             for i, t in enumerate(f.sequence(selector.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms"))]
    if len(found) != 1:
        f.fail(f"{field}.nodeSelectorTerms", f"expected exactly one term, got {len(found)}")
    return found


def _node_selection(f: Fields, doc: Mapping[str, Any], field: str, terms: TermReader
                    ) -> tuple[str, bool, list[k8s.NodeSelectorTerm] | None, int]:
    """nodeName, allNodes (true when set), nodeSelector and how many of the three are set."""
    node_name = f.string(doc.get("nodeName"), f"{field}.nodeName")
    all_nodes = f.boolean(doc.get("allNodes"), f"{field}.allNodes", False)
    selector = _node_selector(f, doc.get("nodeSelector"), f"{field}.nodeSelector", terms)
    return node_name, all_nodes, selector, sum((bool(node_name), all_nodes, selector is not None))


def _quantity(f: Fields, value: Any, field: str) -> Quantity:
    if value is None:
        f.fail(field, "missing")
    try:
        return Quantity.parse(value)
    except ValueError as err:
        f.fail(field, str(err))


def _quantities(f: Fields, value: Any, field: str) -> dict[str, Quantity]:
    return {key: _quantity(f, item, f"{field}.{key}") for key, item in f.mapping(value, field).items()}


def _policy(f: Fields, value: Any, field: str) -> k8s_dra.CapacityPolicy | None:
    """A capacity's requestPolicy: default, and validValues or validRange (min required, max, step)."""
    if value is None:
        return None
    doc = f.mapping(value, field)
    policy = k8s_dra.CapacityPolicy()
    if doc.get("default") is not None:
        policy.default = _quantity(f, doc["default"], f"{field}.default")
    policy.valid_values = [_quantity(f, v, f"{field}.validValues[{i}]")
                           for i, v in enumerate(f.sequence(doc.get("validValues"), f"{field}.validValues"))]
    if any(b <= a for a, b in zip(policy.valid_values, policy.valid_values[1:])):
        f.fail(f"{field}.validValues", "expected values in ascending order, without repeats")
    if doc.get("validRange") is not None:
        if policy.valid_values:
            f.fail(field, "expected at most one of validValues and validRange")
        bounds = f.mapping(doc["validRange"], f"{field}.validRange")
        policy.valid_min = _quantity(f, bounds.get("min"), f"{field}.validRange.min")
        if bounds.get("max") is not None:
            policy.valid_max = _quantity(f, bounds["max"], f"{field}.validRange.max")
        if bounds.get("step") is not None:
            policy.valid_step = _quantity(f, bounds["step"], f"{field}.validRange.step")
            if policy.valid_step.value() <= 0:
                f.fail(f"{field}.validRange.step", "must be greater than zero")
    return policy


def _device(f: Fields, value: Any, field: str, terms: TermReader, per_device: bool) -> k8s_dra.Device:
    doc = f.mapping(value, field)
    capacity, policies = {}, {}
    for key, item in f.mapping(doc.get("capacity"), f"{field}.capacity").items():
        entry = f.mapping(item, f"{field}.capacity.{key}")
        capacity[key] = _quantity(f, entry.get("value"), f"{field}.capacity.{key}.value")
        policy = _policy(f, entry.get("requestPolicy"), f"{field}.capacity.{key}.requestPolicy")
        if policy is not None:
            policies[key] = policy
    node_name, all_nodes, selector, given = _node_selection(f, doc, field, terms)
    if per_device and given != 1:
        f.fail(field, "expected exactly one of nodeName, nodeSelector and allNodes: true (the slice has "
                      "perDeviceNodeSelection: true)")
    if not per_device and given:
        f.fail(field, "nodeName, nodeSelector and allNodes of a device need the slice's perDeviceNodeSelection: true")
    return k8s_dra.Device(
        f.string(doc.get("name"), f"{field}.name", required=True),
        {key: _attribute(f, item, f"{field}.attributes.{key}")
         for key, item in f.mapping(doc.get("attributes"), f"{field}.attributes").items()},
        capacity, policies, f.boolean(doc.get("allowMultipleAllocations"), f"{field}.allowMultipleAllocations", False),
        node_name, all_nodes, selector, _taints(f, doc.get("taints"), f"{field}.taints"))


TAINT_EFFECTS = {"NoSchedule", "NoExecute", "None"}


def _taints(f: Fields, value: Any, field: str) -> list[k8s_dra.DeviceTaint]:
    """A device's taints (DeviceTaints): a key and an effect the API accepts (None keeps no request away)."""
    taints = []
    for i, item in enumerate(f.sequence(value, field)):
        doc = f.mapping(item, f"{field}[{i}]")
        taints.append(k8s_dra.DeviceTaint(
            f.string(doc.get("key"), f"{field}[{i}].key", required=True),
            f.string(doc.get("value"), f"{field}[{i}].value"),
            f.choice(doc.get("effect"), f"{field}[{i}].effect", TAINT_EFFECTS)))
    return taints


def _tolerations(f: Fields, value: Any, field: str) -> list[k8s_dra.DeviceToleration]:
    """A request's tolerations: Exists takes no value; an empty key needs Exists (API validation)."""
    tolerations = []
    for i, item in enumerate(f.sequence(value, field)):
        path = f"{field}[{i}]"
        doc = f.mapping(item, path)
        operator = f.choice(doc.get("operator"), f"{path}.operator", {"Equal", "Exists"}, default="Equal")
        key, value_ = f.string(doc.get("key"), f"{path}.key"), f.string(doc.get("value"), f"{path}.value")
        if operator == "Exists" and value_:
            f.fail(f"{path}.value", "must be empty when the operator is Exists")
        if not key and operator != "Exists":
            f.fail(f"{path}.operator", "must be Exists when the key is empty")
        effect = f.choice(doc.get("effect"), f"{path}.effect", TAINT_EFFECTS | {""}, default="")
        f.integer(doc.get("tolerationSeconds"), f"{path}.tolerationSeconds", bits=64)
        tolerations.append(k8s_dra.DeviceToleration(key, operator, value_, effect))
    return tolerations


def slice_reader(terms: TermReader) -> Callable[..., None]:
    """The ResourceSlice reader; `terms` reads one NodeSelectorTerm (objects.py's)."""

    def read(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str, out: k8s.ClusterObjects) -> None:
        spec = f.mapping(doc.get("spec"), "spec")
        pool = f.mapping(spec.get("pool"), "spec.pool")
        node_name, all_nodes, selector, given = _node_selection(f, spec, "spec", terms)
        per_device = f.boolean(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection", False)
        if given + per_device != 1:
            f.fail("spec", "expected exactly one of nodeName, nodeSelector, allNodes: true and "
                           "perDeviceNodeSelection: true (sharedCounters are not modelled)")
        out.resource_slices.append(k8s_dra.ResourceSlice(
            name=name, driver=f.string(spec.get("driver"), "spec.driver", required=True),
            pool=f.string(pool.get("name"), "spec.pool.name", required=True),
            pool_generation=f.integer(pool.get("generation"), "spec.pool.generation", default=0, minimum=0,
                                      bits=64),
            pool_slice_count=f.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", default=1,
                                       minimum=1, bits=64),
            node_name=node_name, all_nodes=all_nodes, node_selector=selector, per_device_node_selection=per_device,
            devices=[_device(f, d, f"spec.devices[{i}]", terms, per_device)
                     for i, d in enumerate(f.sequence(spec.get("devices"), "spec.devices"))]))

    return read


def _exactly(f: Fields, doc: Mapping[str, Any], field: str
             ) -> tuple[str, str, int, list[str], dict[str, Quantity], list[k8s_dra.DeviceToleration]]:
    """deviceClassName, allocationMode, count, selectors, capacity requests and tolerations of an `exactly`
    request or a subrequest."""
    mode = f.choice(doc.get("allocationMode"), f"{field}.allocationMode", set(k8s_dra.ALLOCATION_MODES),
                    default="ExactCount")
    count = f.integer(doc.get("count"), f"{field}.count", minimum=0, bits=64)
    capacity = f.mapping(doc.get("capacity"), f"{field}.capacity")
    return (f.string(doc.get("deviceClassName"), f"{field}.deviceClassName", required=True), mode, count or 1,
            _selectors(f, doc.get("selectors"), f"{field}.selectors"),
            _quantities(f, capacity.get("requests"), f"{field}.capacity.requests"),
            _tolerations(f, doc.get("tolerations"), f"{field}.tolerations"))


def _request(f: Fields, value: Any, field: str) -> k8s_dra.DeviceRequest:
    doc = f.mapping(value, field)
    name = f.string(doc.get("name"), f"{field}.name", required=True)
    if (doc.get("exactly") is None) == (doc.get("firstAvailable") is None):
        f.fail(field, "expected exactly one of exactly and firstAvailable")
    if doc.get("exactly") is not None:
        return k8s_dra.DeviceRequest(name, *_exactly(f, f.mapping(doc["exactly"], f"{field}.exactly"),
                                                     f"{field}.exactly"))
    subrequests: list[k8s_dra.DeviceSubRequest] = []
    for i, item in enumerate(f.sequence(doc["firstAvailable"], f"{field}.firstAvailable")):
        path = f"{field}.firstAvailable[{i}]"
        sub = f.mapping(item, path)
        sub_name = f.string(sub.get("name"), f"{path}.name", required=True)
        if any(s.name == sub_name for s in subrequests):
            f.fail(f"{path}.name", f"duplicate subrequest name {describe(sub_name)}")
        subrequests.append(k8s_dra.DeviceSubRequest(sub_name, *_exactly(f, sub, path)))
    if not 1 <= len(subrequests) <= k8s_dra.FIRST_AVAILABLE_MAX:
        f.fail(f"{field}.firstAvailable", f"expected 1 to {k8s_dra.FIRST_AVAILABLE_MAX} subrequests, "
                                          f"got {len(subrequests)}")
    return k8s_dra.DeviceRequest(name, "", first_available=subrequests)


def _constraints(f: Fields, value: Any, requests: list[k8s_dra.DeviceRequest]) -> list[k8s_dra.DeviceConstraint]:
    """spec.devices.constraints: each names requests of the claim (`<request>` or `<request>/<subrequest>`;
    none: all of them) and exactly one fully qualified attribute (`<domain>/<name>`) to match or keep distinct."""
    known = {r.name for r in requests} | {f"{r.name}/{s.name}" for r in requests for s in r.first_available}
    items = f.sequence(value, "spec.devices.constraints")
    if len(items) > k8s_dra.CONSTRAINTS_MAX:
        f.fail("spec.devices.constraints", f"expected at most {k8s_dra.CONSTRAINTS_MAX}, got {len(items)}")
    out = []
    for i, item in enumerate(items):
        field = f"spec.devices.constraints[{i}]"
        doc = f.mapping(item, field)
        names = [f.string(r, f"{field}.requests[{j}]", required=True)
                 for j, r in enumerate(f.sequence(doc.get("requests"), f"{field}.requests"))]
        for j, request in enumerate(names):
            if request not in known:
                f.fail(f"{field}.requests[{j}]", f"names no request of the claim: {describe(request)}")
        attributes = {}
        for key in ("matchAttribute", "distinctAttribute"):
            attribute = f.string(doc.get(key), f"{field}.{key}")
            if attribute and ("/" not in attribute or not all(attribute.split("/", 1))):
                f.fail(f"{field}.{key}", f"expected a fully qualified name <domain>/<name>, got {describe(attribute)}")
            attributes[key] = attribute
        if bool(attributes["matchAttribute"]) == bool(attributes["distinctAttribute"]):
            f.fail(field, "expected exactly one of matchAttribute and distinctAttribute")
        out.append(k8s_dra.DeviceConstraint(names, attributes["matchAttribute"], attributes["distinctAttribute"]))
    return out


def _allocation(f: Fields, value: Any, terms: TermReader) -> k8s_dra.ClaimAllocation | None:
    if value is None:
        return None
    doc = f.mapping(value, "status.allocation")
    devices = f.mapping(doc.get("devices"), "status.allocation.devices")
    results = []
    for i, item in enumerate(f.sequence(devices.get("results"), "status.allocation.devices.results")):
        field = f"status.allocation.devices.results[{i}]"
        result = f.mapping(item, field)
        results.append(k8s_dra.AllocatedDevice(
            *(f.string(result.get(k), f"{field}.{k}", required=True) for k in ("request", "driver", "pool", "device")),
            f.string(result.get("shareID"), f"{field}.shareID"),
            _quantities(f, result.get("consumedCapacity"), f"{field}.consumedCapacity")))
    node_selector = None
    if doc.get("nodeSelector") is not None:
        field = "status.allocation.nodeSelector"
        selector = f.mapping(doc["nodeSelector"], field)
        node_selector = [terms(f, t, f"{field}.nodeSelectorTerms[{i}]")
                         for i, t in enumerate(f.sequence(selector.get("nodeSelectorTerms"),
                                                          f"{field}.nodeSelectorTerms"))]
    return k8s_dra.ClaimAllocation(results, node_selector)


def claim_reader(terms: TermReader) -> Callable[..., None]:
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
            name, ns, uid, requests, _constraints(f, devices.get("constraints"), requests),
            _allocation(f, status.get("allocation"), terms), reserved,
            f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
            controller_uid=controller_uid(f, meta)))

    return read
