"""cdp: cooldown protection of freshly started pods (pkg/scheduler/plugins/cdp/cdp.go).

A pod opts in with `volcano.sh/cooldown-time: <Go duration>` ("600s", "10m"), looked up among its
labels first and only then among its annotations: a label that does not parse disables the protection
even when an annotation would parse. Zero and negative durations parse and are kept.

One filter serves as PreemptableFn and ReclaimableFn, always voting Permit: a candidate victim is kept
out when its pod opted in, its pod phase (the pod object's status.phase, not the task status) is
Running, and the first condition of type PodScheduled with status "True" has a lastTransitionTime
with `lastTransitionTime + cooldown` strictly after now. Every other candidate stays, in the order
given; an absent lastTransitionTime reads as Go's zero time, so it never protects. When no candidate
is left, the plugin's tier yields no victims and the next tier's filters decide alone (the tiered
intersection), so cdp protects only where a same-tier alternative exists or no later tier filters.

`now` is the session clock (ssn.now) where upstream calls time.Now. The reference's world writes no
PodScheduled condition on bind (the API server's binding does), so a pod bound by an earlier session
of a multi-cycle scenario has no cooldown start.
"""

from __future__ import annotations

from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, Session
from schedcheck.reference.k8s import Pod
from schedcheck.reference.plugins.sla import DurationError, parse_go_duration, seconds_to_ns
from schedcheck.reference.util.timestamps import parse_timestamp

PLUGIN_NAME = "cdp"
COOLDOWN_TIME_KEY = "volcano.sh/cooldown-time"


def cooldown_time(pod: Pod) -> int | None:
    """podCooldownTime: the pod's cooldown in nanoseconds, or None when it has none that parses."""
    text = pod.labels[COOLDOWN_TIME_KEY] if COOLDOWN_TIME_KEY in pod.labels else pod.annotations.get(COOLDOWN_TIME_KEY)
    if text is None:
        return None
    try:
        return parse_go_duration(text)
    except DurationError:
        return None


def cooling_down(pod: Pod, now_ns: int) -> bool:
    """The pod opted in, runs, and was scheduled less than its cooldown before now."""
    cooldown = cooldown_time(pod)
    if cooldown is None or pod.phase != "Running":
        return False
    for condition in pod.conditions:
        if condition.type == "PodScheduled" and condition.status == "True":
            return seconds_to_ns(parse_timestamp(condition.last_transition_time)) + cooldown > now_ns
    return False


def filter_victims(candidates: list[TaskInfo], now_ns: int) -> list[TaskInfo]:
    return [task for task in candidates if not cooling_down(task.pod, now_ns)]


class CdpPlugin(Plugin):
    name = PLUGIN_NAME

    def on_session_open(self, ssn: Session) -> None:
        def evictable(_evictor: TaskInfo, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
            return filter_victims(candidates, seconds_to_ns(ssn.now)), PERMIT

        ssn.add_fn("preemptable", self.name, evictable)
        ssn.add_fn("reclaimable", self.name, evictable)


register_plugin_builder(PLUGIN_NAME, CdpPlugin)
