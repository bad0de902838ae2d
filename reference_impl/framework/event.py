"""Event handlers fired by statement operations (pkg/scheduler/framework/event.go)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schedcheck.reference.api.task_info import TaskInfo


@dataclass
class Event:
    task: TaskInfo
    err: Exception | None = None


@dataclass
class EventHandler:
    allocate_func: Callable[[Event], None] | None = None
    deallocate_func: Callable[[Event], None] | None = None
