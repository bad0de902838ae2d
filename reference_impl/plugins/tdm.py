"""tdm: time-division multiplexing of revocable nodes (pkg/scheduler/plugins/tdm/tdm.go; semantics §9.13).

A node is revocable when it carries the label `volcano.sh/revocable-zone: <zone>`. Zones and their
daily windows are plugin arguments: every key containing `tdm.revocable-zone.` names a zone (the
first occurrence of that text removed) whose value is "HH:MM-HH:MM". `tdm.evict.period` (Go
duration, default 1m) spaces out VictimTasks rounds.

Window of a zone, computed afresh for "today" at every check: start = today at the first time;
end = today at the second time, or TOMORROW at it when the first time is not before the second.
The zone is active iff start <= now <= end at whole-second resolution. So a window wrapping
midnight ("22:00-06:00") is active from 22:00 to midnight only: after midnight "today" has moved on
and now < start (an upstream quirk, kept). An unknown zone or a malformed window is inactive.

- Predicate: a revocable node whose zone is inactive, or any revocable node for a task without a
  revocable zone (pod annotation `volcano.sh/revocable-zone: "*"`, or `volcano.sh/preemptable:
  true`), is UnschedulableAndUnresolvable; other nodes pass.
- NodeOrder: 100 for a revocable node in an active zone when the task has a revocable zone, else 0.
- Preemptable: a preemptor that is preemptable or has a revocable zone votes Reject (no victims).
  Otherwise the victims are the preemptees that are preemptable, Running and on a non-revocable
  node, grouped by job and cut per job to the job's disruption budget (below).
- VictimTasks: at most once per evict period (the first round runs at once), for every inactive
  zone, the preemptable Running tasks on that zone's nodes, grouped by job, cut to the budget.
- JobOrder: non-preemptable jobs first. JobPipelined: Permit if IsPipelined, else Reject.
  JobStarving: a non-preemptable job with Pending tasks.

Disruption budget of a job (PodGroup annotation `volcano.sh/jdb-min-available`, else
`volcano.sh/jdb-max-unavailable`; an int or a percentage of the job's task count, rounded up): with
max-unavailable, `max − (tasks − succeeded − failed − running)` floored at 0; with min-available,
`running − min` when running >= min; otherwise (no budget, or running below min-available) 1.

Reference notes: upstream reads the time of day in the scheduler's local time zone; the reference
uses UTC on the session clock. The last VictimTasks round is kept per scheduler cache (a process
global upstream). A zone value or evict period that is not a string makes upstream panic; the
reference ignores it. A NodeOrder error (inactive zone) would make upstream drop the node's map
scores, but the predicate always filters such nodes first, so the reference scores them 0.
"""

from __future__ import annotations

import math
import re
import weakref
from datetime import UTC, datetime, timedelta
from typing import Any

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo, parse_go_int
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.reference.plugins.sla import SECOND, DurationError, parse_go_duration, seconds_to_ns

PLUGIN_NAME = "tdm"
REVOCABLE_ZONE_LABEL = "volcano.sh/revocable-zone"
REVOCABLE_ZONE_PREFIX = "tdm.revocable-zone."
EVICT_PERIOD_KEY = "tdm.evict.period"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
DEFAULT_EVICT_PERIOD = 60 * SECOND
DEFAULT_POD_EVICT_NUM = 1
MAX_NODE_SCORE = 100.0
NOT_ALLOWED_ON_REVOCABLE = "not allow to dispatch to revocable node"
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")  # Go layout "15:04": one or two hour digits, two minute digits

_LAST_EVICT: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def node_revocable_zone(node: NodeInfo) -> str:
    return node.node.labels.get(REVOCABLE_ZONE_LABEL, "") if node.node is not None else ""


def parse_zones(arguments: dict[str, Any]) -> dict[str, str]:
    return {key.replace(REVOCABLE_ZONE_PREFIX, "", 1): value for key, value in arguments.items()
            if REVOCABLE_ZONE_PREFIX in key and isinstance(value, str)}


def parse_evict_period(arguments: dict[str, Any]) -> int:
    value = arguments.get(EVICT_PERIOD_KEY)
    if isinstance(value, str):
        try:
            return parse_go_duration(value)
        except DurationError:
            pass
    return DEFAULT_EVICT_PERIOD


def _clock(text: str) -> tuple[int, int] | None:
    match = _CLOCK.match(text)
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        return None
    return int(match[1]), int(match[2])


def zone_window(raw: str, now: float) -> tuple[int, int] | str:
    """parseRevocableZone: (start, end) in epoch seconds for the day of `now` (UTC), or the error."""
    parts = raw.strip().split("-")
    if len(parts) != 2:
        return f"revocable zone {raw} format error"
    first, second = _clock(parts[0]), _clock(parts[1])
    if first is None or second is None:
        return f"parsing time {raw!r}: cannot parse as \"15:04\""
    today = datetime.fromtimestamp(math.floor(now), tz=UTC).replace(hour=0, minute=0, second=0)
    start = today + timedelta(hours=first[0], minutes=first[1])
    end_day = today + timedelta(days=1) if first >= second else today
    end = end_day + timedelta(hours=second[0], minutes=second[1])
    return int(start.timestamp()), int(end.timestamp())


def zone_unavailable(zones: dict[str, str], zone: str, now: float) -> str | None:
    """availableRevocableZone: None when the zone is active, else why not."""
    raw = zones.get(zone)
    if raw is None:
        return f"revocable zone {zone} not support"
    window = zone_window(raw, now)
    if isinstance(window, str):
        return window
    if not window[0] <= math.floor(now) <= window[1]:
        return f"current time beyond revocable zone {zone}:{raw}"
    return None


def parse_int_or_percent(text: str, total: int) -> int:
    """parseIntStr: an integer, or "N%" of total rounded up; anything else is 0."""
    value = parse_go_int(text)
    if value is not None:
        return value
    if text.endswith("%"):
        percent = parse_go_int(text[:-1])
        if percent is not None:
            return math.ceil(percent * total / 100)
    return 0


def max_pod_evict_num(job: JobInfo) -> int:
    """getMaxPodEvictNum from the job's disruption budget."""
    annotations = job.pod_group.annotations if job.pod_group is not None else {}
    running = len(job.task_status_index.get(TaskStatus.Running, {}))
    total = len(job.tasks)
    if JDB_MIN_AVAILABLE not in annotations and JDB_MAX_UNAVAILABLE in annotations:
        max_unavailable = parse_int_or_percent(annotations[JDB_MAX_UNAVAILABLE], total)
        final = len(job.task_status_index.get(TaskStatus.Succeeded, {})) + len(
            job.task_status_index.get(TaskStatus.Failed, {}))
        unavailable = total - final - running
        return 0 if unavailable >= max_unavailable else max_unavailable - unavailable
    if JDB_MIN_AVAILABLE in annotations:
        min_available = parse_int_or_percent(annotations[JDB_MIN_AVAILABLE], total)
        if running >= min_available:
            return running - min_available
    return DEFAULT_POD_EVICT_NUM


def max_victims(job: JobInfo, victims: list[TaskInfo]) -> list[TaskInfo]:
    return victims[:min(max_pod_evict_num(job), len(victims))]


def _by_job(tasks: list[TaskInfo]) -> dict[str, list[TaskInfo]]:
    grouped: dict[str, list[TaskInfo]] = {}
    for task in tasks:
        grouped.setdefault(task.job, []).append(task)
    return grouped


class TdmPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.zones = parse_zones(arguments)
        self.evict_period = parse_evict_period(arguments)

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        ssn.add_fn("predicate", self.name, self.predicate)
        ssn.add_fn("node_order", self.name, self.node_order)
        ssn.add_fn("preemptable", self.name, self.preemptable)
        ssn.add_fn("victim_tasks", self.name, self.victim_tasks)
        ssn.add_fn("job_order", self.name, job_order)
        ssn.add_fn("job_pipelined", self.name, lambda job: PERMIT if job.is_pipelined() else REJECT)
        ssn.add_fn("job_starving", self.name, job_starving)

    def active(self, zone: str) -> bool:
        return zone_unavailable(self.zones, zone, self.ssn.now) is None

    def predicate(self, task: TaskInfo, node: NodeInfo) -> FitError | None:
        zone = node_revocable_zone(node)
        if not zone:
            return None
        reason = zone_unavailable(self.zones, zone, self.ssn.now)
        if reason is not None:
            return FitError(task.key, node.name, [Status(StatusCode.UnschedulableAndUnresolvable, reason, PLUGIN_NAME)])
        if not task.revocable_zone:
            return FitError(task.key, node.name,
                            [Status(StatusCode.UnschedulableAndUnresolvable, NOT_ALLOWED_ON_REVOCABLE, PLUGIN_NAME)])
        return None

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        zone = node_revocable_zone(node)
        if not zone or not self.active(zone) or not task.revocable_zone:
            return 0.0
        return MAX_NODE_SCORE

    def preemptable(self, preemptor: TaskInfo, preemptees: list[TaskInfo]) -> tuple[list[TaskInfo] | None, int]:
        if preemptor.preemptable or preemptor.revocable_zone:
            return None, REJECT
        candidates = []
        for task in preemptees:
            if not task.preemptable or task.status != TaskStatus.Running:
                continue
            node = self.ssn.nodes.get(task.node_name)
            if node is not None and not node_revocable_zone(node):
                candidates.append(task)
        return self._budgeted(candidates), PERMIT

    def _budgeted(self, tasks: list[TaskInfo]) -> list[TaskInfo]:
        victims = []
        for job_uid, job_tasks in _by_job(tasks).items():
            job = self.ssn.jobs.get(job_uid)
            if job is not None:
                victims.extend(max_victims(job, job_tasks))
        return victims

    def victim_tasks(self, tasks: list[TaskInfo]) -> list[TaskInfo]:
        now_ns = seconds_to_ns(self.ssn.now)
        last = _LAST_EVICT.get(self.ssn.cache)
        if last is not None and last + self.evict_period > now_ns:
            return []
        victims = []
        for zone in self.zones:
            if not self.active(zone):
                victims.extend(self._budgeted(self._zone_tasks(zone)))
        _LAST_EVICT[self.ssn.cache] = now_ns
        return victims

    def _zone_tasks(self, zone: str) -> list[TaskInfo]:
        """Preemptable Running tasks on the nodes of a zone (revocableNodePreemptableTask)."""
        return [task for node in self.ssn.nodes.values() if node_revocable_zone(node) == zone
                for task in node.tasks.values() if task.preemptable and task.status == TaskStatus.Running]


def job_order(left: JobInfo, right: JobInfo) -> int:
    if left.preemptable == right.preemptable:
        return 0
    return 1 if left.preemptable else -1


def job_starving(job: JobInfo) -> bool:
    return not job.preemptable and bool(job.task_status_index.get(TaskStatus.Pending))


register_plugin_builder(PLUGIN_NAME, TdmPlugin)
