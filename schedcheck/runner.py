"""Run the reference scheduler on a scenario and collect the result object of the spec."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.scheduler import CycleReport, Scheduler
from schedcheck.reference.util.assertion import AssertionViolation
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.known import known_assertion_for
from schedcheck.expect import judge
from schedcheck.result import PROTOCOL, SCHEDULER_POD_GROUP_ANNOTATIONS, RunResult
from schedcheck.scenario.extender import uses_extender
from schedcheck.scenario.model import Scenario

__all__ = ["PROTOCOL", "RunResult", "run_scenario"]


def run_scenario(scenario: Scenario, seed: int = 0, engine: InvariantEngine | None = None,
                 check_invariants: bool = True, overkill: bool = False,
                 tie_chooser: Callable[..., Any] | None = None, ledgers: bool = False,
                 consume: bool = False) -> RunResult:
    """Run every cycle of the scenario with the invariant engine observing; judge the expectations.

    With `overkill`, every committed preempt/reclaim eviction is compared with the Z3 optimum;
    `tie_chooser` guides the reference's choice among equally scored nodes (conformance replays);
    `ledgers` records every node's accounting after each session (the protocol's optional ledgers;
    off by default, because the gate runs millions of sessions and never reads them); with `consume`, the
    scheduler takes `scenario.objects` without copying them (they change: for a scenario built for this run).
    """
    if scenario.extender_server is not None or uses_extender(scenario.conf):  # scenario/extender.py
        import dataclasses

        from schedcheck.scenario.extender import resolve_conf, serving, sigpipe_ignored

        with sigpipe_ignored():
            if scenario.extender_server is None:
                return _run(scenario, seed, engine, check_invariants, overkill, tie_chooser, ledgers, consume)
            with serving(scenario.extender_server) as url:
                served = dataclasses.replace(scenario, conf=resolve_conf(scenario.conf, url), extender_server=None)
                return _run(served, seed, engine, check_invariants, overkill, tie_chooser, ledgers, consume)
    return _run(scenario, seed, engine, check_invariants, overkill, tie_chooser, ledgers, consume)


def _run(scenario: Scenario, seed: int, engine: InvariantEngine | None, check_invariants: bool, overkill: bool,
         tie_chooser: Callable[..., Any] | None, ledgers: bool, consume: bool) -> RunResult:
    if engine is None and check_invariants:
        engine = InvariantEngine()
    hooks_factory = engine.hooks if engine is not None else None
    observer = None
    if overkill:
        hooks_factory, observer = _with_overkill(hooks_factory)
    scheduler = Scheduler(scenario.objects, scenario.conf, seed=seed, now=scenario.now, server_options=scenario.options,
                          hooks_factory=hooks_factory, tie_chooser=tie_chooser, copy_objects=not consume)
    result = RunResult(scenario=scenario.name, seed=seed, cycles=scenario.cycles)
    _out_of_sync(scheduler, result)
    from schedcheck.reference.framework.plugin import get_plugin_builder

    result.skipped_plugins = sorted(
        {p.name for tier in scenario.conf.tiers for p in tier.plugins if get_plugin_builder(p.name) is None}
    )
    last: CycleReport | None = None
    sessions: set[str] = set()
    try:
        for index in range(scenario.cycles):
            if index:
                scheduler.advance()
            last = scheduler.run_once()
            sessions.add(last.session.uid)
            _collect_trace(result, last)
            if ledgers:
                result.ledgers.append(_ledger(last))
            for name in last.skipped_actions:
                if name not in result.skipped_actions:
                    result.skipped_actions.append(name)
    except AssertionViolation as exc:
        _record_assertion(result, exc, scheduler.cycle, engine)
    if engine is not None:
        result.violations.extend(v.to_json() for v in engine.violations)
        result.findings.extend(v.to_json() for v in engine.findings)
        result.invariants, result.invariant_checks = len(engine.invariants), engine.checks_run
    log = scheduler.cache.log
    result.binds = {record.task: record.node for record in log.binds if not record.pre_bind}  # binder reached
    result.evicted = [record.task for record in log.evictions]
    result.pod_group_phases = scheduler.cache.pod_group_phases()
    result.pod_group_annotations = _pod_group_annotations(scheduler.cache.world.pod_groups)
    result.pod_group_conditions = _pod_group_conditions(scheduler.cache.world.pod_groups, sessions)
    if last is not None:
        _collect_session_state(result, last)
    result.expectation_failures = judge(scenario.expect, result)
    if observer is not None:
        result.overkill = observer.entries
    return result


def _with_overkill(hooks_factory):
    """A hooks factory that adds the overkill observer (model/overkill.py) to each session's hooks."""
    from schedcheck.model.overkill import OverkillObserver
    from schedcheck.reference.framework.session import SessionObserverHooks

    observer = OverkillObserver()

    def factory():
        hooks = hooks_factory() if hooks_factory is not None else SessionObserverHooks()
        observer.attach(hooks)
        return hooks

    return factory, observer


def _collect_trace(result: RunResult, report: CycleReport) -> None:
    ssn = report.session
    for op in ssn.operations:
        result.trace.append({"cycle": report.cycle, "action": op.action, "op": op.op, "task": op.task, "node": op.node})
    for tie in ssn.ties:
        result.ties.append({"cycle": report.cycle, "action": tie.action, "task": tie.task,
                            "candidates": tie.candidates, "chosen": tie.chosen, "score": tie.score,
                            "kind": tie.kind})


def _collect_session_state(result: RunResult, report: CycleReport) -> None:
    ssn = report.session
    for job in ssn.jobs.values():
        counts: Counter[str] = Counter()
        for status, bucket in job.task_status_index.items():
            if bucket:
                counts[status.name] += len(bucket)
        result.task_status_counts[job.uid] = dict(sorted(counts.items()))
        for task in job.tasks_with_status(TaskStatus.Pipelined):
            result.pipelined[task.key] = task.node_name
            result.pipelined_groups[task.key] = job.uid


def _pod_group_annotations(pod_groups: list[Any]) -> dict[str, dict[str, str]]:
    """The annotations a scheduler may write, as the PodGroups carry them after the last close."""
    out = {}
    for pg in pod_groups:
        written = {key: pg.annotations[key] for key in SCHEDULER_POD_GROUP_ANNOTATIONS if key in pg.annotations}
        if written:
            out[pg.key] = written
    return out


def _pod_group_conditions(pod_groups: list[Any], sessions: set[str]) -> dict[str, dict[str, dict[str, str]]]:
    """The conditions the run's sessions wrote (gang's Scheduled and Unschedulable), by type. The message is
    left out: upstream names in it the first task with fit errors in map order."""
    out = {}
    for pg in pod_groups:
        written = {c.type: {"status": c.status, "reason": c.reason}
                   for c in pg.conditions if c.transition_id in sessions}
        if written:
            out[pg.key] = written
    return out


def _ledger(report: CycleReport) -> dict[str, Any]:
    """Every node's accounting at the close of a session, in the protocol's resource maps."""
    nodes = {}
    for name, node in sorted(report.session.nodes.items()):
        nodes[name] = {"allocatable": node.allocatable.as_dict(), "idle": node.idle.as_dict(),
                       "used": node.used.as_dict(), "releasing": node.releasing.as_dict(),
                       "pipelined": node.pipelined.as_dict()}
    return {"cycle": report.cycle, "nodes": nodes}


def _record_assertion(result: RunResult, exc: AssertionViolation, cycle: int, engine: InvariantEngine | None) -> None:
    """The run ended on an assertion upstream panics on: a violation (`upstream.assert`), or, when it is a known
    upstream finding (invariants/known.py KNOWN_ASSERTIONS) not switched on to fail, a finding under its id."""
    record: dict[str, Any] = {  # shaped as every violation is (Violation.to_json)
        "id": "upstream.assert", "cycle": cycle, "action": "", "checkpoint": "assertion",
        "operation": "", "objects": [], "expected": "the assertion holds", "found": str(exc),
        "message": f"an upstream assertion failed (upstream would panic here): {exc}",
        "statement": "an upstream assertion (e.g. the asserting Resource.Sub) must hold", "state": {},
    }
    known = known_assertion_for(exc)
    if known is None:
        result.violations.append(record)
        return
    record["known"] = known.id
    switched_on = engine.fail_on_known if engine is not None else frozenset()
    fails = known.id in switched_on or "all" in switched_on
    (result.violations if fails else result.findings).append(record)


def _out_of_sync(scheduler: Scheduler, result: RunResult) -> None:
    """A node whose pods already use more than its allocatable (a kubelet admitted them before
    allocatable shrank): upstream logs "Node out of sync" and schedules on, its Idle negative."""
    from schedcheck.reference.api.resource_info import Zero

    for name, node in sorted(scheduler.cache.nodes.items()):
        ok, names = node.used.less_equal_with_resources_name(node.allocatable, Zero)
        if ok:
            continue
        over = {n: {"used": node.used.get(n), "allocatable": node.allocatable.get(n)} for n in names}
        words = ", ".join(f"{n} {v['used']:g} > {v['allocatable']:g}" for n, v in over.items())
        message = (f"node {name} is out of sync: its pods use more than it can hold ({words}); upstream logs "
                   f"\"Node out of sync\" and keeps scheduling on it with a negative Idle")
        result.warnings.append(message)
        result.findings.append({"id": "input.node-out-of-sync", "cycle": 0, "action": "", "checkpoint": "open",
                                "operation": "", "objects": [f"node {name}"], "expected": "used <= allocatable",
                                "found": over, "message": message, "state": {}})
