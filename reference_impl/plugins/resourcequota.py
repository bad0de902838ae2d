"""resourcequota: admit jobs within their namespace's ResourceQuotas
(pkg/scheduler/plugins/resourcequota/resourcequota.go; semantics §9.12).

JobEnqueueable, for a job with minResources in a namespace that has ResourceQuota objects, checks
every quota of the namespace:
- requested = minResources masked to the quota's hard names (a name must match exactly: a quota on
  `requests.cpu` does not constrain a minResources `cpu`);
- newUsage = used + (this session's pending total for the namespace) + requested, masked to the
  requested names;
- for every hard name present in newUsage, newUsage must not exceed hard (exact quantities, no
  tolerance), else Reject.
No minResources, or no quota in the namespace -> Permit.

JobEnqueued adds the job's whole minResources (unmasked) to the namespace's pending total, so later
jobs of the same session see it. The total lives only as long as the session.

Upstream reads the quota's status (status.hard and status.used); the reference takes the hard limits
the scenario loader stores in ResourceQuota.hard and status.used in ResourceQuota.used.
Not modelled: the PodGroup event recorded on a rejection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.reference.k8s import ResourceList, ResourceQuota

PLUGIN_NAME = "resourcequota"

Amounts = dict[str, Fraction]
"""A ResourceList as exact amounts (quotav1 works on resource.Quantity, exactly)."""


def amounts(resource_list: ResourceList) -> Amounts:
    return {name: quantity.as_fraction() for name, quantity in resource_list.items()}


def quota_add(left: Mapping[str, Fraction], right: Mapping[str, Fraction]) -> Amounts:
    """quotav1.Add: the union of names, summed where both have one."""
    out = dict(left)
    for name, value in right.items():
        out[name] = out.get(name, Fraction(0)) + value
    return out


def quota_mask(values: Mapping[str, Fraction], names: Iterable[str]) -> Amounts:
    """quotav1.Mask: only the given names."""
    keep = set(names)
    return {name: value for name, value in values.items() if name in keep}


def exceeded_names(usage: Mapping[str, Fraction], hard: Mapping[str, Fraction]) -> list[str]:
    """quotav1.LessThanOrEqual: the hard names whose usage (when present) is above the limit."""
    return [name for name, limit in hard.items() if name in usage and usage[name] > limit]


def quota_admits(quota: ResourceQuota, pending: Mapping[str, Fraction] | None,
                 min_resources: Mapping[str, Fraction]) -> bool:
    hard = amounts(quota.hard)
    requested = quota_mask(min_resources, hard)
    used = amounts(quota.used)
    if pending is not None:
        used = quota_add(pending, used)
    new_usage = quota_mask(quota_add(used, requested), requested)
    return not exceeded_names(new_usage, hard)


class ResourceQuotaPlugin(Plugin):
    name = PLUGIN_NAME

    def on_session_open(self, ssn: Session) -> None:
        self.quotas: dict[str, list[ResourceQuota]] = {}
        for quota in ssn.resource_quotas:
            self.quotas.setdefault(quota.namespace, []).append(quota)
        self.pending: dict[str, Amounts] = {}
        ssn.add_fn("job_enqueueable", self.name, self.job_enqueueable)
        ssn.add_fn("job_enqueued", self.name, self.job_enqueued)

    def job_enqueueable(self, job: JobInfo) -> int:
        assert job.pod_group is not None
        if job.pod_group.min_resources is None:
            return PERMIT
        quotas = self.quotas.get(job.namespace)
        if quotas is None:
            return PERMIT
        requested = amounts(job.pod_group.min_resources)
        pending = self.pending.get(job.namespace)
        for quota in quotas:
            if not quota_admits(quota, pending, requested):
                return REJECT
        return PERMIT

    def job_enqueued(self, job: JobInfo) -> None:
        if job.pod_group is None or job.pod_group.min_resources is None:
            return
        if job.namespace not in self.quotas:
            return
        pending = self.pending.setdefault(job.namespace, {})
        self.pending[job.namespace] = quota_add(pending, amounts(job.pod_group.min_resources))


register_plugin_builder(PLUGIN_NAME, ResourceQuotaPlugin)
