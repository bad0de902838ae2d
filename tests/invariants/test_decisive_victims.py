"""victim.conformance: safety where conformance is the last victim voter of the only tier with any (§6.2, §9.10).

The scenario is the mutant conformance-evicts-critical's: a preemptor that needs both running pods gone,
and those pods of class system-cluster-critical, which conformance never offers as victims."""

from __future__ import annotations

from pathlib import Path

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario_text

CRITICAL = (Path(__file__).resolve().parents[2] / "schedcheck" / "mutant_scenarios"
            / "conformance-evicts-critical.yaml").read_text(encoding="utf-8")
RULE = "victim.conformance"
CLASS_LINE = "    priorityClassName: system-cluster-critical\n"
DRF_VOTES = "  - plugins:\n    - name: drf\n    - name: predicates\n"  # drf's Preemptable in the second tier


def _run(text: str, bug: str | None = None) -> InvariantEngine:
    engine = InvariantEngine(only=[RULE])
    if bug is None:
        run_scenario(load_scenario_text(text, "conformance.yaml"), engine=engine)
    else:
        with mutant(bug):
            run_scenario(load_scenario_text(text, "conformance.yaml"), engine=engine)
    return engine


def test_passes_where_preempt_evicts_ordinary_pods():
    plain = CRITICAL.replace(CLASS_LINE, "")
    assert CLASS_LINE not in plain
    engine = _run(plain)
    assert engine.checks[RULE] > 0 and engine.violations == []


def test_fires_when_conformance_offers_critical_pods():
    engine = _run(CRITICAL, "conformance-evicts-critical")
    assert {v.invariant for v in engine.violations} == {RULE}
    assert "system-cluster-critical" in engine.violations[0].message
    assert _run(CRITICAL).violations == []  # the faithful conformance evicts neither


def test_leaves_it_to_the_tiers_where_a_later_tier_could_decide_alone():
    later = CRITICAL.replace("  - plugins:\n    - name: predicates\n", DRF_VOTES, 1)
    assert DRF_VOTES in later
    engine = _run(later, "conformance-evicts-critical")
    assert engine.checks[RULE] > 0 and engine.violations == []


def test_leaves_it_to_the_tier_where_a_later_plugin_refills_an_emptied_intersection():
    # found by the gate (seed 3): gang and conformance disjoint, cdp after them offers every task again, and
    # upstream (master, through the adapter) evicts both kube-system pods; the rule must not call that a bug
    path = Path(__file__).resolve().parents[2] / "schedcheck" / "corpus" / "conformance-veto-refilled-by-a-later-plugin.yaml"
    engine = InvariantEngine(only=[RULE])
    result = run_scenario(load_scenario_text(path.read_text(encoding="utf-8"), path.name), engine=engine)
    assert sorted(result.evicted) == ["kube-system/sys-0", "kube-system/sys-1"]
    assert engine.checks[RULE] > 0 and engine.violations == []
