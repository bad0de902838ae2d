"""InterPodAffinity scoring restated from k8s (nodeorder's podaffinity.weight)."""

from __future__ import annotations

from schedcheck.reference.k8s import (
    LabelSelector, LabelSelectorRequirement, Node, Pod, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm,
)
from schedcheck.reference.plugins.interpod_affinity import normalized_scores, selector_matches, term_matches
from schedcheck.reference.plugins.k8s_mirror import MirrorNode

HOST = "kubernetes.io/hostname"


def _node(name: str, *pods: Pod) -> MirrorNode:
    node = MirrorNode(name, Node(name=name, uid=name, labels={HOST: name}))
    for pod in pods:
        node.pods[pod.uid] = 1
        node.pod_objects[pod.uid] = pod
    return node


def _pod(name: str, labels=None, namespace="ns", affinity=None, anti=None) -> Pod:
    return Pod(name=name, namespace=namespace, uid=name, labels=labels or {}, pod_affinity=affinity,
               pod_anti_affinity=anti)


def _preferred(weight: int, **labels: str) -> PodAffinity:
    return PodAffinity(preferred=[WeightedPodAffinityTerm(weight, PodAffinityTerm(LabelSelector(labels), HOST))])


def test_label_selectors():
    assert selector_matches(LabelSelector(), {"a": "1"})  # empty selects everything
    assert not selector_matches(None, {"a": "1"})  # nil selects nothing
    exists = LabelSelector(match_expressions=[LabelSelectorRequirement("a", "NotIn", ["2"])])
    assert selector_matches(exists, {}) and not selector_matches(exists, {"a": "2"})


def test_a_term_without_namespaces_means_the_owners_namespace():
    term = PodAffinityTerm(LabelSelector({"app": "x"}), HOST)
    owner = _pod("o", namespace="a")
    assert term_matches(term, owner, _pod("p", {"app": "x"}, namespace="a"), True)
    assert not term_matches(term, owner, _pod("p", {"app": "x"}, namespace="b"), True)
    everywhere = PodAffinityTerm(LabelSelector({"app": "x"}), HOST, namespace_selector=LabelSelector())
    assert term_matches(everywhere, owner, _pod("p", {"app": "x"}, namespace="b"), True)


def test_affinity_pulls_and_anti_affinity_pushes():
    nodes = [_node("n1", _pod("web", {"app": "web"})), _node("n2"), _node("n3", _pod("db", {"app": "db"}))]
    assert normalized_scores(_pod("in", affinity=_preferred(50, app="web")), nodes, nodes) == [100, 0, 0]
    assert normalized_scores(_pod("in", anti=_preferred(50, app="web")), nodes, nodes) == [0, 100, 100]


def test_existing_pods_preferred_terms_attract_the_incoming_pod():
    fan = _pod("fan", {"app": "fan"}, affinity=_preferred(30, app="web"))
    nodes = [_node("n1"), _node("n2", fan)]
    assert normalized_scores(_pod("in", {"app": "web"}), nodes, nodes) == [0, 100]


def test_nothing_to_score_is_a_skip():
    nodes = [_node("n1", _pod("web", {"app": "web"})), _node("n2")]
    assert normalized_scores(_pod("in"), nodes, nodes) is None
