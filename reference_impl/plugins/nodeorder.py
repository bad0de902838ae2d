"""nodeorder: k8s scoring plugins, weighted (pkg/scheduler/plugins/nodeorder/nodeorder.go; semantics §9.7).

Upstream (this Volcano version) runs every scorer through ONE BatchNodeOrderFn over the candidate nodes:
PreScore (a Skip drops the scorer), Score per node, the scorer's NormalizeScore over those nodes, a
0..100 range check, then `score * weight`. Only ImageLocality goes through NodeOrderFn, per node, not normalised; it scores 0 everywhere when no
node reports an image, and is then not registered. InterPodAffinity (`podaffinity.weight`, 2) is
interpod_affinity.py, PodTopologySpread (`podtopologyspread.weight`, 2, with the system default constraints
for a pod without constraints of its own) pod_topology_spread.py.

Scorers (k8s v1.36.1 pkg/scheduler/framework/plugins), all integer arithmetic on int64:
- LeastAllocated (`leastrequested.weight`, 1): per resource `(alloc - req) * 100 / alloc` (0 when
  req > alloc), cpu and memory weighted 50/50, `Σ score·w / Σ w`; req = node non-zero requested + the
  pod's non-zero request (containers without a cpu / memory request count 100m / 200Mi).
- MostAllocated (`mostrequested.weight`, 0): per resource `min(req, alloc) * 100 / alloc`, weights 1/1.
- BalancedAllocation (`balancedresource.weight`, 1): on actual requests over cpu, memory and
  nvidia.com/gpu (gpu only if the pod requests it and the node has it); `f = min(req/alloc, 1)`,
  `std = |f1 - f2| / 2` for two fractions, population std for three; `s = int((1 - std) * 100)`;
  score = `50 + (50 + s_with_pod - s_without_pod) / 2`. Skipped for pods requesting none of them.
- NodeAffinity (`nodeaffinity.weight`, 2): Σ weights of matching preferred terms, normalised to
  `100 * s / max` (nothing when max is 0).
- TaintToleration (`tainttoleration.weight`, 3): PreferNoSchedule taints not tolerated by tolerations
  with effect PreferNoSchedule or empty, normalised reversed: `100 - 100 * s / max` (all 100 when max is 0).
- ImageLocality (`imagelocality.weight`, 1): for each init and regular container whose image (":latest"
  added when it names no tag) the node holds, `int(size * nodes holding it / session nodes)`; the sum,
  clamped to [23 MiB, 1000 MiB x containers], maps linearly onto 0..100 (integer division). The sizes and
  holder counts are the cache's (cache/image_states.py).
A weight of 0 disables a scorer. "Requested" comes from the session k8s mirror (k8s_mirror.py).
"""

from __future__ import annotations

import math

from schedcheck.reference.api.unschedule_info import ScoringError
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.plugins import pod_topology_spread
from schedcheck.reference.plugins.interpod_affinity import normalized_scores
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import Pod
from schedcheck.reference.plugins.k8s_mirror import (
    MirrorNode,
    PreferredTermsError,
    SelectorTerm,
    compile_preferred_terms,
    node_affinity_key,
    session_mirror,
    tolerations_key,
    tolerations_tolerate,
)

PLUGIN_NAME = "nodeorder"
MAX_NODE_SCORE = 100
LEAST_REQUESTED_WEIGHT = "leastrequested.weight"
MOST_REQUESTED_WEIGHT = "mostrequested.weight"
BALANCED_RESOURCE_WEIGHT = "balancedresource.weight"
NODE_AFFINITY_WEIGHT = "nodeaffinity.weight"
TAINT_TOLERATION_WEIGHT = "tainttoleration.weight"
POD_AFFINITY_WEIGHT = "podaffinity.weight"
IMAGE_LOCALITY_WEIGHT = "imagelocality.weight"
POD_TOPOLOGY_SPREAD_WEIGHT = "podtopologyspread.weight"
MB = 1024 * 1024
IMAGE_MIN_THRESHOLD = 23 * MB
IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * MB
LEAST_CPU_WEIGHT = LEAST_MEMORY_WEIGHT = 50  # the ScoringStrategy resources nodeorder.go passes
MOST_CPU_WEIGHT = MOST_MEMORY_WEIGHT = 1


class ScoreError(ScoringError):
    """A scorer failed; upstream's BatchNodeOrderFn then fails and PrioritizeNodes returns no scores."""


def _div(a: int, b: int) -> int:
    """Go int64 division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def balanced_resource_score(pairs: list[tuple[int, int]]) -> int:
    """(1 - std of min(requested/allocatable, 1)) * 100, truncated."""
    fractions = [min(float(req) / float(alloc), 1.0) for req, alloc in pairs]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for f in fractions:
            total += f
        mean = total / len(fractions)
        squares = 0.0
        for f in fractions:
            squares = squares + (f - mean) * (f - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def default_normalize(scores: list[int], reverse: bool) -> list[int]:
    """helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)."""
    top = max([0, *scores])
    if top == 0:
        return [MAX_NODE_SCORE] * len(scores) if reverse else scores
    out = []
    for s in scores:
        s = _div(MAX_NODE_SCORE * s, top)
        out.append(MAX_NODE_SCORE - s if reverse else s)
    return out


class _Preferred:
    """A pod spec's parsed preferred node-affinity terms, with raw scores memoised per node."""

    __slots__ = ("terms", "error", "raw")

    def __init__(self, pod: Pod) -> None:
        self.terms: list[tuple[SelectorTerm, int]] = []
        self.error: PreferredTermsError | None = None
        try:
            self.terms = compile_preferred_terms(pod.node_affinity.preferred)  # type: ignore[union-attr]
        except PreferredTermsError as err:
            self.error = err
        self.raw: dict[str, int] = {}

    def score(self, node: MirrorNode) -> int:
        raw = self.raw.get(node.name)
        if raw is None:
            raw = sum(weight for term, weight in self.terms if node.node is not None and term.matches(node.node))
            self.raw[node.name] = raw
        return raw


class _SoftTolerations:
    """Tolerations that can tolerate PreferNoSchedule taints, with raw counts memoised per node."""

    __slots__ = ("tolerations", "raw")

    def __init__(self, pod: Pod) -> None:
        self.tolerations = tuple(t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule"))
        self.raw: dict[str, int] = {}

    def count(self, node: MirrorNode) -> int:
        raw = self.raw.get(node.name)
        if raw is None:
            taints = node.node.taints if node.node is not None else []
            raw = sum(1 for t in taints
                      if t.effect == "PreferNoSchedule" and not tolerations_tolerate(self.tolerations, t))
            self.raw[node.name] = raw
        return raw


class _TaskScoring:
    __slots__ = ("cpu", "memory", "gpu", "non0_cpu", "non0_memory", "best_effort", "preferred", "soft")


class NodeOrderPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict) -> None:
        super().__init__(arguments)
        args = as_arguments(arguments)
        self.least_weight = args.get_int(LEAST_REQUESTED_WEIGHT, 1)
        self.most_weight = args.get_int(MOST_REQUESTED_WEIGHT, 0)
        self.balanced_weight = args.get_int(BALANCED_RESOURCE_WEIGHT, 1)
        self.affinity_weight = args.get_int(NODE_AFFINITY_WEIGHT, 2)
        self.taint_weight = args.get_int(TAINT_TOLERATION_WEIGHT, 3)
        self.pod_affinity_weight = args.get_int(POD_AFFINITY_WEIGHT, 2)
        self.image_weight = args.get_int(IMAGE_LOCALITY_WEIGHT, 1)
        self.spread_weight = args.get_int(POD_TOPOLOGY_SPREAD_WEIGHT, 2)
        self._tasks: dict[str, _TaskScoring] = {}
        self._preferred: dict[tuple, _Preferred] = {}
        self._soft: dict[tuple, _SoftTolerations] = {}
        self._balance_base: dict[str, tuple[int, int]] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.mirror = session_mirror(ssn)
        # PodTopologySpread's system defaulting: the selectors Services and controllers give a pod
        self._default_selectors = pod_topology_spread.DefaultSelectors(ssn.cache.world)
        self._spread_default: dict[str, list] = {}
        ssn.add_fn("batch_node_order", self.name, self.batch_node_order)
        if self.image_weight and any(node.image_states for node in ssn.nodes.values()):
            self._session_nodes = len(self.mirror.nodes)
            ssn.add_fn("node_order", self.name, self.node_order)

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        """NodeOrderFn: ImageLocality's score times its weight."""
        return float(self.image_weight * image_locality_score(task.pod, node.image_states, self._session_nodes))

    def _task_scoring(self, task: TaskInfo) -> _TaskScoring:
        ts = self._tasks.get(task.uid)
        if ts is not None:
            return ts
        pod = task.pod
        req = self.mirror.pod_requests(pod)
        ts = _TaskScoring()
        # calculatePodResourceRequest: the spec alone (the scorers are not told InPlacePodVerticalScaling)
        ts.cpu, ts.memory, ts.gpu = req.score_cpu, req.score_memory, req.score_gpu
        ts.non0_cpu, ts.non0_memory = req.score_non0_cpu, req.score_non0_memory
        ts.best_effort = ts.cpu == 0 and ts.memory == 0 and ts.gpu == 0
        ts.preferred = None  # PreScore skips pods without preferred terms
        if pod.node_affinity is not None and pod.node_affinity.preferred:
            key = node_affinity_key(pod)[2]
            if key not in self._preferred:
                self._preferred[key] = _Preferred(pod)
            ts.preferred = self._preferred[key]
        key = tolerations_key(pod.tolerations)
        if key not in self._soft:
            self._soft[key] = _SoftTolerations(pod)
        ts.soft = self._soft[key]
        self._tasks[task.uid] = ts
        return ts

    def batch_node_order(self, task: TaskInfo, nodes: list[NodeInfo]) -> dict[str, float]:
        """{node: Σ weight · score} over the enabled scorers; raises ScoreError where upstream errors."""
        mirror_nodes = self.mirror.nodes
        infos = [mirror_nodes[n.name] for n in nodes if n.name in mirror_nodes]
        ts = self._task_scoring(task)
        least, most, balanced = self.least_weight, self.most_weight, self.balanced_weight
        if balanced and ts.best_effort:
            balanced = 0
        totals = [0] * len(infos)
        if least or most or balanced:
            for i, m in enumerate(infos):
                score = 0
                if least:
                    score += least * _least_allocated(ts, m)
                if most:
                    score += most * _most_allocated(ts, m)
                if balanced:
                    score += balanced * _balanced_allocation(ts, m, self._balance_base)
                totals[i] = score
        if self.affinity_weight and ts.preferred is not None:
            if ts.preferred.error is not None:
                raise ScoreError(f"pre-score NodeAffinity failed: {ts.preferred.error}")
            scores = default_normalize([ts.preferred.score(m) for m in infos], reverse=False)
            self._add_weighted(totals, scores, self.affinity_weight, "NodeAffinity", infos)
        if self.taint_weight:
            scores = default_normalize([ts.soft.count(m) for m in infos], reverse=True)
            self._add_weighted(totals, scores, self.taint_weight, "TaintToleration", infos)
        if self.pod_affinity_weight:
            affinity = normalized_scores(task.pod, infos, mirror_nodes.values(), self.mirror.affinity_nodes.values())
            if affinity is not None:
                self._add_weighted(totals, affinity, self.pod_affinity_weight, "InterPodAffinity", infos)
        if self.spread_weight and task.pod.topology_spread_constraints:
            spread = pod_topology_spread.normalized_scores(task.pod, infos, mirror_nodes.values())
            if spread is not None:
                self._add_weighted(totals, spread, self.spread_weight, "PodTopologySpread", infos)
        elif self.spread_weight and self._default_selectors:  # the system default constraints
            defaults = self._spread_defaults(task.pod)
            if defaults:
                spread = pod_topology_spread.normalized_scores(task.pod, infos, mirror_nodes.values(), defaults)
                if spread is not None:
                    self._add_weighted(totals, spread, self.spread_weight, "PodTopologySpread", infos)
        return {m.name: float(total) for m, total in zip(infos, totals)}

    def _spread_defaults(self, pod: Pod) -> list:
        """The pod's system default constraints ([] when its default selector is empty), per session."""
        found = self._spread_default.get(pod.uid)
        if found is None:
            selector = self._default_selectors.selector(pod)
            found = pod_topology_spread.system_default_constraints(selector) if selector is not None else []
            self._spread_default[pod.uid] = found
        return found

    @staticmethod
    def _add_weighted(totals: list[int], scores: list[int], weight: int, scorer: str, infos: list[MirrorNode]) -> None:
        for i, score in enumerate(scores):
            if not 0 <= score <= MAX_NODE_SCORE:
                raise ScoreError(f"{scorer} returns an invalid score {score} for node {infos[i].name}")
            totals[i] += score * weight


# The per-node scorers below run for every task x node; their operands are non-negative,
# so Python's // equals Go's truncating int64 division.


def _least_allocated(ts: _TaskScoring, m: MirrorNode) -> int:
    score = weights = 0
    capacity = m.alloc_cpu
    if capacity:
        requested = m.non0_cpu + ts.non0_cpu
        if requested <= capacity:
            score += (capacity - requested) * MAX_NODE_SCORE // capacity * LEAST_CPU_WEIGHT
        weights += LEAST_CPU_WEIGHT
    capacity = m.alloc_memory
    if capacity:
        requested = m.non0_memory + ts.non0_memory
        if requested <= capacity:
            score += (capacity - requested) * MAX_NODE_SCORE // capacity * LEAST_MEMORY_WEIGHT
        weights += LEAST_MEMORY_WEIGHT
    return score // weights if weights else 0


def _most_allocated(ts: _TaskScoring, m: MirrorNode) -> int:
    score = weights = 0
    capacity = m.alloc_cpu
    if capacity:
        score += min(m.non0_cpu + ts.non0_cpu, capacity) * MAX_NODE_SCORE // capacity * MOST_CPU_WEIGHT
        weights += MOST_CPU_WEIGHT
    capacity = m.alloc_memory
    if capacity:
        score += min(m.non0_memory + ts.non0_memory, capacity) * MAX_NODE_SCORE // capacity * MOST_MEMORY_WEIGHT
        weights += MOST_MEMORY_WEIGHT
    return score // weights if weights else 0


def _two_fraction_score(cpu: int, cpu_capacity: int, memory: int, memory_capacity: int) -> int:
    """balanced_resource_score for exactly the cpu and memory fractions."""
    fc = float(cpu) / float(cpu_capacity)
    fm = float(memory) / float(memory_capacity)
    if fc > 1:
        fc = 1.0
    if fm > 1:
        fm = 1.0
    return int((1 - abs((fc - fm) / 2)) * float(MAX_NODE_SCORE))


def _balanced_allocation(ts: _TaskScoring, m: MirrorNode, base: dict[str, tuple[int, int]]) -> int:
    """`base` caches, per node, (mirror version, cpu/memory balance score without the incoming pod)."""
    if ts.gpu and m.alloc_gpu:  # an extended resource counts only if the pod requests it
        entries = [(used, request, capacity) for used, request, capacity in (
            (m.cpu, ts.cpu, m.alloc_cpu), (m.memory, ts.memory, m.alloc_memory), (m.gpu, ts.gpu, m.alloc_gpu),
        ) if capacity]
        change = (balanced_resource_score([(used + request, capacity) for used, request, capacity in entries])
                  - balanced_resource_score([(used, capacity) for used, _, capacity in entries]))
    elif m.alloc_cpu and m.alloc_memory:
        without = base.get(m.name)
        if without is None or without[0] != m.version:
            without = base[m.name] = (
                m.version, _two_fraction_score(m.cpu, m.alloc_cpu, m.memory, m.alloc_memory))
        change = _two_fraction_score(m.cpu + ts.cpu, m.alloc_cpu, m.memory + ts.memory, m.alloc_memory) - without[1]
    else:
        change = 0  # at most one fraction: std 0 with and without the pod
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + change) // 2



def normalized_image_name(name: str) -> str:
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def image_locality_score(pod: Pod, image_states: dict[str, tuple[int, int]], session_nodes: int) -> int:
    total = 0
    for container in (*pod.init_containers, *pod.containers):
        state = image_states.get(normalized_image_name(container.image))
        if state is not None:
            size, holders = state
            total += int(float(size) * (float(holders) / float(session_nodes)))
    containers = len(pod.init_containers) + len(pod.containers)
    ceiling = IMAGE_MAX_CONTAINER_THRESHOLD * containers
    if total < IMAGE_MIN_THRESHOLD:
        total = IMAGE_MIN_THRESHOLD
    elif total > ceiling:
        total = ceiling
    return _div(MAX_NODE_SCORE * (total - IMAGE_MIN_THRESHOLD), ceiling - IMAGE_MIN_THRESHOLD)

register_plugin_builder(PLUGIN_NAME, NodeOrderPlugin)
