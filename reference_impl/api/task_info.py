"""TaskInfo: one pod as the scheduler sees it (pkg/scheduler/api/job_info.go, pod_info.go, helpers.go)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from schedcheck.reference.api.dra_resource import DRAResource
from schedcheck.reference.api.resource_info import PODS, Resource
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.k8s import (
    GROUP_NAME_ANNOTATION,
    PREEMPTABLE_KEY,
    TASK_PRIORITY_ANNOTATION,
    TASK_SPEC_KEY,
    Pod,
)
from schedcheck.reference.util.pod_resources import (
    effective_requests,
    is_pod_resize_infeasible,
    is_supported_pod_level_resource,
    pod_level_limits_set,
    pod_level_requests_set,
)
from schedcheck.reference.util.timestamps import parse_timestamp

REVOCABLE_ZONE_ANNOTATION = "volcano.sh/revocable-zone"
QUEUE_ALLOCATION_GATE = "scheduling.volcano.sh/queue-allocation-gate"
_GO_INT = re.compile(r"^[+-]?\d+$")
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def has_only_volcano_scheduling_gate(pod: Pod) -> bool:
    """HasOnlyVolcanoSchedulingGate: the pod's one scheduling gate is Volcano's queue-allocation gate."""
    return len(pod.scheduling_gates) == 1 and pod.scheduling_gates[0] == QUEUE_ALLOCATION_GATE


def has_queue_allocation_gate_annotation(pod: Pod) -> bool:
    """HasQueueAllocationGateAnnotation: the pod opted in (the gate's name as annotation, exactly "true")."""
    return pod.annotations.get(QUEUE_ALLOCATION_GATE) == "true"


def parse_go_bool(value: str) -> bool | None:
    """strconv.ParseBool: None when the text is not a Go boolean."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def parse_go_int(value: str) -> int | None:
    return int(value) if _GO_INT.match(value) else None


def get_task_status(pod: Pod) -> TaskStatus:
    """Pod phase (and deletion, and node) -> task status, as getTaskStatus."""
    phase = pod.phase
    if phase == "Running":
        return TaskStatus.Releasing if pod.deletion_timestamp else TaskStatus.Running
    if phase == "Pending":
        if pod.deletion_timestamp:
            return TaskStatus.Releasing
        return TaskStatus.Bound if pod.node_name else TaskStatus.Pending
    if phase == "Succeeded":
        return TaskStatus.Succeeded
    if phase == "Failed":
        return TaskStatus.Failed
    return TaskStatus.Unknown


def _own_resources(container, limits: bool, infeasible: bool) -> Resource:
    """A container's request (limit); with a status entry carrying `resources` (in-place resize, the
    InPlacePodVerticalScaling gate locked on), determineContainerReqs for requests and max(spec, actuated)
    for limits (upstream leaves the PodResizePending condition out of the limits)."""
    status = container.status_resources
    if status is None:
        listed = container.limits if limits else container.requests
    elif limits:
        listed = effective_requests(False, container.limits, status.limits, {})
    else:
        listed = effective_requests(infeasible, container.requests, status.requests, container.allocated_resources)
    return Resource.from_resource_list(listed)


def _aggregate_containers(pod: Pod, limits: bool) -> Resource:
    """Regular containers summed; each init container plus the sidecars before it, maxed in; sidecars summed.
    Resize status counts for regular containers and sidecars (their entries in containerStatuses and
    initContainerStatuses), not for the other init containers."""
    infeasible = is_pod_resize_infeasible(pod)
    result = Resource()
    for container in pod.containers:
        result.add(_own_resources(container, limits, infeasible))
    restartable = Resource()
    init_max = Resource()
    for container in pod.init_containers:
        if container.restart_policy == "Always":
            request = _own_resources(container, limits, infeasible)
            result.add(request)
            restartable.add(request)
            candidate = restartable
        else:
            request = Resource.from_resource_list(container.limits if limits else container.requests)
            candidate = Resource().add(request).add(restartable)
        init_max.set_max_resource(candidate)
    result.set_max_resource(init_max)
    return result


def _replace_by_pod_level(resource: Resource, pod_level: dict) -> None:
    """The supported resources the pod level names take its values (upstream's amend functions)."""
    given = Resource.from_resource_list(pod_level)
    for name in pod_level:
        if not is_supported_pod_level_resource(name):
            continue
        if name == "cpu":
            resource.milli_cpu = given.milli_cpu
        elif name == "memory":
            resource.memory = given.memory
        else:
            resource.scalars[name] = (given.scalars or {}).get(name, 0.0)


def amend_resource_according_to_pod_features(resource: Resource, pod: Pod) -> None:
    """amendResourceAccordingToPodFeatures: pod-level requests (PodLevelResources on) in place of the
    containers' for cpu, memory and hugepages, then overhead added."""
    if resource.scalars is None:
        resource.scalars = {}
    if pod_level_requests_set(pod):
        _replace_by_pod_level(resource, pod.resources.requests)
    if pod.overhead:
        resource.add(Resource.from_resource_list(pod.overhead))


def amend_resource_limit_according_to_pod_features(resource: Resource, pod: Pod) -> None:
    """amendResourceLimitAccordingToPodFeatures: pod-level limits in place of the containers'; overhead added
    only to a dimension whose limit is not zero."""
    if resource.scalars is None:
        resource.scalars = {}
    if pod_level_limits_set(pod):
        _replace_by_pod_level(resource, pod.resources.limits)
    if pod.overhead:
        overhead = Resource.from_resource_list(pod.overhead)
        if resource.milli_cpu != 0:
            resource.milli_cpu += overhead.milli_cpu
        if resource.memory != 0:
            resource.memory += overhead.memory
        for name, quantity in (overhead.scalars or {}).items():
            if resource.scalars.get(name, 0) != 0:
                resource.scalars[name] += quantity


def get_pod_resource_request(pod: Pod) -> Resource:
    """GetPodResourceRequest: containers aggregated, pods=1, then pod-level requests and overhead."""
    result = _aggregate_containers(pod, limits=False)
    result.add_scalar(PODS, 1)
    amend_resource_according_to_pod_features(result, pod)
    return result


def get_pod_resource_limit(pod: Pod) -> Resource:
    """GetPodResourceLimit: container limits aggregated, then pod-level limits and overhead (usage's estimator)."""
    result = _aggregate_containers(pod, limits=True)
    amend_resource_limit_according_to_pod_features(result, pod)
    return result


def get_pod_preemptable(pod: Pod) -> bool:
    for source in (pod.annotations, pod.labels):
        if PREEMPTABLE_KEY in source:
            return parse_go_bool(source[PREEMPTABLE_KEY]) is True
    return True


def get_pod_revocable_zone(pod: Pod) -> str:
    if REVOCABLE_ZONE_ANNOTATION in pod.annotations:
        return "*" if pod.annotations[REVOCABLE_ZONE_ANNOTATION] == "*" else ""
    if parse_go_bool(pod.annotations.get(PREEMPTABLE_KEY, "")) is True:
        return "*"
    return ""


def get_task_role(pod: Pod) -> str:
    return pod.annotations.get(TASK_SPEC_KEY) or pod.labels.get(TASK_SPEC_KEY, "")


def get_job_id(pod: Pod) -> str:
    group = pod.annotations.get(GROUP_NAME_ANNOTATION, "")
    return f"{pod.namespace}/{group}" if group else ""


@dataclass
class TransactionContext:
    node_name: str = ""
    eviction_occurred: bool = False
    status: TaskStatus = TaskStatus.Pending

    def clone(self) -> TransactionContext:
        return TransactionContext(self.node_name, self.eviction_occurred, self.status)


class TaskInfo:
    """A pod in scheduler terms. `resreq` and `init_resreq` start as ONE object, as upstream."""

    __slots__ = (
        "uid", "job", "name", "namespace", "task_role", "priority", "pod", "resreq", "init_resreq",
        "preemptable", "best_effort", "revocable_zone", "sch_gated", "node_name", "status",
        "eviction_occurred", "last_transaction", "creation_timestamp", "job_allocated_hyper_node",
        "dra_resreq", "claim_dra_resreq", "claim_keys", "pod_annotations",
    )

    def __init__(self, pod: Pod) -> None:
        request = get_pod_resource_request(pod)
        self.uid = pod.uid
        self.job = get_job_id(pod)
        self.name = pod.name
        self.namespace = pod.namespace
        self.task_role = get_task_role(pod)
        self.priority = pod.priority if pod.priority is not None else 1
        annotated = parse_go_int(pod.annotations.get(TASK_PRIORITY_ANNOTATION, "x"))
        if annotated is not None and -(2**31) <= annotated < 2**31:
            self.priority = annotated
        self.pod = pod
        self.resreq = request
        self.init_resreq = request
        self.preemptable = get_pod_preemptable(pod)
        self.best_effort = request.is_empty()
        self.revocable_zone = get_pod_revocable_zone(pod)
        self.sch_gated = bool(pod.scheduling_gates)
        self.node_name = pod.node_name
        self.status = get_task_status(pod)
        self.eviction_occurred = False
        self.last_transaction: TransactionContext | None = None
        self.creation_timestamp = parse_timestamp(pod.creation_timestamp)
        self.job_allocated_hyper_node = ""  # the job's hypernode while allocate places this task
        # DRA (cache/dra.py): devices and capacity asked per DeviceClass, the same per claim, and the claims'
        # keys (sorted); None / empty for a pod without claims, as upstream's nil maps
        self.dra_resreq: dict[str, DRAResource] | None = None
        self.claim_dra_resreq: dict[str, dict[str, DRAResource]] = {}
        self.claim_keys: list[str] = []
        # Annotations the scheduler wrote for the bind (upstream's PodAnnotations beyond the pod's own):
        # the shared-device choice (api/devices); None until one is written
        self.pod_annotations: dict[str, str] | None = None

    @property
    def key(self) -> str:
        """The task's namespace/name (its pod's, unless an extender's victim was decoded otherwise)."""
        return f"{self.namespace}/{self.name}"

    @property
    def pod_key(self) -> str:
        """PodKey(task.Pod): what nodes index tasks by (a nil Pod panics here, as upstream's PodKey)."""
        pod = self.pod
        return f"{pod.namespace}/{pod.name}"

    def clone(self) -> TaskInfo:
        """Upstream Clone: separate request copies, same pod object, no EvictionOccurred."""
        c = TaskInfo.__new__(TaskInfo)
        c.uid = self.uid
        c.job = self.job
        c.name = self.name
        c.namespace = self.namespace
        c.task_role = self.task_role
        c.priority = self.priority
        c.pod = self.pod
        c.resreq = self.resreq.clone()
        c.init_resreq = self.init_resreq.clone()
        c.preemptable = self.preemptable
        c.best_effort = self.best_effort
        c.revocable_zone = self.revocable_zone
        c.sch_gated = self.sch_gated
        c.node_name = self.node_name
        c.status = self.status
        c.eviction_occurred = False
        c.last_transaction = self.last_transaction.clone() if self.last_transaction else None
        c.creation_timestamp = self.creation_timestamp
        c.job_allocated_hyper_node = ""
        c.dra_resreq = self.dra_resreq  # never mutated after the cache builds them
        c.claim_dra_resreq = self.claim_dra_resreq
        c.claim_keys = self.claim_keys
        c.pod_annotations = dict(self.pod_annotations) if self.pod_annotations is not None else None
        return c

    def is_sch_gated_by_others(self) -> bool:
        """Gated by something other than Volcano's own queue-allocation gate."""
        return any(gate != QUEUE_ALLOCATION_GATE for gate in self.pod.scheduling_gates)

    def generate_last_tx_context(self) -> None:
        self.last_transaction = TransactionContext(self.node_name, self.eviction_occurred, self.status)

    def clear_last_tx_context(self) -> None:
        self.last_transaction = None

    def __repr__(self) -> str:
        return f"Task({self.key} {self.status.name} node={self.node_name or '-'})"
