"""Task statuses, PodGroup phases and queue states (pkg/scheduler/api/types.go)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class TaskStatus(enum.IntFlag):
    Pending = 1
    Allocated = 2
    Pipelined = 4
    Binding = 8
    Bound = 16
    Running = 32
    Releasing = 64
    Succeeded = 128
    Failed = 256
    Unknown = 512

    def __str__(self) -> str:
        return self.name or str(int(self))


ALL_STATUSES: tuple[TaskStatus, ...] = tuple(TaskStatus)

# A task has one status at a time; sets of them are looked up (IntFlag's `&` builds a new member per call).
_ALLOCATED = frozenset({TaskStatus.Allocated, TaskStatus.Binding, TaskStatus.Bound, TaskStatus.Running})
_PREEMPTABLE = frozenset({TaskStatus.Bound, TaskStatus.Running})
_COMPLETED = frozenset({TaskStatus.Succeeded, TaskStatus.Failed})
_SCHEDULED = frozenset({TaskStatus.Running, TaskStatus.Bound, TaskStatus.Succeeded, TaskStatus.Failed})


def allocated_status(status: TaskStatus) -> bool:
    """Allocated, Binding, Bound, Running (not Pipelined, Releasing or Succeeded)."""
    return status in _ALLOCATED


def preemptable_status(status: TaskStatus) -> bool:
    return status in _PREEMPTABLE


def completed_status(status: TaskStatus) -> bool:
    return status in _COMPLETED


def scheduled_status(status: TaskStatus) -> bool:
    return status in _SCHEDULED


class PodGroupPhase(str, enum.Enum):
    Pending = "Pending"
    Inqueue = "Inqueue"
    Running = "Running"
    Unknown = "Unknown"
    Completed = "Completed"

    def __str__(self) -> str:
        return self.value


class QueueState(str, enum.Enum):
    Open = "Open"
    Closed = "Closed"
    Closing = "Closing"
    Unknown = "Unknown"


class NodePhase(str, enum.Enum):
    Ready = "Ready"
    NotReady = "NotReady"


class EvictionKind(enum.IntEnum):
    """Who is evicting: gang-aware actions or the legacy task-level ones."""

    Unknown = 0
    GangPreempt = 1
    GangReclaim = 2
    TaskPreempt = 3
    TaskReclaim = 4


@dataclass
class EvictionContext:
    """The initiator of an eviction, for UnifiedEvictable filtering (api/types.go)."""

    kind: EvictionKind
    job: Any = None  # JobInfo of the initiator
    task: Any = None  # TaskInfo, for task-level kinds only
    hyper_node: str = ""
