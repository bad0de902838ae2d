"""node.placement-allowed: placements judged against Kubernetes' node filters, restated."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.placement import excluded_by, tolerates
from schedcheck.mutants import mutant
from schedcheck.reference.k8s import (
    Node, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, Pod, Taint, Toleration,
)
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

RULE = "node.placement-allowed"
HERE = Path(__file__).resolve().parents[2]
CASES = [("tests/scenarios/predicates-taint-toleration.yaml", "predicates-ignores-taints"),
         ("tests/scenarios/predicates-node-selector.yaml", "predicates-ignores-node-affinity"),
         ("tests/scenarios/predicates-affinity-exists-gt.yaml", "predicates-ignores-node-affinity")]


def _violations(path: str) -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(HERE / path), engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("path, bug", CASES)
def test_passes_on_the_faithful_reference(path, bug):
    assert _violations(path) == []


@pytest.mark.parametrize("path, bug", CASES)
def test_fires_when_a_filter_is_skipped(path, bug):
    with mutant(bug):
        assert RULE in _violations(path)


def _pod(**extra) -> Pod:
    return Pod(name="p", namespace="ns", uid="p", **extra)


def test_toleration_semantics_follow_kubernetes():
    taint = Taint(key="dedicated", effect="NoSchedule", value="ml")
    assert tolerates(Toleration(key="dedicated", operator="Equal", value="ml"), taint)
    assert not tolerates(Toleration(key="dedicated", operator="Equal", value="web"), taint)
    assert tolerates(Toleration(operator="Exists"), taint)
    assert tolerates(Toleration(key="", operator="Equal", value="ml"), taint)  # as ToleratesTaint reads it
    assert not tolerates(Toleration(key="dedicated", operator="Exists", effect="NoExecute"), taint)


def test_only_clear_exclusions_are_reported():
    node = Node(name="n1", uid="n1", labels={"zone": "a", "gen": "3"}, taints=[Taint("gpu", "NoSchedule")])
    assert "taint gpu" in excluded_by(_pod(), node)
    assert excluded_by(_pod(tolerations=[Toleration(key="gpu", operator="Exists")]), node) == ""
    assert excluded_by(_pod(), node, taints_on=False) == ""
    assert "nodeSelector" in excluded_by(_pod(node_selector={"zone": "b"}), node, taints_on=False)

    def affinity(op, values):
        term = NodeSelectorTerm([NodeSelectorRequirement("gen", op, values)])
        return _pod(node_affinity=NodeAffinity(required=[term]))

    assert "affinity" in excluded_by(affinity("Gt", ["5"]), node, taints_on=False)
    assert excluded_by(affinity("Gt", ["2"]), node, taints_on=False) == ""
    assert excluded_by(affinity("Gt", ["x"]), node, taints_on=False) == ""  # unreadable: never judged
    assert excluded_by(affinity("Unknown", ["1"]), node, taints_on=False) == ""
    cordoned = Node(name="n2", uid="n2", unschedulable=True)
    assert "cordoned" in excluded_by(_pod(), cordoned)


PORTS = "node.host-ports-free"


def _port_violations() -> list[str]:
    engine = InvariantEngine(only=[PORTS])
    run_scenario(load_scenario(HERE / "tests/scenarios/predicates-node-ports.yaml"), engine=engine)
    return [v.invariant for v in engine.violations]


def test_host_ports_pass_on_the_faithful_reference():
    assert _port_violations() == []


def test_host_ports_fire_when_the_filter_is_skipped():
    with mutant("predicates-ignores-node-ports"):
        assert PORTS in _port_violations()


ANTI = "node.pod-anti-affinity-respected"
AFFINITY_CASES = ["predicates-pod-anti-affinity-spreads-a-gang", "predicates-existing-pod-anti-affinity",
                  "predicates-pod-affinity-required"]


def _anti_violations(name: str) -> list[str]:
    engine = InvariantEngine(only=[ANTI])
    run_scenario(load_scenario(HERE / f"tests/scenarios/{name}.yaml"), engine=engine)
    assert engine.checks[ANTI] > 0
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("name", AFFINITY_CASES)
def test_pod_anti_affinity_respected_passes_on_the_faithful_reference(name):
    assert _anti_violations(name) == []


@pytest.mark.parametrize("name", AFFINITY_CASES[:2])
def test_pod_anti_affinity_respected_fires_when_the_filter_is_skipped(name):
    with mutant("predicates-ignores-inter-pod-affinity"):
        assert ANTI in _anti_violations(name)


def test_the_affinity_filter_follows_kubernetes():
    from schedcheck.reference.k8s import LabelSelector, Node, PodAffinity, PodAffinityTerm
    from schedcheck.reference.plugins.interpod_affinity import REASON_AFFINITY, filter_node, pre_filter
    from schedcheck.reference.plugins.k8s_mirror import MirrorNode

    zone = "topology.kubernetes.io/zone"
    wants_db = PodAffinity(required=[PodAffinityTerm(LabelSelector({"app": "db"}), zone)])
    first = _pod(labels={"app": "db"}, pod_affinity=wants_db)
    a, b = MirrorNode("a", Node(name="a", uid="a", labels={zone: "z1"})), MirrorNode("b", Node(name="b", uid="b"))
    state = pre_filter(first, [a, b])
    assert filter_node(state, a) is None  # the first pod of a group that wants itself
    assert filter_node(state, b) == (True, REASON_AFFINITY)  # the node lacks the topology key
    assert pre_filter(_pod(), [a, b]) is None  # nothing to check: Skip


SPREAD = "node.topology-spread-respected"
SPREAD_CASES = ["predicates-topology-spread-picks-the-emptiest-zone", "predicates-topology-spread-spreads-a-gang",
                "predicates-topology-spread-min-domains-holds-a-pod-back"]


def _spread_violations(name: str) -> list[str]:
    engine = InvariantEngine(only=[SPREAD])
    run_scenario(load_scenario(HERE / f"tests/scenarios/{name}.yaml"), engine=engine)
    assert engine.checks[SPREAD] > 0
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("name", SPREAD_CASES)
def test_topology_spread_respected_passes_on_the_faithful_reference(name):
    assert _spread_violations(name) == []


@pytest.mark.parametrize("name", SPREAD_CASES)
def test_topology_spread_respected_fires_when_the_filter_is_skipped(name):
    with mutant("predicates-ignores-topology-spread"):
        assert SPREAD in _spread_violations(name)


def test_the_spread_filter_follows_kubernetes():
    from schedcheck.reference.k8s import LabelSelector, Node, TopologySpreadConstraint
    from schedcheck.reference.plugins.k8s_mirror import MirrorNode
    from schedcheck.reference.plugins.pod_topology_spread import REASON_LABEL, REASON_SKEW, filter_node, pre_filter

    zone = "topology.kubernetes.io/zone"
    web = LabelSelector({"app": "web"})
    hard = TopologySpreadConstraint(1, zone, "DoNotSchedule", web)
    a, b = MirrorNode("a", Node(name="a", uid="a", labels={zone: "z1"})), MirrorNode("b", Node(name="b", uid="b",
                                                                                                labels={zone: "z2"}))
    c = MirrorNode("c", Node(name="c", uid="c"))
    existing = _pod(labels={"app": "web"})
    a.pods[existing.uid], a.pod_objects[existing.uid] = 1, existing
    incoming = _pod(labels={"app": "web"}, topology_spread_constraints=[hard])
    state = pre_filter(incoming, [a, b, c])
    assert state.counts == [{"z1": 1, "z2": 0}]  # an eligible node with no match is still a domain
    assert filter_node(state, incoming, b) is None  # 0 + 1 - 0 <= 1
    assert filter_node(state, incoming, a) == (False, REASON_SKEW)  # 1 + 1 - 0 > 1
    assert filter_node(state, incoming, c) == (True, REASON_LABEL)
    other = _pod(labels={"app": "db"}, topology_spread_constraints=[hard])
    assert filter_node(pre_filter(other, [a, b]), other, a) is None  # 1 + 0 - 0: it does not match itself
    few = TopologySpreadConstraint(1, zone, "DoNotSchedule", web, min_domains=3)
    assert pre_filter(_pod(labels={"app": "web"}, topology_spread_constraints=[few]), [a, b]).min_match(0) == 0
    soft = TopologySpreadConstraint(1, zone, "ScheduleAnyway", web)
    assert pre_filter(_pod(topology_spread_constraints=[soft]), [a, b]) is None  # only scores: Skip


GATED = "task.gated-not-placed"


def _gated_violations(doc_change=None) -> list[tuple[str, str]]:
    import yaml
    from schedcheck.scenario.loader import scenario_from_document

    doc = yaml.safe_load((HERE / "tests/scenarios/scheduling-gated-pods-wait.yaml").read_text())
    if doc_change is not None:
        doc_change(doc)
    engine = InvariantEngine(only=[GATED])
    run_scenario(scenario_from_document(doc, "gated"), engine=engine)
    assert engine.checks[GATED] > 0
    return [(v.invariant, v.objects[0]) for v in engine.violations]


def test_gated_not_placed_passes_on_the_faithful_reference():
    assert _gated_violations() == []


def test_gated_not_placed_fires_when_the_gates_are_not_read():
    with mutant("scheduling-gates-not-read"):
        found = _gated_violations()
    # allocate places the gated worker, backfill the gated BestEffort probe
    assert found == [(GATED, "task default/worker-1"), (GATED, "task default/probe-0")]


def test_gated_not_placed_is_quiet_once_the_gate_is_removed():
    def ungate(doc):
        for obj in doc["objects"]:
            obj.get("spec", {}).pop("schedulingGates", None)
    with mutant("scheduling-gates-not-read"):
        assert _gated_violations(ungate) == []
