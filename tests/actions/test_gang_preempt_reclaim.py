"""gangpreempt and gangreclaim: bundles, their order, the nomination plan, commit on JobPipelined
(pkg/scheduler/actions/gangpreempt, gangreclaim, actions/utils; semantics §8.7)."""

from __future__ import annotations

import math

import pytest
import schedcheck.reference.scheduler as scheduler_module
from schedcheck.reference.actions.gangpreempt import (
    parse_settings,
)
from schedcheck.reference.actions.utils.bundle import (
    Bundle,
    BundleType,
    apply_allowed_tasks,
    bundle_roi,
    create_job_bundles,
    sort_bundles,
)
from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.conf import SchedulerConf
from schedcheck.reference.framework.session import PERMIT
from schedcheck.reference.k8s import ClusterObjects, PriorityClass, Queue
from schedcheck.reference.scheduler import Scheduler

from tests.builders import node, pod, pod_group, res
from tests.framework.helpers import conf, session

TIERS = (["priority", "gang", "conformance"], ["predicates"])


def running(name, group, cpu="1", node_name="n1", namespace="default", **extra):
    return pod(name, group=group, cpu=cpu, memory="1Gi", node_name=node_name, namespace=namespace, phase="Running",
               **extra)


def pending(name, group, cpu="1", namespace="default", **extra):
    return pod(name, group=group, cpu=cpu, memory="1Gi", namespace=namespace, **extra)


def classes():
    return [PriorityClass("high", 1000), PriorityClass("low", 10)]


def run(objects, actions, tiers=TIERS, configurations=None, monkeypatch=None, register=None):
    scheduler_conf: SchedulerConf = conf(*tiers, actions=actions)
    scheduler_conf.configurations = configurations or {}
    if register is not None:
        original = scheduler_module.open_session

        def open_and_register(*args, **kwargs):
            ssn = original(*args, **kwargs)
            register(ssn)
            return ssn

        monkeypatch.setattr(scheduler_module, "open_session", open_and_register)
    scheduler = Scheduler(objects, scheduler_conf)
    ssn = scheduler.run_once().session
    return scheduler, ssn


def evicted(scheduler):
    return sorted(e.task for e in scheduler.cache.log.evictions)


# -- bundles ------------------------------------------------------------------------------


def _victim_job(ready: int, min_member: int, roles=None, min_task_member=None):
    pods = [running(f"v-{i}", "v", priority=5 if i == 0 else 1,
                    annotations={"volcano.sh/task-spec": (roles or {}).get(i, "")}) for i in range(ready)]
    objects = ClusterObjects(nodes=[node("n1", cpu="16")], pods=pods,
                             pod_groups=[pod_group("v", min_member, phase="Running",
                                                   min_task_member=min_task_member or {})])
    ssn = session(objects, conf(["gang"]))
    job = ssn.jobs["default/v"]
    return job, [t.clone() for t in job.tasks.values()]


def test_bundles_split_by_job_surplus_lowest_task_priority_first():
    job, tasks = _victim_job(ready=4, min_member=2)
    bundles = create_job_bundles(job, tasks)
    assert [(b.type, [t.name for t in b.tasks]) for b in bundles] == [
        (BundleType.SAFE, ["v-1", "v-2"]), (BundleType.WHOLE, ["v-3", "v-0"])]
    assert bundles[0].global_res.is_empty()
    assert bundles[1].global_res.milli_cpu == 4000  # every task of the job
    assert bundles[1].local_res.milli_cpu == 2000


def test_a_job_already_below_its_minimum_is_one_safe_bundle():
    job, tasks = _victim_job(ready=2, min_member=3)
    bundles = create_job_bundles(job, tasks)
    assert [(b.type, len(b.tasks)) for b in bundles] == [(BundleType.SAFE, 2)]


def test_role_minimums_make_tasks_unsafe():
    roles = {0: "ps", 1: "worker", 2: "worker", 3: "worker"}
    job, tasks = _victim_job(ready=4, min_member=2, roles=roles, min_task_member={"ps": 1, "worker": 1})
    bundles = create_job_bundles(job, tasks)
    # Order v-1, v-2, v-3 (priority 1), v-0 (5). Job surplus 2, worker surplus 3 - 1 = 2, ps surplus 0.
    assert [t.name for t in bundles[0].tasks] == ["v-1", "v-2"]
    assert [t.name for t in bundles[1].tasks] == ["v-3", "v-0"]
    # Role minimums above minMember disable the role check (CheckTaskReady's bypass).
    job, tasks = _victim_job(ready=4, min_member=1, roles=roles, min_task_member={"ps": 1, "worker": 3})
    assert [t.name for t in create_job_bundles(job, tasks)[0].tasks] == ["v-1", "v-2", "v-3"]


def test_min_sub_groups_make_tasks_of_needed_subjobs_unsafe():
    # Six running pods in three subjobs of two (label "rank" 0, 1, 2), minSubGroups 2, minMember 1: the job
    # can lose 5 pods, the group one ready subjob. Order v-1..v-5 (priority 1), v-0 (5).
    from schedcheck.reference.k8s import LabelSelector, SubGroupPolicy
    pods = [running(f"v-{i}", "v", priority=5 if i == 0 else 1, labels={"app": "v", "rank": str(i // 2)})
            for i in range(6)]
    policy = SubGroupPolicy("workers", sub_group_size=2, min_sub_groups=2,
                            label_selector=LabelSelector({"app": "v"}), match_label_keys=["rank"])
    objects = ClusterObjects(nodes=[node("n1", cpu="16")], pods=pods,
                             pod_groups=[pod_group("v", 1, phase="Running", sub_group_policy=[policy])])
    job = session(objects, conf(["gang"])).jobs["default/v"]
    bundles = create_job_bundles(job, [t.clone() for t in job.tasks.values()])
    # v-1 breaks subjob rank 0 (the spare one); v-2 would break rank 1: whole; v-3 too; v-4, v-5 rank 2: whole.
    # v-0 belongs to the already broken rank 0: safe again.
    assert [(b.type, [t.name for t in b.tasks]) for b in bundles] == [
        (BundleType.SAFE, ["v-1", "v-0"]), (BundleType.WHOLE, ["v-2", "v-3", "v-4", "v-5"])]


def test_apply_allowed_tasks_trims_safe_bundles_and_drops_partial_whole_ones():
    job, tasks = _victim_job(ready=4, min_member=2)
    safe, whole = create_job_bundles(job, tasks)
    allowed = {safe.tasks[0].uid, whole.tasks[0].uid}
    valid = apply_allowed_tasks([safe, whole], allowed)
    assert len(valid) == 1 and [t.name for t in valid[0].tasks] == ["v-1"] and valid[0].local_res.milli_cpu == 1000
    assert len(safe.tasks) == 2  # the original bundle is unchanged
    assert apply_allowed_tasks([whole], {t.uid for t in whole.tasks}) == [whole]


def test_roi_caps_freed_resources_at_the_need():
    need = res(2000, 0)
    whole = Bundle(BundleType.WHOLE, None, [], res(3000, 0), res(6000, 0))  # type: ignore[arg-type]
    assert bundle_roi(whole, need) == pytest.approx((2 / 2) / (6 / 2))
    safe = Bundle(BundleType.SAFE, None, [], res(1000, 0), Resource())  # type: ignore[arg-type]
    assert bundle_roi(safe, need) == math.inf


def test_sort_orders_type_then_owner_then_roi_then_job_uid():
    job, tasks = _victim_job(ready=4, min_member=2)

    def bundle(kind, uid, local, whole):
        b = Bundle(kind, job.clone(), [tasks[0]], res(local, 0), res(whole, 0))
        b.job.uid = uid
        return b

    need = res(1000, 0)
    low_roi = bundle(BundleType.WHOLE, "a", 1000, 8000)
    high_roi = bundle(BundleType.WHOLE, "z", 1000, 2000)
    safe_b, safe_a = bundle(BundleType.SAFE, "b", 1000, 0), bundle(BundleType.SAFE, "a", 1000, 0)
    items = [low_roi, high_roi, safe_b, safe_a]
    sort_bundles(items, need, lambda left, right: None)
    assert [(b.type, b.job.uid) for b in items] == [
        (BundleType.SAFE, "a"), (BundleType.SAFE, "b"), (BundleType.WHOLE, "z"), (BundleType.WHOLE, "a")]
    sort_bundles(items, need,
                 lambda left, right: left.job.uid > right.job.uid if left.job.uid != right.job.uid else None)
    assert [b.job.uid for b in items] == ["b", "a", "z", "a"]


def test_settings_defaults_and_fallbacks():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("p-0")], pod_groups=[pod_group("pg", 1)])
    scheduler_conf = conf(["gang"], actions="gangpreempt")
    scheduler_conf.configurations = {"gangpreempt": {"maxDomains": 0, "allowWholeBundle": "false"},
                                     "allocate": {"predicateErrorCacheEnable": False}}
    settings = parse_settings(session(objects, scheduler_conf), "gangpreempt")
    flags = (settings.max_domains, settings.allow_whole_bundle, settings.enable_predicate_error_cache)
    assert flags == (8, False, False)
    settings = parse_settings(session(objects, conf(["gang"])), "gangreclaim")
    assert (settings.max_domains, settings.allow_whole_bundle, settings.enable_predicate_error_cache) == (8, True, True)


# -- gangpreempt end to end -----------------------------------------------------------------


def preempt_cluster(victim_pods=3, victim_min=1, preemptor_pods=2, node_cpu="4", victim_class="low", **victim_extra):
    pods = [running(f"v-{i}", "v", **victim_extra) for i in range(victim_pods)]
    pods += [pending(f"p-{i}", "p") for i in range(preemptor_pods)]
    return ClusterObjects(
        nodes=[node("n1", cpu=node_cpu, memory="64Gi")], pods=pods, priority_classes=classes(),
        pod_groups=[pod_group("v", victim_min, phase="Running", priority_class_name=victim_class),
                    pod_group("p", preemptor_pods, phase="Inqueue", priority_class_name="high",
                              creation_timestamp="2026-01-01T00:00:00Z")])


def test_gangpreempt_evicts_the_safe_bundle_and_pipelines_the_gang():
    scheduler, ssn = run(preempt_cluster(), "gangpreempt")
    assert evicted(scheduler) == ["default/v-0", "default/v-1"]
    assert [t.node_name for t in ssn.jobs["default/p"].tasks_with_status(TaskStatus.Pipelined)] == ["n1", "n1"]
    assert all(t.eviction_occurred for t in ssn.jobs["default/p"].tasks_with_status(TaskStatus.Pipelined))


def test_gangpreempt_needs_strictly_lower_job_priority():
    scheduler, ssn = run(preempt_cluster(victim_class="high"), "gangpreempt")
    assert evicted(scheduler) == []
    assert len(ssn.jobs["default/p"].tasks_with_status(TaskStatus.Pending)) == 2


def test_whole_bundles_break_the_victim_gang_unless_disallowed():
    # Victim 3 pods, minMember 3: no surplus, everything is one whole bundle; 1 cpu idle, need 2.
    scheduler, _ = run(preempt_cluster(victim_min=3), "gangpreempt")
    assert evicted(scheduler) == ["default/v-0", "default/v-1", "default/v-2"]  # the whole bundle goes at once
    scheduler, ssn = run(preempt_cluster(victim_min=3), "gangpreempt",
                         configurations={"gangpreempt": {"allowWholeBundle": False}})
    assert evicted(scheduler) == []
    assert ssn.nodes["n1"].releasing.is_empty() and ssn.nodes["n1"].pipelined.is_empty()


def test_nothing_is_evicted_when_even_every_bundle_is_not_enough():
    # Need 6 cpu; 1 idle + 3 victims = 4.
    scheduler, ssn = run(preempt_cluster(preemptor_pods=6), "gangpreempt")
    assert evicted(scheduler) == []
    assert [len(ssn.jobs[j].tasks_with_status(s)) for j, s in
            (("default/v", TaskStatus.Running), ("default/p", TaskStatus.Pending))] == [3, 6]


def test_unified_evictable_filters_victims():
    # conformance keeps kube-system pods; the preemptor then needs the whole... nothing else is there.
    objects = preempt_cluster(namespace="kube-system")
    for group in objects.pod_groups:
        if group.name == "v":
            group.namespace = "kube-system"
    scheduler, _ = run(objects, "gangpreempt")
    assert evicted(scheduler) == []


def test_a_failing_plan_leaves_the_session_as_it_was():
    # The sums cover the need, but the preemptor's nodeSelector matches no node: the dry run fails.
    objects = preempt_cluster()
    for item in objects.pods:
        if item.name.startswith("p-"):
            item.node_selector = {"pool": "gpu"}
    scheduler, ssn = run(objects, "gangpreempt")
    assert evicted(scheduler) == []
    n1 = ssn.nodes["n1"]
    assert n1.releasing.is_empty() and n1.pipelined.is_empty() and n1.used.milli_cpu == 3000
    assert [t.status for t in ssn.jobs["default/v"].tasks.values()] == [TaskStatus.Running] * 3
    assert [t.status for t in ssn.jobs["default/p"].tasks.values()] == [TaskStatus.Pending] * 2


def test_a_discarded_dry_run_still_nominates_the_node_through_the_last_transaction():
    # p-0 is pipelined in the dry run, p-1 (nodeSelector matching nothing) fails it; the discard leaves
    # p-0 a last transaction "Pipelined on n1 after an eviction", which the session close publishes.
    objects = preempt_cluster()
    next(p for p in objects.pods if p.name == "p-1").node_selector = {"pool": "gpu"}
    scheduler, _ = run(objects, "gangpreempt")
    assert evicted(scheduler) == []
    cached = {t.name: t for t in scheduler.cache.jobs["default/p"].tasks.values()}
    assert cached["p-0"].pod.nominated_node_name == "n1"
    assert cached["p-1"].pod.nominated_node_name == ""


def test_job_pipelined_by_another_plugin_commits_even_without_a_plan(monkeypatch):
    def permit_everything(ssn):
        ssn.add_fn("job_pipelined", "priority", lambda job: PERMIT)

    scheduler, _ = run(preempt_cluster(preemptor_pods=6), "gangpreempt", monkeypatch=monkeypatch,
                       register=permit_everything)
    assert evicted(scheduler) == []  # an empty statement was committed


# -- gangreclaim end to end -----------------------------------------------------------------


def reclaim_cluster(victim_queue_reclaimable=True, victim_pods=3, victim_min=1):
    pods = [running(f"v-{i}", "v") for i in range(victim_pods)] + [pending(f"r-{i}", "r") for i in range(2)]
    return ClusterObjects(
        nodes=[node("n1", cpu="4", memory="64Gi")], pods=pods,
        queues=[Queue("qa", "qa", creation_timestamp="2026-01-01T00:00:00Z"),
                Queue("qb", "qb", reclaimable=victim_queue_reclaimable, creation_timestamp="2026-01-01T00:00:01Z")],
        pod_groups=[pod_group("v", victim_min, phase="Running", queue="qb"),
                    pod_group("r", 2, phase="Inqueue", queue="qa")])


def test_gangreclaim_takes_from_another_queue_regardless_of_priority():
    scheduler, ssn = run(reclaim_cluster(), "gangreclaim")
    assert evicted(scheduler) == ["default/v-0", "default/v-1"]
    assert len(ssn.jobs["default/r"].tasks_with_status(TaskStatus.Pipelined)) == 2


def test_gangreclaim_respects_non_reclaimable_queues():
    scheduler, _ = run(reclaim_cluster(victim_queue_reclaimable=False), "gangreclaim")
    assert evicted(scheduler) == []


def test_gangreclaim_never_takes_from_its_own_queue_and_gangpreempt_only_from_it():
    objects = reclaim_cluster()
    for group in objects.pod_groups:
        group.queue = "qa"
    scheduler, _ = run(objects, "gangreclaim")
    assert evicted(scheduler) == []


def test_gangreclaim_asks_preemptive_with_all_pending_tasks_and_skips_overused_queues(monkeypatch):
    calls = []

    def register(ssn):
        ssn.add_fn("preemptive", "gang",
                   lambda queue, tasks: calls.append((queue.name, sorted(t.name for t in tasks))) or False)

    scheduler, _ = run(reclaim_cluster(), "gangreclaim", monkeypatch=monkeypatch, register=register)
    assert calls == [("qa", ["r-0", "r-1"])] and evicted(scheduler) == []

    def overused(ssn):
        ssn.add_fn("overused", "gang", lambda queue: queue.name == "qa")

    scheduler, _ = run(reclaim_cluster(), "gangreclaim", monkeypatch=monkeypatch, register=overused)
    assert evicted(scheduler) == []
