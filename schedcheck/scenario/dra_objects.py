"""Read the resource.k8s.io/v1 kinds of dynamic resource allocation (DeviceClass, ResourceSlice,
ResourceClaim), resource.k8s.io/v1beta2 DeviceTaintRule and a pod's spec.resourceClaims; objects.py registers
the readers and schemas here."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from schedcheck.reference import k8s, k8s_dra
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util import dra_cel
from schedcheck.scenario import dra_binding
from schedcheck.scenario.errors import describe
from schedcheck.scenario.fields import Fields

API_VERSION = "resource.k8s.io/v1"
TAINT_RULE_API_VERSION = "resource.k8s.io/v1beta2"  # the version Volcano's slice tracker lists DeviceTaintRules at
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
    "DeviceClass": {"metadata": _META, "spec": {"selectors": [_SELECTOR], "config": LEAF,
                                                "extendedResourceName": LEAF}},
    "ResourceSlice": {"metadata": _META, "spec": {
        **dict.fromkeys(["driver", "nodeName", "allNodes", "perDeviceNodeSelection"]),
        "nodeSelector": _NODE_SELECTOR,
        "pool": dict.fromkeys(["name", "generation", "resourceSliceCount"]),
        "sharedCounters": [{"name": LEAF, "counters": LEAF}],
        "devices": [{**dict.fromkeys(["name", "attributes", "capacity", "nodeName", "allNodes",
                                      "allowMultipleAllocations", "bindingConditions",
                                      "bindingFailureConditions", "bindsToNode"]),
                     "nodeSelector": _NODE_SELECTOR,
                     "consumesCounters": [{"counterSet": LEAF, "counters": LEAF}],
                     "taints": [dict.fromkeys(["key", "value", "effect", "timeAdded"])]}]}},
    "ResourceClaim": {"metadata": _META, "spec": {"devices": {
        # a subrequest has no adminAccess in resource.k8s.io/v1 (warned about as not read, as upstream drops it)
        "requests": [{"name": LEAF, "exactly": {**_EXACTLY, "adminAccess": LEAF},
                      "firstAvailable": [{"name": LEAF, **_EXACTLY}]}],
        "constraints": [dict.fromkeys(["requests", "matchAttribute", "distinctAttribute"])],
        "config": LEAF}},
        "status": {"allocation": {"devices": {"results": [dict.fromkeys(["request", "driver", "pool", "device",
                                                                         "shareID", "consumedCapacity",
                                                                         "adminAccess", "bindingConditions",
                                                                         "bindingFailureConditions"])],
                                              "config": LEAF},
                                  "nodeSelector": _NODE_SELECTOR, "allocationTimestamp": LEAF},
                   "reservedFor": [dict.fromkeys(["resource", "name", "uid", "apiGroup"])],
                   # a driver's report on each allocated device: the scheduler reads the conditions
                   "devices": [dict.fromkeys(["driver", "pool", "device", "shareID", "conditions", "data",
                                              "networkData"])]}},
    "DeviceTaintRule": {"metadata": _META, "spec": {
        "deviceSelector": dict.fromkeys(["driver", "pool", "device"]),
        "taint": dict.fromkeys(["key", "value", "effect", "timeAdded"])},
        "status": {"conditions": LEAF}},
}
API_VERSIONS = {**dict.fromkeys(SCHEMAS, API_VERSION), "DeviceTaintRule": TAINT_RULE_API_VERSION}
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
        try:  # the API server's validation of a new selector: it compiles and its estimated cost is in the limit
            dra_cel.admit(expression)
        except dra_cel.CompileError as err:
            f.fail(f"{field}[{i}].cel.expression", f"CEL expression {expression!r} is refused by the API server: {err}")
        except dra_cel.NotModelled:
            pass  # warned about (dra_warnings.py)
        out.append(expression)
    return out


def read_device_class(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                      out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    out.device_classes.append(k8s_dra.DeviceClass(name, _selectors(f, spec.get("selectors"), "spec.selectors"),
                                                  _extended_resource_name(f, spec.get("extendedResourceName"))))


def _extended_resource_name(f: Fields, value: Any) -> str:
    """spec.extendedResourceName (DRAExtendedResource): an extended resource name, `<domain>/<name>` outside the
    kubernetes.io domains (API validation), or unset."""
    field = "spec.extendedResourceName"
    name = f.string(value, field)
    if not name:
        return ""
    domain, _, short = name.partition("/")
    if not short or not domain or "/" in short or domain == "kubernetes.io" or domain.endswith(".kubernetes.io") \
            or name.startswith("requests."):
        f.fail(field, f"expected an extended resource name <domain>/<name> outside kubernetes.io, got {describe(name)}")
    return name


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
        node_name, all_nodes, selector, _taints(f, doc.get("taints"), f"{field}.taints"),
        _consumes_counters(f, doc.get("consumesCounters"), f"{field}.consumesCounters"),
        *dra_binding.binding_parameters(f, doc, field), dra_binding.binds_to_node(f, doc, field))


# ResourceSliceMaxCounterSets, ...MaxCountersPerCounterSet, ...MaxDeviceCounterConsumptionsPerDevice and
# ...MaxCountersPerDeviceCounterConsumption (k8s.io/api resource/v1)
COUNTER_SETS_MAX, COUNTERS_MAX, CONSUMPTIONS_MAX = 8, 32, 2
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _dns_label(f: Fields, value: Any, field: str) -> str:
    """A counter set's or a counter's name: a DNS label, as the API validates it."""
    name = f.string(value, field, required=True)
    if len(name) > 63 or not _DNS_LABEL.fullmatch(name):
        f.fail(field, f"expected a DNS label (lower-case letters, digits and '-', at most 63), got {describe(name)}")
    return name


def _counters(f: Fields, value: Any, field: str) -> dict[str, Quantity]:
    """counters: {<name>: {value: <quantity>}}, 1 to 32 of them (a counter set's, or what a device consumes)."""
    doc = f.mapping(value, field)
    if not 1 <= len(doc) <= COUNTERS_MAX:
        f.fail(field, f"expected 1 to {COUNTERS_MAX} counters, got {len(doc)}")
    out = {}
    for key, item in doc.items():
        _dns_label(f, key, f"{field}.{key}")
        entry = f.mapping(item, f"{field}.{key}")
        out[key] = _quantity(f, entry.get("value"), f"{field}.{key}.value")
    return out


def _shared_counters(f: Fields, value: Any, field: str) -> list[k8s_dra.CounterSet]:
    """A slice's spec.sharedCounters (DRAPartitionableDevices): at most 8 counter sets of distinct names."""
    items = f.sequence(value, field)
    if len(items) > COUNTER_SETS_MAX:
        f.fail(field, f"expected at most {COUNTER_SETS_MAX} counter sets, got {len(items)}")
    sets: list[k8s_dra.CounterSet] = []
    for i, item in enumerate(items):
        doc = f.mapping(item, f"{field}[{i}]")
        name = _dns_label(f, doc.get("name"), f"{field}[{i}].name")
        if any(s.name == name for s in sets):
            f.fail(f"{field}[{i}].name", f"duplicate counter set name {describe(name)}")
        sets.append(k8s_dra.CounterSet(name, _counters(f, doc.get("counters"), f"{field}[{i}].counters")))
    return sets


def _consumes_counters(f: Fields, value: Any, field: str) -> list[k8s_dra.CounterConsumption]:
    """A device's consumesCounters: at most 2, each naming a distinct counter set (of its pool: the allocator,
    not the API, checks that the set and its counters exist)."""
    items = f.sequence(value, field)
    if len(items) > CONSUMPTIONS_MAX:
        f.fail(field, f"expected at most {CONSUMPTIONS_MAX} entries, got {len(items)}")
    out: list[k8s_dra.CounterConsumption] = []
    for i, item in enumerate(items):
        doc = f.mapping(item, f"{field}[{i}]")
        name = _dns_label(f, doc.get("counterSet"), f"{field}[{i}].counterSet")
        if any(c.counter_set == name for c in out):
            f.fail(f"{field}[{i}].counterSet", f"duplicate counter set {describe(name)}")
        out.append(k8s_dra.CounterConsumption(name, _counters(f, doc.get("counters"), f"{field}[{i}].counters")))
    return out


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


def read_device_taint_rule(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str,
                           out: k8s.ClusterObjects) -> None:
    """A DeviceTaintRule: spec.deviceSelector (driver, pool, device; each unset: any) and spec.taint (key and
    effect required, as API validation)."""
    spec = f.mapping(doc.get("spec"), "spec")
    selector = f.mapping(spec.get("deviceSelector"), "spec.deviceSelector")
    named = {key: f.string(selector.get(key), f"spec.deviceSelector.{key}") if selector.get(key) is not None else None
             for key in ("driver", "pool", "device")}
    for key, value in named.items():
        if value == "":
            f.fail(f"spec.deviceSelector.{key}", "must not be empty when set")
    taint = f.mapping(spec.get("taint"), "spec.taint")
    f.timestamp(taint.get("timeAdded"), "spec.taint.timeAdded")
    out.device_taint_rules.append(k8s_dra.DeviceTaintRule(name, k8s_dra.DeviceTaint(
        f.string(taint.get("key"), "spec.taint.key", required=True), f.string(taint.get("value"), "spec.taint.value"),
        f.choice(taint.get("effect"), "spec.taint.effect", TAINT_EFFECTS)), **named))


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


# ResourceSliceMaxDevices, and ResourceSliceMaxDevicesWithAdvancedFeatures: the limit when some device of the
# slice has taints or consumes counters (list-typed attributes, alpha, are refused here anyway)
DEVICES_MAX, DEVICES_MAX_ADVANCED = 128, 64


def _device_count(f: Fields, value: Any) -> None:
    """validateResourceSliceSpec's size check of spec.devices, in its words."""
    devices = f.sequence(value, "spec.devices")
    advanced = any(isinstance(d, Mapping) and (d.get("taints") or d.get("consumesCounters")) for d in devices)
    limit = DEVICES_MAX_ADVANCED if advanced else DEVICES_MAX
    if len(devices) > limit:
        why = " (some device of the slice has taints or consumes counters)" if advanced else ""
        f.fail("spec.devices", f"Too many: {len(devices)}: must have at most {limit} items{why}")


def slice_reader(terms: TermReader) -> Callable[..., None]:
    """The ResourceSlice reader; `terms` reads one NodeSelectorTerm (objects.py's)."""

    def read(f: Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str, out: k8s.ClusterObjects) -> None:
        spec = f.mapping(doc.get("spec"), "spec")
        pool = f.mapping(spec.get("pool"), "spec.pool")
        node_name, all_nodes, selector, given = _node_selection(f, spec, "spec", terms)
        per_device = f.boolean(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection", False)
        if given + per_device != 1:
            f.fail("spec", "expected exactly one of nodeName, nodeSelector, allNodes: true and "
                           "perDeviceNodeSelection: true")
        if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
            f.fail("spec", "expected at most one of sharedCounters and devices")
        _device_count(f, spec.get("devices"))
        out.resource_slices.append(k8s_dra.ResourceSlice(
            name=name, driver=f.string(spec.get("driver"), "spec.driver", required=True),
            pool=f.string(pool.get("name"), "spec.pool.name", required=True),
            pool_generation=f.integer(pool.get("generation"), "spec.pool.generation", default=0, minimum=0,
                                      bits=64),
            pool_slice_count=f.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", default=1,
                                       minimum=1, bits=64),
            node_name=node_name, all_nodes=all_nodes, node_selector=selector, per_device_node_selection=per_device,
            devices=[_device(f, d, f"spec.devices[{i}]", terms, per_device)
                     for i, d in enumerate(f.sequence(spec.get("devices"), "spec.devices"))],
            shared_counters=_shared_counters(f, spec.get("sharedCounters"), "spec.sharedCounters")))

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


def _admin_access(f: Fields, doc: Mapping[str, Any], field: str) -> bool:
    """An `exactly` request's adminAccess (DRAAdminAccess, GA at 1.36). The namespace label resource.kubernetes.io/admin-access the API
    server asks for at create is not the scheduler's to check: a claim in the scenario exists as given."""
    return f.boolean(doc.get("adminAccess"), f"{field}.adminAccess", False)


def _request(f: Fields, value: Any, field: str) -> k8s_dra.DeviceRequest:
    doc = f.mapping(value, field)
    name = f.string(doc.get("name"), f"{field}.name", required=True)
    if (doc.get("exactly") is None) == (doc.get("firstAvailable") is None):
        f.fail(field, "expected exactly one of exactly and firstAvailable")
    if doc.get("exactly") is not None:
        exactly = f.mapping(doc["exactly"], f"{field}.exactly")
        return k8s_dra.DeviceRequest(name, *_exactly(f, exactly, f"{field}.exactly"),
                                     admin_access=_admin_access(f, exactly, f"{field}.exactly"))
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
            _quantities(f, result.get("consumedCapacity"), f"{field}.consumedCapacity"),
            f.boolean(result.get("adminAccess"), f"{field}.adminAccess", False),
            *dra_binding.binding_parameters(f, result, field)))
    node_selector = None
    if doc.get("nodeSelector") is not None:
        field = "status.allocation.nodeSelector"
        selector = f.mapping(doc["nodeSelector"], field)
        node_selector = [terms(f, t, f"{field}.nodeSelectorTerms[{i}]")
                         for i, t in enumerate(f.sequence(selector.get("nodeSelectorTerms"),
                                                          f"{field}.nodeSelectorTerms"))]
    return k8s_dra.ClaimAllocation(results, node_selector, dra_binding.allocation_timestamp(f, doc))


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
        allocation = _allocation(f, status.get("allocation"), terms)
        out.resource_claims.append(k8s_dra.ResourceClaim(
            name, ns, uid, requests, _constraints(f, devices.get("constraints"), requests), allocation, reserved,
            f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
            controller_uid=controller_uid(f, meta),
            device_statuses=dra_binding.device_statuses(f, status, allocation)))

    return read
