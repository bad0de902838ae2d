"""Replay the scenarios the generators found (tests/generators/found/, see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

FOUND_DIR = Path(__file__).parent / "found"

# file stem -> (invariant it broke when found, "open" (still a safety violation) or "resolved")
FOUND: dict[str, tuple[str, str]] = {
    "node-pod-limit-after-discarded-reclaim": ("node.pod-limit", "open"),
    "statement-discard-restores-unevict-bound": ("statement.discard-restores", "resolved"),
    "statement-discard-restores-nested-node-statement": ("statement.discard-restores", "open"),
    "victim-preempt-scope-equal-priority": ("victim.preempt-scope", "resolved"),
    "gang-no-stranded-placement-preempt-phase-b": ("gang.no-stranded-placement", "resolved"),
    "enqueue-within-real-capability-sla-permit": ("enqueue.within-real-capability", "resolved"),
    "queue-deserved-total-guarantee-not-requested": ("queue.deserved-total", "resolved"),
    "victim-reclaim-over-deserved-gang-decides": ("victim.reclaim-over-deserved", "resolved"),
}

# Safety invariants the clean reference is still known to break on generated scenarios.
OPEN_FINDINGS = frozenset(inv for inv, status in FOUND.values() if status == "open")


def test_every_found_file_is_listed():
    assert {p.stem for p in FOUND_DIR.glob("*.yaml")} == set(FOUND)


def _params():
    for stem, (invariant, status) in sorted(FOUND.items()):
        marks = []
        if status == "open":
            marks.append(pytest.mark.xfail(reason=f"open finding: the clean reference breaks {invariant}",
                                           strict=False))
        yield pytest.param(stem, invariant, marks=marks, id=stem)


@pytest.mark.parametrize(("stem", "invariant"), list(_params()))
def test_found_scenario_runs_clean(stem, invariant):
    scenario = load_scenario(FOUND_DIR / f"{stem}.yaml")
    assert scenario.warnings == []
    annotations = scenario.document.get("metadata", {}).get("annotations", {})
    assert annotations.get("schedcheck.io/invariant") == invariant
    result = run_scenario(scenario, seed=0)
    assert result.violations == [], [v["id"] for v in result.violations]
