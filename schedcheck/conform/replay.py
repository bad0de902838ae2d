"""An implementation's history judged by the catalog's own rules.

The committed operations of an answer (from its trace, or, for a one-cycle scenario without one, its
binds, evictions and pipelines) are replayed cycle by cycle as statements of a reference session
opened on the same cache, with the invariant engine watching. So the rule that judges the reference
(`node.placement-fits`, `gang.session-atomic`, `victim.preemptable`, ...) judges the other
implementation too, under the same id and in the same words: no rule is written twice.

Statements are rebuilt from the order of operations, as upstream's actions build them: in allocate,
one statement per job, committed when the job's tasks were bound and left open when they were only
pipelined; in preempt and reclaim, the evictions on a node with the pipeline that follows them. Only
the rules about decisions run (DECISION_RULES); the others judge the reference's own machinery
(statement undo, event pairing, its ledgers and plugin accounting), which a replay cannot get wrong.
"""

from __future__ import annotations

from schedcheck.reference.plugins.deviceshare import device_flags

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schedcheck.conform.findings import Finding
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.invariants.violation import plain
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.framework import close_session, open_session
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.scenario.model import Scenario

# Catalog rules that are a function of the decisions (what was bound, evicted or pipelined where, and
# in which action), so they judge any implementation's history.
DECISION_RULES = (
    "node.placement-fits", "node.placement-allowed", "node.host-ports-free", "node.cache-idle-non-negative",
    "node.pod-limit",
    "gang.commit-ready", "gang.no-stranded-placement", "gang.session-atomic",
    "victim.status", "victim.preemptable", "victim.best-effort", "victim.preempt-scope", "victim.reclaim-scope",
    "victim.reclaimer-not-overused", "victim.preemptor-policy",
    "eviction.same-node", "eviction.reclaim-stops-when-fits",
    "queue.allocate-within-deserved", "queue.no-allocate-when-overused", "queue.capacity-within-real-capability",
    "cross.single-placement",
)
FORWARD = ("allocate", "pipeline", "evict")
UNDO = {"unallocate": "allocate", "unpipeline": "pipeline", "unevict": "evict"}
EVICTING = ("preempt", "reclaim")
REPLAY = "replay"  # the action name given to decisions an answer does not attribute to an action


@dataclass
class Step:
    """One committed operation of an answer: `bound` marks an allocate whose task was then bound."""

    action: str
    op: str  # allocate | pipeline | evict
    task: str
    node: str = ""
    bound: bool = False


def rule_coverage() -> dict[str, Any]:
    """How much of the catalog judges another implementation: the decision rules, and the count of the
    rules that read the reference's own machinery and are skipped there."""
    from schedcheck.invariants.catalog import catalog

    ids = [inv.id for inv in catalog()]
    return {"judged": len(DECISION_RULES), "skipped": len(ids) - len(DECISION_RULES),
            "skippedIds": sorted(set(ids) - set(DECISION_RULES))}


def history(result: dict[str, Any], cycles: int) -> dict[int, list[Step]] | None:
    """Per cycle, the operations that stood (not undone later in the cycle), in order; None when the
    answer cannot be placed in cycles (several cycles and no trace)."""
    trace = result.get("trace")
    if trace is None:
        if cycles != 1:
            return None
        steps = [Step(REPLAY, "evict", task) for task in result["evicted"]]
        steps += [Step(REPLAY, "allocate", task, node, True) for task, node in result["binds"].items()]
        steps += [Step(REPLAY, "pipeline", task, node) for task, node in result["pipelined"].items()]
        return {0: steps}
    out: dict[int, list[Step]] = {}
    for op in trace:
        steps = out.setdefault(op["cycle"], [])
        kind, task = op["op"], op["task"]
        if kind in FORWARD:
            steps.append(Step(op.get("action") or REPLAY, kind, task, op.get("node") or ""))
        elif kind in UNDO:
            undone = next((s for s in reversed(steps) if s.task == task and s.op == UNDO[kind]), None)
            if undone is not None:
                steps.remove(undone)
        elif kind == "bind":
            placed = next((s for s in reversed(steps) if s.task == task and s.op == "allocate"), None)
            if placed is None:  # an implementation that reports only its binds
                steps.append(Step(op.get("action") or REPLAY, "allocate", task, op.get("node") or "", True))
            else:
                placed.bound = True
    return out


def judge(scenario: Scenario, result: dict[str, Any], only: tuple[str, ...] = DECISION_RULES) -> list[Finding]:
    """The catalog's decision rules over the answer's history; [] when none is broken."""
    steps = history(result, scenario.cycles)
    if steps is None:
        return []
    engine = InvariantEngine(only=only, max_per_invariant=5)
    cache = SchedulerCache(scenario.objects, server_options=scenario.options, now=scenario.now,
                           device_flags=device_flags(scenario.conf))
    cache.set_pipeline_persistence(scenario.conf.persistent_pipelines)
    for cycle in range(scenario.cycles):
        if cycle:
            cache.advance()
        ssn = open_session(cache, scenario.conf, cycle, 0, engine.hooks())
        try:
            _replay_cycle(ssn, steps.get(cycle, []))
        finally:
            ssn.current_action = ""
            close_session(ssn)
        if engine.violations:
            break  # the state after a broken cycle is not worth judging further
    return [_finding(v) for v in engine.violations]


def _replay_cycle(ssn: Session, steps: list[Step]) -> None:
    tasks = {task.key: task for job in ssn.jobs.values() for task in job.tasks.values()}
    for action, group in _segments(steps):
        ssn.current_action = action
        for statement_steps in _statements(action, group, lambda s: getattr(tasks.get(s.task), "job", s.task)):
            stmt = Statement(ssn)
            for step in statement_steps:
                _apply(ssn, stmt, tasks.get(step.task), step)
            if any(s.bound or s.op == "evict" for s in statement_steps):
                stmt.commit()
        for hook in ssn.hooks.on_action_end:
            hook(ssn, action)


def _segments(steps: list[Step]) -> list[tuple[str, list[Step]]]:
    out: list[tuple[str, list[Step]]] = []
    for step in steps:
        if out and out[-1][0] == step.action:
            out[-1][1].append(step)
        else:
            out.append((step.action, [step]))
    return out


def _statements(action: str, steps: list[Step], job_of: Callable[[Step], str]) -> list[list[Step]]:
    """Upstream's transactions: per preemptor in preempt and reclaim (its evictions, then its pipeline),
    per job elsewhere (evictions alone)."""
    out: list[list[Step]] = []
    current: list[Step] = []
    for step in steps:
        if action in EVICTING:
            current.append(step)
            if step.op != "evict":
                out.append(current)
                current = []
        elif step.op == "evict":
            out.append([step])
        else:
            if current and job_of(current[-1]) != job_of(step):
                out.append(current)
                current = []
            current.append(step)
    if current:
        out.append(current)
    return out


def _apply(ssn: Session, stmt: Statement, task: Any, step: Step) -> None:
    """One operation on its statement; one the session refuses (validity is judged before) is skipped."""
    if task is None:
        return
    try:
        if step.op == "evict":
            if task.status in (TaskStatus.Running, TaskStatus.Bound):
                stmt.evict(task, "replayed")
        elif step.node in ssn.nodes and task.status in (TaskStatus.Pending, TaskStatus.Pipelined):
            ssn.pre_predicate_fn(task)  # as every placing action does first (predicates' state for the task)
            if step.op == "allocate":
                stmt.allocate(task, ssn.nodes[step.node])
            else:
                stmt.pipeline(task, step.node, False)
    except StatementError:
        pass


def _finding(violation: Any) -> Finding:
    where = f"{violation.action}: " if violation.action and violation.action != REPLAY else ""
    return Finding(f"check.{violation.invariant}", where + violation.message, violation.cycle,
                   list(violation.objects), {"expected": plain(violation.expected), "found": plain(violation.found),
                                             "checkpoint": violation.checkpoint,
                                             "operation": violation.operation})
