"""numa-aware: CPU placement by NUMA topology (pkg/scheduler/plugins/numaaware/numaaware.go).

Argument: `weight` (integer, 1 by default) multiplies the node score.

At session open the plugin copies every NUMA-aware node's allocatable CPU sets (the node's
`numa_scheduler_info`, api/numa_info.py) and NUMA ids. Only pods of QoS class Guaranteed are
considered (k8s GetPodQOS: status.qosClass when given, else every container and init container has
cpu and memory limits, and requests equal to them); every other pod passes.

PredicateFn, for a Guaranteed pod: its topology policy is the pod annotation
`volcano.sh/numa-topology-policy` ("" when absent).
- With a policy other than none: a node without NUMA information fails ("numa info is empty"), as do
  one whose CPU manager policy is not static ("cpu manager policy isn't static"), one whose
  topology-manager policy differs from the pod's ("task topology policy[<pod's>] is different with
  node[<node's>]") and one with no allocatable cpu ids ("cpu allocatable map is empty"); each is a
  fit error with status Error (so preempt never tries these nodes).
- Without a policy (or with none): a node without NUMA information, without the static CPU manager or
  with no topology-manager policy (or none) passes without anything being computed; on any other node
  the pod is judged by the *node's* policy all the same.
Then every container in order (init containers are not) gets the policy's hint from the CPU manager
(numaaware_cpumanager.py) against the node's CPU ids still free, those the earlier containers took
excluded; a hint the policy refuses fails the node with UnschedulableAndUnresolvable, reason
"container <name> cannot be assigned by numa", plugin numa-aware. Otherwise the containers' CPU ids
are recorded as the pod's assignment on that node (overwriting an earlier one).

BatchNodeOrderFn, only for a pod with a policy other than none that has an assignment on some node:
each node scores the number of NUMA nodes its assignment spans (0 without one), normalised reversed
to 0..100 (max 100 * n / max, then 100 minus it; all 100 when every count is 0), times the weight.

Event handlers: an allocate (or pipeline) of a pod with an assignment on its node takes the ids out of
the node's free sets and remembers the pod as bound there; a deallocate gives them back and forgets it.
An eviction finds no assignment for the victim and changes nothing.

OnSessionClose: each remembered pod's assignment on its node goes to the cache
(`add_unassigned_numa_pods`): the node keeps it, and the next snapshots subtract it from the node's
free ids until the Numatopology's podAllocations list every such pod (api/numa_info.py). Pipelined pods
are remembered too, as upstream. The cache drops a pod's record from its node when the pod is deleted
(the world's deletions between sessions); the record of a pod that was only pipelined names no node in
the cache, so upstream never drops it, and neither does the reference.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.numa_info import (
    CPU_MANAGER_POLICY,
    DEFAULT_MAX_NODE_SCORE,
    EMPTY,
    TOPOLOGY_MANAGER_POLICY,
    PodMeta,
    detail,
    generate_node_res_numa_sets,
    generate_numa_nodes,
    res_sets_allocate,
    res_sets_release,
)
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.util.assertion import assertf
from schedcheck.reference.plugins import numaaware_cpumanager as cpumanager
from schedcheck.reference.plugins.numaaware_policy import get_policy
from schedcheck.reference.util.qos import pod_qos

PLUGIN_NAME = "numa-aware"
WEIGHT = "weight"
NUMA_POLICY_KEY = "volcano.sh/numa-topology-policy"
def task_numa_policy(task: TaskInfo) -> str:
    """The pod's topology policy (TopologyInfo.Policy): the annotation's value, "" without it."""
    return task.pod.annotations.get(NUMA_POLICY_KEY, "")


def _has_policy(task: TaskInfo) -> bool:
    return task_numa_policy(task) not in ("", "none")


def filter_node_by_policy(task: TaskInfo, node: NodeInfo,
                          node_res_sets: dict[str, dict[str, frozenset[int]]]) -> tuple[bool, str]:
    """filterNodeByPolicy: (go on to the hints, the error reason when the node fails)."""
    info = node.numa_scheduler_info
    if _has_policy(task):
        if info is None:
            return False, "numa info is empty"
        if info.policies.get(CPU_MANAGER_POLICY, "") != "static":
            return False, "cpu manager policy isn't static"
        node_policy = info.policies.get(TOPOLOGY_MANAGER_POLICY, "")
        if task_numa_policy(task) != node_policy:
            return False, f"task topology policy[{task_numa_policy(task)}] is different with node[{node_policy}]"
        if node.name not in node_res_sets:
            return False, "no topo information"
        if not node_res_sets[node.name].get(cpumanager.CPU, EMPTY):
            return False, "cpu allocatable map is empty"
        return True, ""
    if info is None or info.policies.get(CPU_MANAGER_POLICY, "") != "static":
        return False, ""
    if info.policies.get(TOPOLOGY_MANAGER_POLICY, "") in ("none", ""):
        return False, ""
    return True, ""


def numa_node_count(cpu_ids: frozenset[int], node: NodeInfo) -> int:
    """getNumaNodeCntForCPUID: how many NUMA nodes the ids span, by the node's CPU details."""
    info = node.numa_scheduler_info
    details = info.cpu_detail if info is not None else {}
    return len({detail(details, cpu).numa for cpu in cpu_ids})


def normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> list[int]:
    """plugins/util NormalizeScore."""
    top = max([0, *scores])
    if top == 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    out = []
    for score in scores:
        value = max_priority * score // top
        out.append(max_priority - value if reverse else value)
    return out


class NumaAwarePlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments or {}
        # task uid -> node name -> resource -> ids: the last assignment the predicate computed
        self.assign_res: dict[str, dict[str, dict[str, frozenset[int]]]] = {}
        self.node_res_sets: dict[str, dict[str, frozenset[int]]] = {}
        self.task_bind_node: dict[str, str] = {}
        self.task_pod_meta: dict[str, PodMeta] = {}

    def weight(self) -> int:
        return as_arguments(self.arguments).get_int(WEIGHT, 1)

    def on_session_open(self, ssn: Session) -> None:
        weight = self.weight()
        numa_nodes = generate_numa_nodes(ssn.nodes)
        self.node_res_sets = generate_node_res_numa_sets(ssn.nodes)

        def on_allocate(event: Event) -> None:
            task = event.task
            sets = self.assign_res.get(task.uid, {}).get(task.node_name)
            if sets is None:
                return
            node_sets = self.node_res_sets.get(task.node_name)
            if node_sets is not None:
                res_sets_allocate(node_sets, sets)
            self.task_bind_node[task.uid] = task.node_name
            self.task_pod_meta[task.uid] = PodMeta(task.pod.uid, task.pod.name, task.pod.namespace)

        def on_deallocate(event: Event) -> None:
            task = event.task
            sets = self.assign_res.get(task.uid, {}).get(task.node_name)
            if sets is None:
                return
            node_sets = self.node_res_sets.get(task.node_name)
            if node_sets is not None:
                res_sets_release(node_sets, sets)
            self.task_bind_node.pop(task.uid, None)
            self.task_pod_meta.pop(task.uid, None)

        ssn.add_event_handler(EventHandler(allocate_func=on_allocate, deallocate_func=on_deallocate))

        def predicate(task: TaskInfo, node: NodeInfo) -> Exception | None:
            if pod_qos(task.pod) != "Guaranteed":
                return None
            fit, reason = filter_node_by_policy(task, node, self.node_res_sets)
            if not fit:
                if reason:
                    return FitError(task.key, node.name, [Status(StatusCode.Error, reason)])
                return None
            res_sets = dict(self.node_res_sets.get(node.name, {}))
            info = node.numa_scheduler_info
            assert info is not None
            policy = get_policy(info.policies.get(TOPOLOGY_MANAGER_POLICY, ""), numa_nodes.get(node.name, []))
            assigned: dict[str, frozenset[int]] = {}
            for container in task.pod.containers:
                hints = cpumanager.get_topology_hints(container, info, res_sets)
                best, admit = policy.predicate([hints])
                if not admit:
                    return FitError(task.key, node.name, [Status(
                        StatusCode.UnschedulableAndUnresolvable,
                        f"container {container.name} cannot be assigned by numa", PLUGIN_NAME)])
                for resource, ids in cpumanager.allocate(container, best, info, res_sets).items():
                    assigned[resource] = assigned.get(resource, EMPTY) | ids
                    res_sets[resource] = res_sets.get(resource, EMPTY) - ids
            self.assign_res.setdefault(task.uid, {})[node.name] = assigned
            return None

        ssn.add_fn("predicate", self.name, predicate)

        def batch_node_order(task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
            if task.uid not in self.assign_res or not _has_policy(task):
                return {}
            assignments = self.assign_res[task.uid]
            for node in nodes:  # getNodeNumaNumForTask reads every node's CPU details through a nil pointer
                assertf(node.numa_scheduler_info is not None,
                        f"numa-aware batch node order: node {node.name} has no NUMA info (upstream: invalid memory "
                        "address or nil pointer dereference in getNodeNumaNumForTask)")
            counts = [numa_node_count(assignments.get(node.name, {}).get(cpumanager.CPU, EMPTY), node)
                      for node in nodes]
            scores = normalize_score(DEFAULT_MAX_NODE_SCORE, True, counts)
            return {node.name: float(score * weight) for node, score in zip(nodes, scores)}

        ssn.add_fn("batch_node_order", self.name, batch_node_order)

    def on_session_close(self, ssn: Session) -> None:
        if not self.task_bind_node:
            return
        allocated: dict[PodMeta, dict[str, dict[str, frozenset[int]]]] = {}
        for uid, node_name in self.task_bind_node.items():
            sets = self.assign_res.get(uid, {}).get(node_name)
            if sets is None:
                continue  # upstream logs a warning
            meta = self.task_pod_meta.get(uid)
            if meta is not None:
                allocated[meta] = {node_name: sets}
        ssn.add_unassigned_numa_pods(allocated)


register_plugin_builder(PLUGIN_NAME, NumaAwarePlugin)
