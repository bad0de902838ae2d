"""The hand-derived scenarios under tests/scenarios/.

Every scenario file states, in its header comment, the upstream rule it checks, where the rule
comes from, and how its `expect` block was derived by hand. Each file is one test: the reference
scheduler must meet every expectation and break no invariant (exactly what makes
`schedcheck run FILE` exit 0). A failure means either the reference deviates from upstream or the
derivation in the file is wrong; the file's comment is the place to start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.runner import RunResult, run_scenario
from schedcheck.scenario.loader import load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
FILES = sorted(p for p in SCENARIOS.glob("*.yaml"))
MIN_SCENARIOS = 24

TIE_SCENARIO = SCENARIOS / "tie-identical-nodes.yaml"
TIE_POD = "ops/probe-0"
TIE_NODES = {"rack-a-1", "rack-a-2", "rack-a-3"}


def _run(path: Path, seed: int = 0) -> RunResult:
    return run_scenario(load_scenario(path), seed=seed)


def _explain(result: RunResult) -> str:
    lines = [f"scenario {result.scenario} (seed {result.seed}):"]
    lines += [f"  expectation: {failure}" for failure in result.expectation_failures]
    lines += [f"  invariant {v.get('id')}: {v.get('found', v)}" for v in result.violations]
    lines.append(f"  binds: {result.binds}")
    lines.append(f"  pipelined: {result.pipelined}")
    lines.append(f"  podGroupPhases: {result.pod_group_phases}")
    lines.append(f"  taskStatusCounts: {result.task_status_counts}")
    return "\n".join(lines)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario_meets_its_expectations(path: Path) -> None:
    result = _run(path)
    assert result.ok, _explain(result)


UPSTREAM = sorted((SCENARIOS / "upstream").glob("*.yaml"))  # `schedcheck upstream-tests --keep-agreeing`


@pytest.mark.parametrize("path", UPSTREAM, ids=[p.stem[:90] for p in UPSTREAM])
def test_upstream_unit_test_case_meets_upstreams_expectations(path: Path) -> None:
    result = _run(path)
    assert result.ok and not result.skipped_plugins, _explain(result)


def test_the_extracted_upstream_cases_are_there() -> None:
    assert len(UPSTREAM) >= 150
    tests = {load_scenario(p).annotations.get("schedcheck.io/upstream-test", "").split(" ")[0] for p in UPSTREAM}
    assert {"pkg/scheduler/actions/allocate/allocate_test.go", "pkg/scheduler/actions/preempt/preempt_test.go",
            "pkg/scheduler/actions/reclaim/reclaim_test.go", "pkg/scheduler/plugins/capacity/capacity_test.go"} <= tests


def test_directory_holds_enough_scenarios_each_with_expectations() -> None:
    assert len(FILES) >= MIN_SCENARIOS, f"only {len(FILES)} scenarios in {SCENARIOS}"
    names = set()
    for path in FILES:
        scenario = load_scenario(path)
        assert not scenario.expect.is_empty(), f"{path.name} has no expect block"
        assert scenario.name == path.stem, f"{path.name}: metadata.name {scenario.name!r} differs from the file name"
        assert scenario.name not in names
        names.add(scenario.name)
        header = path.read_text(encoding="utf-8").splitlines()[0]
        assert header.startswith("# "), f"{path.name} must start with a comment saying what it checks"


def test_tie_is_deterministic_for_a_seed() -> None:
    for seed in (0, 7, 123):
        first, second = _run(TIE_SCENARIO, seed), _run(TIE_SCENARIO, seed)
        assert first.ok and second.ok, _explain(first if not first.ok else second)
        assert first.binds == second.binds
        assert first.ties == second.ties


def test_tie_varies_across_seeds_among_the_tied_candidates_only() -> None:
    chosen = set()
    for seed in range(21):
        result = _run(TIE_SCENARIO, seed)
        assert result.ok, _explain(result)
        node = result.binds[TIE_POD]
        assert node in TIE_NODES
        ties = [t for t in result.ties if t["task"] == TIE_POD]
        assert len(ties) == 1, f"seed {seed}: expected one recorded tie for {TIE_POD}, got {result.ties}"
        tie = ties[0]
        assert set(tie["candidates"]) == TIE_NODES, f"seed {seed}: tie candidates {tie['candidates']}"
        assert tie["chosen"] == node
        chosen.add(node)
    assert len(chosen) > 1, f"21 seeds always chose {chosen}: the tie-break does not depend on the seed"
