"""node.volume-affinity-respected: placements judged against the node affinity of the pod's bound PVs."""

from __future__ import annotations

from pathlib import Path

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.placement import volume_excludes
from schedcheck.reference.k8s import Node, NodeSelectorRequirement, NodeSelectorTerm
from schedcheck.reference.plugins.volume_binding import VolumeBinding
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

RULE = "node.volume-affinity-respected"
SCENARIO = Path(__file__).resolve().parents[2] / "schedcheck" / "corpus" / "volumes-bound-pv-pins-the-pod.yaml"


def _violations() -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(SCENARIO), engine=engine)
    assert engine.checks[RULE] > 0
    return [v.invariant for v in engine.violations]


def test_passes_on_the_faithful_reference():
    assert _violations() == []


def test_fires_when_volume_binding_lets_every_node_through(monkeypatch):
    monkeypatch.setattr(VolumeBinding, "filter", lambda self, state, node: None)
    assert RULE in _violations()


def test_only_clear_exclusions_by_labels_are_judged():
    node = Node(name="n1", uid="n1", labels={"zone": "a"})

    def terms(*exprs, fields=()):
        return [NodeSelectorTerm([NodeSelectorRequirement(k, op, list(v)) for k, op, v in exprs],
                                 [NodeSelectorRequirement(k, op, list(v)) for k, op, v in fields])]

    assert volume_excludes(terms(("zone", "In", ["b"])), node)
    assert not volume_excludes(terms(("zone", "In", ["a"])), node)
    assert not volume_excludes(None, node)  # no affinity
    assert not volume_excludes([NodeSelectorTerm()], node)  # nothing readable: not judged
    # the binder matches labels only: a field term is never judged
    assert not volume_excludes(terms(fields=[("metadata.name", "In", ["n2"])]), node)
    assert not volume_excludes(terms(("zone", "In", ["b"])) + terms(("zone", "Exists", [])), node)


MIGRATED = Path(__file__).resolve().parents[1] / "scenarios" / "volumes-in-tree-pv-migrated-node-needs-csi-topology.yaml"


def _migrated_violations() -> list[str]:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(MIGRATED), engine=engine)
    assert engine.checks[RULE] > 0
    return [v.invariant for v in engine.violations]


def test_a_migrated_in_tree_pv_is_judged_by_its_translated_affinity(monkeypatch):
    assert _migrated_violations() == []
    # a binder that checks the PV untranslated takes n1, which lacks the CSI driver's zone label
    import schedcheck.reference.plugins.volume_binding as volume_binding
    monkeypatch.setattr(volume_binding, "translated_pv", lambda pv, csi_node: pv)
    assert RULE in _migrated_violations()
