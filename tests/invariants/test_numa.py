"""numa.cpu-sets-disjoint and numa.single-numa-node-aligned: each fires on a broken plugin state and passes on
faithful runs (the hand scenarios tests/scenarios/numa-*.yaml and a multi-session run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario
from tests.invariants.harness import check
from tests.plugins.test_numaaware import guaranteed, topology
from tests.builders import node, pod_group
from schedcheck.reference.k8s import ClusterObjects

RULES = ["numa.cpu-sets-disjoint", "numa.single-numa-node-aligned"]
HERE = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((HERE / "tests/scenarios").glob("numa-*.yaml"))
TIERS = (["priority", "gang"], ["predicates", "numa-aware"])


def _cluster() -> ClusterObjects:
    """Two single-numa-node pods on one 8-cpu node of two NUMA nodes: a-0 gets 0-2, b-0 gets 4-5."""
    return ClusterObjects(nodes=[node("n1", cpu="8")], numatopologies=[topology("n1")],
                          pods=[guaranteed("a-0", "a", "3"), guaranteed("b-0", "b", "2")],
                          pod_groups=[pod_group("a", 1), pod_group("b", 1)])


def _reassign(cpus: frozenset[int], who: str = "b-0"):
    def corrupt(ssn, *_):
        plugin = ssn.plugins["numa-aware"]
        for job in ssn.jobs.values():
            for task in job.tasks.values():
                if task.name == who and task.uid in plugin.task_bind_node:
                    plugin.assign_res[task.uid][plugin.task_bind_node[task.uid]] = {"cpu": cpus}
    return corrupt


@pytest.mark.parametrize("rule", RULES)
def test_passes_on_a_good_run(rule):
    engine = check(rule, _cluster(), actions="enqueue, allocate", tiers=TIERS, cycles=3)
    assert engine.checks[rule] > 0 and not engine.violations


@pytest.mark.parametrize("cpus, why", [(frozenset({2, 4}), "given to both"), (frozenset({9}), "not free")])
def test_fires_cpu_sets_disjoint(cpus, why):
    engine = check("numa.cpu-sets-disjoint", _cluster(), actions="enqueue, allocate", tiers=TIERS,
                   corrupt=("action", _reassign(cpus)))
    assert engine.violations and engine.violations[0].invariant == "numa.cpu-sets-disjoint"
    assert why in engine.violations[0].message


def test_fires_single_numa_node_aligned():
    engine = check("numa.single-numa-node-aligned", _cluster(), actions="enqueue, allocate", tiers=TIERS,
                   corrupt=("action", _reassign(frozenset({3, 4}))))
    assert engine.violations and "spanning NUMA nodes [0, 1]" in engine.violations[0].message


def test_single_numa_node_aligned_ignores_other_policies():
    objects = _cluster()
    objects.numatopologies[0].policies["TopologyManagerPolicy"] = "best-effort"
    for p in objects.pods:
        p.annotations["volcano.sh/numa-topology-policy"] = "best-effort"
    engine = check("numa.single-numa-node-aligned", objects, actions="enqueue, allocate", tiers=TIERS,
                   corrupt=("action", _reassign(frozenset({3, 4}))))
    assert not engine.violations


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_passes_on_the_hand_scenarios(path):
    engine = InvariantEngine(only=RULES)
    run_scenario(load_scenario(path), engine=engine)
    assert engine.violations == []
