"""Known upstream findings (invariants/known.py): reported by name, failing only when switched on,
and never hiding a violation with another cause."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.known import KNOWN_FINDINGS, known_ids
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario, scenario_from_document
from tests.invariants.harness import check
from tests.invariants.test_catalog import _break_pod_limit

F1_SCENARIO = Path(__file__).parent.parent / "generators" / "found" / "node-pod-limit-after-discarded-reclaim.yaml"


def test_every_known_finding_names_a_catalog_invariant_and_a_findings_entry():
    from schedcheck.invariants.catalog import get

    assert known_ids() == sorted(set(known_ids()), key=known_ids().index)
    for finding in KNOWN_FINDINGS:
        assert get(finding.invariant) is not None, finding.id
        assert finding.doc.startswith("docs/findings.md #"), finding.id


def test_the_discarded_reclaim_is_the_known_finding_f1_and_the_refused_bind_fills_no_node():
    """The predicates plugin loses the put-back victim (F1); backfill then places a pod past the node's
    limit in the session, and the cache's bind-time check refuses it, as master's does: no node is overfull."""
    result = run_scenario(load_scenario(F1_SCENARIO), seed=0)
    assert result.violations == []
    assert {(f["id"], f.get("known")) for f in result.findings} == {("node.predicates-pod-view", "F1")}


def test_the_switch_makes_f1_fail_again():
    for switch in ({"F1"}, {"all"}):
        result = run_scenario(load_scenario(F1_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known=switch))
        assert {v["id"] for v in result.violations} == {"node.predicates-pod-view"}


def test_a_pod_limit_violation_without_a_discarded_eviction_still_fails():
    engine = check("node.pod-limit", corrupt=("closed", _break_pod_limit))
    assert engine.violations and all(v.known == "" for v in engine.violations)


def test_the_pod_limit_rule_judges_the_cache_and_needs_no_plugin():
    from schedcheck.invariants.catalog import get

    assert get("node.pod-limit").requires == ()


F2_SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "reclaim-pipelines-onto-a-taken-host-port.yaml"


def test_reclaim_onto_a_taken_host_port_is_the_known_finding_f2():
    result = run_scenario(load_scenario(F2_SCENARIO), seed=0)
    assert result.violations == []
    assert ("node.host-ports-free", "F2") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(F2_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known={"F2"}))
    assert [v["id"] for v in strict.violations] == ["node.host-ports-free"]


F3_SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "topology-hard-job-forgets-running-subgroups.yaml"


def test_a_hard_job_whose_subgroups_are_not_recovered_is_the_known_finding_f3():
    result = run_scenario(load_scenario(F3_SCENARIO), seed=0)
    assert result.violations == []
    assert ("topology.hard-within-hypernode", "F3") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(F3_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known={"F3"}))
    assert [v["id"] for v in strict.violations] == ["topology.hard-within-hypernode"]


def test_f3_does_not_cover_a_job_the_session_recovers():
    """With the policy's own hard topology the worker's subjob is recovered (the cluster top), so the job is held
    back: nothing is placed, and nothing is reported."""
    doc = yaml.safe_load(F3_SCENARIO.read_text())
    group = next(o for o in doc["objects"] if o["kind"] == "PodGroup")
    group["spec"]["subGroupPolicy"][0]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    del doc["expect"]
    result = run_scenario(scenario_from_document(doc, "f3-recovered"), seed=0)
    assert result.violations == [] and result.binds == {}
    assert not [f for f in result.findings if f["id"] == "topology.hard-within-hypernode"]


F4_SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "topology-reclaim-ignores-hard-topology.yaml"


def test_reclaim_pipelining_a_hard_job_anywhere_is_the_known_finding_f4():
    result = run_scenario(load_scenario(F4_SCENARIO), seed=0)
    assert result.violations == []
    assert ("topology.hard-within-hypernode", "F4") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(F4_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known={"F4"}))
    assert [v["id"] for v in strict.violations] == ["topology.hard-within-hypernode"]
    # F3's switch does not cover F4's cause
    other = run_scenario(load_scenario(F4_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known={"F3"}))
    assert other.violations == []


FORGOTTEN_PORT = Path(__file__).resolve().parents[1] / "scenarios" / "backfill-binds-onto-a-forgotten-host-port.yaml"


def test_a_host_port_forgotten_by_the_set_of_used_ports_is_f2_too():
    result = run_scenario(load_scenario(FORGOTTEN_PORT), seed=0)
    assert result.violations == []
    assert [(f["id"], f.get("known"), f["action"]) for f in result.findings if f["id"] == "node.host-ports-free"] == [
        ("node.host-ports-free", "F2", "reclaim"), ("node.host-ports-free", "F2", "backfill")]
    assert result.binds["team-a/mpi-1-master-0"] == "node-0"


def test_the_predicates_view_keeps_used_ports_as_a_set():
    from schedcheck.reference.k8s import Container, ContainerPort, Node, Pod
    from schedcheck.reference.plugins.k8s_mirror import MirrorNode, K8sMirror
    from schedcheck.reference.plugins.predicates import host_ports_conflict

    def pod(name):
        return Pod(name=name, namespace="ns", uid=name,
                   containers=[Container("c", ports=[ContainerPort(8080, 8080, "UDP")])])
    mirror = K8sMirror({})
    node = mirror.nodes["n"] = MirrorNode("n", Node(name="n", uid="n"))
    first, second = pod("a"), pod("b")
    mirror.add_pod("n", first)
    assert host_ports_conflict(second, node)
    mirror.add_pod("n", second)
    mirror.remove_pod("n", second)  # UsedPorts.Remove: the port goes, though `a` still holds it
    assert not host_ports_conflict(second, node)


def test_a_task_order_cycle_from_mixed_pod_names_is_the_known_finding_f9():
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    path = Path(__file__).resolve().parents[1] / "scenarios" / "task-order-cycle-from-mixed-pod-names.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == [] and {f.get("known") for f in result.findings if f["id"] == "order.task"} == {"F9"}
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(only=["order.task"], fail_on_known={"F9"}))
    assert {v["id"] for v in strict.violations} == {"order.task"}


def test_f9_needs_names_with_and_without_an_index():
    """The same ages with every name indexed: the index decides every pair, a strict weak order."""
    from pathlib import Path

    import yaml

    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import scenario_from_document

    path = Path(__file__).resolve().parents[1] / "scenarios" / "task-order-cycle-from-mixed-pod-names.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for obj in doc["objects"]:
        if obj["kind"] == "Pod" and obj["metadata"]["name"] == "launcher":
            obj["metadata"]["name"] = "train-launcher-0"
    result = run_scenario(scenario_from_document(doc, "indexed"), seed=0)
    assert not [f for f in result.findings if f["id"] == "order.task"] and result.violations == []


def test_a_hard_job_held_on_a_node_outside_every_hypernode_is_f3_too():
    from pathlib import Path

    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    path = Path(__file__).resolve().parents[1] / "scenarios" / "topology-hard-job-held-on-a-node-outside-every-hypernode.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.ok and result.violations == []
    assert ("topology.hard-within-hypernode", "F3") in [(f["id"], f.get("known")) for f in result.findings]


def test_a_hard_job_held_on_a_node_the_session_lacks_is_f3_too():
    from pathlib import Path

    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    path = Path(__file__).resolve().parents[1] / "scenarios" / "topology-hard-job-held-on-a-node-the-session-lacks.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.ok and result.violations == []
    assert ("topology.hard-within-hypernode", "F3") in [(f["id"], f.get("known")) for f in result.findings]


def test_a_hard_subgroup_that_cannot_be_recovered_is_f3_for_the_subgroup_rule():
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    path = Path(__file__).resolve().parents[1] / "data" / "subgroup-held-on-a-missing-node-placed-elsewhere.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == []
    assert ("topology.sub-group-within-hypernode", "F3") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F3"}))
    assert "topology.sub-group-within-hypernode" in {v["id"] for v in strict.violations}


F10_SCENARIOS = [Path(__file__).resolve().parents[1] / "scenarios" / f"gangreclaim-{name}-a-bound-task.yaml"
                 for name in ("pipelines", "evicts-for")]


def test_gangreclaim_taking_a_bound_task_for_a_pending_one_is_the_known_finding_f10():
    for path in F10_SCENARIOS:
        result = run_scenario(load_scenario(path), seed=0)
        assert result.violations == [] and {f.get("known") for f in result.findings if f.get("known")} == {"F10"}
        strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F10"}))
        assert "gang.session-atomic" in {v["id"] for v in strict.violations}


def test_f10_needs_the_hypernode_search():
    """Without a network topology allocate places the worker directly (no saved copy replayed), the subjob's
    index stays exact, and gangreclaim finds nothing pending: nothing evicted, no F10."""
    doc = yaml.safe_load(F10_SCENARIOS[1].read_text())
    for obj in doc["objects"]:
        if obj["kind"] == "PodGroup":
            obj["spec"].pop("networkTopology", None)
    doc.pop("expect")
    result = run_scenario(scenario_from_document(doc, "flat"), seed=0)
    assert result.binds == {"ml/mpi-1-worker-0": "node-0"} and result.evicted == []
    assert not any(f.get("known") == "F10" for f in result.findings + result.violations)


F39_SCENARIOS = [Path(__file__).resolve().parents[1] / "scenarios" / f"allocate-nomination-{name}.yaml"
                 for name in ("redeemed", "invalidated-falls-back")]


def test_allocate_placing_again_what_a_gang_action_pipelined_is_the_known_finding_f36():
    for path, rule in zip(F39_SCENARIOS, ("task.single-node", "node.predicates-pod-view")):
        result = run_scenario(load_scenario(path), seed=0)
        assert result.violations == [] and {f.get("known") for f in result.findings if f.get("known")} == {"F39"}
        strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F39"}))
        assert rule in {v["id"] for v in strict.violations}


def test_f36_needs_the_gang_action_before_allocate():
    """The same cluster with allocate first: allocate places serve directly (nothing to re-place), gangpreempt
    finds serve no longer starving; no F39."""
    doc = yaml.safe_load(F39_SCENARIOS[0].read_text())
    doc["schedulerConf"]["actions"] = "allocate, gangpreempt"
    doc.pop("expect")
    result = run_scenario(scenario_from_document(doc, "allocate-first"), seed=0)
    assert result.evicted == [] and sorted(result.binds) == ["data/serve-0", "data/serve-1"]
    assert not any(f.get("known") == "F39" for f in result.findings + result.violations)


F53_SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "allocate-nomination-binds-a-gated-task.yaml"


def test_the_nomination_fast_path_binding_a_gated_task_is_the_known_finding_f46():
    result = run_scenario(load_scenario(F53_SCENARIO), seed=0)
    assert result.violations == [] and result.binds.get("data/serve-2") == "worker-1"
    assert {f.get("known") for f in result.findings if f.get("id") == "task.gated-not-placed"} == {"F53"}
    strict = run_scenario(load_scenario(F53_SCENARIO), seed=0, engine=InvariantEngine(fail_on_known={"F53"}))
    assert [v["id"] for v in strict.violations] == ["task.gated-not-placed"]


def test_f46_needs_the_fast_path_the_ordinary_path_skips_the_gated_task():
    """Without serve-2's nominated node, validation misses, the nomination is dropped and the ordinary search
    runs: it asks for serve-2's gate removal and skips it; serve-0 and serve-1 still bind (F39), serve-2 does not."""
    doc = yaml.safe_load(F53_SCENARIO.read_text())
    pod = next(o for o in doc["objects"] if o["metadata"]["name"] == "serve-2")
    del pod["status"]["nominatedNodeName"]
    doc.pop("expect")
    result = run_scenario(scenario_from_document(doc, "no-nomination"), seed=0)
    assert "data/serve-2" not in result.binds and result.violations == []
    assert not any(f.get("id") == "task.gated-not-placed" for f in result.findings)


def test_f53_names_a_gated_task_the_fast_path_placed_in_a_plan_it_then_discarded():
    path = Path(__file__).resolve().parents[1] / "data" / "known-f53-discarded-nomination-plan.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == [] and "data/serve-2" not in result.binds
    assert {f.get("known") for f in result.findings if f["id"] == "task.gated-not-placed"} == {"F53"}
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F53"}))
    assert "task.gated-not-placed" in [v["id"] for v in strict.violations]


def test_f6_names_a_namesake_that_belongs_to_no_job():
    """F6's matcher finds the namesake lowNodeUtilization picked among the nodes' tasks too: a pod whose PodGroup
    is missing sits on its node outside every job (found by the gate, seed 7 with two workers; master agrees)."""
    path = Path(__file__).resolve().parents[1] / "data" / "known-f6-namesake-without-a-job.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == []
    assert {f.get("known") for f in result.findings if f["id"] == "victim.shuffle-from-high-node"} == {"F6"}
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F6"}))
    assert [v["id"] for v in strict.violations] == ["victim.shuffle-from-high-node"]


def test_f4_names_a_sub_group_that_reclaim_placed_first():
    """F4 for a subgroup: reclaim pipelines one of a hard subgroup's tasks anywhere, allocate's hypernode search
    places the rest without it (found by the nightly gate, seed 3 with two workers; master agrees)."""
    path = Path(__file__).resolve().parents[1] / "data" / "known-f4-sub-group-placed-by-reclaim.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == []
    assert {f.get("known") for f in result.findings if f["id"] == "topology.sub-group-within-hypernode"} == {"F4"}
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F4"}))
    assert [v["id"] for v in strict.violations] == ["topology.sub-group-within-hypernode"]


SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_f59_names_the_books_an_extender_victim_copy_leaves_behind():
    """A victim under a UID the session lacks joins its job and is unevicted into a second Running task (drf,
    proportion and the statement's events drift); a copy with a larger request makes reclaim pipeline onto a
    node it cannot free (node.placement-fits). Master agrees on both through the adapter."""
    expected = {"extender-victim-of-an-unknown-uid-joins-its-job":
                {"queue.drf-allocated", "queue.proportion-allocated", "statement.events-balanced"},
                "extender-reclaimable-victim-copy-with-a-larger-request": {"node.placement-fits"}}
    for name, rules in expected.items():
        path = SCENARIOS / f"{name}.yaml"
        result = run_scenario(load_scenario(path), seed=0)
        assert result.violations == [], name
        assert {f["id"] for f in result.findings if f.get("known") == "F59"} == rules, name
        strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F59"}))
        assert {v["id"] for v in strict.violations} == rules, name


def test_f59_needs_a_victim_the_extender_named_on_the_job_queue_node_or_task_at_fault():
    from schedcheck.invariants.known import _extender_victim_copy
    from schedcheck.invariants.violation import Violation

    class Plugin:
        named_victims: list = []

    class Job:
        queue = "q1"

    class Ssn:
        plugins = {"extender": Plugin()}
        jobs = {"ns/a": Job()}

    class Ctx:
        ssn = Ssn()

    class Copy:
        job, node_name, key = "ns/a", "n1", "ns/a-0"

    def about(*objects):
        return Violation("", "", list(objects), "", "")

    assert not _extender_victim_copy(Ctx(), about("job ns/a"))  # no victim named: nothing is excused
    Plugin.named_victims = [Copy()]
    assert all(_extender_victim_copy(Ctx(), about(obj)) for obj in ("job ns/a", "queue q1", "node n1", "task ns/a-0"))
    assert not any(_extender_victim_copy(Ctx(), about(obj)) for obj in ("job ns/b", "queue q2", "node n2", "task x/y"))
    Ssn.plugins = {}  # no extender in the session
    assert not _extender_victim_copy(Ctx(), about("job ns/a"))


def test_f59_names_the_drf_assertion_a_larger_victim_copy_fails():
    """The copy's request is taken out of drf's count for its job at the eviction: Resource.Sub's assertion
    (master panics the same way through the adapter)."""
    path = SCENARIOS / "extender-preemptable-victim-copy-with-a-larger-request-fails-drf.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == [] and result.evicted == []
    assert [(f["id"], f.get("known")) for f in result.findings] == [("upstream.assert", "F59")]
    assert "resource is not sufficient" in result.findings[0]["found"]
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F59"}))
    assert [v["id"] for v in strict.violations] == ["upstream.assert"]


def test_f60_is_the_nil_dereference_of_an_extender_victim_missing_a_pointer_field():
    from schedcheck.invariants.known import known_assertion_for
    from schedcheck.reference.util.assertion import AssertionViolation
    from schedcheck.reference.util.nil import Nil, NilDereference

    with pytest.raises(NilDereference) as err:
        _ = Nil("*api.Resource").milli_cpu
    assert known_assertion_for(err.value).id == "F60"
    assert known_assertion_for(AssertionViolation("resource is not sufficient")) is None
    for name in ("extender-victim-without-its-request-is-a-nil-dereference",
                 "extender-victim-without-its-pod-is-a-nil-dereference", "extender-null-victim-is-a-nil-dereference"):
        result = run_scenario(load_scenario(SCENARIOS / f"{name}.yaml"), seed=0)
        assert result.violations == [] and result.evicted == [] and result.binds == {}, name
        assert [(f["id"], f.get("known")) for f in result.findings] == [("upstream.assert", "F60")], name
        strict = run_scenario(load_scenario(SCENARIOS / f"{name}.yaml"), seed=0,
                              engine=InvariantEngine(fail_on_known={"F60"}))
        assert [v["id"] for v in strict.violations] == ["upstream.assert"], name
