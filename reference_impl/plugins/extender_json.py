"""The extender plugin's wire format: request bodies as Go's encoding/json writes upstream's request structs,
and responses read as Go's json.Decoder reads them into upstream's response structs
(pkg/scheduler/plugins/extender/argument.go).

Requests. Upstream marshals its session objects (api.TaskInfo, api.NodeInfo, api.JobInfo, api.QueueInfo)
whole: Go structs without json tags, so every exported field under its Go name, in declaration order; the
Kubernetes objects inside (Pod, Node, PodGroup, Queue) with their json tags and omitempty. The reference
renders the fields an extender reads to decide, under the same names, in the same order and with the same
value encodings (Go's shortest float format, integral floats without a fraction, `<`, `>`, `&` escaped as
\\u003c, \\u003e, \\u0026, map keys sorted, nil maps and pointers as null), and leaves the rest out:

- Resource: MilliCPU, Memory, ScalarResources (null when the reference's map is nil), MaxTaskNum.
- TaskInfo: UID, Job, Name, Namespace, TaskRole, Resreq, InitResreq, NodeName, EvictionOccurred,
  JobAllocatedHyperNode, Status (the TaskStatus bit: Pending 1, Allocated 2, Pipelined 4, Binding 8, Bound 16,
  Running 32, Releasing 64, Succeeded 128, Failed 256, Unknown 512), Priority, Preemptable, BestEffort,
  SchGated, RevocableZone, Pod. Not rendered: DRAResreq, ResourceClaimKeys, ResourceClaimDRAResreq,
  LastTransaction, VolumeReady, HasRestartableInitContainer, NumaInfo, PodAnnotations,
  CustomBindErrHandlerSucceeded.
- Pod: metadata (name, namespace, uid, labels, annotations), spec (containers[].name, .image,
  .resources.requests; initContainers likewise; nodeName, nodeSelector, schedulerName, priority,
  priorityClassName), status.phase. Requests are the reference's (limits folded in, as the API server
  defaults them); limits, affinity, tolerations, volumes and every other Pod field are not rendered.
- NodeInfo: Name, Node, Releasing, Pipelined, Idle, Used, Allocatable, Capacity, Tasks (by namespace/name),
  RevocableZone. Not rendered: State, ResourceUsage, NumaInfo, UnassignedNumaPods, NumaSchedulerInfo,
  Others, OversubscriptionNode, OfflineJobEvicting, OversubscriptionResource, ImageStates, Generation,
  BindGeneration.
- Node: metadata (name, labels, annotations; not uid, which the reference invents when a scenario omits it), spec (unschedulable, taints), status (capacity,
  allocatable). Not rendered: conditions, images, addresses and the rest.
- JobInfo: UID, Name, Namespace, Queue, Priority, MinAvailable, AllocatedHyperNode, Tasks (by task UID),
  TaskMinAvailable, TaskMinAvailableTotal, Allocated, TotalRequest, PodGroup, Preemptable. Not rendered:
  PgUID, WaitingTime, JobFitErrors, NodesFitErrors, NetworkTopology, SubJobs, TaskToSubJob, MinSubJobs,
  TaskStatusIndex, CreationTimestamp, ScheduleStartTimestamp, RevocableZone, Budget.
- PodGroup: metadata (name, namespace, uid, labels, annotations), spec (minMember, minTaskMember, queue,
  priorityClassName, minResources), status.phase; not Version or the status counts and conditions.
- QueueInfo: UID, Name, Weight, Queue. Not rendered: Weights, Hierarchy.
- Queue: metadata (name, annotations), spec (weight, capability, guarantee.resource, deserved, reclaimable,
  parent, priority), status.state.
- OnSessionOpen: Jobs, Nodes, Queues (maps by id), NamespaceInfo and RevocableNodes (empty maps: the
  reference has neither), NodeList (null: upstream never sets it).
- Nowhere: TypeMeta (kind, apiVersion; informer objects have none, the Go adapter's objects do).

Checked against upstream (the Go adapter, the same scenarios, the bodies compared value by value): every
rendered value and the order of the rendered fields match, except a node's capacity when the scenario gives
only `allocatable` (the reference uses it for both, the adapter leaves capacity empty).

Responses. Go decodes the first JSON value of the body into the response struct: an object's keys match the
struct's json names exactly or, failing that, ignoring case; unknown keys are ignored; null leaves a field
as it was; a value of the wrong type (a string for an int, 1.5 or 1e2 for an int, a number beyond int64)
is an error that does not stop the rest of the object from being decoded. Trailing bytes after the first
value are not read. `decode` reproduces this for the response shapes upstream has.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from schedcheck.reference.plugins.extender_schema import STRUCTS

if TYPE_CHECKING:
    from schedcheck.reference.api.job_info import JobInfo
    from schedcheck.reference.api.node_info import NodeInfo
    from schedcheck.reference.api.queue_info import QueueInfo
    from schedcheck.reference.api.resource_info import Resource
    from schedcheck.reference.api.task_info import TaskInfo
    from schedcheck.reference.k8s import Container, Node, Pod, PodGroup, Queue


class GoJSONError(Exception):
    """json.Marshal or json.Decoder failed; the message is one line."""


# ---------------------------------------------------------------- encoding (json.Marshal)

_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_HTML_RE = re.compile("[<>&\u2028\u2029]")


def go_float(value: float) -> str:
    """strconv.AppendFloat as encoding/json uses it: shortest digits, exponent form below 1e-6 and from 1e21."""
    if math.isnan(value) or math.isinf(value):
        raise GoJSONError(f"json: unsupported value: {'NaN' if math.isnan(value) else ('+Inf' if value > 0 else '-Inf')}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        text = repr(value)  # Python's shortest repr already uses an exponent in this range
        return re.sub(r"e([+-])0(\d)$", r"e\1\2", text)
    if value == int(value):
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def go_string(text: str) -> str:
    return _HTML_RE.sub(lambda m: _HTML_ESCAPES[m.group(0)], json.dumps(text, ensure_ascii=False))


def marshal(value: Any) -> bytes:
    """Encode a tree of dict / list / str / int / float / bool / None as Go writes it (dicts in the order
    given: struct fields; callers sort the keys of what Go holds as a map)."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(go_float(value))
    elif isinstance(value, str):
        out.append(go_string(value))
    elif isinstance(value, dict):
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if index:
                out.append(",")
            out.append(go_string(str(key)))
            out.append(":")
            _encode(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:  # pragma: no cover - every renderer below yields the types above
        raise GoJSONError(f"json: unsupported type: {type(value).__name__}")


def _sorted_map(items: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if items is None else {key: items[key] for key in sorted(items)}


def _resource_list(resources: dict[str, Any]) -> dict[str, str]:
    return {name: str(resources[name]) for name in sorted(resources)}


def render_resource(resource: Resource | None) -> dict[str, Any] | None:
    if resource is None:
        return None
    return {"MilliCPU": resource.milli_cpu, "Memory": resource.memory,
            "ScalarResources": _sorted_map(resource.scalars), "MaxTaskNum": int(resource.max_task_num)}


# ---------------------------------------------------------------- Kubernetes objects, whole

_NESTED = re.compile(r"^((?:\*|\[\]|map\[string\])*)(.*)$")


def _go_time(value: Any) -> str | None:
    """metav1.Time's MarshalJSON: RFC 3339 in UTC to the second, null for the zero time."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime.datetime):
        moment = value
    elif isinstance(value, datetime.date):
        moment = datetime.datetime(value.year, value.month, value.day)
    else:
        try:
            moment = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment.replace(microsecond=0).isoformat() + "Z"


def _go_quantity(value: Any) -> str:
    from schedcheck.reference.quantity import Quantity

    if value is None:
        return "0"
    try:
        return str(Quantity.parse(value))
    except (ValueError, TypeError, ArithmeticError):
        return str(value)


def _empty(go_type: str, value: Any) -> bool:
    """encoding/json's omitempty: false, 0, "", a nil pointer and an empty slice or map; never a struct."""
    if go_type.startswith("*"):
        return value is None
    if go_type.startswith("[]") or go_type.startswith("map["):
        return not value
    if go_type in ("string", "bool") or go_type.startswith(("int", "uint", "float")):
        return not value
    return False


def _zero(go_type: str, value: Any) -> bool:
    """omitzero: the type's zero value (a struct all of whose fields are zero, the zero time)."""
    if go_type == "Time":
        return value is None
    return _empty(go_type, value)


def render_go(go_type: str, value: Any) -> Any:
    """A scenario value rendered as Go writes the typed field after decoding it (extender_schema's layout):
    struct fields in declaration order with their omitempty / omitzero, map keys sorted, quantities in
    canonical form, times in RFC 3339 UTC; an absent value as the Go zero value."""
    prefix, base = _NESTED.match(go_type).groups()
    if prefix.startswith("*"):
        return None if value is None else render_go(go_type[1:], value)
    if prefix.startswith("[]"):
        if value is None:
            return None
        return [render_go(go_type[2:], item) for item in (value if isinstance(value, list) else [value])]
    if prefix.startswith("map[string]"):
        if value is None:
            return None
        inner = go_type[len("map[string]"):]
        items = value if isinstance(value, dict) else {}
        return {str(key): render_go(inner, items[key]) for key in sorted(items, key=str)}
    layout = STRUCTS.get(base)
    if layout is not None:
        return _render_struct(layout, value if isinstance(value, dict) else {})
    if base == "string":
        return "" if value is None else (value if isinstance(value, str) else str(value))
    if base == "bool":
        return value is True
    if base.startswith(("int", "uint")):
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    if base.startswith("float"):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    if base == "Quantity":
        return _go_quantity(value)
    if base == "Time":
        return _go_time(value)
    if base == "IntOrString":
        return value if isinstance(value, (int, str)) and not isinstance(value, bool) else 0
    return value  # Raw: RawExtension, FieldsV1 and the like, as given


def _render_struct(layout: tuple[tuple[str, str, str], ...], value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, go_type, flags in layout:
        if "i" in flags:
            if go_type != "metav1.TypeMeta":  # TypeMeta: informer objects carry none
                out.update(render_go(go_type, value))
            continue
        rendered = render_go(go_type, value.get(name))
        if ("e" in flags and _empty(go_type, rendered)) or ("z" in flags and _zero(go_type, rendered)):
            continue
        out[name] = rendered
    return out


def _raw(obj: Any) -> dict[str, Any]:
    """A copy of the scenario's document for `obj` (an empty one when the object was built in code), with
    its metadata, spec and status as dicts, ready for the reference's own values to be laid over it."""
    raw = getattr(obj, "raw", None)
    doc = copy.deepcopy(raw.doc) if raw is not None else {}
    for part in ("metadata", "spec", "status"):
        if not isinstance(doc.get(part), dict):
            doc[part] = {}
    return doc


def _set(target: dict[str, Any], key: str, value: Any) -> None:
    """Lay the reference's value over the document's (None or empty: the field as absent)."""
    if value is None or value == {} or value == [] or value == "":
        target.pop(key, None)
    else:
        target[key] = value


def _containers(raw: Any, containers: list[Container]) -> list[dict[str, Any]]:
    """The document's containers with the requests the reference holds (limits folded in, as the API
    server defaults them)."""
    given = raw if isinstance(raw, list) else []
    out = []
    for index, container in enumerate(containers):
        item = dict(given[index]) if index < len(given) and isinstance(given[index], dict) else {}
        item["name"] = container.name
        resources = dict(item.get("resources") or {}) if isinstance(item.get("resources"), dict) else {}
        _set(resources, "requests", _resource_list(container.requests))
        _set(item, "resources", resources)
        out.append(item)
    return out


def _conditions(raw: Any, conditions: list[Any]) -> list[dict[str, Any]]:
    """The reference's pod conditions, each with the document's other fields for the same type."""
    given = {item.get("type"): item for item in raw if isinstance(item, dict)} if isinstance(raw, list) else {}
    out = []
    for condition in conditions:
        item = dict(given.get(condition.type) or {})
        item.update({"type": condition.type, "status": condition.status})
        for key, value in (("reason", condition.reason), ("message", condition.message),
                           ("lastTransitionTime", condition.last_transition_time)):
            _set(item, key, value)
        out.append(item)
    return out


def render_pod(pod: Pod | None) -> dict[str, Any] | None:
    """The Pod whole: the scenario's document with the reference's values for what the session holds
    (identity, labels, annotations, requests, node name, scheduler name, priority, phase, conditions,
    nominated node, start time), then Go's layout of v1.Pod."""
    if pod is None:
        return None
    doc = _raw(pod)
    metadata, spec, status = doc["metadata"], doc["spec"], doc["status"]
    metadata.update({"name": pod.name, "namespace": pod.namespace, "uid": pod.uid})
    _set(metadata, "labels", pod.labels)
    _set(metadata, "annotations", pod.annotations)
    spec["containers"] = _containers(spec.get("containers"), pod.containers) or None
    _set(spec, "initContainers", _containers(spec.get("initContainers"), pod.init_containers))
    _set(spec, "nodeName", pod.node_name)
    _set(spec, "nodeSelector", pod.node_selector)
    _set(spec, "schedulerName", pod.scheduler_name)
    _set(spec, "priorityClassName", pod.priority_class_name)
    _set(spec, "preemptionPolicy", pod.preemption_policy)
    if pod.priority is not None:  # a pointer: present whenever set, even 0
        spec["priority"] = pod.priority
    else:
        spec.pop("priority", None)
    _set(status, "phase", pod.phase)
    _set(status, "nominatedNodeName", pod.nominated_node_name)
    _set(status, "startTime", pod.start_time or status.get("startTime"))
    _set(status, "conditions", _conditions(status.get("conditions"), pod.conditions))
    return render_go("v1.Pod", doc)


def render_task(task: TaskInfo | None) -> dict[str, Any] | None:
    if task is None:
        return None
    return {
        "UID": task.uid, "Job": task.job, "Name": task.name, "Namespace": task.namespace,
        "TaskRole": task.task_role, "Resreq": render_resource(task.resreq),
        "InitResreq": render_resource(task.init_resreq),
        "NodeName": task.node_name, "EvictionOccurred": bool(task.eviction_occurred),
        "JobAllocatedHyperNode": task.job_allocated_hyper_node, "Status": int(task.status),
        "Priority": int(task.priority), "Preemptable": bool(task.preemptable), "BestEffort": bool(task.best_effort),
        "HasRestartableInitContainer": any(c.restart_policy == "Always" for c in task.pod.init_containers)
        if task.pod is not None else False,
        "SchGated": bool(task.sch_gated), "RevocableZone": task.revocable_zone, "Pod": render_pod(task.pod),
        "PodAnnotations": _sorted_map(task.pod_annotations) if task.pod_annotations is not None
        else (_sorted_map(task.pod.annotations) if task.pod is not None and task.pod.annotations else None),
    }


def _tasks(tasks: dict[str, TaskInfo], by_pod_key: bool = False) -> dict[str, Any]:
    """A TasksMap, sorted as Go sorts map keys: a job's keyed by task UID, a node's by the pod's
    namespace/name (NodeInfo.AddTask keys by PodKey)."""
    keyed = {(task.key if by_pod_key else task.uid): task for task in tasks.values()}
    return {key: render_task(keyed[key]) for key in sorted(keyed)}


def render_k8s_node(node: Node | None) -> dict[str, Any] | None:
    """The Node whole: the scenario's document with the reference's name, labels, annotations,
    unschedulable, taints, capacity and allocatable (each standing in for the other when one is absent, as
    the adapter and a kubelet have both), then Go's layout of v1.Node. Not the uid the reference invents
    when the scenario gives none."""
    if node is None:
        return None
    doc = _raw(node)
    metadata, spec, status = doc["metadata"], doc["spec"], doc["status"]
    metadata["name"] = node.name
    _set(metadata, "labels", node.labels)
    _set(metadata, "annotations", node.annotations)
    _set(spec, "unschedulable", node.unschedulable or None)
    taints = {(t.get("key"), t.get("effect")): t for t in spec.get("taints") or [] if isinstance(t, dict)}
    _set(spec, "taints", [{**taints.get((t.key, t.effect), {}), "key": t.key, "value": t.value, "effect": t.effect}
                          for t in node.taints])
    _set(status, "capacity", _resource_list(node.capacity))
    _set(status, "allocatable", _resource_list(node.allocatable))
    return render_go("v1.Node", doc)


def render_node(node: NodeInfo | None) -> dict[str, Any] | None:
    if node is None:
        return None
    return {
        "Name": node.name, "Node": render_k8s_node(node.node), "Releasing": render_resource(node.releasing),
        "Pipelined": render_resource(node.pipelined), "Idle": render_resource(node.idle),
        "Used": render_resource(node.used), "Allocatable": render_resource(node.allocatable),
        "Capacity": render_resource(node.capacity), "Tasks": _tasks(node.tasks, by_pod_key=True), "RevocableZone": "",
    }


def render_pod_group(pod_group: PodGroup | None) -> dict[str, Any] | None:
    """The PodGroup whole: the scenario's document with the reference's identity, labels, annotations,
    minMember, minTaskMember, queue, priorityClassName, minResources and phase, then Go's layout of
    v1beta1.PodGroup."""
    if pod_group is None:
        return None
    doc = _raw(pod_group)
    metadata, spec, status = doc["metadata"], doc["spec"], doc["status"]
    metadata.update({"name": pod_group.name, "namespace": pod_group.namespace, "uid": pod_group.uid})
    _set(metadata, "labels", pod_group.labels)
    _set(metadata, "annotations", pod_group.annotations)
    _set(spec, "minMember", pod_group.min_member or None)
    _set(spec, "minTaskMember", pod_group.min_task_member)
    _set(spec, "queue", pod_group.queue)
    _set(spec, "priorityClassName", pod_group.priority_class_name)
    _set(spec, "minResources", _resource_list(pod_group.min_resources) if pod_group.min_resources else None)
    _set(status, "phase", pod_group.phase)
    # api.PodGroup embeds the PodGroup (its fields inline) and adds Version, always v1beta1 from the cache
    return {**render_go("vc.PodGroup", doc), "Version": "v1beta1"}


def render_job(job: JobInfo | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "UID": job.uid, "PgUID": job.pod_group.uid if job.pod_group is not None else "", "Name": job.name, "Namespace": job.namespace, "Queue": job.queue,
        "Priority": int(job.priority), "MinAvailable": int(job.min_available),
        "AllocatedHyperNode": job.allocated_hyper_node, "Tasks": _tasks(job.tasks),
        "TaskMinAvailable": _sorted_map(job.task_min_available),
        "TaskMinAvailableTotal": int(job.task_min_available_total),
        "Allocated": render_resource(job.allocated), "TotalRequest": render_resource(job.total_request),
        "CreationTimestamp": _go_time(job.pod_group.creation_timestamp) if job.pod_group is not None else None,
        "PodGroup": render_pod_group(job.pod_group), "Preemptable": bool(job.preemptable),
    }


def render_k8s_queue(queue: Queue | None) -> dict[str, Any] | None:
    """The Queue whole: the scenario's document with the reference's name, annotations, weight,
    capability, reclaimable, guarantee, deserved, parent, priority and state, then Go's layout of
    v1beta1.Queue. Not the uid the reference invents when the scenario gives none."""
    if queue is None:
        return None
    doc = _raw(queue)
    metadata, spec, status = doc["metadata"], doc["spec"], doc["status"]
    metadata["name"] = queue.name
    metadata["uid"] = queue.uid
    _set(metadata, "annotations", queue.annotations)
    spec["weight"] = int(queue.weight)
    _set(spec, "capability", _resource_list(queue.capability))
    _set(spec, "reclaimable", queue.reclaimable)
    guarantee = dict(spec.get("guarantee") or {}) if isinstance(spec.get("guarantee"), dict) else {}
    _set(guarantee, "resource", _resource_list(queue.guarantee))
    spec["guarantee"] = guarantee
    _set(spec, "deserved", _resource_list(queue.deserved))
    _set(spec, "parent", queue.parent)
    _set(spec, "priority", queue.priority or None)
    _set(status, "state", queue.state)
    return render_go("vc.Queue", doc)


def render_queue(queue: QueueInfo | None) -> dict[str, Any] | None:
    if queue is None:
        return None
    annotations = queue.queue.annotations if queue.queue is not None else {}
    return {"UID": queue.uid, "Name": queue.name, "Weight": int(queue.weight),
            "Weights": annotations.get("volcano.sh/hierarchy-weights", ""),
            "Hierarchy": annotations.get("volcano.sh/hierarchy", ""), "Queue": render_k8s_queue(queue.queue)}


# ---------------------------------------------------------------- decoding (json.Decoder.Decode)

# The response fields upstream reads, per shape: json name -> kind.
RESPONSE_SHAPES: dict[str, dict[str, str]] = {
    "predicate": {"status": "string", "code": "int"},
    "prioritize": {"nodeScore": "float_map", "errorMessage": "string"},
    "victims": {"status": "int", "victims": "task_list"},
    "status_int": {"status": "int"},
    "overused": {"overused": "bool"},
    "status_bool": {"status": "bool"},
    "error_message": {"errorMessage": "string"},
    "empty": {},
}
_INT64 = (-(1 << 63), (1 << 63) - 1)
_WHITESPACE = " \t\r\n"


def _first_value(text: str) -> tuple[Any, str]:
    """The first JSON value of the body, numbers kept as their literal text (Go checks them per target)."""
    stripped = text.lstrip(_WHITESPACE)
    if not stripped:
        raise GoJSONError("EOF")
    decoder = json.JSONDecoder(parse_float=_Number, parse_int=_Number, parse_constant=_reject_constant)
    try:
        value, _ = decoder.raw_decode(stripped)
    except json.JSONDecodeError as err:
        if err.pos >= len(stripped):
            raise GoJSONError("unexpected EOF") from None
        raise GoJSONError(f"invalid character {stripped[err.pos]!r} at offset {err.pos}") from None
    return value, stripped


class _Number(str):
    """A JSON number's literal text."""


def _reject_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"invalid character {name[0]!r}", name, 0)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Number):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _decode_into(kind: str, value: Any, name: str, errors: list[str]) -> Any:
    """One field's value, or the _KEEP marker on a type error (Go leaves the field as it was)."""
    got = _kind_of(value)
    if kind == "string":
        if got == "string":
            return str(value)
    elif kind == "bool":
        if got == "bool":
            return value
    elif kind == "int":
        if got == "number" and re.fullmatch(r"-?\d+", value):
            number = int(value)
            if _INT64[0] <= number <= _INT64[1]:
                return number
        if got == "number":
            errors.append(f"json: cannot unmarshal number {value} into Go struct field .{name} of type int")
            return _KEEP
    elif kind == "float_map":
        if got == "object":
            out: dict[str, float] = {}
            for key, item in value.items():
                item_kind = _kind_of(item)
                if item_kind == "number" and not math.isinf(float(item)):
                    out[key] = float(item)
                elif item_kind == "null":
                    out[key] = 0.0
                else:
                    errors.append(f"json: cannot unmarshal {item_kind} into Go struct field .{name} of type float64")
            return out
    elif kind == "task_list":
        if got == "array":
            for item in value:
                if item is not None and not isinstance(item, dict):
                    errors.append(f"json: cannot unmarshal {_kind_of(item)} into Go struct field .{name} of type api.TaskInfo")
            return [item if isinstance(item, dict) else None for item in value]
    errors.append(f"json: cannot unmarshal {got} into Go struct field .{name} of type {kind}")
    return _KEEP


_KEEP = object()


def decode(body: bytes, shape: str) -> tuple[dict[str, Any], GoJSONError | None]:
    """The response's fields by json name (absent: the Go zero value was kept), and the decoding error, if any.

    Like Go, a type error in one field leaves that field at its zero value and the other fields decoded;
    the first such error is returned. Victims come back as the JSON objects the server sent (each a
    TaskInfo to upstream); None stands for a null element.
    """
    fields = RESPONSE_SHAPES[shape]
    result: dict[str, Any] = {}
    try:
        value, _ = _first_value(body.decode("utf-8", errors="replace"))
    except GoJSONError as err:
        return result, err
    if value is None:
        return result, None
    if not isinstance(value, dict):
        return result, GoJSONError(f"json: cannot unmarshal {_kind_of(value)} into Go value of type response")
    errors: list[str] = []
    for key, item in value.items():
        name = key if key in fields else next((f for f in fields if f.lower() == key.lower()), None)
        if name is None or item is None:
            continue
        decoded = _decode_into(fields[name], item, name, errors)
        if decoded is not _KEEP:
            result[name] = decoded
    return result, GoJSONError(errors[0]) if errors else None


def victim_uid(victim: dict[str, Any] | None) -> str | None:
    """The UID a returned victim names (Go matches the TaskInfo field UID ignoring case), or None."""
    if victim is None:
        return None
    for key, value in victim.items():
        if key == "UID" and isinstance(value, str):
            return value
    for key, value in victim.items():
        if key.lower() == "uid" and isinstance(value, str):
            return value
    return None
