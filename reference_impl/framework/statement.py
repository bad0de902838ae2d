"""Statement: a job's decisions as a transaction (pkg/scheduler/framework/statement.go; semantics §7).

Operations change the session immediately when recorded; Commit sends them to
the cache in forward order, Discard undoes them in reverse order. A Pipeline
is a no-op at commit: nothing of it outlives the session (in persistent mode the
cache keeps it at close, see cache.py).

Persistent mode (seed 004): allocating a task that is Pipelined takes it off its
pipelined node first (no second AddTask), and undoing that allocation puts it back
Pipelined on that node instead of Pending. The plugins already charge a pipelined
task (its pipeline fired the allocate event, or the session open re-charged a kept
one), so neither step fires an event: plugin accounting changes exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schedcheck.reference.api.node_info import NodeError, NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.cache.errors import CacheError

if TYPE_CHECKING:
    from schedcheck.reference.framework.session import Session

EVICT = "evict"
PIPELINE = "pipeline"
ALLOCATE = "allocate"


class StatementError(Exception):
    """An operation failed and was rolled back (job or node missing, AddTask or handler error)."""


@dataclass
class StatementOp:
    name: str
    task: TaskInfo
    reason: str = ""


class Statement:
    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.operations: list[StatementOp] = []
        self.id = ssn.new_statement_id()
        self._begun = False
        self._pipelined_origin: dict[str, tuple[str, bool]] = {}  # task uid -> (node, eviction occurred)

    def _begin(self) -> None:
        """Tell observers a statement is about to change the session (once per transaction)."""
        if not self._begun:
            self._begun = True
            for hook in self.ssn.hooks.on_statement_begin:
                hook(self.ssn, self)

    # -- recorded operations ------------------------------------------------------------

    def evict(self, reclaimee: TaskInfo, reason: str) -> None:
        self._begin()
        ssn = self.ssn
        from_status = reclaimee.status
        job = ssn.jobs.get(reclaimee.job)
        if job is not None:
            job.update_task_status(reclaimee, TaskStatus.Releasing)
        node = ssn.nodes.get(reclaimee.node_name)
        if node is not None:
            node.update_task(reclaimee)
        ssn.fire_deallocate(reclaimee)
        self.operations.append(StatementOp(EVICT, reclaimee, reason))
        ssn.record("evict", reclaimee, reclaimee.node_name, from_status, self.id)

    def pipeline(self, task: TaskInfo, hostname: str, eviction_occurred: bool) -> None:
        """Raises StatementError after rolling back if any step failed."""
        self._begin()
        from_status = self._stored_status(task)
        task.eviction_occurred = eviction_occurred
        self._place(task, hostname, TaskStatus.Pipelined, PIPELINE, self._un_pipeline, from_status)

    def allocate(self, task: TaskInfo, node_info: NodeInfo) -> None:
        """Raises StatementError after rolling back if any step failed."""
        self._begin()
        from_status = self._stored_status(task)
        if from_status == TaskStatus.Pipelined and self.ssn.conf.persistent_pipelines:
            self._lift_pipelined(task)
        task.pod.node_name = node_info.name  # upstream writes the shared pod's spec.nodeName
        self._place(task, node_info.name, TaskStatus.Allocated, ALLOCATE, self._unallocate, from_status,
                    fire=task.uid not in self._pipelined_origin)

    def _stored_status(self, task: TaskInfo) -> TaskStatus:
        """The status the job holds for the task: a replayed copy (RecoverOperations) carries the status it
        had when saved, but the job's own record is what the operation changes."""
        job = self.ssn.jobs.get(task.job)
        stored = job.tasks.get(task.uid) if job is not None else None
        return stored.status if stored is not None else task.status

    def _place(self, task: TaskInfo, hostname: str, status: TaskStatus, name: str,
               rollback: Callable[[TaskInfo], None], from_status: TaskStatus, fire: bool = True) -> None:
        """Job status, node accounting, allocate event; every failure is collected, then rolled back."""
        ssn = self.ssn
        errors: list[str] = []
        job = ssn.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, status)
        else:
            errors.append(f"job {task.job} not in session")
        task.node_name = hostname
        node = ssn.nodes.get(hostname)
        if node is not None:
            try:
                node.add_task(task)
            except NodeError as exc:
                errors.append(str(exc))
        else:
            errors.append(f"node {hostname} not in session")
        err = ssn.fire_allocate(task) if fire else None
        if err is not None:
            errors.append(str(err))
        if errors:
            ssn.rolling_back = True
            try:
                rollback(task)
            finally:
                ssn.rolling_back = False
            raise StatementError(f"{name} {task.key} to {hostname} rolled back: {'; '.join(errors)}")
        self.operations.append(StatementOp(name, task))
        ssn.record(name, task, hostname, from_status, self.id)

    def un_pipeline(self, task: TaskInfo) -> None:
        """Public UnPipeline: undoes the session effects; does not drop a recorded Pipeline."""
        self._un_pipeline(task)

    def _lift_pipelined(self, task: TaskInfo) -> None:
        """The allocate fast path: remember where the task was pipelined and release that reservation."""
        self._pipelined_origin[task.uid] = (task.node_name, task.eviction_occurred)
        node = self.ssn.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)

    # -- undo ---------------------------------------------------------------------------

    def _unevict(self, reclaimee: TaskInfo) -> None:
        ssn = self.ssn
        from_status = reclaimee.status
        job = ssn.jobs.get(reclaimee.job)
        if job is not None:
            job.update_task_status(reclaimee, TaskStatus.Running)  # always Running, even if it was Bound
        node = ssn.nodes.get(reclaimee.node_name)
        if node is not None:
            node.update_task(reclaimee)
        ssn.fire_allocate(reclaimee)
        ssn.record("unevict", reclaimee, reclaimee.node_name, from_status, self.id)

    def _un_pipeline(self, task: TaskInfo) -> None:
        ssn = self.ssn
        from_status = task.status
        job = ssn.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, TaskStatus.Pending)
        node = ssn.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)
        ssn.fire_deallocate(task)
        ssn.record("unpipeline", task, task.node_name, from_status, self.id)
        task.node_name = ""
        task.job_allocated_hyper_node = ""

    def _unallocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        from_status = task.status
        origin = self._pipelined_origin.pop(task.uid, None)
        job = ssn.jobs.get(task.job)
        if job is not None:
            job.update_task_status(task, TaskStatus.Pending if origin is None else TaskStatus.Pipelined)
        node = ssn.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)
        if origin is None:
            ssn.fire_deallocate(task)
        ssn.record("unallocate", task, task.node_name, from_status, self.id)
        task.node_name = ""  # upstream leaves pod.spec.nodeName as it is
        task.job_allocated_hyper_node = ""
        if origin is not None:  # persistent mode: back to its pipelined reservation
            task.node_name, task.eviction_occurred = origin
            target = ssn.nodes.get(origin[0])
            if target is not None and task.key not in target.tasks:
                target.add_task(task)

    # -- transaction end ----------------------------------------------------------------

    def discard(self) -> None:
        for op in reversed(self.operations):
            op.task.generate_last_tx_context()
            if op.name == EVICT:
                self._unevict(op.task)
            elif op.name == PIPELINE:
                self._un_pipeline(op.task)
            else:
                self._unallocate(op.task)
        ops, self.operations = self.operations, []
        self._begun = False
        for hook in self.ssn.hooks.on_statement_end:
            hook(self.ssn, "discard", ops)

    def commit(self) -> None:
        ssn = self.ssn
        for op in self.operations:
            op.task.clear_last_tx_context()
            if op.name == EVICT:
                try:
                    ssn.cache.evict(op.task, op.reason)
                except CacheError:  # the cache refused: undo in session, as upstream
                    self._unevict(op.task)
            elif op.name == ALLOCATE:
                try:
                    ssn.dispatch(op.task)
                except CacheError:
                    self._unallocate(op.task)
        ops, self.operations = self.operations, []
        self._begun = False
        self._pipelined_origin.clear()
        for hook in ssn.hooks.on_statement_end:
            hook(ssn, "commit", ops)

    def merge(self, other: Statement) -> None:
        """Move another statement's operations onto the end of this one."""
        self._begun = self._begun or other._begun
        self.operations.extend(other.operations)
        other.operations = []
        self._pipelined_origin.update(other._pipelined_origin)
        other._pipelined_origin = {}
        other._begun = False

    def has_evictions(self) -> bool:
        return any(op.name == EVICT for op in self.operations)


def save_operations(statements: list[Statement]) -> list[StatementOp]:
    """SaveOperations: the operations, each on a clone of its task as it is now."""
    saved = []
    for stmt in statements:
        for op in stmt.operations:
            task = op.task.clone()
            task.eviction_occurred = op.task.eviction_occurred
            saved.append(StatementOp(op.name, task, op.reason))
    return saved


def recover_operations(stmt: Statement, plan: list[StatementOp]) -> bool:
    """RecoverOperations: replay a saved plan; stops (keeping what was replayed) at a failure."""
    for op in plan:
        try:
            if op.name == EVICT:
                stmt.evict(op.task, op.reason)
            elif op.name == PIPELINE:
                stmt.pipeline(op.task, op.task.node_name, op.task.eviction_occurred)
            elif op.name == ALLOCATE:
                stmt.allocate(op.task, stmt.ssn.nodes[op.task.node_name])
        except StatementError:
            stmt.ssn.failed_recoveries.add(op.task.job)  # upstream logs it; what was replayed is kept
            return False
    return True

