"""InterPodAffinity scoring, as the nodeorder plugin runs it (k8s v1.36.1
pkg/scheduler/framework/plugins/interpodaffinity/scoring.go, with the zero-valued args nodeorder.go passes:
HardPodAffinityWeight 0, IgnorePreferredTermsOfExistingPods false).

PreScore walks every node (only the nodes holding pods with affinity when the incoming pod has no
preferred pod (anti-)affinity term) and every pod on it (only the pods with affinity, likewise), and adds
into a score per (topology key, value): + weight for each preferred affinity term of the incoming pod an
existing pod matches, - weight for each preferred anti-affinity term; + weight / - weight for each
preferred affinity / anti-affinity term of an existing pod the incoming pod matches. Nothing gathered:
the scorer is skipped. Score(node) sums the entries of the node's label values; NormalizeScore maps
[min, max] to [0, 100] (all 0 when they are equal).

Namespaces: a term with neither namespaces nor a namespaceSelector means the pod's own namespace; an
empty namespaceSelector means every namespace. The scenario format has no Namespace objects, so a
non-empty namespaceSelector is matched against no labels.

The filter (filtering.go), as the predicates plugin runs it (`predicate.PodAffinityEnable`, on by
default): PreFilter counts, over the pods the plugin's node view holds when PrePredicate runs, per
(topology key, value); Filter reads those counts, so a pod placed or removed after the task's
PrePredicate is not seen until the next one.
"""

from __future__ import annotations

from collections.abc import Iterable

from schedcheck.reference.k8s import LabelSelector, Pod, PodAffinityTerm
from schedcheck.reference.plugins.k8s_mirror import MirrorNode

MAX_NODE_SCORE = 100


def selector_matches(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels); None selects nothing."""
    if selector is None:
        return False
    if any(labels.get(key) != value for key, value in selector.match_labels.items()):
        return False
    for req in selector.match_expressions:
        present = req.key in labels
        if req.operator == "In" and not (present and labels[req.key] in req.values):
            return False
        if req.operator == "NotIn" and present and labels[req.key] in req.values:
            return False
        if req.operator == "Exists" and not present:
            return False
        if req.operator == "DoesNotExist" and present:
            return False
    return True


def _everything(selector: LabelSelector | None) -> bool:
    return selector is not None and not selector.match_labels and not selector.match_expressions


def term_matches(term: PodAffinityTerm, owner: Pod, pod: Pod, incoming_term: bool) -> bool:
    """Does `pod` match `term`, a term of `owner`? Namespaces first, then the label selector."""
    if not term.namespaces and term.namespace_selector is None:
        in_namespace = pod.namespace == owner.namespace
    elif pod.namespace in term.namespaces or _everything(term.namespace_selector):
        in_namespace = True
    elif incoming_term or term.namespace_selector is None:
        in_namespace = False  # the incoming pod's selector is turned into names; no Namespace objects known
    else:
        in_namespace = selector_matches(term.namespace_selector, {})  # the incoming pod's namespace labels
    return in_namespace and selector_matches(term.label_selector, pod.labels)


def has_affinity(pod: Pod) -> bool:
    return pod.pod_affinity is not None or pod.pod_anti_affinity is not None


def _add(scores: dict[str, dict[str, int]], term: PodAffinityTerm, node: MirrorNode, value: int) -> None:
    labels = node.node.labels if node.node is not None else {}
    if term.topology_key in labels:
        by_value = scores.setdefault(term.topology_key, {})
        by_value[labels[term.topology_key]] = by_value.get(labels[term.topology_key], 0) + value


def topology_scores(pod: Pod, all_nodes: Iterable[MirrorNode],
                    affinity_nodes: Iterable[MirrorNode] | None = None) -> dict[str, dict[str, int]]:
    """PreScore: topology key -> label value -> summed weights ({} means Skip). `affinity_nodes`, when given,
    are the nodes of `all_nodes` holding a pod with (anti-)affinity (K8sMirror.affinity_nodes)."""
    affinity = pod.pod_affinity.preferred if pod.pod_affinity is not None else []
    anti = pod.pod_anti_affinity.preferred if pod.pod_anti_affinity is not None else []
    constrained = bool(affinity or anti)
    only_affinity = not constrained and affinity_nodes is not None  # only pods with affinity can add
    scores: dict[str, dict[str, int]] = {}
    for node in affinity_nodes if only_affinity else all_nodes:  # type: ignore[union-attr]
        if node.node is None or not node.node.labels:
            continue
        for existing in (node.affinity_pods if only_affinity else node.pod_objects).values():
            if not constrained and not has_affinity(existing):
                continue
            for weighted in affinity:
                if term_matches(weighted.term, pod, existing, True):
                    _add(scores, weighted.term, node, weighted.weight)
            for weighted in anti:
                if term_matches(weighted.term, pod, existing, True):
                    _add(scores, weighted.term, node, -weighted.weight)
            if existing.pod_affinity is not None:
                for weighted in existing.pod_affinity.preferred:
                    if term_matches(weighted.term, existing, pod, False):
                        _add(scores, weighted.term, node, weighted.weight)
            if existing.pod_anti_affinity is not None:
                for weighted in existing.pod_anti_affinity.preferred:
                    if term_matches(weighted.term, existing, pod, False):
                        _add(scores, weighted.term, node, -weighted.weight)
    return scores


def normalized_scores(pod: Pod, candidates: list[MirrorNode], all_nodes: Iterable[MirrorNode],
                      affinity_nodes: Iterable[MirrorNode] | None = None) -> list[int] | None:
    """Score then NormalizeScore over the candidates; None when PreScore skips."""
    scores = topology_scores(pod, all_nodes, affinity_nodes)
    if not scores:
        return None
    raw = []
    for node in candidates:
        labels = node.node.labels if node.node is not None else {}
        raw.append(sum(values.get(labels[key], 0) for key, values in scores.items() if key in labels))
    if not raw:
        return []
    low, high = min(raw), max(raw)
    if high == low:
        return [0] * len(raw)
    return [int(MAX_NODE_SCORE * ((score - low) / (high - low))) for score in raw]


# -- the filter (k8s interpodaffinity/filtering.go) ---------------------------------------------

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"


class AffinityFilterState:
    """PreFilter's counts per (topology key, value): existing pods matching all of the incoming pod's
    required affinity terms, existing pods matching each of its required anti-affinity terms, and
    existing pods whose required anti-affinity terms match the incoming pod."""

    __slots__ = ("pod", "affinity_terms", "anti_terms", "affinity", "anti", "existing_anti")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.affinity_terms = list(pod.pod_affinity.required) if pod.pod_affinity is not None else []
        self.anti_terms = list(pod.pod_anti_affinity.required) if pod.pod_anti_affinity is not None else []
        self.affinity: dict[tuple[str, str], int] = {}
        self.anti: dict[tuple[str, str], int] = {}
        self.existing_anti: dict[tuple[str, str], int] = {}

    def clone(self) -> AffinityFilterState:
        """preFilterState.Clone: the counts copied, the pod and its terms shared."""
        other = AffinityFilterState.__new__(AffinityFilterState)
        other.pod, other.affinity_terms, other.anti_terms = self.pod, self.affinity_terms, self.anti_terms
        other.affinity, other.anti, other.existing_anti = dict(self.affinity), dict(self.anti), dict(self.existing_anti)
        return other


def _count(counts: dict[tuple[str, str], int], key: str, labels: dict[str, str], by: int = 1) -> None:
    if key in labels:
        pair = (key, labels[key])
        counts[pair] = counts.get(pair, 0) + by


def update_with_pod(state: AffinityFilterState, existing: Pod, labels: dict[str, str], multiplier: int) -> None:
    """preFilterState.updateWithPod: a pod added to (+1) or removed from (-1) a node with these labels, as
    AddPod / RemovePod apply it to the counts during preemption's dry runs."""
    anti = existing.pod_anti_affinity.required if existing.pod_anti_affinity is not None else []
    for term in anti:
        if term_matches(term, existing, state.pod, False):
            _count(state.existing_anti, term.topology_key, labels, multiplier)
    if state.affinity_terms and all(term_matches(t, state.pod, existing, True) for t in state.affinity_terms):
        for term in state.affinity_terms:
            _count(state.affinity, term.topology_key, labels, multiplier)
    for term in state.anti_terms:
        if term_matches(term, state.pod, existing, True):
            _count(state.anti, term.topology_key, labels, multiplier)


def pre_filter(pod: Pod, all_nodes: Iterable[MirrorNode],
               affinity_nodes: Iterable[MirrorNode] | None = None) -> AffinityFilterState | None:
    """PreFilter; None is Skip (no required term on the pod, no existing pod with a required
    anti-affinity term anywhere). `affinity_nodes`, when given, are the nodes of `all_nodes` holding a pod
    with (anti-)affinity: for a pod without required terms only those pods can count."""
    state = AffinityFilterState(pod)
    only_affinity = affinity_nodes is not None and not state.affinity_terms and not state.anti_terms
    any_existing_anti = False
    for node in affinity_nodes if only_affinity else all_nodes:  # type: ignore[union-attr]
        if node.node is None:
            continue
        labels = node.node.labels
        for existing in (node.affinity_pods if only_affinity else node.pod_objects).values():
            anti = existing.pod_anti_affinity.required if existing.pod_anti_affinity is not None else []
            if anti:
                any_existing_anti = True
            for term in anti:
                if term_matches(term, existing, pod, False):
                    _count(state.existing_anti, term.topology_key, labels)
            if state.affinity_terms and all(term_matches(t, pod, existing, True) for t in state.affinity_terms):
                for term in state.affinity_terms:
                    _count(state.affinity, term.topology_key, labels)
            for term in state.anti_terms:
                if term_matches(term, pod, existing, True):
                    _count(state.anti, term.topology_key, labels)
    if not state.affinity_terms and not state.anti_terms and not any_existing_anti:
        return None
    return state


def filter_node(state: AffinityFilterState, node: MirrorNode) -> tuple[bool, str] | None:
    """Filter: None passes, else (unresolvable, reason): affinity first (UnschedulableAndUnresolvable),
    then the pod's anti-affinity and the existing pods' (Unschedulable)."""
    return filter_labels(state, node.node.labels if node.node is not None else {})


def filter_labels(state: AffinityFilterState, labels: dict[str, str]) -> tuple[bool, str] | None:
    """Filter on a node known by its labels (the counts hold everything else)."""
    pods_exist = True
    for term in state.affinity_terms:
        if term.topology_key not in labels:
            return True, REASON_AFFINITY  # every topology key must be on the node
        if state.affinity.get((term.topology_key, labels[term.topology_key]), 0) <= 0:
            pods_exist = False
    if not pods_exist and not (not state.affinity and all(
            term_matches(t, state.pod, state.pod, True) for t in state.affinity_terms)):
        return True, REASON_AFFINITY  # not the first pod of a group that wants itself
    for term in state.anti_terms:
        if term.topology_key in labels and state.anti.get((term.topology_key, labels[term.topology_key]), 0) > 0:
            return False, REASON_ANTI_AFFINITY
    for key, value in labels.items():
        if state.existing_anti.get((key, value), 0) > 0:
            return False, REASON_EXISTING_ANTI_AFFINITY
    return None
