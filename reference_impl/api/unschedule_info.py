"""Fit errors and plugin statuses (pkg/scheduler/api/unschedule_info.go, k8s framework codes)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class StatusCode(enum.IntEnum):
    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass
class Status:
    code: StatusCode
    reason: str = ""
    plugin: str = ""


# A predicate failure with any of these statuses fails allocate's predicate.
ALLOCATE_FAILING = frozenset(
    {StatusCode.Unschedulable, StatusCode.UnschedulableAndUnresolvable, StatusCode.Error,
     StatusCode.Skip, StatusCode.Wait}
)
# Preempt accepts plain Unschedulable: evicting may resolve it.
PREEMPT_FAILING = frozenset(
    {StatusCode.UnschedulableAndUnresolvable, StatusCode.Error, StatusCode.Skip, StatusCode.Wait}
)

NODE_RESOURCE_FIT_FAILED = "node(s) resource fit failed"
NODE_POD_NUMBER_EXCEEDED = "node(s) pod number exceeded"


class FitError(Exception):
    """Why a task does not fit one node: the statuses the predicates returned."""

    def __init__(self, task_key: str, node_name: str, statuses: list[Status] | None = None,
                 reasons: list[str] | None = None) -> None:
        self.task_key = task_key
        self.node_name = node_name
        self.statuses: list[Status] = list(statuses or [])
        for reason in reasons or []:
            self.statuses.append(Status(StatusCode.Unschedulable, reason))
        super().__init__(self.message())

    def codes(self) -> set[StatusCode]:
        return {s.code for s in self.statuses}

    def reasons(self) -> list[str]:
        return [s.reason for s in self.statuses if s.reason]

    def message(self) -> str:
        return f"task {self.task_key} on node {self.node_name} fit failed: {', '.join(self.reasons())}"


@dataclass
class FitErrors:
    """Per node fit errors of one task, plus an error that applies to every node."""

    nodes: dict[str, FitError] = field(default_factory=dict)
    err: str = ""

    def set_node_error(self, node_name: str, error: Exception) -> None:
        if isinstance(error, FitError):
            self.nodes[node_name] = error
        else:
            self.nodes[node_name] = FitError("", node_name, [Status(StatusCode.Error, str(error))])

    def set_error(self, message: str) -> None:
        self.err = message

    def error(self) -> str:
        """A one-line summary: '0/N nodes are unavailable: 2 reason, 1 other.'"""
        if self.err and not self.nodes:
            return self.err
        counts: dict[str, int] = {}
        for fit in self.nodes.values():
            for reason in fit.reasons():
                counts[reason] = counts.get(reason, 0) + 1
        parts = [f"{n} {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        summary = f"0/{len(self.nodes)} nodes are unavailable: {', '.join(parts)}."
        return f"{self.err}; {summary}" if self.err else summary


class ScoringError(Exception):
    """A scoring plugin failed; upstream's PrioritizeNodes then returns no scores at all."""
