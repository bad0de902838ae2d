"""overcommit: admit jobs against an inflated cluster (pkg/scheduler/plugins/overcommit/overcommit.go; semantics §9.9).

At session open:
- factor = argument `overcommit-factor` (a YAML float or int), default 1.2; a value below 1.0 is
  replaced by 1.2;
- idle = Σ node.Allocatable · factor − Σ node.Used (SubWithoutAssert: may go negative; `pods` is
  a dimension like any other);
- inqueue = Σ over Inqueue jobs with minResources of minResources (the full minimum, minus the
  requests of scheduling-gated pods), plus, for Running jobs with minResources whose allocated task
  count reaches minMember, the part of minResources not yet allocated (util.GetInqueueResource),
  again minus gated requests.

JobEnqueueable: no minResources -> Permit; else Permit iff inqueue + minResources <= idle on the
dimensions minResources requests, compared strictly and ignoring `pods`
(LessEqualWithDimensionAndResourcesName), else Reject. The check uses the job's full minResources;
only JobEnqueued deducts its gated pods. JobEnqueued adds the admitted job to inqueue.

Not modelled: the PodGroup event upstream records on a rejection.
"""

from __future__ import annotations

from typing import Any

from reference_impl.api.job_info import JobInfo
from reference_impl.api.resource_info import (
    CPU,
    IGNORED_DEVICES,
    MEMORY,
    PODS,
    Resource,
    is_scalar_resource_name,
)
from reference_impl.api.task_info import QUEUE_ALLOCATION_GATE
from reference_impl.framework.arguments import as_arguments
from reference_impl.framework.plugin import Plugin, register_plugin_builder
from reference_impl.framework.session import PERMIT, REJECT, Session

PLUGIN_NAME = "overcommit"
OVERCOMMIT_FACTOR_KEY = "overcommit-factor"
DEFAULT_OVERCOMMIT_FACTOR = 1.2


def overcommit_factor(arguments: dict[str, Any]) -> float:
    """The configured factor; anything below 1.0 falls back to the default."""
    factor = as_arguments(arguments).get_float(OVERCOMMIT_FACTOR_KEY, DEFAULT_OVERCOMMIT_FACTOR)
    return DEFAULT_OVERCOMMIT_FACTOR if factor < 1.0 else factor


def sch_gated_pod_resources(job: JobInfo) -> Resource:
    """JobInfo.GetSchGatedPodResources: requests of gated pods, except those gated only by Volcano."""
    total = Resource()
    for task in job.tasks.values():
        if not task.sch_gated:
            continue
        if task.pod.scheduling_gates == [QUEUE_ALLOCATION_GATE]:
            continue  # held back by Volcano's own queue gate: it still counts as inqueue
        total.add(task.resreq)
    return total


def deduct_sch_gated_resources(job: JobInfo, res: Resource) -> Resource:
    """JobInfo.DeductSchGatedResources: res minus gated requests, each dimension floored at 0.

    Only scalars present in `res` are touched; `res` itself is returned when nothing is gated.
    """
    gated = sch_gated_pod_resources(job)
    if gated.is_empty():
        return res
    result = res.clone()
    result.milli_cpu = max(result.milli_cpu - gated.milli_cpu, 0.0)
    result.memory = max(result.memory - gated.memory, 0.0)
    gated_scalars = gated.scalars or {}
    for name, value in (res.scalars or {}).items():
        if name in gated_scalars:
            result.set_scalar(name, max(value - gated_scalars[name], 0.0))
    return result


def get_inqueue_resource(job: JobInfo, allocated: Resource) -> Resource:
    """util.GetInqueueResource: per minResources dimension, what is reserved but not yet allocated."""
    assert job.pod_group is not None and job.pod_group.min_resources is not None
    minimum = Resource.from_resource_list(job.pod_group.min_resources)
    inqueue = Resource()
    allocated_scalars = allocated.scalars or {}
    for name in job.pod_group.min_resources:
        if name == CPU:
            inqueue.milli_cpu = max(minimum.milli_cpu - allocated.milli_cpu, 0.0)
        elif name == MEMORY:
            inqueue.memory = max(minimum.memory - allocated.memory, 0.0)
        elif name == PODS:
            reserved = minimum.get(PODS) - allocated_scalars.get(PODS, 0.0)
            if reserved > 0:
                inqueue.set_scalar(PODS, reserved)
        elif _counts_as_inqueue_scalar(name):
            if inqueue.scalars is None:
                inqueue.scalars = {}
            reserved = minimum.get(name)
            if name not in allocated_scalars:
                inqueue.scalars[name] = reserved  # kept even when zero or negative, as upstream
            elif reserved - allocated_scalars[name] > 0:
                inqueue.scalars[name] = reserved - allocated_scalars[name]
    return inqueue


def _counts_as_inqueue_scalar(name: str) -> bool:
    if name.startswith("count/") or not is_scalar_resource_name(name):
        return False
    # Upstream matches ignored devices by substring here (NewResource matches exactly).
    return not any(device and device in name for device in IGNORED_DEVICES)


def inqueue_at_open(ssn: Session) -> Resource:
    """Resources already promised to Inqueue jobs and to Running jobs that reached minMember."""
    inqueue = Resource()
    for job in ssn.jobs.values():
        pod_group = job.pod_group
        if pod_group is None or pod_group.min_resources is None:
            continue
        if pod_group.phase == "Inqueue":
            inqueue.add(deduct_sch_gated_resources(job, job.get_min_resources()))
        elif pod_group.phase == "Running" and job.allocated_task_num() >= pod_group.min_member:
            inqueue.add(deduct_sch_gated_resources(job, get_inqueue_resource(job, job.allocated)))
    return inqueue


def idle_at_open(ssn: Session, factor: float) -> Resource:
    used = Resource()
    for node in ssn.nodes.values():
        used.add(node.used)
    total = Resource().add(ssn.total_resource)
    return total.multi(factor).sub_without_assert(used)


class OvercommitPlugin(Plugin):
    name = PLUGIN_NAME

    def on_session_open(self, ssn: Session) -> None:
        factor = overcommit_factor(self.arguments)
        self.idle = idle_at_open(ssn, factor)
        self.inqueue = inqueue_at_open(ssn)
        ssn.add_fn("job_enqueueable", self.name, self.job_enqueueable)
        ssn.add_fn("job_enqueued", self.name, self.job_enqueued)

    def job_enqueueable(self, job: JobInfo) -> int:
        assert job.pod_group is not None
        if job.pod_group.min_resources is None:
            return PERMIT
        minimum = job.get_min_resources()
        wanted = Resource().add(self.inqueue).add(minimum)
        fits, _ = wanted.less_equal_with_dimension_and_resources_name(self.idle, minimum)
        return PERMIT if fits else REJECT

    def job_enqueued(self, job: JobInfo) -> None:
        assert job.pod_group is not None
        if job.pod_group.min_resources is None:
            return
        self.inqueue.add(deduct_sch_gated_resources(job, job.get_min_resources()))


register_plugin_builder(PLUGIN_NAME, OvercommitPlugin)
