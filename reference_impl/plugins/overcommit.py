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

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.reference.plugins.util import inqueue_resource

PLUGIN_NAME = "overcommit"
OVERCOMMIT_FACTOR_KEY = "overcommit-factor"
DEFAULT_OVERCOMMIT_FACTOR = 1.2


def overcommit_factor(arguments: dict[str, Any]) -> float:
    """The configured factor; anything below 1.0 falls back to the default."""
    factor = as_arguments(arguments).get_float(OVERCOMMIT_FACTOR_KEY, DEFAULT_OVERCOMMIT_FACTOR)
    return DEFAULT_OVERCOMMIT_FACTOR if factor < 1.0 else factor


def inqueue_at_open(ssn: Session) -> Resource:
    """Resources already promised to Inqueue jobs and to Running jobs that reached minMember."""
    inqueue = Resource()
    for job in ssn.jobs.values():
        pod_group = job.pod_group
        if pod_group is None or pod_group.min_resources is None:
            continue
        if pod_group.phase == "Inqueue":
            inqueue.add(job.deduct_sch_gated_resources(job.get_min_resources()))
        elif pod_group.phase == "Running" and job.allocated_task_num() >= pod_group.min_member:
            inqueue.add(job.deduct_sch_gated_resources(inqueue_resource(job, job.allocated)))
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
        self.inqueue.add(job.deduct_sch_gated_resources(job.get_min_resources()))


register_plugin_builder(PLUGIN_NAME, OvercommitPlugin)
