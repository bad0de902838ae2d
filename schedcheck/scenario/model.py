"""A loaded scenario (../shared/spec/scenario-format.md, version 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference.framework.conf import SchedulerConf
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.util.scheduler_helper import ServerOptions


@dataclass
class Expectations:
    """The optional `expect` block. None means "not asserted"."""

    binds: dict[str, str] | None = None  # "ns/pod" -> node
    binds_include: dict[str, str] | None = None  # these binds at least (upstream's MinimalBindCheck)
    evicted: list[str] | None = None  # multiset of "ns/pod"
    pipelined: dict[str, list[str]] | None = None  # "ns/podgroup" -> allowed nodes
    pod_group_phases: dict[str, str] | None = None  # "ns/podgroup" -> phase
    task_status_counts: dict[str, dict[str, int]] | None = None  # "ns/podgroup" -> status -> n
    bind_count: int | None = None
    evict_count: int | None = None

    def is_empty(self) -> bool:
        return all(getattr(self, name) is None for name in self.__dataclass_fields__)


@dataclass
class Scenario:
    name: str
    source: str  # the file it came from ("<stdin>", "<generated>", ...)
    conf: SchedulerConf
    objects: ClusterObjects
    cycles: int = 1
    now: str | None = None  # the first session's clock (RFC 3339); default: the latest timestamp in the objects
    expect: Expectations = field(default_factory=Expectations)
    warnings: list[str] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)  # the document as read, for round trips
    annotations: dict[str, str] = field(default_factory=dict)  # the wrapper's metadata.annotations
    options: ServerOptions = field(default_factory=ServerOptions)  # schedulerOptions: the scheduler's flags
    extender_server: Any = None  # extenderServer: the process serving the extender (scenario/extender.py)
