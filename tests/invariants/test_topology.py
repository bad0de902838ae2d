"""topology.hard-within-hypernode and topology.session-matches-objects; HyperNode objects read from a scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario, load_scenario_text

HERE = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((HERE / "tests/scenarios").glob("topology-*.yaml")) + sorted(
    (HERE / "tests/scenarios").glob("subgroup-*.yaml"))
RULES = ["topology.hard-within-hypernode", "topology.session-matches-objects", "topology.sub-group-within-hypernode",
         "gang.sub-groups-ready"]
OWN = HERE / "tests/scenarios/subgroup-placed-by-its-own-constraint.yaml"
UNMET = HERE / "tests/scenarios/subgroup-min-sub-groups-unmet-binds-nothing.yaml"
CROSS = HERE / "tests/scenarios/topology-hard-cross-highest-tier-binds-nothing.yaml"
SPINE = HERE / "tests/scenarios/topology-hard-below-highest-tier-spans-the-spine.yaml"


def _engine(path: Path) -> InvariantEngine:
    engine = InvariantEngine(only=RULES)
    run_scenario(load_scenario(path), engine=engine)
    return engine


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_passes_on_the_faithful_reference(path):
    engine = _engine(path)
    assert engine.violations == []
    assert engine.checks["topology.session-matches-objects"] > 0


@pytest.mark.parametrize("bug", ["allocate-ignores-hard-topology", "topology-gradient-ignores-highest-tier"])
def test_hard_within_hypernode_fires_when_the_constraint_is_lost(bug):
    with mutant(bug):
        found = _engine(CROSS).violations
    assert {v.invariant for v in found} == {"topology.hard-within-hypernode"}
    assert "no hypernode at or below tier 1" in found[0].message


def test_session_matches_objects_fires_on_a_wrong_build():
    with mutant("hypernode-drops-nested-members"):
        found = _engine(SPINE).violations
    assert {v.invariant for v in found} == {"topology.session-matches-objects"}
    assert "hypernode s2" in found[0].message


def test_sub_group_within_hypernode_fires_when_a_policy_topology_is_lost():
    with mutant("sub-group-topology-ignored"):
        found = _engine(OWN).violations
    assert {v.invariant for v in found} == {"topology.sub-group-within-hypernode"}
    assert "subgroup task2/worker" in found[0].message


def test_sub_groups_ready_fires_when_min_sub_groups_is_ignored():
    with mutant("gang-ignores-min-sub-groups"):
        found = _engine(UNMET).violations
    assert {v.invariant for v in found} == {"gang.sub-groups-ready"}
    assert "below its minSubGroups" in found[0].message


def test_sub_jobs_follow_the_policies():
    from schedcheck.reference.cache.cache import SchedulerCache

    scenario = load_scenario(HERE / "tests/scenarios/subgroup-min-sub-groups-placed-first.yaml")
    job = SchedulerCache(scenario.objects).jobs["c1/pg1"]
    assert {uid: (sub.gid, sub.min_available, sorted(sub.task_uids)) for uid, sub in job.sub_jobs.items()} == {
        "c1/pg1/task1-master": ("c1/pg1/task1", 1, ["c1-p1"]),
        "c1/pg1/task2-worker": ("c1/pg1/task2", 2, ["c1-p2", "c1-p3"]),
        "c1/pg1/task2-worker2": ("c1/pg1/task2", 2, ["c1-p4", "c1-p5"])}
    assert job.min_sub_jobs == {"c1/pg1/task1": 1, "c1/pg1/task2": 2}
    assert job.check_sub_job_valid() and not job.check_sub_job_ready()


def _scenario(hyper_nodes: str) -> str:
    return f"""apiVersion: schedcheck/v1
kind: Scenario
metadata: {{name: t}}
objects:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1, labels: {{rack: a}}}}, status: {{allocatable: {{cpu: "1"}}}}}}
- {{apiVersion: v1, kind: Node, metadata: {{name: n2}}, status: {{allocatable: {{cpu: "1"}}}}}}
{hyper_nodes}"""


def _hn(name: str, tier: int, members: str) -> str:
    return (f"- {{apiVersion: topology.volcano.sh/v1alpha1, kind: HyperNode, metadata: {{name: {name}}}, "
            f"spec: {{tier: {tier}, members: [{members}]}}}}\n")


def test_a_member_with_two_selectors_is_a_one_line_error():
    text = _scenario(_hn("a", 1, "{type: Node, selector: {exactMatch: {name: n1}, regexMatch: {pattern: n.*}}}"))
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(text, "t.yaml")
    assert "HyperNode a" in str(err.value) and "spec.members[0].selector" in str(err.value)
    assert "\n" not in str(err.value)


def test_selectors_resolve_like_upstream():
    from schedcheck.reference.api.hyper_node_info import build_hyper_nodes

    text = _scenario(_hn("by-regex", 1, "{type: Node, selector: {regexMatch: {pattern: '^n[12]$'}}}")
                     + _hn("by-label", 1, "{type: Node, selector: {labelMatch: {matchLabels: {rack: a}}}}")
                     + _hn("empty-labels", 1, "{type: Node, selector: {labelMatch: {}}}"))
    scenario = load_scenario_text(text, "t.yaml")
    info = build_hyper_nodes(scenario.objects.hyper_nodes, scenario.objects.nodes)
    assert info.real_nodes_set == {"by-regex": {"n1", "n2"}, "by-label": {"n1"}, "empty-labels": set()}


def test_a_broken_topology_is_a_warning_and_holds_topology_jobs_back():
    text = _scenario(_hn("a", 2, "{type: HyperNode, selector: {exactMatch: {name: b}}}")
                     + _hn("b", 1, "{type: HyperNode, selector: {exactMatch: {name: a}}}")
                     + _hn("c", 2, "{type: HyperNode, selector: {exactMatch: {name: ghost}}}"))
    scenario = load_scenario_text(text, "t.yaml")
    text_of = " | ".join(scenario.warnings)
    assert "cyclic dependency" in text_of and "member HyperNode ghost does not exist" in text_of
    assert "member HyperNode a has tier 2, not below 1" in text_of
    from schedcheck.reference.cache.cache import SchedulerCache

    assert not SchedulerCache(scenario.objects).hyper_nodes_info.ready


def test_two_parents_make_the_topology_not_ready():
    from schedcheck.reference.api.hyper_node_info import build_hyper_nodes

    text = _scenario(_hn("leaf", 1, "{type: Node, selector: {exactMatch: {name: n1}}}")
                     + _hn("p1", 2, "{type: HyperNode, selector: {exactMatch: {name: leaf}}}")
                     + _hn("p2", 2, "{type: HyperNode, selector: {exactMatch: {name: leaf}}}"))
    scenario = load_scenario_text(text, "t.yaml")
    info = build_hyper_nodes(scenario.objects.hyper_nodes, scenario.objects.nodes)
    assert not info.ready and "already has a parent" in info.errors[0]


LOWEST = HERE / "tests/scenarios/topology-hard-gang-stays-in-the-lowest-tier.yaml"


def _findings(path: Path) -> list:
    engine = InvariantEngine(only=["topology.lowest-tier-needed"])
    run_scenario(load_scenario(path), engine=engine)
    assert engine.checks["topology.lowest-tier-needed"] > 0
    return engine.findings


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_lowest_tier_needed_passes_on_the_faithful_reference(path):
    assert _findings(path) == []


def test_lowest_tier_needed_fires_when_the_gradient_starts_at_the_top():
    with mutant("topology-gradient-highest-tier-first"):
        found = _findings(LOWEST)
    assert [f.invariant for f in found] == ["topology.lowest-tier-needed"]
    assert "only a tier-2 hypernode holds" in found[0].message and "tier-1 hypernode rack-" in found[0].message


def _with_numa_aware(text: str) -> str:
    return text.replace("    - name: nodeorder\n", "    - name: nodeorder\n    - name: numa-aware\n", 1)


def test_lowest_tier_needed_judges_beside_filters_that_pass_plain_pods():
    # numa-aware filters Guaranteed pods only: with it on and these Burstable pods, the tier is still judged
    text = _with_numa_aware(LOWEST.read_text(encoding="utf-8"))
    assert "numa-aware" in text
    engine = InvariantEngine(only=["topology.lowest-tier-needed"])
    run_scenario(load_scenario_text(text, "numa.yaml"), engine=engine)
    assert engine.checks["topology.lowest-tier-needed"] > 0 and engine.findings == []
    with mutant("topology-gradient-highest-tier-first"):
        engine = InvariantEngine(only=["topology.lowest-tier-needed"])
        run_scenario(load_scenario_text(text, "numa.yaml"), engine=engine)
    assert [f.invariant for f in engine.findings] == ["topology.lowest-tier-needed"]


def test_lowest_tier_needed_leaves_a_guaranteed_pod_to_numa_aware():
    # a Guaranteed pod (limits = requests) is numa-aware's to filter: where it fits is not plain, not judged
    text = _with_numa_aware(LOWEST.read_text(encoding="utf-8")).replace(
        "resources: {requests: {cpu: \"2\", memory: 2Gi}}",
        "resources: {requests: {cpu: \"2\", memory: 2Gi}, limits: {cpu: \"2\", memory: 2Gi}}")
    assert "limits" in text
    with mutant("topology-gradient-highest-tier-first"):
        engine = InvariantEngine(only=["topology.lowest-tier-needed"])
        run_scenario(load_scenario_text(text, "guaranteed.yaml"), engine=engine)
    assert engine.findings == []


def test_lowest_tier_needed_leaves_a_job_placed_in_two_rounds_alone():
    # minAvailable 1 of 2: allocate stops at ready and places the second task in a later round, inside the
    # gradient of the hypernode the job then holds; where it lands is allocate's greedy choice, not judged
    text = LOWEST.read_text(encoding="utf-8").replace("minMember: 2", "minMember: 1")
    with mutant("topology-gradient-highest-tier-first"):
        engine = InvariantEngine(only=["topology.lowest-tier-needed"])
        run_scenario(load_scenario_text(text, "two-rounds.yaml"), engine=engine)
    assert engine.findings == []


def test_sub_group_rule_ignores_tasks_on_nodes_the_session_lacks():
    """A subgroup task bound to a node the cluster no longer has is in no hypernode and upstream's placement
    never sees it (master places this case as the reference does): no violation."""
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    path = Path(__file__).resolve().parents[1] / "data" / "subgroup-task-held-on-a-missing-node.yaml"
    engine = InvariantEngine(only=["topology.sub-group-within-hypernode"])
    run_scenario(load_scenario(path), seed=0, engine=engine)
    assert engine.checks["topology.sub-group-within-hypernode"] > 0 and engine.violations == []
