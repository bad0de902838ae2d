"""Known upstream findings: safety violations the faithful reference reproduces because upstream
Volcano really behaves that way (docs/findings.md).

A violation that matches a known finding is reported under the finding's name as a finding, not as
a failure, so a CI gate on a faithful scheduler stays green while the behaviour stays visible.
Each finding has its own switch: `fail_on_known={"F1"}` (CLI `--fail-on-known F1`, or `all`)
turns it back into a failure, for users who want upstream's bug to break their build.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schedcheck.invariants.context import CheckContext
    from schedcheck.invariants.violation import Violation


@dataclass(frozen=True)
class KnownFinding:
    id: str  # F<number in docs/findings.md>
    invariant: str
    title: str
    doc: str
    matches: Callable[[CheckContext, Violation], bool]


def _node_of(violation: Violation) -> str:
    for obj in violation.objects:
        if obj.startswith("node "):
            return obj[len("node "):]
    return ""


def _discarded_eviction_on_node(ctx: CheckContext, violation: Violation) -> bool:
    """F1: the over-full node had a victim evicted and put back (a discarded reclaim or preemption)
    this session, which leaves the victim out of the predicates plugin's pod view."""
    node = _node_of(violation)
    return any(op.op == "unevict" and op.node == node for op in ctx.ssn.operations)


def _reclaim_pipeline(ctx: CheckContext, violation: Violation) -> bool:
    """F2: reclaim and the gang-aware evictions filter nodes with the preempt-mode predicates (a NodePorts
    conflict is Unschedulable, so "preemption may help") and then evict only until the resources fit, never
    asking the predicates again (preempt does ask, after every eviction); topology-aware preemption's dry
    run asks SimulatePredicate, which runs InterPodAffinity only."""
    if ctx.action == "preempt":
        arguments = ctx.ssn.action_arguments("preempt")
        return str(arguments.get("enableTopologyAwarePreemption", "")).lower() == "true"
    return ctx.action in ("reclaim", "gangpreempt", "gangreclaim")


KNOWN_FINDINGS: tuple[KnownFinding, ...] = (
    KnownFinding("F1", "node.pod-limit",
                 "backfill over a node's pod limit after a discarded reclaim or preemption",
                 "docs/findings.md #1", _discarded_eviction_on_node),
    KnownFinding("F1", "node.predicates-pod-view",
                 "the predicates plugin loses a victim put back by a discarded reclaim or preemption",
                 "docs/findings.md #1", _discarded_eviction_on_node),
    KnownFinding("F1", "node.host-ports-free",
                 "backfill or allocate reuses the host port of a victim put back by a discarded reclaim or "
                 "preemption, which the predicates plugin no longer sees",
                 "docs/findings.md #1", _discarded_eviction_on_node),
    KnownFinding("F1", "node.pod-anti-affinity-respected",
                 "backfill or allocate places a pod next to a victim put back by a discarded reclaim or preemption, "
                 "which the predicates plugin (and so its InterPodAffinity filter) no longer sees",
                 "docs/findings.md #1", lambda ctx, violation: any(op.op == "unevict" for op in ctx.ssn.operations)),
    KnownFinding("F1", "node.topology-spread-respected",
                 "backfill or allocate counts a spread domain without a victim put back by a discarded reclaim or "
                 "preemption, which the predicates plugin (and so its PodTopologySpread filter) no longer sees",
                 "docs/findings.md #1", lambda ctx, violation: any(op.op == "unevict" for op in ctx.ssn.operations)),
    KnownFinding("F2", "node.host-ports-free",
                 "reclaim (or gangpreempt, gangreclaim, topology-aware preempt) pipelines a task onto a node where "
                 "a pod it did not evict holds the same host port",
                 "docs/findings.md #12", _reclaim_pipeline),
)


def known_finding_for(ctx: CheckContext, violation: Violation, invariant: str) -> KnownFinding | None:
    for finding in KNOWN_FINDINGS:
        if finding.invariant == invariant and finding.matches(ctx, violation):
            return finding
    return None


def known_ids() -> list[str]:
    return sorted({finding.id for finding in KNOWN_FINDINGS})
