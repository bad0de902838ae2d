"""victim.pdb-respected and the pdb plugin (pkg/scheduler/plugins/pdb/pdb.go); victim.shuffle-from-high-node."""

from __future__ import annotations

from pathlib import Path

import yaml

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.k8s import LabelSelector, Pod, PodDisruptionBudget
from schedcheck.reference.plugins.pdb import filter_victims
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario, scenario_from_document

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
RULE = "victim.pdb-respected"


def _task(name: str, **labels: str) -> TaskInfo:
    return TaskInfo(Pod(name=name, namespace="ns", uid=name, labels=labels))


def test_the_filter_spends_the_allowance_in_candidate_order():
    budget = PodDisruptionBudget("web", "ns", LabelSelector({"app": "web"}), disruptions_allowed=1)
    tasks = [_task("w0", app="web"), _task("w1", app="web"), _task("b0", app="batch"), _task("bare")]
    assert [t.name for t in filter_victims([budget], tasks)] == ["w0", "b0"]  # "bare": no labels, never kept
    spent = PodDisruptionBudget("web", "ns", LabelSelector({"app": "web"}), 0, disrupted_pods=["w1"])
    assert [t.name for t in filter_victims([spent], tasks)] == ["w1", "b0"]  # already disrupted: not counted
    other = PodDisruptionBudget("web", "other", LabelSelector({"app": "web"}), 0)
    empty = PodDisruptionBudget("all", "ns", LabelSelector(), 0)
    assert [t.name for t in filter_victims([other, empty], tasks)] == ["w0", "w1", "b0"]


def _violations(name: str, change=None) -> list[str]:
    doc = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    doc.pop("expect", None)
    if change is not None:
        change(doc)
    engine = InvariantEngine(only=[RULE])
    run_scenario(scenario_from_document(doc, name), engine=engine)
    assert engine.checks[RULE] > 0
    return [v.invariant for v in engine.violations]


def test_pdb_respected_passes_on_the_faithful_reference():
    assert _violations("pdb-spares-the-budgeted-pods") == []


def test_pdb_respected_fires_when_the_budget_is_ignored():
    with mutant("pdb-ignores-budget"):
        assert _violations("pdb-spares-the-budgeted-pods") == [RULE]


def test_pdb_respected_holds_only_with_pdb_in_the_first_tier():
    """In a later tier the first tier's victims stand alone (upstream's tiered intersection): not judged."""
    def later(doc):
        tiers = doc["schedulerConf"]["tiers"]
        tiers[0]["plugins"] = [p for p in tiers[0]["plugins"] if p["name"] != "pdb"]
        tiers[1]["plugins"].append({"name": "pdb"})
    with mutant("pdb-ignores-budget"):
        engine = InvariantEngine(only=[RULE])
        doc = yaml.safe_load((SCENARIOS / "pdb-spares-the-budgeted-pods.yaml").read_text())
        later(doc)
        result = run_scenario(scenario_from_document(doc, "later"), engine=engine)
    assert result.evicted == ["default/web-0"] and engine.violations == []


def test_a_budget_spent_by_two_preemptors_is_the_known_finding_f5():
    result = run_scenario(load_scenario(SCENARIOS / "pdb-budget-spent-twice-in-one-session.yaml"), seed=0)
    assert result.violations == []
    assert (RULE, "F5") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(SCENARIOS / "pdb-budget-spent-twice-in-one-session.yaml"), seed=0,
                          engine=InvariantEngine(fail_on_known={"F5"}))
    assert [v["id"] for v in strict.violations] == [RULE]


SHUFFLE = "victim.shuffle-from-high-node"


def test_shuffle_from_high_node_passes_on_the_faithful_reference():
    engine = InvariantEngine(only=[SHUFFLE])
    result = run_scenario(load_scenario(SCENARIOS / "shuffle-rescheduling-low-node-utilization.yaml"), engine=engine)
    assert sorted(result.evicted) == ["batch/batch", "batch/scrape"]
    assert engine.checks[SHUFFLE] > 0 and engine.violations == []


def test_shuffle_evicting_a_namesake_on_a_low_node_is_caught_as_the_known_finding_f6():
    path = SCENARIOS / "shuffle-evicts-a-namesake-on-a-low-node.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == [] and sorted(result.evicted) == ["batch/scrape", "web/batch"]
    assert (SHUFFLE, "F6") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F6"}))
    assert [v["id"] for v in strict.violations] == [SHUFFLE]


def test_shuffle_from_high_node_leaves_other_victim_sources_alone():
    """tdm or pdb add their own victims to shuffle's union: the rule does not judge then."""
    doc = yaml.safe_load((SCENARIOS / "shuffle-evicts-a-namesake-on-a-low-node.yaml").read_text())
    doc.pop("expect")
    doc["schedulerConf"]["tiers"][0]["plugins"].append({"name": "pdb"})
    engine = InvariantEngine(only=[SHUFFLE], fail_on_known={"F6"})
    run_scenario(scenario_from_document(doc, "with-pdb"), engine=engine)
    assert engine.violations == []


def test_gangreclaim_ignoring_a_budget_is_the_known_finding_f7():
    path = SCENARIOS / "pdb-ignored-by-gangreclaim.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == [] and result.evicted == ["default/batch-3-0"]
    assert (RULE, "F7") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F7"}))
    assert [v["id"] for v in strict.violations] == [RULE]


def test_a_pdb_refusal_a_later_tier_overrides_is_the_known_finding_f8():
    path = SCENARIOS / "pdb-refusal-overridden-by-a-later-tier.yaml"
    result = run_scenario(load_scenario(path), seed=0)
    assert result.violations == [] and len(result.evicted) == 1
    assert (RULE, "F8") in [(f["id"], f.get("known")) for f in result.findings]
    strict = run_scenario(load_scenario(path), seed=0, engine=InvariantEngine(fail_on_known={"F8"}))
    assert [v["id"] for v in strict.violations] == [RULE]


def test_f8_needs_a_later_tier_that_decides():
    """With proportion in pdb's own tier, the tier's intersection is empty and no tier follows: nothing is
    evicted, so there is nothing for the rule (or F8) to say."""
    doc = yaml.safe_load((SCENARIOS / "pdb-refusal-overridden-by-a-later-tier.yaml").read_text())
    doc.pop("expect")
    tiers = doc["schedulerConf"]["tiers"]
    doc["schedulerConf"]["tiers"] = [{"plugins": tiers[0]["plugins"] + tiers[1]["plugins"]}]
    result = run_scenario(scenario_from_document(doc, "one-tier"), seed=0)
    assert result.evicted == [] and not [f for f in result.findings if f["id"] == RULE]


def test_pdb_respected_follows_the_plugins_enable_flags():
    """enablePreemptable: false keeps the pdb filter out of preempt, so preempt's victims are not judged by it."""
    def off(doc):
        for plugin in doc["schedulerConf"]["tiers"][0]["plugins"]:
            if plugin["name"] == "pdb":
                plugin["enablePreemptable"] = False
    with mutant("pdb-ignores-budget"):
        assert _violations("pdb-spares-the-budgeted-pods", off) == []
