"""PodTopologySpread's system default constraints: the selector k8s helper.DefaultSelector derives from
Services and the pod's controller, and the system-defaulted score (podtopologyspread/scoring.go with
requireAllTopologies false), restated by hand."""

from __future__ import annotations

from schedcheck.reference.k8s import (
    ClusterObjects, ControllerReference, LabelSelector, LabelSelectorRequirement, Node, Pod, ReplicationController,
    Service, WorkloadController,
)
from schedcheck.reference.plugins.interpod_affinity import selector_matches
from schedcheck.reference.plugins.k8s_mirror import MirrorNode
from schedcheck.reference.plugins.pod_topology_spread import (
    HOSTNAME, ZONE, DefaultSelectors, normalized_scores, system_default_constraints,
)


def _pod(name: str = "p", labels=None, ref: ControllerReference | None = None, ns: str = "ns") -> Pod:
    return Pod(name=name, namespace=ns, uid=f"{ns}-{name}", labels=labels if labels is not None else {"app": "web"},
               controller_ref=ref)


def _world(**kinds) -> ClusterObjects:
    return ClusterObjects(**kinds)


def _pairs(selector: LabelSelector | None):
    if selector is None:
        return None
    assert not selector.match_labels
    return sorted((r.key, r.operator, tuple(r.values)) for r in selector.match_expressions)


def test_services_of_the_pods_namespace_that_match_it_merge() -> None:
    world = _world(services=[Service("a", "ns", {"app": "web"}), Service("b", "ns", {"tier": "front"}),
                             Service("c", "other", {"app": "web", "x": "y"}), Service("d", "ns", None),
                             Service("e", "ns", {"app": "db"}), Service("f", "ns", {})])
    pod = _pod(labels={"app": "web", "tier": "front"})
    assert _pairs(DefaultSelectors(world).selector(pod)) == [("app", "In", ("web",)), ("tier", "In", ("front",))]


def test_nothing_selecting_the_pod_means_no_default_constraints() -> None:
    world = _world(services=[Service("e", "ns", {"app": "db"})])
    assert DefaultSelectors(world).selector(_pod()) is None
    assert not DefaultSelectors(_world())


def test_a_replication_controller_merges_over_the_services_even_where_it_does_not_match() -> None:
    world = _world(services=[Service("a", "ns", {"app": "web"})],
                   replication_controllers=[ReplicationController("rc", "ns", {"app": "other", "v": "1"})])
    pod = _pod(ref=ControllerReference("v1", "ReplicationController", "rc"))
    assert _pairs(DefaultSelectors(world).selector(pod)) == [("app", "In", ("other",)), ("v", "In", ("1",))]


def test_a_replica_set_adds_its_requirements_to_the_services() -> None:
    rs = WorkloadController("ReplicaSet", "rs", "ns", LabelSelector(
        {"app": "web"}, [LabelSelectorRequirement("tier", "NotIn", ["back"])]))
    world = _world(services=[Service("a", "ns", {"app": "web"})], workload_controllers=[rs])
    selector = DefaultSelectors(world).selector(_pod(ref=ControllerReference("apps/v1", "ReplicaSet", "rs")))
    assert _pairs(selector) == [("app", "In", ("web",)), ("app", "In", ("web",)), ("tier", "NotIn", ("back",))]
    assert selector_matches(selector, {"app": "web"}) and not selector_matches(selector, {"app": "web", "tier": "back"})


def test_a_controller_is_found_only_by_its_group_version_kind_name_and_the_pods_namespace() -> None:
    ss = WorkloadController("StatefulSet", "db", "ns", LabelSelector({"app": "db"}))
    world = _world(workload_controllers=[ss], replication_controllers=[ReplicationController("db", "ns", {"k": "v"})])
    selectors = DefaultSelectors(world)
    assert _pairs(selectors.selector(_pod(ref=ControllerReference("apps/v1", "StatefulSet", "db")))) == \
        [("app", "In", ("db",))]
    assert _pairs(selectors.selector(_pod(ref=ControllerReference("/v1", "ReplicationController", "db")))) == \
        [("k", "In", ("v",))]  # ParseGroupVersion reads "/v1" as the core group
    for ref in (ControllerReference("apps/v1beta2", "StatefulSet", "db"),  # another version
                ControllerReference("v1", "StatefulSet", "db"),  # the core group has no StatefulSet
                ControllerReference("apps/v1/x", "StatefulSet", "db"),  # does not parse
                ControllerReference("apps/v1", "Deployment", "db"),  # not a supported controller
                ControllerReference("apps/v1", "StatefulSet", "missing")):
        assert selectors.selector(_pod(ref=ref)) is None, ref
    assert selectors.selector(_pod(ref=ControllerReference("apps/v1", "StatefulSet", "db"), ns="other")) is None


def _node(name: str, labels: dict[str, str], *pods: Pod) -> MirrorNode:
    node = MirrorNode(name, Node(name=name, uid=name, labels=labels))
    for pod in pods:
        node.pods[pod.uid] = 1
        node.pod_objects[pod.uid] = pod
    return node


WEB = LabelSelector({}, [LabelSelectorRequirement("app", "In", ["web"])])


def test_the_defaults_are_hostname_then_zone_schedule_anyway_honouring_node_affinity_only() -> None:
    host, zone = system_default_constraints(WEB)
    assert (host.topology_key, host.max_skew, zone.topology_key, zone.max_skew) == (HOSTNAME, 3, ZONE, 5)
    assert {c.when_unsatisfiable for c in (host, zone)} == {"ScheduleAnyway"}
    assert (host.node_affinity_policy, host.node_taints_policy, host.label_selector) == ("Honor", "Ignore", WEB)


def test_nodes_without_the_zone_share_the_empty_domain_but_score_no_zone_term() -> None:
    nodes = [_node("n1", {HOSTNAME: "n1", ZONE: "a"}), _node("n2", {HOSTNAME: "n2"}, _pod("w1")),
             _node("n3", {HOSTNAME: "n3"}, _pod("w2"))]
    # hostname ln 5 = 1.609, zone domains a and "" ln 4 = 1.386: n1 2 + 0 + 4 = 6; n2, n3 1.609 + 2 -> 4;
    # 100 (6 + 4 - s) / 6
    assert normalized_scores(_pod("p"), nodes, nodes, system_default_constraints(WEB)) == [66, 100, 100]
    # the same pod with the same two constraints of its own ignores n2 and n3 (they lack the zone)
    own = Pod(name="p", namespace="ns", uid="ns-p", labels={"app": "web"},
              topology_spread_constraints=system_default_constraints(WEB))
    assert normalized_scores(own, nodes, nodes) == [100, 0, 0]


def test_a_node_without_a_hostname_label_scores_no_hostname_term() -> None:
    nodes = [_node("n1", {ZONE: "a"}, _pod("w1")), _node("n2", {HOSTNAME: "n2", ZONE: "a"})]
    # zone a holds 1: ln 3 = 1.099 (one domain); n1 1.099 + 4 = 5.1 -> 5 (no hostname term);
    # n2 0 x ln 4 + 2 + 1.099 + 4 = 7.1 -> 7; 100 (7 + 5 - s) / 7
    assert normalized_scores(_pod("p"), nodes, nodes, system_default_constraints(WEB)) == [100, 71]
