"""nodeorder's ImageLocality and PodTopologySpread scores, and the cache's image registry, restated from k8s
(imagelocality/image_locality.go, podtopologyspread/scoring.go) and upstream's cache (addNodeImageStates)."""

from __future__ import annotations

from schedcheck.reference.cache.image_states import ImageStates
from schedcheck.reference.k8s import (
    Container, ContainerImage, LabelSelector, Node, Pod, TopologySpreadConstraint,
)
from schedcheck.reference.plugins.k8s_mirror import MirrorNode
from schedcheck.reference.plugins.nodeorder import image_locality_score, normalized_image_name
from schedcheck.reference.plugins.pod_topology_spread import count_matching, normalized_scores

MIB = 1024 * 1024
HOST = "kubernetes.io/hostname"


def _pod(*images: str, init: tuple[str, ...] = (), labels=None, spread=()) -> Pod:
    return Pod(name="p", namespace="ns", uid="p", labels=labels or {},
               containers=[Container(name=f"c{i}", image=image) for i, image in enumerate(images)],
               init_containers=[Container(name=f"i{i}", image=image) for i, image in enumerate(init)],
               topology_spread_constraints=list(spread))


def test_untagged_images_are_pulled_as_latest():
    assert normalized_image_name("busybox") == "busybox:latest"
    assert normalized_image_name("registry:5000/busybox") == "registry:5000/busybox:latest"
    assert normalized_image_name("registry:5000/busybox:1.36") == "registry:5000/busybox:1.36"


def test_image_score_scales_by_spread_and_clamps():
    # one container, an image of 600 MiB on 1 of 3 nodes: int(629145600 / 3) = 209715200
    states = {"train:v1": (600 * MIB, 1)}
    assert image_locality_score(_pod("train:v1"), states, 3) == 100 * (209715200 - 23 * MIB) // (977 * MIB)
    # below 23 MiB scores 0; the ceiling is 1000 MiB per container, so one huge image scores 100
    assert image_locality_score(_pod("train:v1"), {"train:v1": (20 * MIB, 1)}, 1) == 0
    assert image_locality_score(_pod("train:v1"), {"train:v1": (5000 * MIB, 3)}, 3) == 100
    # init containers count too, and widen the ceiling
    both = image_locality_score(_pod("train:v1", init=("train:v1",)), {"train:v1": (1000 * MIB, 1)}, 1)
    assert both == 100
    assert image_locality_score(_pod("train:v1", "other"), {"train:v1": (1000 * MIB, 1)}, 1) == \
        100 * (1000 * MIB - 23 * MIB) // (2000 * MIB - 23 * MIB)
    # a node holding nothing the pod runs
    assert image_locality_score(_pod("train:v1"), {}, 3) == 0


def test_a_node_summary_counts_holders_as_of_its_own_add():
    nodes = [Node(name=n, uid=n, images=[ContainerImage(("img:1",), 100 * MIB)]) for n in ("b", "a", "c")]
    states = ImageStates()
    states.refresh(nodes)
    # the first list goes in name order: a sees 1 holder, b 2, c 3
    assert {n: states.summaries[n]["img:1"] for n in "abc"} == {"a": (100 * MIB, 1), "b": (100 * MIB, 2),
                                                                 "c": (100 * MIB, 3)}
    # removing b and updating a: a is re-added after the removal, seeing a and c
    nodes = [n for n in nodes if n.name != "b"]
    nodes[0].labels["changed"] = "yes"  # node a
    states.refresh(nodes)
    assert states.summaries["a"]["img:1"] == (100 * MIB, 2)
    assert "b" not in states.summaries
    # an image's size is the first reporter's
    late = Node(name="d", uid="d", images=[ContainerImage(("img:1",), 999 * MIB)])
    states.refresh([*nodes, late])
    assert states.summaries["d"]["img:1"] == (100 * MIB, 3)


def test_no_images_anywhere_keeps_no_registry():
    states = ImageStates()
    states.refresh([Node(name="a", uid="a")])
    assert states.summaries == {}


def _node(name: str, labels: dict[str, str], *pods: Pod) -> MirrorNode:
    node = MirrorNode(name, Node(name=name, uid=name, labels={HOST: name, **labels}))
    for pod in pods:
        node.pods[pod.uid] = 1
        node.pod_objects[pod.uid] = pod
    return node


def _web(name: str) -> Pod:
    return Pod(name=name, namespace="ns", uid=name, labels={"app": "web"})


def _soft(key: str, skew: int = 1, selector: LabelSelector | None = LabelSelector({"app": "web"})):
    return TopologySpreadConstraint(skew, key, "ScheduleAnyway", selector)


def test_spread_score_prefers_the_emptier_domain_and_ignores_unlabelled_nodes():
    nodes = [_node("n1", {"zone": "a"}, _web("w1")), _node("n2", {"zone": "a"}, _web("w2")),
             _node("n3", {"zone": "b"}), _node("n4", {})]
    incoming = _pod(labels={"app": "web"}, spread=[_soft("zone")])
    # zone a: 2 x ln 4 = 2.77 -> 3, zone b: 0; normalised 100 (3 + 0 - s) / 3; n4 lacks the key: 0
    assert normalized_scores(incoming, nodes, nodes) == [0, 0, 100, 0]


def test_spread_score_on_hostname_counts_each_candidate():
    nodes = [_node("n1", {}, _web("w1"), _web("w2")), _node("n2", {}, _web("w3")), _node("n3", {})]
    incoming = _pod(labels={"app": "web"}, spread=[_soft(HOST, skew=2)])
    # ln(3 + 2) = 1.609: n1 2 x 1.609 + 1 = 4.22 -> 4, n2 2.61 -> 3, n3 1; 100 (4 + 1 - s) / 4
    assert normalized_scores(incoming, nodes, nodes) == [25, 50, 100]


def test_spread_score_skips_without_soft_constraints():
    nodes = [_node("n1", {"zone": "a"})]
    hard = TopologySpreadConstraint(1, "zone", "DoNotSchedule", LabelSelector({"app": "web"}))
    assert normalized_scores(_pod(spread=[hard]), nodes, nodes) is None
    assert normalized_scores(_pod(), nodes, nodes) is None


def test_an_empty_selector_counts_no_pod():
    everything = TopologySpreadConstraint(1, "zone", "DoNotSchedule", LabelSelector())
    assert count_matching([_web("w1")], everything, "ns") == 0
    assert count_matching([_web("w1")], _soft("zone"), "ns") == 1
    nodes = [_node("n1", {"zone": "a"}, _web("w1")), _node("n2", {"zone": "b"})]
    incoming = _pod(spread=[_soft("zone", selector=LabelSelector())])
    assert normalized_scores(incoming, nodes, nodes) == [100, 100]  # every count 0: max 0, all 100
