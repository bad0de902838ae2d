"""Rules about the extender plugin's answers (pkg/scheduler/plugins/extender/extender.go)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from schedcheck.invariants.catalog.nodes import PLACING_ACTIONS
from schedcheck.invariants.registry import OPERATION, PLACING_OPS, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import ALLOCATE_FAILING, PREEMPT_FAILING

if TYPE_CHECKING:
    from schedcheck.invariants.context import CheckContext

# A refusal with one of these codes fails the node for allocate and for preempt alike; a plain
# Unschedulable (or an unknown code) does not: preempt may pipeline there after evicting, as upstream.
FAILING_EVERYWHERE = ALLOCATE_FAILING & PREEMPT_FAILING


@invariant("node.placement-extender-allowed", "no task is allocated or pipelined to a node the extender's last "
           "predicate answer for that task in the session refused with a code that fails every placing action "
           "(Error, UnschedulableAndUnresolvable, Wait, Skip)", "node",
           "extender.go (PredicateFn: the reply's status and code, Success read as Error; api.NewFitError on a "
           "non-ignorable call error); allocate.go / backfill.go / preempt.go / reclaim.go (PredicateFn before "
           "placing)", (OPERATION,), requires=("extender:enablePredicate",), operations=PLACING_OPS)
def node_placement_extender_allowed(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or op.op not in ("allocate", "pipeline") or op.action not in PLACING_ACTIONS:
        return
    if op.from_status == TaskStatus.Pipelined and ctx.ssn.conf.persistent_pipelines:
        return  # a kept reservation allocated in place: judged when it was pipelined
    plugin = ctx.ssn.plugins.get("extender")
    verdict = getattr(plugin, "verdicts", {}).get((op.task_uid, op.node))
    if verdict is None:
        return
    codes = {int(code) for code in verdict.codes()}
    if codes and codes <= {int(code) for code in FAILING_EVERYWHERE}:
        reasons = "; ".join(verdict.reasons())
        yield Violation("", f"{op.action} {op.op}d {op.task} to node {op.node}, which the extender refused for it "
                            f"this session: {reasons}", [f"task {op.task}", f"node {op.node}"],
                        "a node the extender accepted", reasons)
