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

import json
import math
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

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


def _omit_empty(fields: dict[str, Any]) -> dict[str, Any]:
    """Kubernetes' omitempty: leave out "", 0, false, empty maps and lists, and nil."""
    return {key: value for key, value in fields.items()
            if value is not None and value != "" and value is not False and value != {} and value != []
            and not (isinstance(value, int) and not isinstance(value, bool) and value == 0)}


def render_resource(resource: Resource | None) -> dict[str, Any] | None:
    if resource is None:
        return None
    return {"MilliCPU": resource.milli_cpu, "Memory": resource.memory,
            "ScalarResources": _sorted_map(resource.scalars), "MaxTaskNum": int(resource.max_task_num)}


def _container(container: Container) -> dict[str, Any]:
    requests = _resource_list(container.requests)
    return _omit_empty({"name": container.name, "image": container.image,
                        "resources": {"requests": requests} if requests else {}})


def render_pod(pod: Pod | None) -> dict[str, Any] | None:
    if pod is None:
        return None
    metadata = _omit_empty({"name": pod.name, "namespace": pod.namespace, "uid": pod.uid,
                            "labels": _sorted_map(pod.labels), "annotations": _sorted_map(pod.annotations)})
    spec = _omit_empty({
        "initContainers": [_container(c) for c in pod.init_containers],
        "containers": [_container(c) for c in pod.containers],
        "nodeSelector": _sorted_map(pod.node_selector),
        "nodeName": pod.node_name,
        "schedulerName": pod.scheduler_name,
        "priorityClassName": pod.priority_class_name,
    })
    if "containers" not in spec:  # containers has no omitempty: an empty list is null
        spec["containers"] = None
    if pod.priority is not None:  # a pointer: present whenever set, even 0
        spec["priority"] = pod.priority
    return {"metadata": metadata, "spec": spec, "status": _omit_empty({"phase": pod.phase})}


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
        "SchGated": bool(task.sch_gated), "RevocableZone": task.revocable_zone, "Pod": render_pod(task.pod),
    }


def _tasks(tasks: dict[str, TaskInfo], by_pod_key: bool = False) -> dict[str, Any]:
    """A TasksMap, sorted as Go sorts map keys: a job's keyed by task UID, a node's by the pod's
    namespace/name (NodeInfo.AddTask keys by PodKey)."""
    keyed = {(task.key if by_pod_key else task.uid): task for task in tasks.values()}
    return {key: render_task(keyed[key]) for key in sorted(keyed)}


def render_k8s_node(node: Node | None) -> dict[str, Any] | None:
    if node is None:
        return None
    metadata = _omit_empty({"name": node.name, "labels": _sorted_map(node.labels),
                            "annotations": _sorted_map(node.annotations)})
    taints = [_omit_empty({"key": t.key, "value": t.value, "effect": t.effect}) for t in node.taints]
    spec = _omit_empty({"unschedulable": node.unschedulable, "taints": taints})
    status = _omit_empty({"capacity": _resource_list(node.capacity), "allocatable": _resource_list(node.allocatable)})
    return {"metadata": metadata, "spec": spec, "status": status}


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
    if pod_group is None:
        return None
    metadata = _omit_empty({"name": pod_group.name, "namespace": pod_group.namespace, "uid": pod_group.uid,
                            "labels": _sorted_map(pod_group.labels),
                            "annotations": _sorted_map(pod_group.annotations)})
    spec = _omit_empty({"minMember": pod_group.min_member, "minTaskMember": _sorted_map(pod_group.min_task_member),
                        "queue": pod_group.queue, "priorityClassName": pod_group.priority_class_name,
                        "minResources": _resource_list(pod_group.min_resources or {})})
    return {"metadata": metadata, "spec": spec, "status": _omit_empty({"phase": pod_group.phase})}


def render_job(job: JobInfo | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "UID": job.uid, "Name": job.name, "Namespace": job.namespace, "Queue": job.queue,
        "Priority": int(job.priority), "MinAvailable": int(job.min_available),
        "AllocatedHyperNode": job.allocated_hyper_node, "Tasks": _tasks(job.tasks),
        "TaskMinAvailable": _sorted_map(job.task_min_available),
        "TaskMinAvailableTotal": int(job.task_min_available_total),
        "Allocated": render_resource(job.allocated), "TotalRequest": render_resource(job.total_request),
        "PodGroup": render_pod_group(job.pod_group), "Preemptable": bool(job.preemptable),
    }


def render_k8s_queue(queue: Queue | None) -> dict[str, Any] | None:
    if queue is None:
        return None
    metadata = _omit_empty({"name": queue.name, "annotations": _sorted_map(queue.annotations)})
    spec: dict[str, Any] = {"weight": int(queue.weight)}  # weight has no omitempty
    spec.update(_omit_empty({"capability": _resource_list(queue.capability)}))
    if queue.reclaimable is not None:
        spec["reclaimable"] = queue.reclaimable
    guarantee = _resource_list(queue.guarantee)
    spec["guarantee"] = {"resource": guarantee} if guarantee else {}
    spec.update(_omit_empty({"deserved": _resource_list(queue.deserved), "parent": queue.parent,
                             "priority": queue.priority}))
    return {"metadata": metadata, "spec": spec, "status": _omit_empty({"state": queue.state})}


def render_queue(queue: QueueInfo | None) -> dict[str, Any] | None:
    if queue is None:
        return None
    return {"UID": queue.uid, "Name": queue.name, "Weight": int(queue.weight), "Queue": render_k8s_queue(queue.queue)}


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
