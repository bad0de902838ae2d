"""The cross-session rules fire on a broken multi-session run and stay quiet on a good one.

The runs are the two hand-derived scenarios tests/scenarios/persistence-reclaim-{upstream,persistent}.yaml
(the same cluster; only pipelinePersistence differs). Every cross-session rule fires at cycle >= 1,
so these cases live here rather than in test_catalog.py's CASES (whose fires-test asserts cycle 0);
test_catalog's meta-test counts CROSS_SESSION_CASES as covered.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.actions.allocate import Allocate
from schedcheck.reference.api.pipelined import clear_pipelined
from schedcheck.reference.cache.log import BindOutcome, CacheLog
from schedcheck.reference.cache.world import World
from schedcheck.reference.k8s import Pod
from schedcheck.reference.scheduler import Scheduler
from schedcheck.scenario.loader import load_scenario

SCENARIOS = Path(__file__).parents[1] / "scenarios"


def run(mode: str, invariant_id: str, cycles: int = 3, closed: Callable | None = None) -> InvariantEngine:
    scenario = load_scenario(SCENARIOS / f"persistence-reclaim-{mode}.yaml")
    engine = InvariantEngine(only=[invariant_id])

    def hooks():
        h = engine.hooks()
        if closed is not None:
            h.on_session_closed.insert(0, closed)
        return h

    Scheduler(scenario.objects, scenario.conf, hooks_factory=hooks, now=scenario.now).run(cycles)
    return engine


def _forget_api_pipeline(ssn) -> None:
    """A cache that loses the kept decision without saying so."""
    if ssn.cycle == 0:
        pod = next(p for p in ssn.cache.world.pods if p.name == "api-0")
        clear_pipelined(pod)


def _binder_lies(monkeypatch) -> None:
    """The binder reports success but the pod never gets its node: the next session binds it again."""
    def bind(self: World, pod: Pod, node: str, cycle: int, persistent: bool, log: CacheLog) -> None:
        log.bind_outcomes.append(BindOutcome(cycle, pod.key, node, "bound"))
    monkeypatch.setattr(World, "_bind", bind)


def _no_fast_path(monkeypatch) -> None:
    monkeypatch.setattr(Allocate, "_allocate_kept_pipelines", lambda self: None)


# id -> (good mode, broken mode, patch, closed-hook corruption, cycles of the broken run)
CROSS_SESSION_CASES: dict[str, tuple[str, str, Callable | None, Callable | None, int]] = {
    "cross.pipelined-kept": ("persistent", "persistent", None, _forget_api_pipeline, 3),
    "cross.single-placement": ("persistent", "upstream", _binder_lies, None, 3),
    "cross.no-oscillation": ("persistent", "upstream", None, None, 3),
    "cross.pipelined-liveness": ("persistent", "persistent", _no_fast_path, None, 5),
}


@pytest.mark.parametrize("invariant_id", sorted(CROSS_SESSION_CASES))
def test_cross_session_rule_passes_on_a_good_run(invariant_id):
    good, *_ = CROSS_SESSION_CASES[invariant_id]
    engine = run(good, invariant_id, cycles=5)
    assert engine.checks[invariant_id] > 0
    assert not engine.violations and not engine.findings, [v.one_line() for v in engine.violations + engine.findings]


@pytest.mark.parametrize("invariant_id", sorted(CROSS_SESSION_CASES))
def test_cross_session_rule_fires_on_a_broken_run(invariant_id, monkeypatch):
    _, broken, patch, closed, cycles = CROSS_SESSION_CASES[invariant_id]
    if patch is not None:
        patch(monkeypatch)
    engine = run(broken, invariant_id, cycles=cycles, closed=closed)
    found = engine.violations + engine.findings
    assert found, f"{invariant_id} did not fire on its broken run"
    assert found[0].invariant == invariant_id and found[0].message and found[0].cycle >= 1


def test_the_persistence_rule_stays_silent_in_upstream_mode():
    """Upstream mode loses pipelined decisions by design: cross.pipelined-kept does not apply there."""
    engine = run("upstream", "cross.pipelined-kept", cycles=4)
    assert engine.checks["cross.pipelined-kept"] > 0 and not engine.violations and not engine.findings


def test_upstream_mode_breaks_liveness_when_reclaim_runs_first():
    """Reclaim re-pipelines api-0 on n2 every session (n2 has room from session 2) and allocate, which
    takes Pending tasks only, never binds it: the finding the persistent fast path removes."""
    engine = run("upstream", "cross.pipelined-liveness", cycles=5)
    assert [(f.invariant, f.cycle) for f in engine.findings] == [("cross.pipelined-liveness", 4)]


def test_a_released_decision_is_not_a_lost_one():
    """The node of a kept decision disappears: the cache releases it (logged), the rule accepts that."""
    def remove_n2(ssn) -> None:
        if ssn.cycle == 0:
            world = ssn.cache.world
            world.nodes = [n for n in world.nodes if n.name != "n2"]
            world.pods = [p for p in world.pods if p.node_name != "n2"]

    engine = run("persistent", "cross.pipelined-kept", cycles=2, closed=remove_n2)
    assert engine.checks["cross.pipelined-kept"] == 2 and not engine.violations
