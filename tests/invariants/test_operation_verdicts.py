"""The node-ledger rules at an operation (ledger.operation_verdicts: one node, one pass of plain floats) and at an
action's end (ledger.verdicts_over: every node, node by node) find what the general ledger (Python rows for a few
nodes, numpy for many) finds on those nodes, in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.invariants import ledger as ledger_module
from schedcheck.invariants.ledger import build_ledger, operation_verdicts, verdicts_of, verdicts_over
from schedcheck.invariants.registry import LEDGER_OPS
from schedcheck.mutants import MUTANTS, mutant
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.session import SessionObserverHooks
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util.assertion import AssertionViolation
from schedcheck.scenario.loader import load_scenario
from tests.builders import node
from tests.invariants.test_ledger import _task

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted([*(ROOT / "tests" / "scenarios").glob("*.yaml"), *(ROOT / "schedcheck" / "corpus").glob("**/*.yaml")])
MUTANT_SCENARIOS = ROOT / "schedcheck" / "mutant_scenarios"
# mutants that break a node's accounting, run on their self-test scenarios
ACCOUNTING_MUTANTS = ("allocated-idle-not-subtracted", "remove-task-forgets-releasing", "unevict-leaves-node",
                      "pipeline-not-reserved", "commit-loses-evictions", "evict-before-fit")


def _compared(scenario) -> tuple[int, int]:
    """Run the scenario; at every ledger operation compare the one-pass verdicts on its node with the general
    ledger's, in rows and in numpy, and at every action's end the node-by-node verdicts on every node. (operations
    compared, checkpoints that found something, action ends compared)"""
    counted = {"ops": 0, "ends": 0, "found": 0}

    def on_operation(ssn, op) -> None:
        target = ssn.nodes.get(op.node)
        if op.op not in LEDGER_OPS or target is None:
            return
        found = operation_verdicts(target)
        assert found == verdicts_of(build_ledger([target])), f"{scenario.name}: {op.op} {op.task} on {op.node}"
        rows_up_to, ledger_module.ROWS_UP_TO = ledger_module.ROWS_UP_TO, 0
        try:
            assert found == verdicts_of(build_ledger([target])), f"{scenario.name}: {op.op} {op.task} (numpy)"
        finally:
            ledger_module.ROWS_UP_TO = rows_up_to
        counted["ops"] += 1
        counted["found"] += any(vars(found).values())

    def on_action_end(ssn, action) -> None:
        every = list(ssn.nodes.values())
        found = verdicts_over(every)
        assert found == verdicts_of(build_ledger(every)), f"{scenario.name}: end of {action}"
        rows_up_to, ledger_module.ROWS_UP_TO = ledger_module.ROWS_UP_TO, 0
        try:
            assert found == verdicts_of(build_ledger(every)), f"{scenario.name}: end of {action} (numpy)"
        finally:
            ledger_module.ROWS_UP_TO = rows_up_to
        counted["ends"] += 1
        counted["found"] += any(vars(found).values())

    def factory() -> SessionObserverHooks:
        hooks = SessionObserverHooks()
        hooks.on_operation.append(on_operation)
        hooks.on_action_end.append(on_action_end)
        return hooks

    scheduler = Scheduler(scenario.objects, scenario.conf, seed=0, now=scenario.now, server_options=scenario.options,
                          hooks_factory=factory)
    try:
        for _ in range(scenario.cycles):
            scheduler.run_once()
            scheduler.advance()
    except AssertionViolation:
        pass  # upstream panics there: compared up to the panic
    return counted["ops"], counted["found"], counted["ends"]


def test_every_scenario_s_operations_judged_alike():
    ops = ends = 0
    for path in SCENARIOS:
        try:
            scenario = load_scenario(str(path))
        except Exception:  # noqa: BLE001 - scenarios meant to be refused
            continue
        if scenario.extender_server is not None:
            continue
        compared = _compared(scenario)
        ops, ends = ops + compared[0], ends + compared[2]
    assert ops > 2000 and ends > 1000


@pytest.mark.parametrize("name", ACCOUNTING_MUTANTS)
def test_broken_accounting_judged_alike(name):
    assert name in MUTANTS
    scenario = load_scenario(str(MUTANT_SCENARIOS / f"{name}.yaml"))
    with mutant(name):
        ops, found, _ = _compared(scenario)
    assert ops > 0
    if name in ("allocated-idle-not-subtracted", "remove-task-forgets-releasing"):
        assert found > 0  # the comparison above covered broken ledgers too


def test_a_broken_node_is_found_by_each_rule():
    busy = NodeInfo(node("n1"))
    run, gone = _task("run", TaskStatus.Running), _task("gone", TaskStatus.Releasing)
    busy.add_task(run)
    busy.add_task(gone)
    assert not any(vars(operation_verdicts(busy)).values())  # a good node: nothing
    busy.used.milli_cpu += 500  # Used off by half a core: Idle + Used and the sum of Used both wrong
    busy.releasing.memory = -1.0  # and Releasing negative
    found = operation_verdicts(busy)
    assert found.used_sum == [("n1", "cpu", 2500.0, 2000.0)] and found.ledger[0][:2] == ("n1", "cpu")
    assert found.negative == [("Releasing", "n1", "memory", -1.0)] and found.releasing_sum
    assert not found.pipelined_sum
    assert found == verdicts_of(build_ledger([busy]))
