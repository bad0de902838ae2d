"""node.in-shard, and node sharding read from a scenario (NodeShard objects, schedulerOptions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario, load_scenario_text

RULE = "node.in-shard"
HERE = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((HERE / "tests/scenarios").glob("shard-*.yaml"))
HARD = HERE / "tests/scenarios/shard-allocate-hard-places-inside-the-shard.yaml"


def _engine(path: Path) -> InvariantEngine:
    engine = InvariantEngine(only=[RULE])
    run_scenario(load_scenario(path), engine=engine)
    return engine


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_passes_on_the_faithful_reference(path):
    engine = _engine(path)
    assert engine.violations == []
    if "-hard-" in path.name:
        assert engine.checks[RULE] > 0


def test_fires_when_hard_sharding_is_ignored():
    with mutant("predicates-ignores-hard-shard"):
        found = _engine(HARD).violations
    assert [v.invariant for v in found] == [RULE]
    assert "n3" in found[0].message and "outside this scheduler's hard shard" in found[0].message


def _text(options: str, shards: str = "") -> str:
    return f"""apiVersion: schedcheck/v1
kind: Scenario
metadata: {{name: s}}
schedulerOptions: {options}
objects:
- {{apiVersion: v1, kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: "1", memory: 1Gi}}}}}}
{shards}"""


def test_a_bad_sharding_mode_is_a_one_line_error_naming_the_field():
    with pytest.raises(ScenarioError) as err:
        load_scenario_text(_text("{shardingMode: strict}"), "s.yaml")
    assert "schedulerOptions.shardingMode" in str(err.value) and "\n" not in str(err.value)


def test_a_missing_shard_is_a_warning_and_leaves_the_shard_empty():
    scenario = load_scenario_text(_text("{shardingMode: hard, shardName: gpu}"), "s.yaml")
    assert any("no NodeShard named 'gpu'" in w for w in scenario.warnings)
    result = run_scenario(scenario)
    assert result.violations == []


def test_other_shards_in_use_nodes_are_taken_out():
    from schedcheck.reference.cache.cache import SchedulerCache

    shards = """- {apiVersion: shard.volcano.sh/v1alpha1, kind: NodeShard, metadata: {name: a},
   spec: {nodesDesired: [n1, n2]}}
- {apiVersion: shard.volcano.sh/v1alpha1, kind: NodeShard, metadata: {name: b},
   spec: {nodesDesired: []}, status: {nodesInUse: [n2]}}
"""
    scenario = load_scenario_text(_text("{shardingMode: soft, shardName: a}", shards), "s.yaml")
    cache = SchedulerCache(scenario.objects, server_options=scenario.options)
    assert cache.in_use_nodes_in_shard == {"n1"}
    assert any("nodesDesired names nodes not among the objects: n2" in w for w in scenario.warnings)


def test_options_round_trip_through_a_dumped_document():
    from schedcheck.scenario.dump import scenario_document

    scenario = load_scenario(HARD)
    doc = scenario_document("x", scenario.objects, scenario.conf, options=scenario.options)
    assert doc["schedulerOptions"] == {"shardingMode": "hard", "shardName": "test-shard"}
    assert any(o["kind"] == "NodeShard" for o in doc["objects"])
