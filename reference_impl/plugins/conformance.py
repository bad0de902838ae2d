"""conformance: never evict critical pods (pkg/scheduler/plugins/conformance/conformance.go; semantics §9.10)."""

from __future__ import annotations

from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, Session

CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})
SYSTEM_NAMESPACE = "kube-system"


def evictable(evictor: TaskInfo, evictees: list[TaskInfo]):
    victims = [
        t for t in evictees
        if t.pod.priority_class_name not in CRITICAL_CLASSES and t.namespace != SYSTEM_NAMESPACE
    ]
    return victims, PERMIT


class ConformancePlugin(Plugin):
    name = "conformance"

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_fn("preemptable", self.name, evictable)
        ssn.add_fn("reclaimable", self.name, evictable)
        ssn.add_fn("unified_evictable", self.name, evictable)  # same filter; the context is unused


register_plugin_builder(ConformancePlugin.name, ConformancePlugin)
