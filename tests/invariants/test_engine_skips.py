"""What the engine does not judge again, or at all: state-only rules on an unchanged state at action ends
(registry.Invariant.state_only), ledger rules at the operations that leave the ledgers alone (operations), rules
whose condition a session does not meet (applies_when), and at an operation the status index of other tasks than
the operation's."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

from schedcheck.invariants.catalog import catalog
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.registry import ACTION, LEDGER_OPS, Invariant
from schedcheck.reference.api.types import TaskStatus
from tests.invariants.harness import check, cluster

FULL = "enqueue, allocate, backfill, preempt, reclaim"


def _idle_shift(ssn, *_):
    node = ssn.nodes["n2"]
    node.idle.milli_cpu += 500
    node._future_idle = None


def test_an_unchanged_state_is_not_judged_again_at_the_next_action_end():
    # basic cluster: after allocate and backfill, preempt and reclaim change nothing
    engine = check(None, actions=FULL)
    assert engine.skipped["node.ledger"] > 0 and engine.skipped["order.job"] > 0
    assert engine.checks["node.ledger"] > 0
    assert not engine.violations


def test_rules_that_read_the_action_or_the_engines_memory_are_never_skipped():
    engine = check(None, actions=FULL)
    for inv in catalog():
        if not inv.state_only:
            assert engine.skipped[inv.id] == 0, inv.id


def test_state_only_rules_read_neither_the_action_nor_what_the_engine_remembers():
    # the promise the flag makes, in the rule's own code: judged from the session's state alone
    for inv in catalog():
        if inv.state_only:
            assert ACTION in inv.at, inv.id
            source = inspect.getsource(inv.check)
            for word in ("ctx.action", "session_state", "run_memory", "ctx.before", "ctx.checkpoint"):
                assert word not in source, f"{inv.id} reads {word} but is state_only"


def test_a_state_changed_by_an_operation_is_judged_again():
    # the corruption lands once, at the first operation; the action end after it must judge it
    done = []

    def once(ssn, *_):
        if not done:
            done.append(1)
            _idle_shift(ssn)
    engine = check("node.ledger", corrupt=("operation", once))
    assert engine.violations and engine.violations[0].checkpoint in ("operation", "action")


def test_a_silent_change_between_unchanged_action_ends_is_still_caught_at_close():
    # Corrupted at the end of backfill, which changed nothing after allocate: skipped there, judged at close.
    def at_backfill(ssn, action):
        if action == "backfill":
            _idle_shift(ssn)
    engine = check("node.ledger", corrupt=("action", at_backfill))
    assert engine.skipped["node.ledger"] > 0
    assert [v.checkpoint for v in engine.violations] == ["close"]


def test_ledger_rules_are_not_judged_at_a_bind_and_are_at_every_ledger_operation():
    seen: list[str] = []

    def note(ssn, op):
        seen.append(op.op)
    engine = check("node.ledger", corrupt=("operation", note))
    assert "bind" in seen and "allocate" in seen
    assert engine.checks["node.ledger"] >= sum(1 for op in seen if op in LEDGER_OPS)
    assert not engine.violations


def test_a_ledger_broken_at_a_bind_is_caught_at_the_action_end():
    def at_bind(ssn, op):
        if op.op == "bind":
            ssn.nodes[op.node].idle.milli_cpu += 500
            ssn.nodes[op.node]._future_idle = None
    engine = check("node.ledger", corrupt=("operation", at_bind))
    assert engine.violations and {v.checkpoint for v in engine.violations} == {"action", "close"}


def test_only_rules_that_judge_the_ledgers_or_the_plugins_accounting_skip_binds():
    for inv in catalog():
        if inv.operations is not None:
            # device pools are node ledgers; a job's Allocated does not move at a bind (Allocated to Binding);
            # reclaimer-starving judges reclaim's pipelines
            assert inv.id.startswith(("node.", "queue.", "device.")) or inv.id in ("job.allocated-sum",
                                                                                   "victim.reclaimer-starving"), inv.id
            assert "bind" not in inv.operations


def test_a_job_allocated_broken_at_a_bind_is_caught_at_the_action_end():
    def at_bind(ssn, op):
        if op.op == "bind":
            ssn.jobs[op.job].allocated.milli_cpu += 500
    engine = check("job.allocated-sum", corrupt=("operation", at_bind))
    assert engine.violations and {v.checkpoint for v in engine.violations} == {"action", "close"}


def _mutants_flagged_alike(rule_ids: list[str], loosen: Callable[[Invariant], Invariant]) -> int:
    """Run every mutant's self-test scenario under these rules as declared and loosened; assert the same rules
    flag each; return how many mutants they flagged."""
    from schedcheck.mutants import MUTANTS, mutant
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario
    from schedcheck.selftest import scenario_path

    def found(loosened: bool) -> set[str]:
        engine = InvariantEngine(only=rule_ids)
        if loosened:
            engine.by_checkpoint = {cp: [loosen(inv) for inv in invs] for cp, invs in engine.by_checkpoint.items()}
            engine._rules_key = ("loosened", id(loosen))
        run_scenario(load_scenario(scenario_path(name)), seed=0, engine=engine)
        return {v.invariant for v in engine.violations + engine.findings}

    caught = 0
    for name in sorted(MUTANTS):
        if not scenario_path(name).exists():
            continue
        with mutant(name):
            as_declared = found(False)
            assert as_declared == found(True), name
        caught += bool(as_declared)
    return caught


def test_the_operations_a_rule_declares_are_all_it_can_find_anything_at():
    """Every mutant's self-test scenario, judged by the rules that declare their operations, is flagged by the
    same rules with the declarations as with every rule judged at every operation (a ledger broken at a bind is
    found at the action's end instead: test above)."""
    declared = [inv.id for inv in catalog() if inv.operations is not None and "operation" in inv.at]
    assert _mutants_flagged_alike(declared, lambda inv: dataclasses.replace(inv, operations=None)) >= 10


def test_statement_rules_judge_every_statement_with_operations_and_no_empty_one():
    ends: list[int] = []

    def note(ssn, kind, ops):
        ends.append(len(ops))
    engine = check("statement.events-balanced", actions="enqueue, allocate, backfill, preempt",
                   objects=cluster("preempt"), corrupt=("statement", note))
    assert any(n == 0 for n in ends) and any(n > 0 for n in ends)  # both kinds happened
    assert engine.checks["statement.events-balanced"] == sum(1 for n in ends if n > 0)


def test_a_rule_whose_condition_the_session_does_not_meet_is_left_out_of_it():
    # the basic cluster has no DRA objects, no device pools and no hard shard
    engine = check(None)
    conditional = [inv.id for inv in catalog() if inv.applies_when is not None]
    assert {"dra.match-attribute-held", "device.within-capacity", "node.in-shard",
            "node.volume-affinity-respected"} <= set(conditional)
    assert engine.checks["node.ledger"] > 0
    for rule in conditional:
        assert engine.checks[rule] == 0, rule
    # where the condition holds the rule is judged, and catches its break: test_sharding.py (hard shard),
    # test_dra_*.py (claims), the device tests (pools), and the test below over every mutant


def test_the_conditions_leave_out_no_rule_that_would_find_something():
    """Every mutant's self-test scenario is flagged by the same rules with the rules' conditions as without."""
    conditional = [inv.id for inv in catalog() if inv.applies_when is not None]
    assert _mutants_flagged_alike(conditional, lambda inv: dataclasses.replace(inv, applies_when=None)) >= 3


def _misindex(job, task) -> None:
    """Move the task's index entry to a bucket of another status."""
    job.task_status_index[task.status].pop(task.uid)
    wrong = TaskStatus.Failed if task.status != TaskStatus.Failed else TaskStatus.Pending
    job.task_status_index.setdefault(wrong, {})[task.uid] = task


def test_the_status_index_is_judged_on_the_operations_task_at_the_operation():
    def at_first_allocate(ssn, op):
        if op.op == "allocate" and not done:
            done.append(op)
            job = ssn.jobs[op.job]
            _misindex(job, job.tasks[op.task_uid])
    done: list = []
    engine = check("job.status-index", corrupt=("operation", at_first_allocate))
    first = engine.violations[0]
    assert first.checkpoint == "operation" and done[0].task in first.operation
    assert "indexed as Failed" in first.message


def test_another_tasks_status_index_broken_at_an_operation_is_caught_by_the_action_end():
    # not at the operation that did not move it: at that task's own operation, or at the action's end
    def at_first_allocate(ssn, op):
        if op.op == "allocate" and not done:
            job = ssn.jobs[op.job]
            other = next((t for t in job.tasks.values() if t.uid != op.task_uid), None)
            if other is not None:
                done.append((op, other))
                _misindex(job, other)
    done: list = []
    engine = check("job.status-index", corrupt=("operation", at_first_allocate))
    assert done and engine.violations
    op, other = done[0]
    first = engine.violations[0]
    assert other.key in first.message and first.checkpoint in ("operation", "action")
    assert first.checkpoint == "action" or other.key in first.operation
