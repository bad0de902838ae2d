"""PodTopologySpread's filter, as the predicates plugin runs it (`predicate.PodTopologySpreadEnable`, on by
default; k8s v1.36 pkg/scheduler/framework/plugins/podtopologyspread/filtering.go).

PreFilter keeps the pod's DoNotSchedule constraints (none: Skip) and counts, over the nodes of the plugin's
node view that carry every constraint's topology key and pass each constraint's inclusion policies
(nodeAffinityPolicy Honor: the pod's nodeSelector and required node affinity; nodeTaintsPolicy Honor: no
untolerated NoSchedule or NoExecute taint), the pods of the incoming pod's namespace, not being deleted,
that the constraint's selector matches, per topology value. Every eligible node's value is a domain, even
with no matching pod. Filter: a node without one of the keys is UnschedulableAndUnresolvable; otherwise,
for each constraint, the pods matching in the node's domain, plus one if the incoming pod matches its own
selector, minus the smallest count over the domains (0 when there are fewer domains than minDomains) may
not exceed maxSkew (Unschedulable).

ScheduleAnyway constraints only score, in nodeorder's PodTopologySpread, which is not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from schedcheck.reference.k8s import Pod, TopologySpreadConstraint
from schedcheck.reference.plugins.interpod_affinity import selector_matches
from schedcheck.reference.plugins.k8s_mirror import MirrorNode, RequiredNodeAffinity, tolerations_tolerate

REASON_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
REASON_SKEW = "node(s) didn't match pod topology spread constraints"


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


def count_matching(pods: Iterable[Pod], constraint: TopologySpreadConstraint, namespace: str) -> int:
    return sum(1 for p in pods if p.deletion_timestamp is None and p.namespace == namespace
               and selector_matches(constraint.label_selector, p.labels))


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
        pods = list(mirror.pod_objects.values())
        for index, constraint in enumerate(constraints):
            if not included(constraint, pod, node, affinity):
                continue
            value = node.labels[constraint.topology_key]
            counts = state.counts[index]
            # the mirror keeps one entry per pod uid with a multiplicity (AddPodInfo does not deduplicate)
            counts[value] = counts.get(value, 0) + sum(
                mirror.pods.get(p.uid, 1) for p in pods if count_matching((p,), constraint, pod.namespace))
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
