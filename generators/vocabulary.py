"""The words generated documents use: label and annotation keys, names, taints and tolerations, pod
states, the base time. One place, so every strategy and check speaks the same vocabulary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache

from hypothesis import strategies as st

BASE_TIME = datetime(2026, 5, 1, 8, 0, 0, tzinfo=UTC)
"""Jobs are created within the hour after this; queues and classes long before."""

GROUP_NAME = "scheduling.k8s.io/group-name"
TASK_SPEC = "volcano.sh/task-spec"
PREEMPTABLE = "volcano.sh/preemptable"
SLA_WAITING_TIME = "volcano.sh/sla-waiting-time"
HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
CPU_USAGE = "schedcheck.io/cpu-usage-avg"
MEM_USAGE = "schedcheck.io/mem-usage-avg"
METRICS_TIME = "schedcheck.io/metrics-time"
# nodegroup: a node's group (label) and a queue's per-group limits (annotation, JSON)
NODE_GROUP_LABEL = "volcano.sh/nodegroup-name"
NODE_GROUP_LIMITS = "volcano.sh/nodegroup-resource-limits"
NODE_GROUPS = ("pool-a", "pool-b", "pool-c")
# cdp: a pod's cooldown (label, then annotation), a Go duration
COOLDOWN_TIME = "volcano.sh/cooldown-time"
# task-topology: PodGroup annotations naming the job's roles (the pods' task-spec)
TASK_TOPOLOGY_AFFINITY = "volcano.sh/task-topology-affinity"
TASK_TOPOLOGY_ANTI_AFFINITY = "volcano.sh/task-topology-anti-affinity"
TASK_TOPOLOGY_ORDER = "volcano.sh/task-topology-task-order"

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
ACCELERATOR_LABEL = "accelerator"
ZONES = ("zone-a", "zone-b", "zone-c")
SCHEDULING_GATE = "example.com/quota-check"  # a gate some controller removes when it sees fit
# Container images pods run and nodes hold (nodeorder's ImageLocality): the name a pod gives, the names a
# node's status.images lists (with the ":latest" the kubelet reports for an untagged pull), the size.
IMAGES: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("registry.local/train:v1", ("registry.local/train:v1",), 800 * 1024 * 1024),
    ("registry.local/spark:3.5", ("registry.local/spark:3.5",), 400 * 1024 * 1024),
    ("busybox", ("docker.io/library/busybox:latest", "busybox:latest"), 60 * 1024 * 1024),
)
SCHEDULER_NAME = "volcano"

NAMESPACES = ("default", "ml", "data", "team-a")
QUEUE_NAMES = ("default", "prod", "dev", "research", "batch", "infra", "web", "ops")
PRIORITY_CLASS_NAMES = ("low", "high", "critical", "batch")
# job kind -> its roles (the vcjob task names); "batch" pods carry no task-spec annotation.
JOB_KINDS: dict[str, tuple[str, ...]] = {
    "batch": (),
    "tf": ("ps", "worker"),
    "mpi": ("master", "worker"),
    "spark": ("driver", "executor"),
}

CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
NODE_TAINTS: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
    {"key": "maintenance", "value": "true", "effect": "NoExecute"},
)
TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
    {"key": "spot", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "maintenance", "operator": "Equal", "value": "true", "effect": "NoExecute"},
    {"operator": "Exists"},  # tolerate everything (daemonset style)
)

PENDING, RUNNING, BOUND, RELEASING, SUCCEEDED, FAILED = (
    "Pending", "Running", "Bound", "Releasing", "Succeeded", "Failed")
POD_STATES = (PENDING, RUNNING, BOUND, RELEASING, SUCCEEDED, FAILED)
PLACED_STATES = frozenset({RUNNING, BOUND, RELEASING})  # on a node, holding its resources
TERMINATED_STATES = frozenset({SUCCEEDED, FAILED})  # on a node, holding nothing


@cache
def unique_names(pool: tuple[str, ...], min_size: int, max_size: int) -> st.SearchStrategy[list[str]]:
    """Distinct names from the pool, in pool order of preference (shrinks to the first ones)."""
    return st.lists(st.sampled_from(pool), unique=True, min_size=min_size, max_size=max_size)


def group_pods(group: dict, docs: list[dict]) -> list[dict]:
    """The pods among `docs` that name PodGroup `group` (same namespace, the group-name annotation)."""
    meta = group["metadata"]
    return [d for d in docs if d["kind"] == "Pod" and d["metadata"]["namespace"] == meta["namespace"]
            and d["metadata"].get("annotations", {}).get(GROUP_NAME) == meta["name"]]


def timestamp(seconds: float) -> str:
    """RFC 3339 time `seconds` after BASE_TIME."""
    return (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def seconds_of(text: str) -> int:
    """The inverse of timestamp(): whole seconds after BASE_TIME."""
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return int((moment - BASE_TIME).total_seconds())
