"""QueueInfo (pkg/scheduler/api/queue_info.go; semantics §5.1)."""

from __future__ import annotations

from schedcheck.reference.k8s import Queue
from schedcheck.reference.util.timestamps import parse_timestamp


class QueueInfo:
    __slots__ = ("uid", "name", "weight", "queue", "creation_timestamp")

    def __init__(self, queue: Queue) -> None:
        self.uid = queue.name
        self.name = queue.name
        self.weight = queue.weight if queue.weight > 0 else 1
        self.queue = queue
        self.creation_timestamp = parse_timestamp(queue.creation_timestamp)

    def reclaimable(self) -> bool:
        """An unset spec.reclaimable counts as true."""
        return True if self.queue.reclaimable is None else self.queue.reclaimable

    @property
    def priority(self) -> int:
        return self.queue.priority

    @property
    def state(self) -> str:
        return self.queue.state

    def clone(self) -> QueueInfo:
        return QueueInfo(self.queue)

    def __repr__(self) -> str:
        return f"Queue({self.name} weight={self.weight})"
