"""What an invariant sees: the session, where we are, and what the engine remembered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from schedcheck.invariants.ledger import operation_verdicts, verdicts_over
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.types import TaskStatus, allocated_status

if TYPE_CHECKING:
    from schedcheck.reference.api.job_info import JobInfo
    from schedcheck.reference.api.node_info import NodeInfo
    from schedcheck.reference.framework.session import Operation, Session
    from schedcheck.reference.framework.statement import StatementOp


@dataclass
class StatementSnapshot:
    """The session as a statement found it: ledgers, task placements and plugin accounting."""

    nodes: dict[str, tuple[dict[str, float], ...]]  # name -> (idle, used, releasing, pipelined)
    node_tasks: dict[str, dict[str, Any]]  # name -> pod key -> status
    tasks: dict[str, tuple[Any, str]]  # task uid -> (status, node name)
    plugins: dict[str, Any]  # plugin name -> its state digest
    events: dict[str, tuple[int, int]]  # task uid -> (allocate events, deallocate events)


@dataclass
class CheckContext:
    ssn: Session
    checkpoint: str
    cycle: int
    action: str
    operation: Operation | None = None
    statement_kind: str = ""  # commit | discard
    # (empty tuples by default: a context is made at every operation, and only a statement's has these)
    statement_ops: Sequence[StatementOp] = ()
    statement_records: Sequence[Operation] = ()  # the recorded forward ops
    before: StatementSnapshot | None = None
    session_state: dict[str, Any] = field(default_factory=dict)  # per-session memory of the engine
    _verdicts: Any = field(default=None, repr=False)
    _job_sums: dict[str, tuple[Resource, Resource]] | None = field(default=None, repr=False)

    def node_verdicts(self):
        """What the six node-ledger rules find here, worked out once per checkpoint (at an operation, on its node
        alone)."""
        if self._verdicts is None:
            operation = self.operation
            node = self.ssn.nodes.get(operation.node) if operation is not None else None
            if node is not None:
                self._verdicts = operation_verdicts(node)
            else:
                self._verdicts = verdicts_over(self.nodes())
        return self._verdicts

    def job_sums(self, job: JobInfo) -> tuple[Resource, Resource]:
        """The summed requests of the job's tasks in an allocated status, and of its Pipelined tasks, worked out
        once per checkpoint and shared by the rules that recompute a job's accounting (the job's own, drf's)."""
        sums = self._job_sums
        if sums is None:
            sums = self._job_sums = {}
        found = sums.get(job.uid)
        if found is None:
            # plain floats in task order (the same sums Resource.add would make), Resources built once
            totals = ([0.0, 0.0, None], [0.0, 0.0, None])  # allocated, pipelined: cpu, memory, scalars
            pipelined_status = TaskStatus.Pipelined
            for task in job.tasks.values():
                status = task.status
                if allocated_status(status):
                    total = totals[0]
                elif status == pipelined_status:
                    total = totals[1]
                else:
                    continue
                request = task.resreq
                total[0] += request.milli_cpu
                total[1] += request.memory
                if request.scalars:
                    scalars = total[2]
                    if scalars is None:
                        scalars = total[2] = {}
                    for name, value in request.scalars.items():
                        scalars[name] = scalars.get(name, 0.0) + value
            found = sums[job.uid] = (Resource(*totals[0]), Resource(*totals[1]))
        return found

    def nodes(self) -> list[NodeInfo]:
        """The nodes to check here: the operation's node at an operation, every node otherwise."""
        if self.operation is not None:
            node = self.ssn.nodes.get(self.operation.node)
            return [node] if node is not None else []
        return list(self.ssn.nodes.values())

    def plugin_enabled(self, name: str, flag: str = "") -> bool:
        """The plugin is in a tier (and, with `flag`, that enable flag of it is on)."""
        return any(option.name == name and (not flag or option.enabled(flag))
                   for tier in self.ssn.tiers for option in tier.plugins)
