"""Read a scenario (../shared/spec/scenario-format.md, version 1).

Three shapes are accepted: a `kind: Scenario` document; a `kind: List` of
Kubernetes objects; a plain (multi-document) stream of Kubernetes objects.
The last two carry no scheduler conf, which then comes from `--conf` or
upstream's default. YAML or JSON.

Bad input raises ScenarioError naming file, object and field; everything
that is merely unused (unknown kinds and fields, references to objects that
are not there) becomes a line in `Scenario.warnings`.
"""

from __future__ import annotations

import copy
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, NoReturn

from reference_impl import k8s
from reference_impl.framework.conf import SchedulerConf, default_scheduler_conf
from reference_impl.framework.conf_loader import load_yaml_documents, parse_scheduler_conf
from reference_impl.quantity import Quantity
from schedcheck.scenario.errors import ScenarioError, describe
from schedcheck.scenario.model import Expectations, Scenario

API_VERSION = "schedcheck/v1"
INTERNAL_ERROR = "unreadable input (loader bug)"
_SCENARIO_KEYS = {"apiVersion", "kind", "metadata", "schedulerConf", "objects", "cycles", "expect"}
_API_VERSIONS = {
    "Node": "v1",
    "Pod": "v1",
    "ResourceQuota": "v1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "Queue": "scheduling.volcano.sh/v1beta1",
    "PriorityClass": "scheduling.k8s.io/v1",
}
_NAMESPACED = {"Pod", "PodGroup", "ResourceQuota"}
_POD_PHASES = {"Pending", "Running", "Succeeded", "Failed", "Unknown"}
_POD_GROUP_PHASES = {"Pending", "Inqueue", "Running", "Unknown", "Completed"}
_TASK_STATUSES = set("Pending Allocated Pipelined Binding Bound Running Releasing Succeeded Failed Unknown".split())
_EXPECT_KEYS = {"binds", "evicted", "pipelined", "podGroupPhases", "taskStatusCounts", "bindCount", "evictCount"}
_INT32 = (-(2**31), 2**31 - 1)
_SHOWN = 8  # names or fields listed in one aggregated warning


# ---------------------------------------------------------------- entry points


def load_scenario(path: str | Path, conf_path: str | Path | None = None) -> Scenario:
    """Read a scenario file ("-" is standard input); `conf_path` overrides its conf."""
    source = "<stdin>" if str(path) == "-" else str(path)
    text = _read_text(path, source)
    conf_text = None
    conf_source = "<conf>"
    if conf_path is not None:
        conf_source = "<stdin>" if str(conf_path) == "-" else str(conf_path)
        conf_text = _read_text(conf_path, conf_source)
    return load_scenario_text(text, source, conf_text, conf_source)


def load_scenario_text(text: str, source: str, conf_text: str | None = None, conf_source: str = "<conf>") -> Scenario:
    """Read a scenario from text; `conf_text` (volcano-scheduler.conf YAML) overrides its conf."""
    conf_override = None if conf_text is None else (conf_text, conf_source)
    return _guarded(source, lambda: _build(_parse_documents(text, source), source, conf_override))


def scenario_from_document(doc: dict[str, Any], source: str) -> Scenario:
    """Build a scenario from an already parsed document (a Scenario, a List or one object)."""
    return _guarded(source, lambda: _build([doc], source, None))


def _guarded(source: str, read: Callable[[], Scenario]) -> Scenario:
    """Run `read`, turning any stray exception into a ScenarioError.

    Every bad input is meant to be caught where it is read, with a precise
    message; reaching the fallback here is a loader bug (the tests check
    that no input does).
    """
    try:
        return read()
    except ScenarioError:
        raise
    except Exception as err:  # noqa: BLE001 - the contract is "ScenarioError only"
        raise ScenarioError(source, "", "", f"{INTERNAL_ERROR}: {type(err).__name__}: {err}") from err


# ---------------------------------------------------------------- text


def _read_text(path: str | Path, source: str) -> str:
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
    except OSError as err:
        raise ScenarioError(source, "", "", f"cannot read: {err.strerror or err}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ScenarioError(source, "", f"byte {err.start}", "not UTF-8 text") from None


class _DuplicateKey(ValueError):
    pass


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(f"duplicate key {key!r}")
        result[key] = value
    return result


def _parse_documents(text: str, source: str) -> list[Any]:
    """JSON for a .json file; otherwise YAML, though JSON-looking text is tried as JSON first."""
    strict_json = source.lower().endswith(".json")
    if strict_json or text.lstrip()[:1] in ("{", "["):
        try:
            return [json.loads(text, object_pairs_hook=_json_object)]
        except _DuplicateKey as err:
            raise ScenarioError(source, "", "", f"invalid JSON: {err}") from None
        except json.JSONDecodeError as err:
            json_error = ScenarioError(source, "", f"line {err.lineno}, column {err.colno}", f"invalid JSON: {err.msg}")
        except RecursionError:
            json_error = ScenarioError(source, "", "", "invalid JSON: nested too deeply")
        if strict_json:
            raise json_error
        try:
            return load_yaml_documents(text, source)
        except ScenarioError:
            raise json_error from None
    return load_yaml_documents(text, source)


# ---------------------------------------------------------------- the scenario


def _is_wrapper(doc: Any) -> bool:
    if not isinstance(doc, Mapping):
        return False
    api = doc.get("apiVersion")
    return (
        doc.get("kind") == "Scenario"
        or (isinstance(api, str) and api.startswith("schedcheck/"))
        or ("kind" not in doc and ("objects" in doc or "schedulerConf" in doc))
    )


def _build(docs: list[Any], source: str, conf_override: tuple[str, str] | None) -> Scenario:
    docs = [d for d in docs if d is not None]
    if not docs:
        raise ScenarioError(source, "", "", "holds no document")
    if any(_is_wrapper(d) for d in docs):
        if len(docs) > 1:
            raise ScenarioError(source, "Scenario", "", "a Scenario must be the only document in its file")
        return _from_wrapper(dict(docs[0]), source, conf_override)
    located = [(f"document {i + 1}" if len(docs) > 1 else "document", d) for i, d in enumerate(docs)]
    for where, doc in located:
        if not isinstance(doc, Mapping):
            raise ScenarioError(
                source,
                where,
                "",
                f"expected a mapping (a Scenario, a List or a Kubernetes object), got {describe(doc)}",
            )
    warnings: list[str] = []
    objects = _ObjectsReader(source, warnings).read(located)
    conf, conf_doc = _conf(None, source, conf_override, warnings)
    name = Path(source).stem or source
    document = {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": name},
        "objects": copy.deepcopy(docs),
    }
    if conf_doc is not None:
        document["schedulerConf"] = conf_doc
    return Scenario(name=name, source=source, conf=conf, objects=objects, warnings=warnings, document=document)


def _from_wrapper(doc: dict[str, Any], source: str, conf_override: tuple[str, str] | None) -> Scenario:
    f = _Fields(source, "Scenario")
    for key in doc:
        if not isinstance(key, str):
            f.fail("", f"expected string keys, got {describe(key)}")
    if doc.get("apiVersion") != API_VERSION:
        f.fail("apiVersion", f"expected {API_VERSION}, got {describe(doc.get('apiVersion'))}")
    if doc.get("kind") != "Scenario":
        f.fail("kind", f"expected Scenario, got {describe(doc.get('kind'))}")
    warnings: list[str] = []
    unknown = sorted(set(doc) - _SCENARIO_KEYS)
    if unknown:
        warnings.append(f"Scenario: ignored unknown keys {', '.join(unknown)}")
    metadata = f.mapping(doc.get("metadata"), "metadata")
    name = f.string(metadata.get("name"), "metadata.name") or Path(source).stem or source
    cycles = f.integer(doc.get("cycles"), "cycles", default=1, minimum=1, bits=None)
    expect = _expectations(f, doc.get("expect"))
    objects = _ObjectsReader(source, warnings).read(_object_items(f, doc.get("objects")))
    conf, conf_doc = _conf(doc.get("schedulerConf"), source, conf_override, warnings)
    document = copy.deepcopy(doc)
    if conf_override is not None:
        document["schedulerConf"] = conf_doc
    return Scenario(
        name=name,
        source=source,
        conf=conf,
        objects=objects,
        cycles=cycles,
        expect=expect,
        warnings=warnings,
        document=document,
    )


def _object_items(f: _Fields, value: Any) -> list[tuple[str, Any]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        if value.get("kind") != "List":
            f.fail("objects", f"expected a list or a kind: List document, got a {describe(value.get('kind'))} mapping")
        return [("objects", value)]
    if not isinstance(value, list):
        f.fail("objects", f"expected a list, got {describe(value)}")
    return [(f"objects[{i}]", item) for i, item in enumerate(value)]


def _conf(
    embedded: Any, source: str, override: tuple[str, str] | None, warnings: list[str]
) -> tuple[SchedulerConf, Any]:
    """The conf in force and the document it came from (None for the default)."""
    if override is not None:
        text, conf_source = override
        if embedded is not None:
            warnings.append(f"schedulerConf: the scenario's own conf is overridden by {conf_source}")
        return parse_scheduler_conf(text, conf_source, warnings), text
    if embedded is None:
        return default_scheduler_conf(), None
    if not isinstance(embedded, (Mapping, str)):
        raise ScenarioError(
            source, "schedulerConf", "", f"expected a mapping or a YAML string, got {describe(embedded)}"
        )
    return parse_scheduler_conf(embedded, source, warnings), embedded


# ---------------------------------------------------------------- expectations


def _object_key(f: _Fields, key: Any, field: str) -> str:
    if not isinstance(key, str) or key.count("/") != 1 or not all(key.split("/")):
        f.fail(field, f'expected a "namespace/name" key, got {describe(key)}')
    return key


def _expectations(f: _Fields, value: Any) -> Expectations:
    doc = f.mapping(value, "expect")
    for key in doc:
        if key not in _EXPECT_KEYS:
            f.fail(f"expect.{key}", f"unknown expectation (known: {', '.join(sorted(_EXPECT_KEYS))})")
    out = Expectations()
    if doc.get("binds") is not None:
        out.binds = {
            _object_key(f, k, "expect.binds"): f.string(v, f"expect.binds[{k}]", required=True)
            for k, v in f.mapping(doc["binds"], "expect.binds").items()
        }
    if doc.get("evicted") is not None:
        out.evicted = [
            _object_key(f, item, f"expect.evicted[{i}]")
            for i, item in enumerate(f.sequence(doc["evicted"], "expect.evicted"))
        ]
    if doc.get("pipelined") is not None:
        out.pipelined = {}
        for k, v in f.mapping(doc["pipelined"], "expect.pipelined").items():
            field = f"expect.pipelined[{k}]"
            nodes = [f.string(n, f"{field}[{i}]", required=True) for i, n in enumerate(f.sequence(v, field))]
            if not nodes:
                f.fail(field, "expected at least one node")
            out.pipelined[_object_key(f, k, "expect.pipelined")] = nodes
    if doc.get("podGroupPhases") is not None:
        out.pod_group_phases = {
            _object_key(f, k, "expect.podGroupPhases"): f.choice(v, f"expect.podGroupPhases[{k}]", _POD_GROUP_PHASES)
            for k, v in f.mapping(doc["podGroupPhases"], "expect.podGroupPhases").items()
        }
    if doc.get("taskStatusCounts") is not None:
        out.task_status_counts = {}
        for k, v in f.mapping(doc["taskStatusCounts"], "expect.taskStatusCounts").items():
            field = f"expect.taskStatusCounts[{k}]"
            counts = {}
            for status, n in f.mapping(v, field).items():
                f.choice(status, f"{field}", _TASK_STATUSES)
                counts[status] = f.integer(n, f"{field}.{status}", minimum=0, bits=None)
            out.task_status_counts[_object_key(f, k, "expect.taskStatusCounts")] = counts
    out.bind_count = f.integer(doc.get("bindCount"), "expect.bindCount", minimum=0, bits=None)
    out.evict_count = f.integer(doc.get("evictCount"), "expect.evictCount", minimum=0, bits=None)
    return out


# ---------------------------------------------------------------- typed field access


class _Fields:
    """Typed reads from one object; a failure names the file, the object and the field."""

    def __init__(self, file: str, obj: str) -> None:
        self.file = file
        self.obj = obj

    def fail(self, field: str, reason: str) -> NoReturn:
        raise ScenarioError(self.file, self.obj, field, reason)

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.fail(field, f"expected a mapping, got {describe(value)}")
        for key in value:
            if not isinstance(key, str):
                self.fail(field, f"expected string keys, got {describe(key)}")
        return dict(value)

    def sequence(self, value: Any, field: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(field, f"expected a list, got {describe(value)}")
        return value

    def string(self, value: Any, field: str, default: str = "", required: bool = False) -> str:
        if value is None or value == "":
            if required:
                self.fail(field, "missing")
            return default
        if not isinstance(value, str):
            hint = " (quote it)" if isinstance(value, (bool, int, float)) else ""
            self.fail(field, f"expected a string, got {describe(value)}{hint}")
        return value

    def choice(self, value: Any, field: str, choices: set[str], default: str = "") -> str:
        text = self.string(value, field, default, required=not default and "" not in choices)
        if text not in choices and text != default:
            self.fail(field, f"expected one of {', '.join(sorted(choices))}, got {describe(text)}")
        return text

    def integer(
        self,
        value: Any,
        field: str,
        default: int | None = None,
        minimum: int | None = None,
        bits: int | None = 32,
    ) -> Any:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, f"expected an integer, got {describe(value)}")
        if minimum is not None and value < minimum:
            self.fail(field, f"must be at least {minimum}, got {value}")
        if bits == 32 and not _INT32[0] <= value <= _INT32[1]:
            self.fail(field, f"out of the int32 range, got {value}")
        return value

    def boolean(self, value: Any, field: str, default: bool | None = None) -> Any:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(field, f"expected true or false, got {describe(value)}")
        return value

    def str_map(self, value: Any, field: str) -> dict[str, str]:
        result = self.mapping(value, field)
        for key, item in result.items():
            if not isinstance(item, str):
                self.fail(f"{field}.{key}", f"expected a string, got {describe(item)} (quote it)")
        return result

    def resources(self, value: Any, field: str) -> k8s.ResourceList:
        result: k8s.ResourceList = {}
        for name, raw in self.mapping(value, field).items():
            try:
                quantity = Quantity.parse(raw)
            except ValueError as err:
                self.fail(f"{field}.{name}", str(err))
            if quantity.is_negative():
                self.fail(f"{field}.{name}", f"must not be negative, got {raw}")
            result[name] = quantity
        return result

    def timestamp(self, value: Any, field: str) -> str | None:
        if value is None or value == "":
            return None
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
        if isinstance(value, str):
            try:
                if datetime.fromisoformat(value).tzinfo is not None:
                    return value
            except ValueError:
                pass
        if isinstance(value, (str, date)):
            self.fail(field, f"expected an RFC 3339 time such as 2024-01-01T00:00:00Z, got {describe(str(value))}")
        self.fail(field, f"expected an RFC 3339 time, got {describe(value)}")


# ---------------------------------------------------------------- objects


LEAF = None
Schema = dict[str, Any]  # key -> LEAF | Schema (a mapping) | [Schema] (a list of mappings)

_META: Schema = dict.fromkeys(
    [
        "name",
        "namespace",
        "uid",
        "labels",
        "annotations",
        "creationTimestamp",
        "deletionTimestamp",
        # bookkeeping the scheduler never reads, dropped without a warning
        "resourceVersion",
        "generation",
        "managedFields",
        "selfLink",
        "ownerReferences",
        "finalizers",
        "generateName",
        "deletionGracePeriodSeconds",
    ]
)
_CONDITION: Schema = dict.fromkeys(
    ["type", "status", "reason", "message", "lastTransitionTime", "lastProbeTime", "lastHeartbeatTime", "transitionID"]
)
_REQUIREMENT: Schema = dict.fromkeys(["key", "operator", "values"])
_TERM: Schema = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
_CONTAINER: Schema = {"name": LEAF, "resources": {"requests": LEAF, "limits": LEAF}}
_SCHEMAS: dict[str, Schema] = {
    "Node": {
        "metadata": _META,
        "spec": {"unschedulable": LEAF, "taints": [dict.fromkeys(["key", "value", "effect", "timeAdded"])]},
        "status": {"allocatable": LEAF, "capacity": LEAF, "conditions": [_CONDITION]},
    },
    "Pod": {
        "metadata": _META,
        "spec": {
            "nodeName": LEAF,
            "containers": [_CONTAINER],
            "initContainers": [{**_CONTAINER, "restartPolicy": LEAF}],
            "overhead": LEAF,
            "priority": LEAF,
            "priorityClassName": LEAF,
            "preemptionPolicy": LEAF,
            "nodeSelector": LEAF,
            "schedulerName": LEAF,
            "schedulingGates": [{"name": LEAF}],
            "tolerations": [dict.fromkeys(["key", "operator", "value", "effect", "tolerationSeconds"])],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_TERM]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": LEAF, "preference": _TERM}],
                }
            },
        },
        "status": {"phase": LEAF, "nominatedNodeName": LEAF, "conditions": [_CONDITION]},
    },
    "PodGroup": {
        "metadata": _META,
        "spec": dict.fromkeys(["minMember", "minTaskMember", "minResources", "queue", "priorityClassName"]),
        "status": {"phase": LEAF, "conditions": [_CONDITION], "running": LEAF, "succeeded": LEAF, "failed": LEAF},
    },
    "Queue": {
        "metadata": _META,
        "spec": {
            **dict.fromkeys(["weight", "capability", "deserved", "reclaimable", "priority", "parent"]),
            "guarantee": {"resource": LEAF},
        },
        "status": {"state": LEAF},
    },
    "PriorityClass": {
        "metadata": _META,
        **dict.fromkeys(["value", "preemptionPolicy", "globalDefault", "description"]),
    },
    "ResourceQuota": {"metadata": _META, "spec": {"hard": LEAF}, "status": {"used": LEAF, "hard": LEAF}},
}


def _unknown_fields(doc: Any, schema: Schema, prefix: str, out: set[str]) -> None:
    """Add to `out` the path of every key of `doc` that `schema` does not name."""
    if not isinstance(doc, Mapping):
        return
    for key, value in doc.items():
        path = f"{prefix}{key}"
        if key in ("apiVersion", "kind") and not prefix:
            continue
        if key not in schema:
            out.add(path)
            continue
        sub = schema[key]
        if isinstance(sub, dict):
            _unknown_fields(value, sub, path + ".", out)
        elif isinstance(sub, list) and isinstance(value, list):
            for item in value:
                _unknown_fields(item, sub[0], path + "[].", out)


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


class _ObjectsReader:
    """Turns located documents into ClusterObjects, collecting warnings."""

    def __init__(self, file: str, warnings: list[str]) -> None:
        self.file = file
        self.warnings = warnings
        self.objects = k8s.ClusterObjects()
        self.seen: dict[tuple[str, str, str], str] = {}  # (kind, ns, name) -> where
        self.uids: dict[tuple[str, str], str] = {}  # (kind, uid) -> label
        self.unknown_fields: dict[str, set[str]] = defaultdict(set)
        self.ignored: dict[str, list[str]] = defaultdict(list)  # "Kind apiVersion" -> names

    def read(self, located: list[tuple[str, Any]]) -> k8s.ClusterObjects:
        for where, doc in located:
            self._one(where, doc)
        for kind_version, names in self.ignored.items():
            if len(names) == 1:
                self.warnings.append(f"ignored object kind {kind_version} {names[0]}")
            else:
                self.warnings.append(f"ignored {len(names)} objects of kind {kind_version}: {_listing(names)}")
        for kind, paths in self.unknown_fields.items():
            if not paths:
                continue
            order = sorted(paths, key=lambda p: (not p.startswith("spec"), not p.startswith("status"), p))
            self.warnings.append(f"ignored fields of {kind} (not read by the scheduler): {_listing(order)}")
        _reference_warnings(self.objects, self.warnings)
        return self.objects

    def _one(self, where: str, doc: Any) -> None:
        if not isinstance(doc, Mapping):
            raise ScenarioError(self.file, where, "", f"expected a Kubernetes object (a mapping), got {describe(doc)}")
        f = _Fields(self.file, where)
        kind = f.string(doc.get("kind"), "kind", required=True)
        if kind == "List":
            for i, item in enumerate(f.sequence(doc.get("items"), "items")):
                self._one(f"{where}.items[{i}]", item)
            return
        api_version = doc.get("apiVersion")
        if kind not in _READERS:
            meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
            name = str(meta.get("name") or "?")
            name = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
            self.ignored[f"{kind} {api_version}"].append(name)
            return
        f.obj = f"{kind} at {where}"
        name, namespace, uid = self._identity(f, kind, doc, where)
        if api_version != _API_VERSIONS[kind]:
            self.warnings.append(
                f"{f.obj}: apiVersion {describe(api_version)} is not {_API_VERSIONS[kind]}; read it as that"
            )
        _READERS[kind](f, doc, name, namespace, uid, self.objects)
        _unknown_fields(doc, _SCHEMAS[kind], "", self.unknown_fields[kind])

    def _identity(self, f: _Fields, kind: str, doc: Mapping[str, Any], where: str) -> tuple[str, str, str]:
        meta = f.mapping(doc.get("metadata"), "metadata")
        name = f.string(meta.get("name"), "metadata.name", required=True)
        namespace = ""
        if kind in _NAMESPACED:
            namespace = f.string(meta.get("namespace"), "metadata.namespace", default="default")
        f.obj = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        key = (kind, namespace, name)
        if key in self.seen:
            f.fail("metadata.name", f"duplicate {kind} (also at {self.seen[key]})")
        self.seen[key] = where
        if kind == "Pod":
            derived = f"{namespace}-{name}"  # upstream's unit tests build pod UIDs this way
        else:
            derived = "-".join(p for p in (kind.lower(), namespace, name) if p)
        uid = f.string(meta.get("uid"), "metadata.uid", default=derived)
        if (kind, uid) in self.uids:
            f.fail("metadata.uid", f"uid {uid} is also the uid of {self.uids[(kind, uid)]}; set metadata.uid")
        self.uids[(kind, uid)] = f.obj
        return name, namespace, uid


def _meta(f: _Fields, doc: Mapping[str, Any]) -> dict[str, Any]:
    meta = f.mapping(doc.get("metadata"), "metadata")
    return {
        "labels": f.str_map(meta.get("labels"), "metadata.labels"),
        "annotations": f.str_map(meta.get("annotations"), "metadata.annotations"),
        "creation_timestamp": f.timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp") or "",
    }


def _read_node(f: _Fields, doc: Mapping[str, Any], name: str, _ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    taints = []
    for i, item in enumerate(f.sequence(spec.get("taints"), "spec.taints")):
        field = f"spec.taints[{i}]"
        taint = f.mapping(item, field)
        taints.append(
            k8s.Taint(
                key=f.string(taint.get("key"), f"{field}.key", required=True),
                effect=f.choice(
                    taint.get("effect"), f"{field}.effect", {"NoSchedule", "PreferNoSchedule", "NoExecute"}
                ),
                value=f.string(taint.get("value"), f"{field}.value"),
            )
        )
    capacity = f.resources(status.get("capacity"), "status.capacity")
    allocatable = capacity
    if status.get("allocatable") is not None:
        allocatable = f.resources(status.get("allocatable"), "status.allocatable")
    ready = True  # only a Ready condition that is not "True" makes the node not ready
    for i, cond in enumerate(f.sequence(status.get("conditions"), "status.conditions")):
        condition = _condition(f, cond, f"status.conditions[{i}]")
        if condition.type == "Ready":
            ready = condition.status == "True"
    meta = _meta(f, doc)
    out.nodes.append(
        k8s.Node(
            name=name,
            uid=uid,
            **meta,
            unschedulable=f.boolean(spec.get("unschedulable"), "spec.unschedulable", False),
            taints=taints,
            allocatable=dict(allocatable),
            capacity=dict(capacity),
            ready=ready,
        )
    )


def _condition(f: _Fields, value: Any, field: str) -> k8s.PodCondition:
    cond = f.mapping(value, field)
    return k8s.PodCondition(
        type=f.string(cond.get("type"), f"{field}.type", required=True),
        status=f.string(cond.get("status"), f"{field}.status", required=True),
        reason=f.string(cond.get("reason"), f"{field}.reason"),
        message=f.string(cond.get("message"), f"{field}.message"),
    )


def _container(f: _Fields, value: Any, field: str, init: bool) -> k8s.Container:
    doc = f.mapping(value, field)
    resources = f.mapping(doc.get("resources"), f"{field}.resources")
    # API defaulting: a resource with a limit but no request requests its limit.
    requests = f.resources(resources.get("limits"), f"{field}.resources.limits")
    requests.update(f.resources(resources.get("requests"), f"{field}.resources.requests"))
    restart_policy = None
    if init and doc.get("restartPolicy") is not None:
        restart_policy = f.choice(doc.get("restartPolicy"), f"{field}.restartPolicy", {"Always"})
    return k8s.Container(
        name=f.string(doc.get("name"), f"{field}.name"), requests=requests, restart_policy=restart_policy
    )


def _selector_term(f: _Fields, value: Any, field: str) -> k8s.NodeSelectorTerm:
    doc = f.mapping(value, field)
    lists = {}
    for key in ("matchExpressions", "matchFields"):
        requirements = []
        for i, item in enumerate(f.sequence(doc.get(key), f"{field}.{key}")):
            path = f"{field}.{key}[{i}]"
            req = f.mapping(item, path)
            values = [
                f.string(v, f"{path}.values[{j}]", required=True)
                for j, v in enumerate(f.sequence(req.get("values"), f"{path}.values"))
            ]
            requirements.append(
                k8s.NodeSelectorRequirement(
                    key=f.string(req.get("key"), f"{path}.key", required=True),
                    operator=f.choice(
                        req.get("operator"), f"{path}.operator", {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
                    ),
                    values=values,
                )
            )
        lists[key] = requirements
    return k8s.NodeSelectorTerm(match_expressions=lists["matchExpressions"], match_fields=lists["matchFields"])


def _node_affinity(f: _Fields, spec: Mapping[str, Any]) -> k8s.NodeAffinity | None:
    affinity = f.mapping(spec.get("affinity"), "spec.affinity")
    if affinity.get("nodeAffinity") is None:
        return None
    base = "spec.affinity.nodeAffinity"
    node_affinity = f.mapping(affinity["nodeAffinity"], base)
    required = None
    if node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        field = f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
        selector = f.mapping(node_affinity[field.rsplit(".", 1)[1]], field)
        terms = f.sequence(selector.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms")
        required = [_selector_term(f, t, f"{field}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)]
    preferred = []
    field = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, item in enumerate(f.sequence(node_affinity.get(field.rsplit(".", 1)[1]), field)):
        entry = f.mapping(item, f"{field}[{i}]")
        weight = f.integer(entry.get("weight"), f"{field}[{i}].weight", minimum=1)
        if weight is None or weight > 100:
            f.fail(f"{field}[{i}].weight", f"expected an integer from 1 to 100, got {describe(weight)}")
        preferred.append(
            k8s.PreferredSchedulingTerm(
                weight=weight, preference=_selector_term(f, entry.get("preference"), f"{field}[{i}].preference")
            )
        )
    return k8s.NodeAffinity(required=required, preferred=preferred)


def _tolerations(f: _Fields, spec: Mapping[str, Any]) -> list[k8s.Toleration]:
    result = []
    for i, item in enumerate(f.sequence(spec.get("tolerations"), "spec.tolerations")):
        field = f"spec.tolerations[{i}]"
        doc = f.mapping(item, field)
        f.integer(doc.get("tolerationSeconds"), f"{field}.tolerationSeconds", bits=None)
        result.append(
            k8s.Toleration(
                key=f.string(doc.get("key"), f"{field}.key"),
                operator=f.choice(doc.get("operator"), f"{field}.operator", {"Equal", "Exists"}, default="Equal"),
                value=f.string(doc.get("value"), f"{field}.value"),
                effect=f.choice(
                    doc.get("effect"), f"{field}.effect", {"", "NoSchedule", "PreferNoSchedule", "NoExecute"}
                ),
            )
        )
    return result


def _read_pod(f: _Fields, doc: Mapping[str, Any], name: str, ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    meta = f.mapping(doc.get("metadata"), "metadata")
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    gates = []
    for i, item in enumerate(f.sequence(spec.get("schedulingGates"), "spec.schedulingGates")):
        gates.append(
            f.string(
                f.mapping(item, f"spec.schedulingGates[{i}]").get("name"),
                f"spec.schedulingGates[{i}].name",
                required=True,
            )
        )
    pod = k8s.Pod(
        name=name,
        namespace=ns,
        uid=uid,
        **_meta(f, doc),
        deletion_timestamp=f.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        node_name=f.string(spec.get("nodeName"), "spec.nodeName"),
        containers=[
            _container(f, c, f"spec.containers[{i}]", init=False)
            for i, c in enumerate(f.sequence(spec.get("containers"), "spec.containers"))
        ],
        init_containers=[
            _container(f, c, f"spec.initContainers[{i}]", init=True)
            for i, c in enumerate(f.sequence(spec.get("initContainers"), "spec.initContainers"))
        ],
        overhead=f.resources(spec.get("overhead"), "spec.overhead"),
        priority=f.integer(spec.get("priority"), "spec.priority"),
        priority_class_name=f.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        preemption_policy=f.choice(
            spec.get("preemptionPolicy"), "spec.preemptionPolicy", {"", "PreemptLowerPriority", "Never"}
        ),
        node_selector=f.str_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        node_affinity=_node_affinity(f, spec),
        tolerations=_tolerations(f, spec),
        scheduler_name=f.string(spec.get("schedulerName"), "spec.schedulerName", default=k8s.DEFAULT_SCHEDULER_NAME),
        scheduling_gates=gates,
        phase=f.string(status.get("phase"), "status.phase", default="Pending"),
        nominated_node_name=f.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        conditions=[
            _condition(f, c, f"status.conditions[{i}]")
            for i, c in enumerate(f.sequence(status.get("conditions"), "status.conditions"))
        ],
    )
    out.pods.append(pod)


def _read_pod_group(f: _Fields, doc: Mapping[str, Any], name: str, ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    min_task_member = {
        role: f.integer(n, f"spec.minTaskMember.{role}", minimum=0)
        for role, n in f.mapping(spec.get("minTaskMember"), "spec.minTaskMember").items()
    }
    conditions = []
    for i, item in enumerate(f.sequence(status.get("conditions"), "status.conditions")):
        field = f"status.conditions[{i}]"
        cond = _condition(f, item, field)
        transition = f.string(f.mapping(item, field).get("transitionID"), f"{field}.transitionID")
        conditions.append(
            k8s.PodGroupCondition(
                type=cond.type, status=cond.status, transition_id=transition, reason=cond.reason, message=cond.message
            )
        )
    out.pod_groups.append(
        k8s.PodGroup(
            name=name,
            namespace=ns,
            uid=uid,
            **_meta(f, doc),
            min_member=f.integer(spec.get("minMember"), "spec.minMember", default=0, minimum=0),
            min_task_member=min_task_member,
            min_resources=(
                None if spec.get("minResources") is None else f.resources(spec["minResources"], "spec.minResources")
            ),
            queue=f.string(spec.get("queue"), "spec.queue", default="default"),
            priority_class_name=f.string(spec.get("priorityClassName"), "spec.priorityClassName"),
            phase=f.string(status.get("phase"), "status.phase"),
            conditions=conditions,
        )
    )


def _read_queue(f: _Fields, doc: Mapping[str, Any], name: str, _ns: str, uid: str, out: k8s.ClusterObjects) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    weight = f.integer(spec.get("weight"), "spec.weight", default=1, minimum=0)
    guarantee = f.mapping(spec.get("guarantee"), "spec.guarantee")
    meta = _meta(f, doc)
    meta.pop("labels")
    out.queues.append(
        k8s.Queue(
            name=name,
            uid=uid,
            **meta,
            weight=weight or 1,  # upstream's admission webhook turns 0 into 1
            capability=f.resources(spec.get("capability"), "spec.capability"),
            guarantee=f.resources(guarantee.get("resource"), "spec.guarantee.resource"),
            deserved=f.resources(spec.get("deserved"), "spec.deserved"),
            reclaimable=f.boolean(spec.get("reclaimable"), "spec.reclaimable"),
            priority=f.integer(spec.get("priority"), "spec.priority", default=0),
            parent=f.string(spec.get("parent"), "spec.parent"),
            state=f.choice(
                status.get("state"), "status.state", {"Open", "Closed", "Closing", "Unknown"}, default="Open"
            ),
        )
    )


def _read_priority_class(
    f: _Fields, doc: Mapping[str, Any], name: str, _ns: str, _uid: str, out: k8s.ClusterObjects
) -> None:
    value = f.integer(doc.get("value"), "value")
    if value is None:
        f.fail("value", "missing")
    f.string(doc.get("description"), "description")
    out.priority_classes.append(
        k8s.PriorityClass(
            name=name,
            value=value,
            preemption_policy=f.choice(
                doc.get("preemptionPolicy"),
                "preemptionPolicy",
                {"PreemptLowerPriority", "Never"},
                default="PreemptLowerPriority",
            ),
            global_default=f.boolean(doc.get("globalDefault"), "globalDefault", False),
        )
    )


def _read_resource_quota(
    f: _Fields, doc: Mapping[str, Any], name: str, ns: str, _uid: str, out: k8s.ClusterObjects
) -> None:
    spec = f.mapping(doc.get("spec"), "spec")
    status = f.mapping(doc.get("status"), "status")
    f.resources(status.get("hard"), "status.hard")
    out.resource_quotas.append(
        k8s.ResourceQuota(
            name=name,
            namespace=ns,
            hard=f.resources(spec.get("hard"), "spec.hard"),
            used=f.resources(status.get("used"), "status.used"),
        )
    )


_READERS: dict[str, Callable[[_Fields, Mapping[str, Any], str, str, str, k8s.ClusterObjects], None]] = {
    "Node": _read_node,
    "Pod": _read_pod,
    "PodGroup": _read_pod_group,
    "Queue": _read_queue,
    "PriorityClass": _read_priority_class,
    "ResourceQuota": _read_resource_quota,
}


# ---------------------------------------------------------------- references


def _reference_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    """Warn, once per missing target, about names that point at no object."""
    # The scheduler creates the `default` and `root` queues at start-up when they are absent.
    queues = {q.name for q in objects.queues} | {"default", "root"}
    groups = {g.key for g in objects.pod_groups}
    nodes = {n.name for n in objects.nodes}
    missing: dict[tuple[str, str], list[str]] = defaultdict(list)
    for group in objects.pod_groups:
        if group.queue not in queues:
            missing[("queue", group.queue)].append(f"PodGroup {group.key}")
    for pod in objects.pods:
        group = pod.annotations.get(k8s.GROUP_NAME_ANNOTATION)
        if group and f"{pod.namespace}/{group}" not in groups:
            missing[("podgroup", f"{pod.namespace}/{group}")].append(f"Pod {pod.key}")
        elif (
            not group
            and pod.scheduler_name == k8s.DEFAULT_SCHEDULER_NAME
            and pod.phase == "Pending"
            and not pod.node_name
        ):
            missing[("nogroup", "")].append(f"Pod {pod.key}")
        if pod.node_name and pod.node_name not in nodes and pod.phase not in ("Succeeded", "Failed"):
            missing[("node", pod.node_name)].append(f"Pod {pod.key}")
    consequence = {
        "queue": "upstream leaves a job whose queue is missing out of the session, so it is never scheduled",
        "podgroup": "its pods belong to no schedulable job (upstream skips a job without its PodGroup)",
        "node": "upstream holds its pods on an uninitialised node, which is NotReady and left out of the snapshot",
    }
    for (what, target), users in missing.items():
        if what == "nogroup":
            warnings.append(
                f"{_listing(users)}: no {k8s.GROUP_NAME_ANNOTATION} annotation, so no job; in a cluster Volcano's "
                "controller would create a PodGroup, here the pod is never scheduled"
            )
        else:
            warnings.append(
                f"{what} {target}, named by {_listing(users)}, is not among the objects: {consequence[what]}"
            )
    for pod in objects.pods:
        if pod.phase not in _POD_PHASES:
            warnings.append(
                f"Pod {pod.key}: status.phase {pod.phase} is no pod phase; upstream treats the task as Unknown"
            )
    for group in objects.pod_groups:
        if group.phase and group.phase not in _POD_GROUP_PHASES:
            warnings.append(f"PodGroup {group.key}: status.phase {group.phase} is no PodGroup phase")
    _priority_class_warnings(objects, warnings)


def _priority_class_warnings(objects: k8s.ClusterObjects, warnings: list[str]) -> None:
    classes = {c.name for c in objects.priority_classes}
    defaults = [c for c in objects.priority_classes if c.global_default]
    if len(defaults) > 1:
        warnings.append(
            f"several global default PriorityClasses ({', '.join(c.name for c in defaults)}); "
            f"upstream keeps the last one it sees ({defaults[-1].name})"
        )
    fallback = f"the global default's value ({defaults[-1].value}, {defaults[-1].name})" if defaults else "0"
    users: dict[str, list[str]] = defaultdict(list)
    for group in objects.pod_groups:
        if group.priority_class_name and group.priority_class_name not in classes:
            users[group.priority_class_name].append(f"PodGroup {group.key}")
    for pod in objects.pods:  # a pod with spec.priority set needs no class
        if pod.priority is None and pod.priority_class_name and pod.priority_class_name not in classes:
            users[pod.priority_class_name].append(f"Pod {pod.key}")
    for name, names in users.items():
        warnings.append(
            f"priorityClassName {name}, named by {_listing(names)}, has no PriorityClass among the objects: "
            f"it gets {fallback}"
        )
