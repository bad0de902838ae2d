"""Hypothesis strategies for the Kubernetes objects of a scenario, one per kind.

Every strategy emits plain documents, shaped as `kubectl get -o yaml` prints
them (see ../shared/spec/scenario-format.md), never Python model objects:

- `nodes()` / `node_lists()`: allocatable cpu, memory, pods and sometimes GPUs;
  zone labels; taints; cordoned nodes (spec.unschedulable plus the taint
  `kubectl cordon` adds); optional usage annotations for the usage and
  rescheduling plugins.
- `queues()` / `queue_lists()`: weight, capability, guarantee, deserved,
  reclaimable, priority, state; `queue_trees()` draws a hierarchy as a
  networkx tree rooted at `root`, and `hierarchical_queues()` turns one into
  Queue documents with `spec.parent` (the capacity plugin) and the
  `volcano.sh/hierarchy` annotations (hierarchical drf), with quotas that
  nest (a child's capability within its parent's, siblings' deserved and
  guarantees within the parent's).
- `priority_classes()`.
- `jobs()` / `workloads()`: a PodGroup and its pods, consistent with each
  other and with the nodes: per-role minimums match the `volcano.sh/task-spec`
  annotations, minResources (when present) is the sum of the first minMember
  pods' requests, and pods that are already placed (Running, Bound, Releasing,
  Succeeded, Failed) sit on existing nodes whose allocatable they do not
  exceed, that match their node selector and whose NoExecute taints they
  tolerate. A pod that fits nowhere stays Pending, so a generated cluster is
  always a state a real cluster could be in.

`filler_job()` and `system_pods()` take what the nodes have left (a full cluster;
kube-system pods of another scheduler), and `resource_quotas()` writes a
namespace's ResourceQuota with status.used equal to what its pods hold.

Jobs are drawn in two steps: `job_drafts()` draws everything but placement
(pure data, so `st.lists` can drop any job when shrinking), and `place_jobs()`
resolves the drafts against a `NodeLedger` that tracks each node's remaining
capacity exactly.

Shrinking: lists shrink to fewer elements, numbers to their smallest, and
every `sampled_from` lists its simplest choice first; optional features are
drawn with `rarely()`/`sometimes()`, which shrink to "absent".
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from functools import cache
from typing import Any

import networkx as nx
from hypothesis import strategies as st

from schedcheck.generators.quantities import (
    CPU,
    GPU,
    MEMORY,
    PODS,
    Amounts,
    add,
    amounts,
    choice,
    fits,
    format_resources,
    maximum,
    node_gpu_quantities,
    node_pods_quantities,
    node_shapes,
    rarely,
    requests,
    sometimes,
    subtract,
)

# ---------------------------------------------------------------- vocabulary

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

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
ACCELERATOR_LABEL = "accelerator"
ZONES = ("zone-a", "zone-b", "zone-c")
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


_DEDICATED, _SPOT, _GPU_TAINT, _MAINTENANCE = NODE_TAINTS
# (taints, cordoned, ready), one draw per node: mostly a plain Ready node (the shrink target).
_NODE_CONDITIONS = st.sampled_from(
    [((), False, True)] * 16
    + [((t,), False, True) for t in NODE_TAINTS]
    + [((_DEDICATED, _SPOT), False, True), ((_GPU_TAINT, _MAINTENANCE), False, True)]
    + [((), True, True), ((_DEDICATED,), True, True), ((), False, False)]
)


@cache
def _unique_names(pool: tuple[str, ...], min_size: int, max_size: int) -> st.SearchStrategy[list[str]]:
    """Distinct names from the pool, in pool order of preference (shrinks to the first ones)."""
    return st.lists(st.sampled_from(pool), unique=True, min_size=min_size, max_size=max_size)


def timestamp(seconds: float) -> str:
    """RFC 3339 time `seconds` after BASE_TIME."""
    return (BASE_TIME + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------- nodes


@cache
@st.composite
def nodes(
    draw: st.DrawFn,
    name: str = "node-0",
    gpu: bool | None = None,
    metrics: bool = False,
    metrics_time: str | None = None,
    odd: bool = True,
) -> dict[str, Any]:
    """A Node: allocatable (capacity the same), labels, sometimes taints, sometimes cordoned.

    `gpu`: True gives the node GPUs, False never, None sometimes. `metrics` adds the usage
    annotations the usage and rescheduling plugins read, sampled at `metrics_time`.
    """
    cpu, memory = draw(node_shapes(odd))
    allocatable = {CPU: cpu, MEMORY: memory, PODS: draw(node_pods_quantities())}
    has_gpu = gpu if gpu is not None else draw(rarely(20))
    labels = {HOSTNAME_LABEL: name, ZONE_LABEL: draw(choice(ZONES))}
    if has_gpu:
        allocatable[GPU] = draw(node_gpu_quantities())
        labels[ACCELERATOR_LABEL] = "nvidia"
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if metrics:
        metadata["annotations"] = {
            CPU_USAGE: str(draw(choice((10, 50, 90, 30, 70, 100, 0)))),
            MEM_USAGE: str(draw(choice((10, 50, 90, 30, 70)))),
            METRICS_TIME: metrics_time or timestamp(7200),
        }
    spec: dict[str, Any] = {}
    taints, cordoned, ready = draw(_NODE_CONDITIONS)
    if cordoned:  # kubectl cordon
        spec["unschedulable"] = True
        taints = (CORDON_TAINT, *taints)
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": metadata}
    if spec:
        doc["spec"] = spec
    doc["status"] = {
        "capacity": dict(allocatable),
        "allocatable": allocatable,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    return doc


def rename_node(doc: dict[str, Any], name: str) -> dict[str, Any]:
    doc["metadata"]["name"] = name
    doc["metadata"]["labels"][HOSTNAME_LABEL] = name
    return doc


@cache
def node_lists(
    min_size: int = 1,
    max_size: int = 4,
    gpu: bool | None = None,
    metrics: bool = False,
    metrics_time: str | None = None,
    odd: bool = True,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Nodes named node-0, node-1, ... (names follow list order, so shrinking keeps them dense)."""
    return st.lists(
        nodes(gpu=gpu, metrics=metrics, metrics_time=metrics_time, odd=odd), min_size=min_size, max_size=max_size
    ).map(lambda docs: [rename_node(d, f"node-{i}") for i, d in enumerate(docs)])


# ---------------------------------------------------------------- node ledger


def _tolerates(tolerations: Sequence[Mapping[str, str]], taint: Mapping[str, str]) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint["effect"]:
            continue
        if not tol.get("key") and tol.get("operator") == "Exists":
            return True
        if tol.get("key") != taint["key"]:
            continue
        if tol.get("operator") == "Exists" or tol.get("value", "") == taint.get("value", ""):
            return True
    return False


def _selector_matches(selector: Mapping[str, str] | None, labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def _affinity_matches(affinity: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Required node affinity (In / NotIn / Exists on labels), OR over terms, AND within one."""
    if not affinity:
        return True
    required = affinity.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    for term in required.get("nodeSelectorTerms", []):
        ok = True
        for req in term.get("matchExpressions", []):
            value = labels.get(req["key"])
            op = req["operator"]
            if op == "In":
                ok = value is not None and value in req.get("values", [])
            elif op == "NotIn":
                ok = value is None or value not in req.get("values", [])
            elif op == "Exists":
                ok = value is not None
            elif op == "DoesNotExist":
                ok = value is None
            else:
                ok = False
            if not ok:
                break
        if ok:
            return True
    return False


class NodeLedger:
    """Each node's remaining allocatable, exactly; where a pod may already be running."""

    def __init__(self, node_docs: Iterable[Mapping[str, Any]]) -> None:
        self.names: list[str] = []
        self.remaining: dict[str, Amounts] = {}
        self.labels: dict[str, dict[str, str]] = {}
        self.taints: dict[str, list[dict[str, str]]] = {}
        for doc in node_docs:
            name = doc["metadata"]["name"]
            self.names.append(name)
            self.remaining[name] = amounts(doc["status"]["allocatable"])
            self.labels[name] = dict(doc["metadata"].get("labels", {}))
            self.taints[name] = list(doc.get("spec", {}).get("taints", []))

    def candidates(self, request: Mapping[str, Fraction], pod_spec: Mapping[str, Any] | None = None) -> list[str]:
        """Nodes the pod could be running on: it fits, matches them and tolerates their NoExecute taints.

        A NoSchedule taint or a cordon added after the pod started does not evict it, so those
        do not exclude a node.
        """
        spec = pod_spec or {}
        tolerations = spec.get("tolerations", [])
        out = []
        for name in self.names:
            if not fits(request, self.remaining[name]):
                continue
            if not _selector_matches(spec.get("nodeSelector"), self.labels[name]):
                continue
            if not _affinity_matches(spec.get("affinity"), self.labels[name]):
                continue
            if any(t["effect"] == "NoExecute" and not _tolerates(tolerations, t) for t in self.taints[name]):
                continue
            out.append(name)
        return out

    def place(self, name: str, request: Mapping[str, Fraction]) -> None:
        subtract(self.remaining[name], request)


def pod_request(spec: Mapping[str, Any]) -> Amounts:
    """What a pod holds on its node: containers summed, init containers maxed in, one pod slot."""
    total: Amounts = {}
    for container in spec.get("containers", []):
        total = add(total, amounts(container.get("resources", {}).get("requests", {})))
    for container in spec.get("initContainers", []):
        total = maximum(total, amounts(container.get("resources", {}).get("requests", {})))
    total[PODS] = total.get(PODS, Fraction(0)) + 1
    return total


# ---------------------------------------------------------------- queues


@cache
@st.composite
def _cpu_memory(draw: st.DrawFn, max_cores: int, max_gi: int, min_cores: int = 1, min_gi: int = 1,
                shapes: tuple[tuple[str, ...], ...] = ((CPU, MEMORY), (CPU,), (MEMORY,))) -> dict[str, str]:
    """A queue quota: whole cores and Gi, one of the dimensions sometimes left out."""
    shape = draw(choice(tuple(shapes)))
    out = {}
    if CPU in shape and max_cores >= min_cores:
        out[CPU] = str(draw(st.integers(min_cores, max_cores)))
    if MEMORY in shape and max_gi >= min_gi:
        out[MEMORY] = f"{draw(st.integers(min_gi, max_gi))}Gi"
    return out


def _quota_values(quota: Mapping[str, str]) -> dict[str, int]:
    """A queue quota drawn by _cpu_memory as whole numbers (cores, Gi)."""
    out = {}
    if CPU in quota:
        out[CPU] = int(quota[CPU])
    if MEMORY in quota:
        out[MEMORY] = int(quota[MEMORY].removesuffix("Gi"))
    return out


def _quota_text(values: Mapping[str, int]) -> dict[str, str]:
    out = {}
    if CPU in values:
        out[CPU] = str(values[CPU])
    if MEMORY in values:
        out[MEMORY] = f"{values[MEMORY]}Gi"
    return out


@dataclass
class QuotaBounds:
    """Upper bounds, in whole cores and Gi, a queue's quotas must stay within (None: unbounded)."""

    capability: dict[str, int] | None = None
    deserved: dict[str, int] | None = None
    guarantee: dict[str, int] | None = None


_DEFAULT_MAX_CORES = 64
_DEFAULT_MAX_GI = 256


def _bounded(draw: st.DrawFn, bound: Mapping[str, int] | None, fallback: tuple[int, int],
             within: Mapping[str, int] | None = None) -> dict[str, int] | None:
    """Draw a quota no larger than `bound` and `within`; None when a bound leaves no room."""
    limits = {CPU: fallback[0], MEMORY: fallback[1]}
    for source in (bound, within):
        for name, value in (source or {}).items():
            limits[name] = min(limits[name], value)
    if limits[CPU] < 1 and limits[MEMORY] < 1:
        return None
    quota = draw(_cpu_memory(limits[CPU], limits[MEMORY]))
    return _quota_values(quota) or None


@st.composite
def queues(
    draw: st.DrawFn,
    name: str = "default",
    parent: str | None = None,
    deserved: bool = False,
    bounds: QuotaBounds | None = None,
    created: int = -86400,
    hierarchy: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """A Queue: weight, and sometimes capability, guarantee (within capability), deserved
    (capacity plugin; within capability), reclaimable, priority, a Closed state.

    `bounds` caps the quotas (a parent's, in a hierarchy); `hierarchy` is the
    (volcano.sh/hierarchy, volcano.sh/hierarchy-weights) pair for hierarchical drf.
    """
    bounds = bounds or QuotaBounds()
    spec: dict[str, Any] = {"weight": draw(st.integers(1, 10))}
    # The capability in force: the queue's own, each unset dimension inherited from the parent.
    capability = dict(bounds.capability) if bounds.capability else None
    if draw(sometimes(30)):
        own = _bounded(draw, bounds.capability, (_DEFAULT_MAX_CORES, _DEFAULT_MAX_GI))
        if own:
            spec["capability"] = _quota_text(own)
            capability = {**(capability or {}), **own}
    deserved_values = None
    if deserved and draw(sometimes(60)):
        deserved_values = _bounded(draw, bounds.deserved, (_DEFAULT_MAX_CORES, _DEFAULT_MAX_GI), capability)
        if deserved_values:
            spec["deserved"] = _quota_text(deserved_values)
    if draw(sometimes(25)):
        limit = dict(bounds.guarantee or {})
        for source in (capability, deserved_values):
            for dim, value in (source or {}).items():
                limit[dim] = min(limit.get(dim, value), value)
        guarantee = _bounded(draw, limit or None, (32, 128))
        if guarantee:
            spec["guarantee"] = {"resource": _quota_text(guarantee)}
    reclaimable = draw(choice((None, True, False)))
    if reclaimable is not None:
        spec["reclaimable"] = reclaimable
    priority = draw(choice((None, 0, 1, 10)))
    if priority is not None:
        spec["priority"] = priority
    if parent is not None:
        spec["parent"] = parent
    metadata: dict[str, Any] = {"name": name, "creationTimestamp": timestamp(created)}
    if hierarchy is not None:
        metadata["annotations"] = {HIERARCHY: hierarchy[0], HIERARCHY_WEIGHTS: hierarchy[1]}
    state = "Closed" if draw(rarely(4)) else "Open"
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": metadata,
        "spec": spec,
        "status": {"state": state},
    }


@st.composite
def queue_lists(
    draw: st.DrawFn,
    max_size: int = 3,
    deserved: bool = False,
    guarantee_total: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Flat queues with distinct names ("default" first when drawn); [] leaves only the
    `default` queue the scheduler creates. Guarantees add up to at most `guarantee_total`."""
    names = draw(_unique_names(QUEUE_NAMES, 0, max_size))
    out = []
    left = dict(guarantee_total) if guarantee_total else None
    for i, name in enumerate(names):
        doc = draw(queues(name, deserved=deserved, bounds=QuotaBounds(guarantee=left), created=-86400 + 60 * i))
        if left is not None and "guarantee" in doc["spec"]:
            for dim, value in _quota_values(doc["spec"]["guarantee"]["resource"]).items():
                left[dim] = left.get(dim, 0) - value
        out.append(doc)
    return out


ROOT = "root"


@cache
@st.composite
def queue_trees(draw: st.DrawFn, min_queues: int = 1, max_queues: int = 4) -> nx.DiGraph:
    """A queue hierarchy: a networkx arborescence rooted at `root`, edges parent -> child.

    Each queue's parent is drawn among `root` and the queues before it, so the tree
    shrinks to a flat one (every queue directly under root). Node attribute `weight`
    is the queue's hierarchy weight (hierarchical drf).
    """
    names = draw(_unique_names(QUEUE_NAMES, min_queues, max_queues))
    tree = nx.DiGraph()
    tree.add_node(ROOT, weight=1)
    for i, name in enumerate(names):
        parent_index = draw(st.integers(0, i))
        parent = ROOT if parent_index == 0 else names[parent_index - 1]
        tree.add_node(name, weight=draw(st.integers(1, 4)))
        tree.add_edge(parent, name)
    assert nx.is_arborescence(tree)
    return tree


def leaf_queues(tree: nx.DiGraph) -> list[str]:
    """Queues jobs may be submitted to (the capacity plugin rejects jobs in inner queues)."""
    return [n for n in nx.topological_sort(tree) if n != ROOT and tree.out_degree(n) == 0]


@st.composite
def hierarchical_queues(
    draw: st.DrawFn,
    tree: nx.DiGraph,
    deserved: bool = True,
    capability_total: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Queue documents for a tree from queue_trees(): spec.parent for the capacity plugin and
    the volcano.sh/hierarchy annotations for hierarchical drf.

    Quotas nest as upstream's webhook demands of a hierarchy: a child's capability within its
    parent's, the children's deserved and guarantees adding up to no more than the parent's.
    `root` itself is left to the scheduler (which creates it). `capability_total` bounds the
    top level's guarantees (the cluster's size).
    """
    docs: list[dict[str, Any]] = []
    # What is still free under each queue, for its remaining children.
    left_deserved: dict[str, dict[str, int] | None] = {ROOT: None}
    left_guarantee: dict[str, dict[str, int] | None] = {ROOT: dict(capability_total) if capability_total else None}
    capability_of: dict[str, dict[str, int] | None] = {ROOT: None}
    for i, name in enumerate(nx.topological_sort(tree)):
        if name == ROOT:
            continue
        parent = next(iter(tree.predecessors(name)))
        path = nx.shortest_path(tree, ROOT, name)
        weights = "/".join(str(tree.nodes[n].get("weight", 1)) for n in path)
        bounds = QuotaBounds(capability=capability_of[parent], deserved=left_deserved[parent],
                             guarantee=left_guarantee[parent])
        doc = draw(queues(name, parent=None if parent == ROOT else parent, deserved=deserved, bounds=bounds,
                          created=-86400 + 60 * i, hierarchy=("/".join(path), weights)))
        spec = doc["spec"]
        if parent == ROOT and draw(sometimes(30)):
            spec["parent"] = ROOT  # explicit, as many users write it
        own_capability = _quota_values(spec["capability"]) if "capability" in spec else None
        inherited = dict(capability_of[parent] or {})
        inherited.update(own_capability or {})
        capability_of[name] = inherited or None
        own_deserved = _quota_values(spec["deserved"]) if "deserved" in spec else None
        own_guarantee = _quota_values(spec["guarantee"]["resource"]) if "guarantee" in spec else None
        for left, own in ((left_deserved, own_deserved), (left_guarantee, own_guarantee)):
            if own and left[parent] is not None:
                for dim, value in own.items():
                    if dim in left[parent]:
                        left[parent][dim] -= value
        # A queue without its own quota shares its parent's pool with its children.
        left_deserved[name] = dict(own_deserved) if own_deserved else left_deserved[parent]
        left_guarantee[name] = dict(own_guarantee) if own_guarantee else left_guarantee[parent]
        docs.append(doc)
    return docs


# ---------------------------------------------------------------- priority classes


@cache
@st.composite
def priority_classes(draw: st.DrawFn, max_size: int = 3) -> list[dict[str, Any]]:
    """PriorityClasses with distinct names; values shrink to 0 (all equal); at most one global default."""
    names = draw(_unique_names(PRIORITY_CLASS_NAMES, 0, max_size))
    default = draw(choice((None, *names))) if names and draw(rarely(20)) else None
    out = []
    for name in names:
        doc: dict[str, Any] = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": draw(choice((0, 10, 100, 1000, 1, -10))),
        }
        if name == default:
            doc["globalDefault"] = True
        if draw(rarely(10)):
            doc["preemptionPolicy"] = "Never"
        out.append(doc)
    return out


# ---------------------------------------------------------------- jobs


@dataclass
class RoleDraft:
    name: str  # "" for a job without roles
    requests: dict[str, str]
    pods: list[tuple[str, int]]  # per pod: (state, node preference)
    minimum: int | None = None  # spec.minTaskMember[name]
    init_requests: dict[str, str] | None = None
    sidecar_requests: dict[str, str] | None = None


@dataclass
class JobDraft:
    """Everything about a job except where its placed pods run (see place_jobs)."""

    kind: str
    namespace: str
    queue: str
    created: int  # seconds after BASE_TIME
    roles: list[RoleDraft]
    min_member_extra: int  # minMember = lowest allowed + this, capped at the pod count
    min_resources: bool
    priority_class: str | None
    spec_priority: bool  # write spec.priority too, as a dump from a real cluster has it
    preemptable: str | None
    node_selector: dict[str, str] | None
    tolerations: list[dict[str, str]]
    affinity: dict[str, Any] | None
    phase_choice: int
    sla_waiting_time: str | None = None
    nominate: int | None = None  # a pending pod carries status.nominatedNodeName (node preference)

    @property
    def pod_count(self) -> int:
        return sum(len(r.pods) for r in self.roles)


_STAGES = ("pending", "running", "mixed")


# Extra containers of a role's pods, one draw: mostly just "main" (the shrink target).
_CONTAINER_SETS = st.sampled_from([()] * 16 + [("init",), ("sidecar",), ("init", "sidecar")])
_SIDECAR_REQUESTS = {CPU: "100m", MEMORY: "128Mi"}


@cache
@st.composite
def _role_draft(draw: st.DrawFn, name: str, max_pods: int, stage: str, max_nodes: int, odd: bool,
                gpu: bool | None, role_minimums: bool, large: bool = False) -> RoleDraft:
    count = draw(st.integers(1, max(1, max_pods)))
    req = draw(requests(max_cores=32, max_gi=64, gpu=gpu, odd=odd) if large else requests(gpu=gpu, odd=odd))
    pods = []
    for _ in range(count):
        if stage == "pending":
            state = PENDING
        elif stage == "running":
            state = RUNNING
        else:
            state = draw(choice(POD_STATES))
        preference = draw(st.integers(0, max(0, max_nodes - 1))) if state != PENDING and max_nodes > 1 else 0
        pods.append((state, preference))
    minimum = draw(st.integers(0, count)) if role_minimums else None
    extra = draw(_CONTAINER_SETS)
    init = draw(requests(odd=odd, gpu=False)) if "init" in extra else None
    sidecar = dict(_SIDECAR_REQUESTS) if "sidecar" in extra else None
    return RoleDraft(name=name, requests=req, pods=pods, minimum=minimum, init_requests=init,
                     sidecar_requests=sidecar)


def _in_zones(*zones: str) -> dict[str, Any]:
    return {"key": ZONE_LABEL, "operator": "In", "values": list(zones)}


_TOL_DEDICATED, _TOL_SPOT, _TOL_GPU, _TOL_MAINTENANCE, _TOL_ALL = TOLERATIONS
_REQUIRED_A = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [_in_zones("zone-a")]}]}}}
_REQUIRED_AB = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [_in_zones("zone-a", "zone-b")]}]}}}
_PREFERRED_B = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 50, "preference": {"matchExpressions": [_in_zones("zone-b")]}}]}}
_PREFERRED_A = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "preference": {"matchExpressions": [_in_zones("zone-a")]}}]}}
# (nodeSelector, tolerations, affinity) of a job's pods, one draw: mostly none (the shrink target).
PLACEMENT_CONSTRAINTS: tuple[tuple[dict[str, str] | None, tuple[dict[str, str], ...], dict[str, Any] | None], ...] = (
    ((None, (), None),) * 24
    + (
        ({ZONE_LABEL: "zone-a"}, (), None),
        ({ZONE_LABEL: "zone-b"}, (), None),
        ({ACCELERATOR_LABEL: "nvidia"}, (_TOL_GPU,), None),
        (None, (_TOL_DEDICATED,), None),
        (None, (_TOL_SPOT,), None),
        (None, (_TOL_GPU,), None),
        (None, (_TOL_MAINTENANCE,), None),
        (None, (_TOL_ALL,), None),
        (None, (_TOL_DEDICATED, _TOL_MAINTENANCE), None),
        (None, (), _REQUIRED_A),
        (None, (), _REQUIRED_AB),
        (None, (), _PREFERRED_B),
        (None, (), _PREFERRED_A),
        ({ZONE_LABEL: "zone-a"}, (_TOL_DEDICATED,), _PREFERRED_A),
    )
)
_PLACEMENT = st.sampled_from(PLACEMENT_CONSTRAINTS)
_PREEMPTABLE = st.sampled_from((None,) * 6 + ("true", "false"))


@cache
@st.composite
def job_drafts(
    draw: st.DrawFn,
    queues: Sequence[str] = ("default",),
    priority_classes: Sequence[str] = (),
    max_pods: int = 4,
    max_nodes: int = 4,
    odd: bool = True,
    gpu: bool | None = None,
    sla: bool = False,
) -> JobDraft:
    """A job without placement: kind and roles, pod templates and states, gang minimums."""
    kind = draw(choice(tuple(JOB_KINDS)))
    role_names = JOB_KINDS[kind] or ("",)
    stage = draw(choice(_STAGES))
    # Most pods are small; a large job's pods take a good part of a node (up to 32 cores, 64Gi),
    # so that running jobs fill nodes and pending ones have to wait, preempt or reclaim.
    large = draw(rarely(25))
    role_minimums = bool(JOB_KINDS[kind]) and draw(sometimes(40))
    budget = max(len(role_names), max_pods)
    roles = []
    for i, role in enumerate(role_names):
        left = budget - sum(len(r.pods) for r in roles) - (len(role_names) - i - 1)
        # The leading role (ps, master, driver) has one or two pods; the last one the rest.
        share = max(1, left if i == len(role_names) - 1 else min(2, left))
        roles.append(draw(_role_draft(role, share, stage, max_nodes, odd, gpu, role_minimums, large)))
    selector, tolerations, affinity = draw(_PLACEMENT)
    return JobDraft(
        kind=kind,
        namespace=draw(choice(NAMESPACES)),
        queue=draw(choice(tuple(queues))) if len(queues) > 1 else (queues[0] if queues else "default"),
        created=draw(st.integers(0, 3600)),
        roles=roles,
        min_member_extra=draw(st.integers(0, budget)),
        min_resources=draw(sometimes(30)),
        # None first (the shrink target), but a job usually names one of the classes there are.
        priority_class=draw(choice((None, *priority_classes, *priority_classes)))
        if priority_classes else None,
        spec_priority=draw(rarely(20)) if priority_classes else False,
        preemptable=draw(_PREEMPTABLE),
        node_selector=dict(selector) if selector else None,
        tolerations=[dict(t) for t in tolerations],
        affinity=copy.deepcopy(affinity),
        phase_choice=draw(st.integers(0, 1)),
        sla_waiting_time=draw(choice(("10m", "1h", "30s"))) if sla and draw(sometimes(40)) else None,
        nominate=draw(st.integers(0, max(0, max_nodes - 1))) if draw(rarely(8)) else None,
    )


def _container(name: str, req: Mapping[str, str]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    if req:
        container["resources"] = {"requests": dict(req)}
    return container


def _pod_spec(draft: JobDraft, role: RoleDraft) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME, "containers": [_container("main", role.requests)]}
    if role.sidecar_requests:
        spec["containers"].append(_container("sidecar", role.sidecar_requests))
    if role.init_requests is not None:
        spec["initContainers"] = [_container("init", role.init_requests)]
    if draft.priority_class:
        spec["priorityClassName"] = draft.priority_class
    if draft.node_selector:
        spec["nodeSelector"] = dict(draft.node_selector)
    if draft.tolerations:
        spec["tolerations"] = [dict(t) for t in draft.tolerations]
    if draft.affinity:
        spec["affinity"] = draft.affinity
    return spec


def _pod_doc(draft: JobDraft, job_name: str, pod_name: str, role: RoleDraft, spec: dict[str, Any],
             state: str, node: str | None, class_values: Mapping[str, int], nominated: str | None) -> dict[str, Any]:
    annotations = {GROUP_NAME: job_name}
    if role.name:
        annotations[TASK_SPEC] = role.name
    if draft.preemptable is not None:
        annotations[PREEMPTABLE] = draft.preemptable
    metadata: dict[str, Any] = {
        "name": pod_name,
        "namespace": draft.namespace,
        "annotations": annotations,
        "creationTimestamp": timestamp(draft.created + 1),
    }
    spec = copy.deepcopy(spec)  # every pod its own objects: no shared lists, no YAML aliases
    if draft.spec_priority and draft.priority_class in class_values:
        spec["priority"] = class_values[draft.priority_class]
    status: dict[str, Any]
    if state == PENDING or node is None:
        status = {"phase": "Pending"}
        if nominated:
            status["nominatedNodeName"] = nominated
    else:
        spec["nodeName"] = node
        phase = {RUNNING: "Running", BOUND: "Pending", RELEASING: "Running"}.get(state, state)
        status = {"phase": phase}
        if phase != "Pending":
            status["startTime"] = timestamp(draft.created + 2)
        if state == RELEASING:
            metadata["deletionTimestamp"] = timestamp(draft.created + 30)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def place_job(draft: JobDraft, index: int, ledger: NodeLedger,
              class_values: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The PodGroup and pods of one drafted job, its placed pods put on nodes of the ledger.

    A pod is placed on the candidate node its preference picks (modulo the number of
    candidates); when no node can hold it, it stays Pending. Terminated pods (Succeeded,
    Failed) hold nothing, so any node will do.
    """
    class_values = class_values or {}
    name = f"{draft.kind}-{index}"
    pods: list[dict[str, Any]] = []
    placed = running = succeeded = failed = 0
    ordered_requests: list[Amounts] = []
    for role in draft.roles:
        spec = _pod_spec(draft, role)
        request = pod_request(spec)
        for k, (state, preference) in enumerate(role.pods):
            pod_name = f"{name}-{role.name}-{k}" if role.name else f"{name}-{k}"
            node = None
            if state in PLACED_STATES:
                candidates = ledger.candidates(request, spec)
                if candidates:
                    node = candidates[preference % len(candidates)]
                    ledger.place(node, request)
                    placed += 1
                    running += state == RUNNING
                else:
                    state = PENDING
            elif state in TERMINATED_STATES and ledger.names:
                node = ledger.names[preference % len(ledger.names)]
                succeeded += state == SUCCEEDED
                failed += state == FAILED
            elif state in TERMINATED_STATES:
                state = PENDING
            nominated = None
            if state == PENDING and draft.nominate is not None and ledger.names and k == 0:
                nominated = ledger.names[draft.nominate % len(ledger.names)]
            pods.append(_pod_doc(draft, name, pod_name, role, spec, state, node, class_values, nominated))
            ordered_requests.append(request)

    total = len(pods)
    minimums = {r.name: r.minimum for r in draft.roles if r.name and r.minimum is not None}
    lowest = max(1, sum(minimums.values()))
    min_member = min(total, lowest + draft.min_member_extra)
    spec: dict[str, Any] = {"minMember": min_member, "queue": draft.queue}
    if minimums:
        spec["minTaskMember"] = minimums
    if draft.min_resources:
        # What the job controller writes: the requests of the first minMember tasks.
        summed: Amounts = {}
        for request in ordered_requests[:min_member]:
            summed = add(summed, {k: v for k, v in request.items() if k != PODS})
        resources = format_resources({k: v for k, v in summed.items() if v > 0})
        if resources:
            spec["minResources"] = resources
    if draft.priority_class:
        spec["priorityClassName"] = draft.priority_class
    if placed:
        phase = "Running" if placed >= min_member or draft.phase_choice == 0 else "Unknown"
    else:
        phase = ("Pending", "Inqueue")[draft.phase_choice]
    status: dict[str, Any] = {"phase": phase}
    for key, count in (("running", running), ("succeeded", succeeded), ("failed", failed)):
        if count:
            status[key] = count
    metadata: dict[str, Any] = {"name": name, "namespace": draft.namespace,
                                "creationTimestamp": timestamp(draft.created)}
    if draft.sla_waiting_time:
        metadata["annotations"] = {SLA_WAITING_TIME: draft.sla_waiting_time}
    pod_group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }
    return [pod_group, *pods]


def place_jobs(drafts: Sequence[JobDraft], ledger: NodeLedger,
               class_values: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Every drafted job in order, sharing one ledger (earlier jobs' pods are placed first)."""
    out: list[dict[str, Any]] = []
    for index, draft in enumerate(drafts):
        out.extend(place_job(draft, index, ledger, class_values))
    return out


def _class_values(classes: Sequence[Mapping[str, Any]] | Mapping[str, int]) -> dict[str, int]:
    if isinstance(classes, Mapping):
        return dict(classes)
    return {c["metadata"]["name"]: c["value"] for c in classes}


def jobs(
    node_docs: Sequence[Mapping[str, Any]] = (),
    queues: Sequence[str] = ("default",),
    priority_classes: Sequence[Mapping[str, Any]] | Mapping[str, int] = (),
    max_pods: int = 4,
    odd: bool = True,
    gpu: bool | None = None,
    sla: bool = False,
    index: int = 0,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """One job: [PodGroup, pod, pod, ...], its placed pods on `node_docs` within their allocatable."""
    values = _class_values(priority_classes)
    drafts = job_drafts(queues=tuple(queues), priority_classes=tuple(values), max_pods=max_pods,
                        max_nodes=max(1, len(node_docs)), odd=odd, gpu=gpu, sla=sla)
    return drafts.map(lambda d: place_job(d, index, NodeLedger(node_docs), values))


def workloads(
    node_docs: Sequence[Mapping[str, Any]] = (),
    queues: Sequence[str] = ("default",),
    priority_classes: Sequence[Mapping[str, Any]] | Mapping[str, int] = (),
    min_jobs: int = 0,
    max_jobs: int = 5,
    max_pods: int = 4,
    odd: bool = True,
    gpu: bool | None = None,
    sla: bool = False,
    ledger: NodeLedger | None = None,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Several jobs (PodGroups and pods, flattened), placed one after the other on shared nodes.

    `ledger`: the node ledger to place on (e.g. one already holding system pods); it is
    copied for every example, so the strategy can be drawn many times.
    """
    values = _class_values(priority_classes)
    drafts = st.lists(
        job_drafts(queues=tuple(queues), priority_classes=tuple(values), max_pods=max_pods,
                   max_nodes=max(1, len(node_docs)), odd=odd, gpu=gpu, sla=sla),
        min_size=min_jobs, max_size=max_jobs,
    )
    return drafts.map(
        lambda ds: place_jobs(ds, copy.deepcopy(ledger) if ledger is not None else NodeLedger(node_docs), values)
    )


# ---------------------------------------------------------------- other objects


def filler_job(ledger: NodeLedger, name: str = "fill", namespace: str = "default", queue: str = "default",
               priority_class: str | None = None, max_pods: int | None = None,
               created: int = -1800) -> list[dict[str, Any]]:
    """A running elastic job (minMember 1) with one pod per node taking what is left of it
    (whole cores and Gi), placed on the ledger: the full cluster most real clusters are, so
    that pending jobs must wait, preempt or reclaim. [] when no node has a core and a Gi left.
    """
    pods: list[dict[str, Any]] = []
    for node in ledger.names:
        if max_pods is not None and len(pods) >= max_pods:
            break
        remaining = ledger.remaining[node]
        cores = int(remaining.get(CPU, 0))
        gib = int(remaining.get(MEMORY, 0) / 2**30)
        if cores < 1 or gib < 1 or remaining.get(PODS, 0) < 1:
            continue
        spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME,
                                "containers": [_container("main", {CPU: str(cores), MEMORY: f"{gib}Gi"})]}
        if priority_class:
            spec["priorityClassName"] = priority_class
        request = pod_request(spec)
        if any(t["effect"] == "NoExecute" for t in ledger.taints[node]):
            continue
        ledger.place(node, request)
        pod_name = f"{name}-{len(pods)}"
        spec["nodeName"] = node
        pods.append({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": pod_name, "namespace": namespace, "annotations": {GROUP_NAME: name},
                         "creationTimestamp": timestamp(created + 1)},
            "spec": spec,
            "status": {"phase": "Running", "startTime": timestamp(created + 2)},
        })
    if not pods:
        return []
    group_spec: dict[str, Any] = {"minMember": 1, "queue": queue}
    if priority_class:
        group_spec["priorityClassName"] = priority_class
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": timestamp(created)},
        "spec": group_spec,
        "status": {"phase": "Running", "running": len(pods)},
    }
    return [group, *pods]


def system_pods(node_docs: Sequence[Mapping[str, Any]], ledger: NodeLedger,
                which: Sequence[int]) -> list[dict[str, Any]]:
    """Pods of the default scheduler (kube-proxy style) running on the chosen nodes, if they fit.

    They belong to no PodGroup and to another scheduler, but hold node resources, as on a
    real cluster.
    """
    out = []
    spec_template = {
        "schedulerName": "default-scheduler",
        "containers": [_container("kube-proxy", {CPU: "100m", MEMORY: "128Mi"})],
        "tolerations": [{"operator": "Exists"}],
        "priority": 2000001000,  # system-node-critical, resolved by the API server
    }
    for i in sorted(set(which)):
        if not node_docs:
            break
        node = node_docs[i % len(node_docs)]["metadata"]["name"]
        request = pod_request(spec_template)
        if not fits(request, ledger.remaining[node]):
            continue
        ledger.place(node, request)
        spec = {**spec_template, "nodeName": node}
        out.append({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"kube-proxy-{node}", "namespace": "kube-system",
                         "creationTimestamp": timestamp(-3600)},
            "spec": spec,
            "status": {"phase": "Running", "startTime": timestamp(-3590)},
        })
    return out


QUOTA_NAMES: tuple[tuple[str, ...], ...] = (
    (CPU, MEMORY),
    ("requests.cpu", "requests.memory"),
    (PODS,),
    (CPU, MEMORY, PODS),
)


@st.composite
def resource_quotas(draw: st.DrawFn, namespace: str, used: Mapping[str, Fraction]) -> dict[str, Any]:
    """A ResourceQuota whose status.used is what the namespace's placed pods hold, and whose
    hard limits are at least that plus some headroom (shrinking to none)."""
    names = draw(choice(QUOTA_NAMES))
    hard: dict[str, Fraction] = {}
    used_out: dict[str, Fraction] = {}
    for name in names:
        base = name.removeprefix("requests.")
        current = used.get(base, Fraction(0))
        used_out[name] = current
        if base == MEMORY:
            headroom = Fraction(draw(st.integers(0, 64))) * 2**30
        else:
            headroom = Fraction(draw(st.integers(0, 32)))
        hard[name] = current + headroom
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "compute", "namespace": namespace},
        "spec": {"hard": format_resources(hard)},
        "status": {"hard": format_resources(hard), "used": format_resources(used_out)},
    }


def namespace_usage(pod_docs: Iterable[Mapping[str, Any]]) -> dict[str, Amounts]:
    """Requests held by the placed, unterminated pods of each namespace."""
    out: dict[str, Amounts] = {}
    for doc in pod_docs:
        if doc.get("kind") != "Pod" or not doc["spec"].get("nodeName"):
            continue
        if doc["status"].get("phase") in ("Succeeded", "Failed"):
            continue
        ns = doc["metadata"].get("namespace", "default")
        out[ns] = add(out.get(ns, {}), pod_request(doc["spec"]))
    return out
