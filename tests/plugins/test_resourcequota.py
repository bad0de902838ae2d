"""resourcequota plugin: namespace quotas gate enqueue (semantics §9.12)."""

from __future__ import annotations

from fractions import Fraction

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import PERMIT, REJECT
from schedcheck.reference.k8s import ClusterObjects, ResourceQuota
from schedcheck.reference.plugins.resourcequota import exceeded_names, quota_add, quota_mask
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group, rl


def _objects(quotas, *groups):
    pods = [pod(f"{g.name}-0", group=g.name, namespace=g.namespace) for g in groups]
    return ClusterObjects(nodes=[node("n1", cpu="64", memory="256Gi")], pods=pods, pod_groups=list(groups),
                          resource_quotas=list(quotas))


def _plugin(objects):
    option = PluginOption("resourcequota")
    apply_plugin_conf_defaults(option)
    ssn = open_session(SchedulerCache(objects), SchedulerConf(actions=["enqueue"], tiers=[Tier([option])]), 0, 0)
    return ssn, ssn.plugins["resourcequota"]


def test_quota_helpers_follow_quotav1():
    one, two = Fraction(1), Fraction(2)
    assert quota_add({"cpu": one}, {"cpu": two, "memory": one}) == {"cpu": 3, "memory": 1}
    assert quota_mask({"cpu": one, "memory": two}, ["memory", "pods"]) == {"memory": 2}
    # Only names in both are compared; names missing from the usage are not.
    assert exceeded_names({"cpu": two, "gpu": two}, {"cpu": one, "memory": one}) == ["cpu"]


def test_no_min_resources_or_no_quota_in_the_namespace_permits():
    quota = ResourceQuota("q", "team-a", hard=rl(cpu="1"))
    ssn, plugin = _plugin(_objects([quota], pod_group("free", 1, namespace="team-a"),
                                   pod_group("other", 1, namespace="team-b", min_resources=rl(cpu="100"))))
    assert plugin.job_enqueueable(ssn.jobs["team-a/free"]) == PERMIT
    assert plugin.job_enqueueable(ssn.jobs["team-b/other"]) == PERMIT


def test_used_plus_request_must_stay_within_hard_exactly():
    quota = ResourceQuota("q", "team-a", hard=rl(cpu="4", memory="8Gi"), used=rl(cpu="3", memory="1Gi"))
    ssn, plugin = _plugin(_objects([quota], pod_group("fits", 1, namespace="team-a", min_resources=rl(cpu="1")),
                                   pod_group("over", 1, namespace="team-a", min_resources=rl(cpu="1001m"))))
    assert plugin.job_enqueueable(ssn.jobs["team-a/fits"]) == PERMIT  # 3 + 1 = 4 <= 4
    assert plugin.job_enqueueable(ssn.jobs["team-a/over"]) == REJECT  # 4.001 > 4, no tolerance


def test_only_names_the_quota_limits_are_checked_and_names_must_match_exactly():
    # A quota on requests.cpu does not constrain a minResources cpu; memory is not limited at all.
    quota = ResourceQuota("q", "team-a", hard=rl(requests_cpu="1", pods="2"), used=rl(requests_cpu="5", pods="1"))
    ssn, plugin = _plugin(_objects([quota], pod_group("a", 1, namespace="team-a",
                                                      min_resources=rl(cpu="10", memory="100Gi", pods="1"))))
    assert plugin.job_enqueueable(ssn.jobs["team-a/a"]) == PERMIT  # pods 1 + 1 <= 2
    ssn.jobs["team-a/a"].pod_group.min_resources = rl(cpu="10", pods="2")
    assert plugin.job_enqueueable(ssn.jobs["team-a/a"]) == REJECT  # pods 1 + 2 > 2


def test_every_quota_of_the_namespace_must_admit():
    loose = ResourceQuota("loose", "team-a", hard=rl(cpu="100"))
    tight = ResourceQuota("tight", "team-a", hard=rl(cpu="2"))
    ssn, plugin = _plugin(_objects([loose, tight], pod_group("a", 1, namespace="team-a", min_resources=rl(cpu="3"))))
    assert plugin.job_enqueueable(ssn.jobs["team-a/a"]) == REJECT


def test_enqueued_jobs_count_as_pending_usage_for_the_session():
    quota = ResourceQuota("q", "team-a", hard=rl(cpu="4"), used=rl(cpu="1"))
    ssn, plugin = _plugin(_objects([quota],
                                   pod_group("a", 1, namespace="team-a", min_resources=rl(cpu="2", memory="1Gi")),
                                   pod_group("b", 1, namespace="team-a", min_resources=rl(cpu="2"))))
    a, b = ssn.jobs["team-a/a"], ssn.jobs["team-a/b"]
    assert plugin.job_enqueueable(b) == PERMIT  # 1 + 2 <= 4
    plugin.job_enqueued(a)
    assert plugin.pending["team-a"] == {"cpu": 2, "memory": 1024**3}  # the whole minResources, unmasked
    assert plugin.job_enqueueable(b) == REJECT  # 1 + 2 + 2 > 4


def test_enqueued_ignores_namespaces_without_quotas():
    ssn, plugin = _plugin(_objects([], pod_group("a", 1, namespace="team-a", min_resources=rl(cpu="2"))))
    plugin.job_enqueued(ssn.jobs["team-a/a"])
    assert plugin.pending == {}


def test_enqueue_action_rejects_the_job_that_would_exceed():
    quota = ResourceQuota("q", "team-a", hard=rl(cpu="5"))
    groups = [pod_group(name, 1, namespace="team-a", min_resources=rl(cpu="3"),
                        creation_timestamp=f"2026-01-01T00:00:0{i}Z") for i, name in enumerate("ab")]
    objects = _objects([quota], *groups)
    option = PluginOption("resourcequota")
    apply_plugin_conf_defaults(option)
    ssn = Scheduler(objects, SchedulerConf(actions=["enqueue"], tiers=[Tier([option])])).run_once().session
    assert ssn.jobs["team-a/a"].pod_group.phase == "Inqueue"
    assert ssn.jobs["team-a/b"].pod_group.phase == "Pending"
