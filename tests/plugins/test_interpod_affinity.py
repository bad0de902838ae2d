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


def _counts(state):
    return None if state is None else (state.affinity, state.anti, state.existing_anti)


def test_the_mirrors_affinity_index_gives_what_walking_every_pod_gives():
    """K8sMirror.affinity_nodes lets PreFilter and PreScore skip pods without affinity; the counts and scores
    must be those of the full walk, also after pods come and go (a uid re-added without affinity)."""
    from schedcheck.reference.plugins.interpod_affinity import pre_filter, topology_scores
    from schedcheck.reference.plugins.k8s_mirror import K8sMirror

    required_anti = PodAffinity(required=[PodAffinityTerm(LabelSelector({"app": "web"}), HOST)])
    mirror = K8sMirror({})
    for name in ("n1", "n2", "n3"):
        mirror.nodes[name] = MirrorNode(name, Node(name=name, uid=name, labels={HOST: name}))
    guard = _pod("guard", {"app": "guard"}, anti=required_anti)
    fan = _pod("fan", {"app": "fan"}, affinity=_preferred(30, app="web"))
    mirror.add_pod("n1", guard)
    mirror.add_pod("n2", fan)
    mirror.add_pod("n2", _pod("plain", {"app": "web"}))
    mirror.add_pod("n3", _pod("other", {"app": "db"}))
    incoming = [_pod("in", {"app": "web"}), _pod("in2", {"app": "db"}),
                _pod("in3", {"app": "web"}, anti=required_anti), _pod("in4", affinity=_preferred(10, app="web"))]

    def same() -> None:
        brute = {n for n, m in mirror.nodes.items()
                 if any(p.pod_affinity is not None or p.pod_anti_affinity is not None for p in m.pod_objects.values())}
        assert set(mirror.affinity_nodes) == brute
        everything = list(mirror.nodes.values())
        for pod in incoming:
            indexed = pre_filter(pod, everything, mirror.affinity_nodes.values())
            assert _counts(indexed) == _counts(pre_filter(pod, everything))
            assert topology_scores(pod, everything, mirror.affinity_nodes.values()) == topology_scores(pod, everything)

    same()
    assert _counts(pre_filter(incoming[0], list(mirror.nodes.values()), mirror.affinity_nodes.values()))[2]
    mirror.remove_pod("n1", guard)
    same()
    assert "n1" not in mirror.affinity_nodes
    mirror.add_pod("n2", _pod("fan", {"app": "fan"}))  # the same uid again, now without affinity
    same()
    assert "n2" not in mirror.affinity_nodes
    mirror.add_pod("n3", guard)
    same()
    assert set(mirror.affinity_nodes) == {"n3"}
