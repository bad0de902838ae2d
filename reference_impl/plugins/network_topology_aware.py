"""network-topology-aware: keep jobs inside small network domains
(pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go).

Arguments: `weight` (1), `hypernode.binpack.cpu` (1), `hypernode.binpack.memory` (1),
`hypernode.binpack.resources` (extra resource names) with `hypernode.binpack.resources.<name>` (1),
`hypernode.binpack.normal-pod.enable` (true), `hypernode.binpack.normal-pod.fading` (0.8),
`hypernode.gradient.evict.max-hypernodes` (8). Negative weights become the default.

- HyperNodeGradientFor(Sub)JobFn: a hard-mode (sub)job gets the hypernodes reachable breadth-first from
  its search root (the given hypernode, narrowed to the highest allowed ancestor of the hypernode it
  already holds), those at or below its highest allowed tier whose Idle or FutureIdle covers its minimum
  (no resource check once it holds a hypernode), grouped by tier, lowest tier first.
- HyperNodeOrderFn: hypernode binpacking, the weighted mean over the weighted resources of
  (used + the subjob's request) / allocatable, 0 when any resource would overflow; among several best
  hypernodes, the share of the subjob's tasks already there is added; scaled by 100 x weight.
- BatchNodeOrderFn: a task of a topology job scores a node by the tier of the lowest common ancestor of
  the node's lowest hypernode and the job's allocated hypernode, (max tier - tier) / (max tier - min tier),
  1 for the same hypernode, plus the task share among several best; a task of another job scores each
  node by the hypernode binpacking of its request at each tier, weighted by fading^(tier - 1). Both
  scaled by 100 x weight.
- Event handlers keep each hypernode's Used current.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedcheck.reference.api.hyper_node_info import lca_hyper_node
from schedcheck.reference.api.sub_job_info import SubJobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.util.scheduler_helper import find_hyper_node_for_node

PLUGIN_NAME = "network-topology-aware"
MAX_NODE_SCORE = 100
PURPOSE_ALLOCATE, PURPOSE_EVICT = "allocate", "evict"


@dataclass
class _Status:
    allocatable: Resource = field(default_factory=Resource)
    used: Resource = field(default_factory=Resource)
    idle: Resource = field(default_factory=Resource)
    future_idle: Resource = field(default_factory=Resource)


class NetworkTopologyAwarePlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict) -> None:
        super().__init__(arguments)
        args = as_arguments(arguments)

        def weight(key: str) -> int:
            value = args.get_int(key, 1)
            return value if value >= 0 else 1

        self.weight = weight("weight")
        self.binpack = {"cpu": weight("hypernode.binpack.cpu"), "memory": weight("hypernode.binpack.memory")}
        names = args.get("hypernode.binpack.resources")
        for name in (names if isinstance(names, str) else "").split(","):
            if name.strip():
                self.binpack[name.strip()] = weight(f"hypernode.binpack.resources.{name.strip()}")
        self.normal_pod_enable = args.get_bool("hypernode.binpack.normal-pod.enable", True)
        fading = args.get_float("hypernode.binpack.normal-pod.fading", 0.8)
        self.fading = fading if fading >= 0 else 0.8
        evict_max = args.get_int("hypernode.gradient.evict.max-hypernodes", 8)
        self.evict_max = evict_max if evict_max > 0 else 8
        self.min_tier = self.max_tier = 0
        self.status: dict[str, _Status] = {}

    def _binpack_weight(self, name: str) -> int | None:
        if name in ("cpu", "memory"):
            return self.binpack[name]
        return self.binpack.get(name)

    def on_session_open(self, ssn: Session) -> None:
        if ssn.hyper_nodes_tiers:
            self.min_tier, self.max_tier = ssn.hyper_nodes_tiers[0], ssn.hyper_nodes_tiers[-1]
        for name in ssn.hyper_nodes:
            status = self.status[name] = _Status()
            for node_name in ssn.real_nodes_set.get(name, ()):
                node = ssn.nodes[node_name]
                status.allocatable.add(node.allocatable)
                status.used.add(node.used)
                status.idle.add(node.idle)
                status.future_idle.add(node.future_idle())
        ssn.add_fn("hyper_node_order", self.name, lambda sub, hns: self.hyper_node_order(ssn, sub, hns))
        ssn.add_fn("batch_node_order", self.name, lambda task, nodes: self.batch_node_order(ssn, task, nodes))
        ssn.add_fn("hyper_node_gradient_for_job", self.name,
                   lambda job, hn, purpose: self._gradient_fn(ssn, job.hard_mode(), job.allocated_hyper_node,
                                                              job.get_min_resources(), hn, purpose))
        ssn.add_fn("hyper_node_gradient_for_sub_job", self.name,
                   lambda sub, hn, purpose: self._gradient_fn(ssn, sub.hard_mode(), sub.allocated_hyper_node,
                                                              sub.min_resources(), hn, purpose))
        ssn.add_event_handler(EventHandler(lambda e: self._on_event(ssn, e, 1), lambda e: self._on_event(ssn, e, -1)))

    def _on_event(self, ssn: Session, event: Event, sign: int) -> None:
        task = event.task
        for name in ssn.hyper_nodes:
            if task.node_name in ssn.real_nodes_set.get(name, ()):
                status = self.status.get(name)
                if status is not None:
                    status.used.add(task.resreq) if sign > 0 else status.used.sub(task.resreq)

    # -- gradients ----------------------------------------------------------------------

    def _gradient_fn(self, ssn: Session, mode: tuple[bool, int], allocated: str, min_resource: Resource,
                     hyper_node, purpose: str) -> list[list]:
        hard, highest = mode
        if not hard:
            return [[hyper_node]]
        result = self.gradient(ssn, hyper_node, highest, allocated, min_resource, purpose)
        if result is None:
            return []
        return result if purpose != PURPOSE_EVICT else self._reverse_and_cap(result)

    def gradient(self, ssn: Session, hyper_node, highest: int, allocated: str, min_resource: Resource,
                 purpose: str) -> list[list] | None:
        """hyperNodeGradientFn: None when the search root cannot be found (upstream logs and returns nil)."""
        root = self._search_root(ssn, hyper_node, highest, allocated)
        if root is None:
            return None
        queue, seen = [root], {root.name}
        eligible: dict[int, list] = {}
        while queue:
            current = queue.pop(0)
            if self._eligible(current, highest, allocated, min_resource, purpose):
                eligible.setdefault(current.tier, []).append(current)
            for child in sorted(current.children):  # upstream walks a set: any order
                if child not in seen and child in ssn.hyper_nodes:
                    queue.append(ssn.hyper_nodes[child])
                    seen.add(child)
        return [eligible[tier] for tier in sorted(eligible)]

    def _eligible(self, hn, highest: int, allocated: str, min_resource: Resource, purpose: str) -> bool:
        if hn.tier > highest:
            return False
        if allocated:
            return True
        status = self.status.get(hn.name)
        if status is None:
            return True
        if purpose == PURPOSE_EVICT:
            return min_resource.less_equal(status.allocatable, Zero)
        return min_resource.less_equal(status.idle, Zero) or min_resource.less_equal(status.future_idle, Zero)

    @staticmethod
    def _search_root(ssn: Session, available, highest: int, allocated: str):
        if not allocated:
            return available
        highest_allowed = ""
        from schedcheck.reference.api.hyper_node_info import get_ancestors

        for ancestor in get_ancestors(ssn.hyper_nodes, allocated):
            hn = ssn.hyper_nodes.get(ancestor)
            if hn is None or hn.tier > highest:
                break
            highest_allowed = ancestor
        if not highest_allowed:
            return None
        lca = lca_hyper_node(ssn.hyper_nodes, available.name, highest_allowed)
        if lca == highest_allowed:
            return available
        if lca == available.name:
            return ssn.hyper_nodes.get(highest_allowed)
        return None

    def _reverse_and_cap(self, gradients: list[list]) -> list[list]:
        remaining, result = self.evict_max, []
        for gradient in reversed(gradients):
            if remaining == 0:
                break
            if len(gradient) <= remaining:
                result.append(gradient)
                remaining -= len(gradient)
            else:
                result.append(gradient[len(gradient) - remaining:])
                remaining = 0
        return result

    # -- scores -------------------------------------------------------------------------

    def hyper_node_order(self, ssn: Session, sub_job: SubJobInfo, hyper_nodes: dict[str, list[NodeInfo]]
                         ) -> dict[str, float]:
        request: dict[str, float] = {}
        for task in sub_job.tasks():
            for name in task.resreq.resource_names():
                if self._binpack_weight(name) is not None:
                    request[name] = request.get(name, 0.0) + task.resreq.get(name)
        scores: dict[str, float] = {}
        for hn in hyper_nodes:
            total, weights, overused = 0.0, 0, False
            status = self.status.get(hn)
            for name, req in request.items():
                weight = self._binpack_weight(name)
                if status is None or weight is None:
                    continue
                allocatable, used = status.allocatable.get(name), status.used.get(name)
                if used + req > allocatable:
                    overused = True
                    break
                total += weight * (used + req) / allocatable
                weights += weight
            scores[hn] = 0.0 if overused or weights <= 0 else total / weights
        best = max(scores.values(), default=-1.0)
        tied = [hn for hn, score in scores.items() if score == best]
        if len(tied) > 1:
            for hn in tied:
                scores[hn] += self._task_share(ssn, hn, sub_job)
        return self._scale(scores)

    def _task_share(self, ssn: Session, hyper_node: str, sub_job: SubJobInfo) -> float:
        """scoreWithTaskNum: the share of the subjob's tasks already on the hypernode's nodes."""
        tasks = sub_job.tasks()
        if not tasks:
            return 0.0
        nodes = ssn.real_nodes_set.get(hyper_node, set())
        return sum(1 for task in tasks if task.node_name in nodes) / len(tasks)

    def _scale(self, scores: dict[str, float]) -> dict[str, float]:
        return {name: MAX_NODE_SCORE * self.weight * score for name, score in scores.items()}

    def batch_node_order(self, ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        job = ssn.jobs.get(task.job)
        if job is None:
            return {}
        sub_job = job.sub_job_of(task)
        if sub_job is not None and sub_job.network_topology is not None:
            scores = self._network_aware_scores(ssn, task, sub_job, nodes)
        else:
            scores = self._normal_pod_scores(ssn, task, nodes)
        return self._scale(scores)

    def _normal_pod_scores(self, ssn: Session, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        if not self.normal_pod_enable:
            return {}
        tiers = range(self.min_tier, self.max_tier + 1)
        weights = {tier: self.fading ** (tier - 1) for tier in tiers}
        total_weight = sum(weights.values())
        if total_weight <= 0:
            return {}
        scores = {}
        for node in nodes:
            total = 0.0
            for tier in tiers:
                tier_score = 1.0  # no hypernode at this tier: the node is preferred
                for name in sorted(ssn.hyper_nodes_set_by_tier.get(tier, ())):
                    if node.name in ssn.real_nodes_set.get(name, ()):
                        tier_score = self._pod_binpack(task, name)
                        break
                total += weights[tier] * tier_score
            scores[node.name] = total / total_weight
        return scores

    def _pod_binpack(self, task: TaskInfo, hyper_node: str) -> float:
        total, weights = 0.0, 0
        status = self.status.get(hyper_node)
        for name in task.resreq.resource_names():
            weight = self._binpack_weight(name)
            if weight is None or status is None:
                continue
            allocatable, used, req = status.allocatable.get(name), status.used.get(name), task.resreq.get(name)
            if used + req > allocatable:
                return 0.0
            total += weight * (used + req) / allocatable
            weights += weight
        return total / weights if weights > 0 else 0.0

    def _network_aware_scores(self, ssn: Session, task: TaskInfo, sub_job: SubJobInfo,
                              nodes: list[NodeInfo]) -> dict[str, float]:
        allocated = getattr(task, "job_allocated_hyper_node", "")
        if not allocated:
            return {}
        scores: dict[str, float] = {}
        for node in nodes:
            scores[node.name] = self._tier_score(ssn, find_hyper_node_for_node(ssn, node.name), allocated)
        best = max(scores.values(), default=-1.0)
        tied = [name for name, score in scores.items() if score == best]
        if len(tied) > 1:
            for name in tied:
                scores[name] += self._task_share(ssn, find_hyper_node_for_node(ssn, name), sub_job)
        return scores

    def _tier_score(self, ssn: Session, hyper_node: str, allocated: str) -> float:
        if not hyper_node or not allocated:
            return 0.0
        if hyper_node == allocated:
            return 1.0
        lca = ssn.hyper_nodes.get(lca_hyper_node(ssn.hyper_nodes, hyper_node, allocated))
        if lca is None:
            return 0.0
        if self.min_tier == self.max_tier:
            return 1.0
        if self.min_tier <= lca.tier <= self.max_tier:
            return (self.max_tier - lca.tier) / (self.max_tier - self.min_tier)
        return 0.0


register_plugin_builder(PLUGIN_NAME, NetworkTopologyAwarePlugin)
