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
them (none: Skip). Candidates lacking one of the keys are ignored (score 0). Each constraint's domains are the candidates' values; every node
of the session carrying all the keys and passing the constraint's inclusion policies adds its matching
pods to its domain. A candidate scores Σ count · ln(domains + 2) + maxSkew - 1 over the constraints (a
hostname key counts the candidate's own pods, its domains being the candidates not ignored), rounded
half away from zero; NormalizeScore makes it 100 · (max + min - s) / max (all 100 when max is 0).

System defaulting (both upstream plugins build PodTopologySpread with `DefaultingType: SystemDefaulting`):
a pod with no `topologySpreadConstraints` of its own gets hostname maxSkew 3 and zone maxSkew 5, both
ScheduleAnyway, with no inclusion policies given (Honor node affinity, Ignore taints) and the selector of
helper.DefaultSelector (`default_selector`): the selectors of the Services of the pod's namespace whose
(non-nil) selector matches the pod, merged; then, by the pod's controller reference, a v1
ReplicationController's selector merged over them, or an apps/v1 ReplicaSet's or StatefulSet's selector's
requirements added to them (a controller that is missing, or of another kind, adds nothing). An empty result
means no default constraints. PreFilter wants DoNotSchedule ones and finds none, so the filter skips them.
The score differs from a pod's own constraints in one way (`requireAllTopologies` is false): no candidate is
ignored for lacking a key; a node without the zone label has the value "" (one domain for all such nodes,
counted like any other) but adds nothing for that constraint to its own score (Score reads only the labels
a node has), and likewise for a node without the hostname label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from schedcheck.reference.k8s import (
    ClusterObjects,
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    TopologySpreadConstraint,
)
from schedcheck.reference.plugins.interpod_affinity import selector_matches
from schedcheck.reference.plugins.k8s_mirror import MirrorNode, RequiredNodeAffinity, tolerations_tolerate

REASON_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_SKEW = "node(s) didn't match pod topology spread constraints"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
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


def system_default_constraints(selector: LabelSelector) -> list[TopologySpreadConstraint]:
    """systemDefaultConstraints with the pod's default selector, in upstream's order (hostname, then zone)."""
    return [TopologySpreadConstraint(3, HOSTNAME, "ScheduleAnyway", selector),
            TopologySpreadConstraint(5, ZONE, "ScheduleAnyway", selector)]


class DefaultSelectors:
    """helper.DefaultSelector over a world's Services, ReplicationControllers, ReplicaSets and StatefulSets."""

    _KINDS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}

    def __init__(self, objects: ClusterObjects) -> None:
        self.services: dict[str, list[dict[str, str]]] = {}
        for service in objects.services:
            if service.selector is not None:  # a service without a selector selects no pod
                self.services.setdefault(service.namespace, []).append(service.selector)
        self.controllers: dict[tuple[str, str, str], object] = {}
        for rc in objects.replication_controllers:
            self.controllers[("ReplicationController", rc.namespace, rc.name)] = rc.selector
        for workload in objects.workload_controllers:
            self.controllers[(workload.kind, workload.namespace, workload.name)] = workload.selector

    def __bool__(self) -> bool:
        return bool(self.services or self.controllers)

    def selector(self, pod: Pod) -> LabelSelector | None:
        """The pod's default selector as requirements (key In [value] for the label sets); None when empty."""
        labels = pod.labels
        merged: dict[str, str] = {}
        for selector in self.services.get(pod.namespace, ()):
            if all(labels.get(k) == v for k, v in selector.items()):
                merged.update(selector)
        extra: list[LabelSelectorRequirement] = []
        ref = pod.controller_ref
        if ref is not None and (_group_version(ref.api_version), ref.kind) in self._KINDS:
            found = self.controllers.get((ref.kind, pod.namespace, ref.name))
            if ref.kind == "ReplicationController":
                if found is not None:
                    merged.update(found)  # type: ignore[arg-type]
            elif isinstance(found, LabelSelector):  # LabelSelectorAsSelector(nil) is Nothing: adds nothing
                extra = [LabelSelectorRequirement(k, "In", [v]) for k, v in found.match_labels.items()]
                extra += found.match_expressions
        requirements = [LabelSelectorRequirement(k, "In", [v]) for k, v in merged.items()] + extra
        if not requirements:
            return None
        return LabelSelector({}, requirements)


def _group_version(api_version: str) -> str:
    """schema.ParseGroupVersion, normalised: "v1" and "/v1" are the core group; "" and "a/b/c" never match."""
    if api_version.count("/") > 1:
        return ""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}" if group else version


def normalized_scores(pod: Pod, candidates: list[MirrorNode], all_nodes: Iterable[MirrorNode],
                      defaults: list[TopologySpreadConstraint] | None = None) -> list[int] | None:
    """PreScore, Score and NormalizeScore over the candidates, in their order; None is Skip. `defaults`: the
    system default constraints of a pod without constraints of its own (system_default_constraints)."""
    require_all = defaults is None
    constraints = soft_constraints(pod) if require_all else defaults
    if not constraints or not candidates:
        return None
    keys = [c.topology_key for c in constraints]
    if require_all:
        ignored = {m.name for m in candidates if m.node is None or any(k not in m.node.labels for k in keys)}
    else:  # nothing is ignored for lacking a key (a node-less entry would crash upstream: left out)
        ignored = {m.name for m in candidates if m.node is None}
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for m in candidates:
        if m.name in ignored:
            continue
        labels = m.node.labels if m.node is not None else {}
        for index, c in enumerate(constraints):
            if c.topology_key != HOSTNAME:
                counts[index].setdefault(labels.get(c.topology_key, ""), 0)
    weights = []
    for index, c in enumerate(constraints):
        size = len(candidates) - len(ignored) if c.topology_key == HOSTNAME else len(counts[index])
        weights.append(math.log(float(size + 2)))
    affinity = RequiredNodeAffinity(pod)
    for mirror in all_nodes:
        node = mirror.node
        if node is None or (require_all and any(k not in node.labels for k in keys)):
            continue
        for index, c in enumerate(constraints):
            if not included(c, pod, node, affinity):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in counts[index]:
                counts[index][value] += _count_on(mirror, c, pod.namespace)
    raw: list[int | None] = []
    for m in candidates:
        if m.name in ignored:
            raw.append(None)
            continue
        score = 0.0
        labels = m.node.labels if m.node is not None else {}
        for index, c in enumerate(constraints):
            value = labels.get(c.topology_key)
            if value is None:  # only under system defaulting: a key the node lacks adds nothing
                continue
            if c.topology_key == HOSTNAME:
                count = _count_on(m, c, pod.namespace)
            else:
                count = counts[index][value]
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
