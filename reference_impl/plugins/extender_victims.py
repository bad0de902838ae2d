"""The victims of an extender's preemptable / reclaimable reply, decoded as upstream decodes them
(pkg/scheduler/plugins/extender/argument.go PreemptableResponse: `Victims []*api.TaskInfo`).

Upstream hands the session each victim as a new TaskInfo that encoding/json filled from the reply, whatever
it holds: not the evictee the action offered, not the session's task. The reference does the same:

- every field the reference's TaskInfo has comes from the entry (Go's names, matched exactly or, failing
  that, ignoring case); a field the entry does not give (or gives as null) is Go's zero value: "" for the
  strings (UID, Job, Name, Namespace, NodeName, ...), 0 for Status and Priority, false for the booleans, and
  nil for the pointers `Resreq`, `InitResreq` and `Pod` (util/nil.py: reading through a nil one is
  upstream's nil pointer dereference, which panics) and `LastTransaction` (None: both sides check it);
- a `null` entry is a nil *TaskInfo (the session's intersection or ValidateVictims reads through it);
- the `Pod`: one that renders exactly as a pod the session holds (by its namespace/name) is that pod (the
  same values; nothing on the eviction path writes to it); any other is read by the decoder the scenario
  reader registers (`set_pod_decoder`: the scenario format is a Pod's JSON form), its document kept for
  rendering; one the reader refuses is a decoding error;
- values of the wrong JSON type (a string for a bool, 1.5 for Priority, a Priority beyond int32, ...) are a
  decoding error, and so the whole reply fails, as Go's Decoder does.

What follows is upstream's, through the reference's mirror of it: ValidateVictims adds each victim's Resreq;
the victims queue orders them by their own fields; the statement's Evict replaces the job's task of that UID
by the copy (or adds it: a UID the job lacks becomes a new task of it), swaps the node's entry of the Pod's
namespace/name (on the node the copy's NodeName names) for the copy, and fires the deallocate handlers with
it; at commit the cache evicts its own task of that Job and UID, or fails (no such job or task), and the
statement then unevicts the copy, which stays in its job as Running. Docs/findings.md has the consequences.

Not modelled: fields the reference's TaskInfo does not hold are type-checked only (DRAResreq,
ResourceClaimKeys, ResourceClaimDRAResreq: the copy takes them from the session's task of that Job and
UID, as an echo would carry them; NumaInfo and HasRestartableInitContainer: the reference derives them from
the Pod; VolumeReady, CustomBindErrHandlerSucceeded, LastTransaction.JobAllocatedHyperNode: not read);
PodAnnotations keeps only what differs from the Pod's own annotations (what the reference keeps); a key
repeated in one object keeps its last value (Go merges repeated objects into one); a negative Status reads
as 0 (neither matches a status upstream names); the Pod's JSON is read by the scenario reader, which is
stricter than Go in places (it refuses what the API server would, and matches keys exactly). A copy whose Pod's
labels name another subgroup of its job moves there when the statement evicts it (JobInfo matches a task's
subgroup again on every add, as upstream).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.task_info import TaskInfo, TransactionContext
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.plugins import extender_json as wire
from schedcheck.reference.util.nil import Nil, is_nil
from schedcheck.reference.util.timestamps import parse_timestamp

if TYPE_CHECKING:
    from schedcheck.reference.k8s import Pod

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
_INT = re.compile(r"^-?(0|[1-9]\d*)$")

# TaskInfo's fields as Go decodes them (the embedded TransactionContext's promoted): name -> kind
TASK_FIELDS: dict[str, str] = {
    "UID": "string", "Job": "string", "Name": "string", "Namespace": "string", "TaskRole": "string",
    "Resreq": "resource", "InitResreq": "resource", "DRAResreq": "object", "ResourceClaimKeys": "array",
    "ResourceClaimDRAResreq": "object", "NodeName": "string", "EvictionOccurred": "bool",
    "JobAllocatedHyperNode": "string", "Status": "int", "LastTransaction": "transaction", "Priority": "int32",
    "VolumeReady": "bool", "Preemptable": "bool", "BestEffort": "bool", "HasRestartableInitContainer": "bool",
    "SchGated": "bool", "RevocableZone": "string", "NumaInfo": "object", "Pod": "pod", "PodAnnotations": "str_map",
    "CustomBindErrHandlerSucceeded": "bool",
}
RESOURCE_FIELDS = {"MilliCPU": "float", "Memory": "float", "ScalarResources": "float_map", "MaxTaskNum": "int"}
TRANSACTION_FIELDS = {"NodeName": "string", "EvictionOccurred": "bool", "JobAllocatedHyperNode": "string",
                      "Status": "int"}


_PRIMITIVE = frozenset({"string", "bool", "int", "int32", "float"})
_GO_TYPES = {"str_map": "map[string]string", "float_map": "map[v1.ResourceName]float64", "resource": "api.Resource",
             "transaction": "api.TransactionContext", "pod": "v1.Pod", "object": "object", "array": "array"}


class VictimDecodeError(ValueError):
    """A victim Go's decoder refuses: the reply fails as a whole; the message is one line."""


PodDecoder = Callable[[dict[str, Any]], "Pod"]
_pod_decoder: PodDecoder | None = None


def set_pod_decoder(decoder: PodDecoder) -> None:
    """The scenario reader's Pod reader (schedcheck/scenario registers it): a Pod's JSON form to a Pod,
    raising ValueError where it refuses the document."""
    global _pod_decoder
    _pod_decoder = decoder


def decode_victims(entries: list[Any], ssn: Any) -> list[TaskInfo | Nil]:
    """Each entry as upstream's decoded TaskInfo (a Nil for null); raises VictimDecodeError."""
    pods: dict[str, list[Pod]] = {}  # the session's pods by namespace/name, gathered at the first Pod to match
    return [Nil(f"*api.TaskInfo (victims[{i}])") if entry is None else _task(entry, f"victims[{i}]", ssn, pods)
            for i, entry in enumerate(entries)]


def _gather_pods(ssn: Any, out: dict[str, list[Pod]]) -> None:
    """The pods the session's jobs and nodes hold, by namespace/name."""
    tasks = [*(t for job in ssn.jobs.values() for t in job.tasks.values()),
             *(t for node in ssn.nodes.values() for t in node.tasks.values())]
    for task in tasks:
        pod = task.pod
        if not is_nil(pod):
            found = out.setdefault(f"{pod.namespace}/{pod.name}", [])
            if all(p is not pod for p in found):
                found.append(pod)
    out.setdefault("", [])  # gathered


def _fields(entry: dict[str, Any], layout: dict[str, str], where: str) -> dict[str, Any]:
    """Go's struct decoding: each key to its field (exact name, else ignoring case), null leaves the field."""
    out: dict[str, Any] = {}
    lower = {name.lower(): name for name in layout}
    for key, value in entry.items():
        name = key if key in layout else lower.get(key.lower())
        if name is None:
            continue
        if value is None:  # a pointer, map or slice goes back to nil; a string, number or bool is left as it is
            if layout[name] not in _PRIMITIVE:
                out.pop(name, None)
            continue
        out[name] = _value(layout[name], value, f"{where}.{name}")
    return out


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str) and type(value) is not str:  # extender_json's number literal
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "number")


def _refuse(value: Any, go_type: str, where: str) -> VictimDecodeError:
    return VictimDecodeError(f"json: cannot unmarshal {_kind(value)} into Go struct field {where} of type {go_type}")


def _int(value: Any, bounds: tuple[int, int], go_type: str, where: str) -> int:
    if _kind(value) == "number" and _INT.match(str(value)) and bounds[0] <= int(str(value)) <= bounds[1]:
        return int(str(value))
    raise _refuse(value, go_type, where)


def _float(value: Any, where: str) -> float:
    if _kind(value) == "number":
        number = float(str(value))
        if not math.isinf(number):
            return number
    raise _refuse(value, "float64", where)


def _value(kind: str, value: Any, where: str) -> Any:
    got = _kind(value)
    if kind in ("string", "bool", "object", "array"):
        if got != kind:
            raise _refuse(value, kind, where)
        return value
    if kind == "int":
        return _int(value, INT64, "int", where)
    if kind == "int32":
        return _int(value, INT32, "int32", where)
    if kind == "float":
        return _float(value, where)
    if got != "object":
        raise _refuse(value, _GO_TYPES[kind], where)
    if kind == "str_map":
        return {k: _value("string", v, f"{where}[{k}]") if v is not None else "" for k, v in value.items()}
    if kind == "float_map":
        return {k: _float(v, f"{where}[{k}]") if v is not None else 0.0 for k, v in value.items()}
    if kind == "resource":
        return _fields(value, RESOURCE_FIELDS, where)
    if kind == "transaction":
        return _fields(value, TRANSACTION_FIELDS, where)
    return value  # pod: decoded with the session at hand (_pod)


def _resource(fields: dict[str, Any] | None, what: str) -> Resource | Nil:
    if fields is None:
        return Nil(what)
    return Resource(fields.get("MilliCPU", 0.0), fields.get("Memory", 0.0), fields.get("ScalarResources"),
                    fields.get("MaxTaskNum", 0))


def _status(value: int) -> TaskStatus:
    return TaskStatus(value if value >= 0 else 0)


def _pod(doc: dict[str, Any] | None, where: str, ssn: Any, pods: dict[str, list[Pod]]) -> Pod | Nil:
    if doc is None:
        return Nil(f"*v1.Pod ({where})")
    if not pods:
        _gather_pods(ssn, pods)
    plain = wire.plain_json(doc)
    meta = plain.get("metadata") if isinstance(plain.get("metadata"), dict) else {}
    key = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    for pod in pods.get(key, ()):
        if wire.render_pod(pod) == plain:
            return pod
    if _pod_decoder is None:
        raise VictimDecodeError(f"{where}: no Pod reader registered (schedcheck.scenario registers it)")
    try:
        return _pod_decoder(plain)
    except ValueError as err:
        raise VictimDecodeError(f"{where}: {err}") from None


def _task(entry: dict[str, Any], where: str, ssn: Any, pods: dict[str, list[Pod]]) -> TaskInfo:
    f = _fields(entry, TASK_FIELDS, f"TaskInfo.{where}")
    pod = _pod(f.get("Pod"), f"{where}.Pod", ssn, pods)
    job = ssn.jobs.get(f.get("Job", ""))
    same = job.tasks.get(f.get("UID", "")) if job is not None else None
    t = TaskInfo.__new__(TaskInfo)
    t.uid, t.job = f.get("UID", ""), f.get("Job", "")
    t.name, t.namespace, t.task_role = f.get("Name", ""), f.get("Namespace", ""), f.get("TaskRole", "")
    t.priority = f.get("Priority", 0)
    t.pod = pod
    t.resreq = _resource(f.get("Resreq"), f"*api.Resource ({where}.Resreq)")
    t.init_resreq = _resource(f.get("InitResreq"), f"*api.Resource ({where}.InitResreq)")
    t.preemptable, t.best_effort = f.get("Preemptable", False), f.get("BestEffort", False)
    t.revocable_zone, t.sch_gated = f.get("RevocableZone", ""), f.get("SchGated", False)
    t.node_name, t.status = f.get("NodeName", ""), _status(f.get("Status", 0))
    t.eviction_occurred = f.get("EvictionOccurred", False)
    last = f.get("LastTransaction")
    t.last_transaction = None if last is None else TransactionContext(
        last.get("NodeName", ""), last.get("EvictionOccurred", False), _status(last.get("Status", 0)))
    # upstream reads the creation time through the Pod (CompareTask): a nil Pod panics there
    t.creation_timestamp = Nil(f"*v1.Pod ({where}.Pod)") if is_nil(pod) else parse_timestamp(pod.creation_timestamp)
    t.job_allocated_hyper_node = f.get("JobAllocatedHyperNode", "")
    t.dra_resreq = same.dra_resreq if same is not None else None
    t.claim_dra_resreq = same.claim_dra_resreq if same is not None else {}
    t.claim_keys = same.claim_keys if same is not None else []
    own = {} if is_nil(pod) else pod.annotations
    annotations = f.get("PodAnnotations")
    extra = None if annotations is None else {k: v for k, v in annotations.items() if own.get(k) != v}
    t.pod_annotations = extra or None
    return t


def echoes(task: TaskInfo | Nil, offered: TaskInfo) -> bool:
    """The decoded victim renders as the offered evictee does: the same task, as far as the rules can tell."""
    return not is_nil(task) and wire.render_task(task) == wire.render_task(offered)
