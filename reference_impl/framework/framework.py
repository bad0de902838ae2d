"""OpenSession / CloseSession (pkg/scheduler/framework/framework.go, session.go, job_updater.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.types import TaskStatus, completed_status
from schedcheck.reference.features import SCHEDULING_GATES_QUEUE_ADMISSION
from schedcheck.reference.framework.conf import SchedulerConf
from schedcheck.reference.framework.plugin import get_plugin_builder
from schedcheck.reference.framework.session import Session, SessionObserverHooks
from schedcheck.reference.framework.topology import open_topology
from schedcheck.reference.gate.schedulinggate import SchGateManager
from schedcheck.reference.k8s import PodGroupCondition
from schedcheck.reference.framework.queue_status import update_queue_status

if TYPE_CHECKING:
    from schedcheck.reference.cache.cache import SchedulerCache

UNSCHEDULABLE_CONDITION = "Unschedulable"
SCHEDULED_CONDITION = "Scheduled"


def open_session(
    cache: SchedulerCache,
    conf: SchedulerConf,
    cycle: int,
    seed: int,
    hooks: SessionObserverHooks | None = None,
) -> Session:
    """Snapshot the cache, then build every configured plugin and let it register."""
    ssn = Session(cache, conf, cycle, seed)
    if cache.server_options.feature_enabled(SCHEDULING_GATES_QUEUE_ADMISSION):
        ssn.sch_gate_manager = SchGateManager(cache)  # the scheduler's, handed to every session
    if hooks is not None:
        ssn.hooks = hooks
    snapshot = cache.snapshot()
    ssn.jobs = snapshot.jobs
    ssn.nodes = snapshot.nodes
    ssn.queues = snapshot.queues
    ssn.resource_quotas = snapshot.resource_quotas
    ssn.now = snapshot.now
    ssn.nodes_in_shard = snapshot.nodes_in_shard
    ssn.node_list = [snapshot.nodes[name] for name in snapshot.node_list if name in snapshot.nodes]
    open_topology(ssn, cache.hyper_nodes_info)
    for job in ssn.jobs.values():
        if job.pod_group is not None:
            ssn.pod_group_old_phase[job.uid] = job.pod_group.phase
    for node in ssn.node_list:
        ssn.total_resource.add(node.allocatable)
    for tier in conf.tiers:
        for option in tier.plugins:
            builder = get_plugin_builder(option.name)
            if builder is None:
                continue  # upstream logs an unknown plugin and skips it
            plugin = builder(option.arguments)
            ssn.plugins[option.name] = plugin
            plugin.on_session_open(ssn)
    _init_cycle_states(ssn)
    if conf.persistent_pipelines:
        _recharge_kept_pipelines(ssn)
    for hook in ssn.hooks.on_session_open:
        hook(ssn)
    return ssn


def _init_cycle_states(ssn: Session) -> None:
    """A fresh cycle state for every pending, non-gated task of every valid job (InitCycleState)."""
    for job in ssn.jobs.values():
        if ssn.job_valid(job) is not None:
            continue
        for task in job.tasks_with_status(TaskStatus.Pending):
            if not task.sch_gated:
                ssn.cycle_states[task.uid] = {}


def _recharge_kept_pipelines(ssn: Session) -> None:
    """Persistent mode: the plugins charge a kept pipelined reservation as they charge one made in the
    session (its allocate event), so queue shares see it. The PR leaves them uncharged (its plugins
    open on AllocatedStatus only); the seed asks for equivalent accounting, which this gives."""
    for job in ssn.jobs.values():
        for task in job.tasks_with_status(TaskStatus.Pipelined):
            ssn.fire_allocate(task)


def close_session(ssn: Session) -> None:
    """Plugins close, PodGroup status is recomputed and written back, the cache takes over."""
    for hook in ssn.hooks.on_session_close:
        hook(ssn)
    # Upstream iterates a map here (random order); only gang writes anything, so order is moot.
    for plugin in ssn.plugins.values():
        plugin.on_session_close(ssn)
    for job in ssn.jobs.values():
        if job.pod_group is None:
            continue
        update_job_status(ssn, job)
    update_queue_status(ssn)
    ssn.cache.on_session_close(ssn)
    for hook in ssn.hooks.on_session_closed:
        hook(ssn)


def update_pod_group_condition(job: JobInfo, condition: PodGroupCondition) -> None:
    assert job.pod_group is not None
    conditions = job.pod_group.conditions
    for index, existing in enumerate(conditions):
        if existing.type == condition.type:
            conditions[index] = condition
            return
    conditions.append(condition)


def pod_group_phase(job: JobInfo, unschedulable: bool) -> str:
    """getPodGroupPhase (semantics §5.2)."""
    assert job.pod_group is not None
    if job.task_status_index.get(TaskStatus.Running) and unschedulable:
        return "Unknown"
    scheduled = job.scheduled_task_num() + job.releasing_scheduled_task_num()
    completed = sum(len(b) for s, b in job.task_status_index.items() if completed_status(s))
    if scheduled >= job.pod_group.min_member:
        return "Completed" if scheduled == completed else "Running"
    if job.pod_group.phase != "Inqueue":
        return "Pending"
    return job.pod_group.phase


def update_job_status(ssn: Session, job: JobInfo) -> None:
    pod_group = job.pod_group
    assert pod_group is not None
    unschedulable = any(
        c.type == UNSCHEDULABLE_CONDITION and c.status == "True" and c.transition_id == ssn.uid
        for c in pod_group.conditions
    )
    pod_group.phase = pod_group_phase(job, unschedulable)
    ssn.cache.update_job_status(job)

