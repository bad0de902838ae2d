"""PodTopologySpread, as the predicates plugin runs its filter (`predicate.PodTopologySpreadEnable`, on by
default; k8s podtopologyspread/filtering.go) and nodeorder its score (scoring.go).

PreFilter keeps the pod's DoNotSchedule constraints (none: Skip) and counts, over the nodes of the plugin's
node view that carry every constraint's topology key and pass each constraint's inclusion policies
(nodeAffinityPolicy Honor: the pod's nodeSelector and required node affinity; nodeTaintsPolicy Honor: no
untolerated NoSchedule or NoExecute taint), the pods of the incoming pod's namespace, not being deleted,
that the constraint's selector matches, per topology value (an empty selector `{}` counts none:
countPodsMatchSelector returns 0 for it, though it matches the incoming pod itself). Every eligible
node's value is a domain, even with no matching pod. Filter: a node without one of the keys is
UnschedulableAndUnresolvable; otherwise, for each constraint, the pods matching in the node's domain,
plus one if the incoming pod matches its own selector, minus the smallest count over the domains (0 when
there are fewer domains than minDomains) may not exceed maxSkew (Unschedulable).

The score (nodeorder's `podtopologyspread.weight`, 2) uses the ScheduleAnyway constraints: PreScore keeps
them (none: Skip; a pod without any constraint would get the system default constraints, which need a
Service or controller selecting the pod, and a scenario has none, so it skips too). Candidates lacking
one of the keys are ignored (score 0). Each constraint's domains are the candidates' values; every node
of the session carrying all the keys and passing the constraint's inclusion policies adds its matching
pods to its domain. A candidate scores Σ count · ln(domains + 2) + maxSkew - 1 over the constraints (a
hostname key counts the candidate's own pods, its domains being the candidates not ignored), rounded
half away from zero; NormalizeScore makes it 100 · (max + min - s) / max (all 100 when max is 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from schedcheck.reference.k8s import Pod, TopologySpreadConstraint
from schedcheck.reference.plugins.interpod_affinity import selector_matches
from schedcheck.reference.plugins.k8s_mirror import MirrorNode, RequiredNodeAffinity, tolerations_tolerate

REASON_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_SKEW = "node(s) didn't match pod topology spread constraints"
HOSTNAME = "kubernetes.io/hostname"
MAX_NODE_SCORE = 100


@dataclass
class SpreadFilterState:
    constraints: list[TopologySpreadConstraint]
    counts: list[dict[str, int]] = field(default_factory=list)  # per constraint: topology value -> matching pods

    def min_match(self, index: int) -> int:
        counts = self.counts[index]
        if not counts or len(counts) < self.constraints[index].min_domains:
            return 0
        return min(counts.values())


def hard_constraints(pod: Pod) -> list[TopologySpreadConstraint]:
    return [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]


def included(constraint: TopologySpreadConstraint, pod: Pod, node, affinity: RequiredNodeAffinity) -> bool:
    """matchNodeInclusionPolicies."""
    if constraint.node_affinity_policy == "Honor" and not affinity.matches(node):
        return False
    if constraint.node_taints_policy == "Honor":
        for taint in node.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not tolerations_tolerate(pod.tolerations, taint):
                return False
    return True


def _counts_nothing(selector) -> bool:
    """labels.Selector.Empty(): countPodsMatchSelector counts nothing for an empty selector `{}`."""
    return selector is not None and not selector.match_labels and not selector.match_expressions


def _counted(pod: Pod, selector, namespace: str) -> bool:
    return pod.deletion_timestamp is None and pod.namespace == namespace and selector_matches(selector, pod.labels)


def count_matching(pods: Iterable[Pod], constraint: TopologySpreadConstraint, namespace: str) -> int:
    selector = constraint.label_selector
    if _counts_nothing(selector):
        return 0
    return sum(1 for p in pods if _counted(p, selector, namespace))


def _count_on(mirror: MirrorNode, constraint: TopologySpreadConstraint, namespace: str) -> int:
    """Matching pods on a node, each as often as the node view holds it (AddPodInfo does not deduplicate)."""
    selector = constraint.label_selector
    if _counts_nothing(selector):
        return 0
    return sum(mirror.pods.get(p.uid, 1) for p in mirror.pod_objects.values() if _counted(p, selector, namespace))


def pre_filter(pod: Pod, all_nodes: Iterable[MirrorNode]) -> SpreadFilterState | None:
    """PreFilter; None is Skip (the pod has no DoNotSchedule constraint)."""
    constraints = hard_constraints(pod)
    if not constraints:
        return None
    state = SpreadFilterState(constraints, [{} for _ in constraints])
    affinity = RequiredNodeAffinity(pod)
    for mirror in all_nodes:
        node = mirror.node
        if node is None or any(c.topology_key not in node.labels for c in constraints):
            continue
        for index, constraint in enumerate(constraints):
            if not included(constraint, pod, node, affinity):
                continue
            value = node.labels[constraint.topology_key]
            counts = state.counts[index]
            counts[value] = counts.get(value, 0) + _count_on(mirror, constraint, pod.namespace)
    return state


def filter_node(state: SpreadFilterState, pod: Pod, mirror: MirrorNode) -> tuple[bool, str] | None:
    """Filter: None passes, else (unresolvable, reason)."""
    labels = mirror.node.labels if mirror.node is not None else {}
    for index, constraint in enumerate(state.constraints):
        value = labels.get(constraint.topology_key)
        if value is None:
            return True, REASON_LABEL
        self_match = 1 if selector_matches(constraint.label_selector, pod.labels) else 0
        skew = state.counts[index].get(value, 0) + self_match - state.min_match(index)
        if skew > constraint.max_skew:
            return False, REASON_SKEW
    return None


def soft_constraints(pod: Pod) -> list[TopologySpreadConstraint]:
    return [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "ScheduleAnyway"]


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def normalized_scores(pod: Pod, candidates: list[MirrorNode], all_nodes: Iterable[MirrorNode]) -> list[int] | None:
    """PreScore, Score and NormalizeScore over the candidates, in their order; None is Skip."""
    constraints = soft_constraints(pod)
    if not constraints or not candidates:
        return None
    keys = [c.topology_key for c in constraints]
    ignored = {m.name for m in candidates if m.node is None or any(k not in m.node.labels for k in keys)}
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for m in candidates:
        if m.name in ignored:
            continue
        for index, c in enumerate(constraints):
            if c.topology_key != HOSTNAME:
                counts[index].setdefault(m.node.labels[c.topology_key], 0)
    weights = []
    for index, c in enumerate(constraints):
        size = len(candidates) - len(ignored) if c.topology_key == HOSTNAME else len(counts[index])
        weights.append(math.log(float(size + 2)))
    affinity = RequiredNodeAffinity(pod)
    for mirror in all_nodes:
        node = mirror.node
        if node is None or any(k not in node.labels for k in keys):
            continue
        for index, c in enumerate(constraints):
            if not included(c, pod, node, affinity):
                continue
            value = node.labels[c.topology_key]
            if value in counts[index]:
                counts[index][value] += _count_on(mirror, c, pod.namespace)
    raw: list[int | None] = []
    for m in candidates:
        if m.name in ignored:
            raw.append(None)
            continue
        score = 0.0
        for index, c in enumerate(constraints):
            if c.topology_key == HOSTNAME:
                count = _count_on(m, c, pod.namespace)
            else:
                count = counts[index][m.node.labels[c.topology_key]]
            score += float(count) * weights[index] + float(c.max_skew - 1)
        raw.append(_go_round(score))
    valid = [s for s in raw if s is not None]
    low = min(valid) if valid else 0
    high = max([0, *valid])
    out = []
    for s in raw:
        if s is None:
            out.append(0)
        elif high == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(MAX_NODE_SCORE * (high + low - s) // high)
    return out
