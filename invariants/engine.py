"""The invariant engine: observes a running scheduler and checks the catalog at every checkpoint.

It attaches through the session's observer hooks (and one read-only event
handler that counts allocate/deallocate events), so it never changes what the
scheduler decides. Which invariants run where comes from each invariant's own
declaration. The engine measures its own cost per invariant.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from schedcheck.invariants.context import CheckContext, StatementSnapshot
from schedcheck.invariants.known import known_finding_for
from schedcheck.invariants.snapshot import state_excerpt, take_snapshot
from schedcheck.invariants.catalog import catalog
from schedcheck.invariants.registry import (
    ACTION, CHECKPOINTS, CLOSE, OPERATION, QUALITY, STATEMENT, Invariant, open_collectors,
)
from schedcheck.invariants.violation import Violation
from schedcheck.reference.framework.event import EventHandler
from schedcheck.reference.framework.session import Operation, Session, SessionObserverHooks

FORWARD_OPS = ("allocate", "pipeline", "evict")
DEFAULT_SNAPSHOT_LIMIT = 5000  # nodes + tasks above which statement snapshots are skipped (cost)


class UnknownInvariant(ValueError):
    pass


class InvariantEngine:
    def __init__(
        self,
        only: Iterable[str] | None = None,
        max_per_invariant: int = 20,
        stop_at_first: bool = False,
        snapshot_limit: int = DEFAULT_SNAPSHOT_LIMIT,
        fail_on_known: Iterable[str] = (),
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """`clock` times each rule (`cost`): wall time by default, time.process_time for a benchmark on a
        shared machine."""
        self.clock = clock
        invariants = catalog()
        if only is not None:
            wanted = set(only)
            known = {inv.id for inv in invariants}
            unknown = sorted(wanted - known)
            if unknown:
                raise UnknownInvariant(f"unknown invariant id(s): {', '.join(unknown)}")
            invariants = [inv for inv in invariants if inv.id in wanted]
        self.invariants = invariants
        # which rule objects this engine runs (the cache below holds them, so their ids stay theirs)
        self._rules_key = tuple(map(id, invariants))
        self.by_checkpoint: dict[str, list[Invariant]] = {cp: [] for cp in CHECKPOINTS}
        for inv in invariants:
            for checkpoint in inv.at:
                self.by_checkpoint[checkpoint].append(inv)
        self.max_per_invariant = max_per_invariant
        self.stop_at_first = stop_at_first
        self.snapshot_limit = snapshot_limit
        self.fail_on_known = frozenset(fail_on_known)  # known finding ids (or "all") that still fail the run
        self.violations: list[Violation] = []  # safety rules broken: the run fails
        self.findings: list[Violation] = []  # quality rules broken (upstream may do the same): reported only
        self.suppressed: Counter[str] = Counter()
        # rule id -> [seconds, checks]: plain lists in a plain dict, which the interpreter indexes faster than
        # a Counter or a defaultdict in the dispatch loop (read them as `cost` and `checks`)
        self._tally: dict[str, list] = {inv.id: [0.0, 0] for inv in invariants}
        self._tallied: set[_Active] = set()
        self.skipped: Counter[str] = Counter()  # state-only rules not rerun on an unchanged state (registry)
        self._seen: Counter[str] = Counter()
        self.run_memory: dict[str, Any] = {}  # kept across sessions, for cross-session rules

    # -- wiring ---------------------------------------------------------------------------

    def hooks(self) -> SessionObserverHooks:
        """Fresh hooks for one session (pass `engine.hooks` as the scheduler's hooks_factory)."""
        state = _SessionState()
        hooks = SessionObserverHooks()
        hooks.on_session_open.append(lambda ssn: self._on_open(ssn, state))
        hooks.on_operation.append(lambda ssn, op: self._on_operation(ssn, op, state))
        hooks.on_statement_begin.append(lambda ssn, stmt: self._on_statement_begin(ssn, stmt, state))
        hooks.on_statement_end.append(lambda ssn, kind, ops: self._on_statement_end(ssn, kind, ops, state))
        hooks.on_action_end.append(lambda ssn, action: self._on_action_end(ssn, action, state))
        hooks.on_session_closed.append(lambda ssn: self._on_closed(ssn, state))
        return hooks

    @property
    def failed(self) -> bool:
        return bool(self.violations)

    @property
    def cost(self) -> defaultdict[str, float]:
        """Seconds each rule took, summed over its checks."""
        return defaultdict(float, {rule: seconds for rule, (seconds, runs) in self._tally.items() if runs})

    @property
    def checks(self) -> Counter[str]:
        """How many times each rule was checked."""
        return Counter({rule: runs for rule, (_, runs) in self._tally.items() if runs})

    @property
    def checks_run(self) -> int:
        return sum(runs for _, runs in self._tally.values())

    # -- hooks ------------------------------------------------------------------------------

    def _on_open(self, ssn: Session, state: _SessionState) -> None:
        state.active = self._active_for(ssn).narrowed(ssn)
        if state.active not in self._tallied:  # rules given to the engine after it was made (tests swap some)
            self._tallied.add(state.active)
            for rule_id in state.active.ids:
                self._tally.setdefault(rule_id, [0.0, 0])
        state.small = len(ssn.nodes) + sum(len(j.tasks) for j in ssn.jobs.values()) <= self.snapshot_limit
        state.memory["cache_at_open"] = _cache_tasks(ssn)
        state.memory["binds_at_open"] = len(ssn.cache.log.binds)
        state.memory["evictions_at_open"] = len(ssn.cache.log.evictions)
        state.memory["run"] = self.run_memory
        for key, collect in state.active.collectors:
            state.memory[key] = collect(ssn)
        events = state.events

        def count(index: int):
            def handler(event) -> None:
                pair = events.setdefault(event.task.uid, [0, 0])
                pair[index] += 1
            return handler

        ssn.add_event_handler(EventHandler(count(0), count(1)))

    def _on_operation(self, ssn: Session, op: Operation, state: _SessionState) -> None:
        if op.op in FORWARD_OPS:
            state.forward[op.task_uid] = op
        self._run(OPERATION, state, CheckContext(ssn, OPERATION, ssn.cycle, ssn.current_action, operation=op,
                                                 session_state=state.memory), operation=op.op)

    def _on_statement_begin(self, ssn: Session, stmt: Any, state: _SessionState) -> None:
        state.open.add(stmt.id)
        if state.small and self.by_checkpoint[STATEMENT]:
            state.snapshots[stmt.id] = take_snapshot(ssn, state.events)

    def _on_statement_end(self, ssn: Session, kind: str, ops: list, state: _SessionState) -> None:
        if ops:  # an empty statement changed nothing
            state.statement_ends += 1
        records = [state.forward[op.task.uid] for op in ops if op.task.uid in state.forward]
        before = None
        if ops:
            ids = {record.statement for record in records}
            before = next((state.snapshots.pop(i) for i in sorted(ids) if i in state.snapshots), None)
            state.open -= ids
            if kind == "discard" and ids:
                # Discarded while a later statement is still open (allocate's dry runs discard in the
                # order they were made): this statement's begin state never comes back, and a later
                # one's begin state included what this one undid; neither can be compared whole.
                later = {i for i in state.open if i > min(ids)}
                if later:
                    before = None
                    for i in later:
                        state.snapshots.pop(i, None)
        if not ops:
            # An empty statement changed nothing, so there is nothing of its own to judge: every statement rule
            # but one judges the statement's operations, and that one (capacity's accounting after a discard)
            # judges a state the action's end judges again. Four in five statements of generated runs are empty.
            return
        ctx = CheckContext(ssn, STATEMENT, ssn.cycle, ssn.current_action, statement_kind=kind,
                           statement_ops=ops, statement_records=records, before=before,
                           session_state=state.memory)
        self._run(STATEMENT, state, ctx)

    def _on_action_end(self, ssn: Session, action: str, state: _SessionState) -> None:
        # What the state-only rules would judge: unchanged without an operation (each is recorded), the end of a
        # statement that had some, or a PodGroup phase set outside them (enqueue, allocate without enqueue).
        stamp = (len(ssn.operations), state.statement_ends,
                 tuple(job.pod_group.phase if job.pod_group is not None else None for job in ssn.jobs.values()))
        self._run(ACTION, state, CheckContext(ssn, ACTION, ssn.cycle, action, session_state=state.memory), stamp)

    def _on_closed(self, ssn: Session, state: _SessionState) -> None:
        # A session cut short by an upstream assertion (upstream panics there) is judged up to the assertion:
        # its open statements were neither committed nor discarded, so the close rules have nothing sound to
        # judge; the runner reports the assertion itself (upstream.assert).
        if not getattr(ssn, "aborted", False):
            self._run(CLOSE, state, CheckContext(ssn, CLOSE, ssn.cycle, "", session_state=state.memory))
        state.snapshots.clear()

    def _active_for(self, ssn: Session) -> _Active:
        """The rules that apply under this session's tiers (they depend on the plugins and their enable flags
        alone, so they are worked out once per set of tiers)."""
        tiers = ssn.tiers  # a scheduler's sessions share its conf's tiers, built once
        known = _ACTIVE_BY_TIERS.get(id(tiers))
        if known is not None and known[0] is tiers and known[1] == self._rules_key:
            return known[2]
        key = (self._rules_key, tuple(tuple((o.name, tuple(sorted(f for f, on in o.flags.items() if on)))
                                           for o in tier.plugins) for tier in ssn.tiers))
        active = _ACTIVE.get(key)
        if active is None:
            active = _Active({cp: [inv for inv in invs if _applies(inv, ssn)]
                              for cp, invs in self.by_checkpoint.items()})
            if len(_ACTIVE) > 1024:
                _ACTIVE.clear()
            _ACTIVE[key] = active
        if len(_ACTIVE_BY_TIERS) > 1024:
            _ACTIVE_BY_TIERS.clear()
        _ACTIVE_BY_TIERS[id(tiers)] = (tiers, self._rules_key, active)  # holding the tiers keeps their id theirs
        return active

    # -- running checks ----------------------------------------------------------------------

    def _run(self, checkpoint: str, state: _SessionState, ctx: CheckContext, stamp: Any = None,
             operation: str = "") -> None:
        if self.stop_at_first and self.violations:
            return
        clock, tally, judged = self.clock, self._tally, state.judged
        ssn = ctx.ssn
        rules = state.active.at_operation(operation) if operation else state.active.rules[checkpoint]
        ssn.observing = True  # a plugin that calls out (the extender) answers checks from what it already said
        try:
            for rule_id, check, state_only, inv in rules:
                if state_only and stamp is not None:
                    if judged.get(rule_id) == stamp:
                        self.skipped[rule_id] += 1
                        continue
                    judged[rule_id] = stamp
                started = clock()
                found = list(check(ctx))
                cell = tally[rule_id]
                cell[0] += clock() - started
                cell[1] += 1
                if found:
                    for violation in found:
                        self._record(inv, ctx, violation)
        finally:
            ssn.observing = False

    def _record(self, inv: Invariant, ctx: CheckContext, violation: Violation) -> None:
        violation.invariant = inv.id
        violation.cycle = ctx.cycle
        violation.action = ctx.action
        violation.checkpoint = ctx.checkpoint
        if ctx.operation is not None and not violation.operation:
            op = ctx.operation
            violation.operation = f"{op.op} {op.task} on {op.node or '-'}" + (
                f" (statement {op.statement})" if op.statement else "")
        elif ctx.statement_kind and not violation.operation:
            violation.operation = f"{ctx.statement_kind} of a statement with {len(ctx.statement_ops)} operation(s)"
        self._seen[inv.id] += 1
        if self._seen[inv.id] > self.max_per_invariant:
            self.suppressed[inv.id] += 1
            return
        violation.state = state_excerpt(ctx.ssn, violation.objects)
        if inv.severity == QUALITY:
            self.findings.append(violation)
            return
        known = known_finding_for(ctx, violation, inv.id)
        if known is not None:
            violation.known = known.id
            if known.id not in self.fail_on_known and "all" not in self.fail_on_known:
                self.findings.append(violation)
                return
        self.violations.append(violation)


# (the engine's rule objects, tiers) -> the rules that apply at each checkpoint; shared by the engines of a process
_ACTIVE: dict[tuple[Any, ...], dict[str, list[Invariant]]] = {}
# id(tiers) -> (those tiers, the engine's rule objects, the rules that apply): the same, without working out
# the key above at every session of a scheduler
_ACTIVE_BY_TIERS: dict[int, tuple[Any, tuple[int, ...], dict[str, list[Invariant]]]] = {}


_Rule = tuple[str, Any, bool, Invariant]  # (id, check, state_only, the invariant): what the dispatch loop reads


class _Active:
    """The rules that apply under one set of tiers: per checkpoint, per kind of operation, and the open
    collectors they read."""

    def __init__(self, by_checkpoint: dict[str, list[Invariant]]) -> None:
        self.invariants = by_checkpoint
        self.rules: dict[str, list[_Rule]] = {cp: [(inv.id, inv.check, inv.state_only, inv) for inv in invs]
                                              for cp, invs in by_checkpoint.items()}
        self._at_operation: dict[str, list[_Rule]] = {}
        active_ids = {inv.id for invs in by_checkpoint.values() for inv in invs}
        self.ids = frozenset(active_ids)
        self.collectors = [(key, collect) for key, (collect, readers) in open_collectors().items()
                           if active_ids.intersection(readers)]
        # the rules' conditions on the session (applies_when), each asked once per session
        self.conditions = list(dict.fromkeys(inv.applies_when for invs in by_checkpoint.values() for inv in invs
                                             if inv.applies_when is not None))
        self._narrowed: dict[tuple[Any, ...], _Active] = {}

    def narrowed(self, ssn: Session) -> _Active:
        """These rules less those whose condition this session does not meet."""
        if not self.conditions:
            return self
        unmet = tuple(condition for condition in self.conditions if not condition(ssn))
        if not unmet:
            return self
        narrowed = self._narrowed.get(unmet)
        if narrowed is None:
            narrowed = self._narrowed[unmet] = _Active(
                {cp: [inv for inv in invs if inv.applies_when not in unmet] for cp, invs in self.invariants.items()})
        return narrowed

    def at_operation(self, operation: str) -> list[_Rule]:
        """The rules judged at this kind of operation."""
        rules = self._at_operation.get(operation)
        if rules is None:
            rules = self._at_operation[operation] = [
                rule for rule in self.rules[OPERATION]
                if rule[3].operations is None or operation in rule[3].operations]
        return rules


_EMPTY_ACTIVE = _Active({cp: [] for cp in CHECKPOINTS})


class _SessionState:
    def __init__(self) -> None:
        self.active: _Active = _EMPTY_ACTIVE
        self.small = True
        self.forward: dict[str, Operation] = {}  # task uid -> its latest forward operation
        self.snapshots: dict[int, StatementSnapshot] = {}
        self.open: set[int] = set()  # statements begun and neither committed nor discarded
        self.events: dict[str, list[int]] = {}
        self.statement_ends = 0
        self.judged: dict[str, Any] = {}  # state-only rule -> the state stamp it last judged at an action end
        self.memory: dict[str, Any] = {"events": self.events}


def _applies(inv: Invariant, ssn: Session) -> bool:
    return all(requirement_met(ssn, requirement) for requirement in inv.requires)


def requirement_met(ssn: Session, requirement: str) -> bool:
    """"plugin": the plugin is in a tier; "plugin:flag": and that enable flag of it is on."""
    name, _, flag = requirement.partition(":")
    return any(option.name == name and (not flag or option.enabled(flag))
               for tier in ssn.tiers for option in tier.plugins)


def _cache_tasks(ssn: Session) -> dict[str, tuple[Any, str]]:
    return {uid: (task.status, task.node_name)
            for job in ssn.cache.jobs.values() for uid, task in job.tasks.items()}
