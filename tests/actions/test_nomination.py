"""The gang* nomination: gangpreempt / gangreclaim nominate the subjobs their committed plan placed,
allocate's fast path honours the nomination later in the same session and clears it, and the cache never
keeps it (actions/utils/util.go ApplySubJobNominations; allocate.go allocateFromNomination,
validateNomination, invalidateSubJobNomination; cache.go updateJobInfo)."""

from __future__ import annotations

from pathlib import Path

import schedcheck.reference.scheduler as scheduler_module
from schedcheck.reference.actions.allocate import Allocate
from schedcheck.reference.api.hyper_node_info import CLUSTER_TOP_HYPER_NODE
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.scheduler import Scheduler
from schedcheck.scenario.loader import load_scenario

from tests.actions.test_gang_preempt_reclaim import evicted, preempt_cluster, reclaim_cluster, run
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf
from schedcheck.reference.k8s import ClusterObjects

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
REDEEMED = SCENARIOS / "allocate-nomination-redeemed.yaml"
INVALIDATED = SCENARIOS / "allocate-nomination-invalidated-falls-back.yaml"


def _scheduler(path: Path) -> tuple[Scheduler, object]:
    scenario = load_scenario(path)
    scheduler = Scheduler(scenario.objects, scenario.conf)
    return scheduler, scheduler.run_once().session


def test_a_committed_gangpreempt_nominates_the_subjob_it_placed_for_this_session_only():
    scheduler, ssn = run(preempt_cluster(), "gangpreempt")
    assert evicted(scheduler) == ["default/v-0", "default/v-1"]
    assert ssn.jobs["default/p"].sub_job.nominated_hyper_node == CLUSTER_TOP_HYPER_NODE
    assert ssn.jobs["default/v"].sub_job.nominated_hyper_node == ""
    # updateJobInfo gives the cache the allocated hypernode only: the next session starts without it
    assert scheduler.cache.jobs["default/p"].sub_job.nominated_hyper_node == ""
    following = scheduler_module.open_session(scheduler.cache, scheduler.conf, cycle=1, seed=0)
    assert following.jobs["default/p"].sub_job.nominated_hyper_node == ""


def test_a_committed_gangreclaim_nominates_too():
    _, ssn = run(reclaim_cluster(), "gangreclaim")
    assert ssn.jobs["default/r"].sub_job.nominated_hyper_node == CLUSTER_TOP_HYPER_NODE


def test_a_failed_plan_nominates_nothing():
    objects = preempt_cluster()
    for item in objects.pods:
        if item.name.startswith("p-"):
            item.node_selector = {"pool": "gpu"}
    scheduler, ssn = run(objects, "gangpreempt")
    assert evicted(scheduler) == [] and ssn.jobs["default/p"].sub_job.nominated_hyper_node == ""


def test_the_fast_path_binds_on_the_nominated_nodes_and_the_commit_clears_the_nomination():
    scheduler, ssn = _scheduler(REDEEMED)
    serve = ssn.jobs["data/serve"]
    assert serve.sub_job.nominated_hyper_node == ""  # redeemed by the commit
    assert [r.outcome for r in ssn.nominations] == ["redeemed"]
    record = ssn.nominations[0]
    assert record.hyper_node == CLUSTER_TOP_HYPER_NODE
    assert record.placed == {"data/serve-0": "worker-1", "data/serve-1": "worker-1"}
    # the pipelined copies gangpreempt replayed stay on worker-2 for the rest of the session (F39)
    assert sorted(ssn.nodes["worker-2"].tasks) == ["data/serve-0", "data/serve-1"]
    assert {t.status for t in serve.tasks.values()} == {TaskStatus.Binding}


def test_a_failed_validation_clears_the_nomination_and_the_pods_nominated_nodes(monkeypatch):
    seen = {}
    original = Allocate.execute

    def execute(self, ssn):
        original(self, ssn)
        seen.update({t.name: t.pod.nominated_node_name for t in ssn.jobs["data/serve"].tasks.values()})

    monkeypatch.setattr(Allocate, "execute", execute)
    scheduler, ssn = _scheduler(INVALIDATED)
    assert [r.outcome for r in ssn.nominations] == ["invalidated"]
    assert ssn.nominations[0].nominated_nodes == {"data/serve-0": "worker-1", "data/serve-1": "worker-3"}
    assert ssn.jobs["data/serve"].sub_job.nominated_hyper_node == ""
    assert seen == {"serve-0": "", "serve-1": ""}
    # the pods are the cache's; the close then writes gangpreempt's last transaction on them (Pipelined on
    # worker-2 after an eviction, left by the dry run's discard), as TaskSchedulingReason does
    cached = scheduler.cache.jobs["data/serve"].tasks
    assert {t.pod.nominated_node_name for t in cached.values()} == {"worker-2"}


def _flat_cluster(nominated: dict[str, str], cpus=("2", "8")):
    pods = [pod(name, group="p", cpu="1", memory="1Gi", nominated_node_name=nominated.get(name, ""))
            for name in ("p-0", "p-1")]
    return ClusterObjects(nodes=[node(f"n{i + 1}", cpu=cpu, memory="64Gi") for i, cpu in enumerate(cpus)],
                          pods=pods, pod_groups=[pod_group("p", 2, phase="Inqueue")])


def _allocate_with_nomination(monkeypatch, objects, hyper_node: str):
    """One allocate session whose job default/p is nominated to `hyper_node` when the session opens (as
    upstream's TestAllocate_FlatPathHonorsAndClearsNomination sets it on the session's subjob)."""
    original = scheduler_module.open_session

    def open_and_register(*args, **kwargs):
        ssn = original(*args, **kwargs)
        ssn.jobs["default/p"].sub_job.nominated_hyper_node = hyper_node
        return ssn

    monkeypatch.setattr(scheduler_module, "open_session", open_and_register)
    scheduler = Scheduler(objects, conf(["priority", "gang", "conformance"], ["predicates", "nodeorder"],
                                        actions="allocate"))
    return scheduler.run_once().session


def _nodes(ssn) -> dict[str, str]:
    return {t.name: t.node_name for t in ssn.jobs["default/p"].tasks.values()}


def test_a_nomination_overrides_the_node_order_and_is_cleared_on_commit(monkeypatch):
    # n2 has more room (nodeorder would pick it); the nominated n1 wins, with no search.
    ssn = _allocate_with_nomination(monkeypatch, _flat_cluster({"p-0": "n1", "p-1": "n1"}), CLUSTER_TOP_HYPER_NODE)
    assert _nodes(ssn) == {"p-0": "n1", "p-1": "n1"}
    assert ssn.jobs["default/p"].sub_job.nominated_hyper_node == ""
    assert [r.outcome for r in ssn.nominations] == ["redeemed"]


def test_without_a_nomination_the_same_pods_go_through_the_search(monkeypatch):
    # the normal path tries each pod's nominated node first as well (allocateResourcesForTasks)
    ssn = _allocate_with_nomination(monkeypatch, _flat_cluster({"p-0": "n1"}), "")
    assert ssn.nominations == [] and _nodes(ssn) == {"p-0": "n1", "p-1": "n2"}


def test_validation_checks_every_task_before_placing_any(monkeypatch):
    placed = []
    original_allocate = Allocate.allocate_resources_for_task

    def spy(self, stmt, task, node):
        placed.append(task.name)
        return original_allocate(self, stmt, task, node)

    monkeypatch.setattr(Allocate, "allocate_resources_for_task", spy)
    # p-0 would pass on n1, p-1 has no nominated node: nothing is placed by the fast path
    ssn = _allocate_with_nomination(monkeypatch, _flat_cluster({"p-0": "n1"}), CLUSTER_TOP_HYPER_NODE)
    assert [r.outcome for r in ssn.nominations] == ["invalidated"]
    assert placed == ["p-0", "p-1"]  # the normal search's two placements only
    # the invalidation cleared p-0's nominated node too, so the search picks the roomier n2 for both
    assert _nodes(ssn) == {"p-0": "n2", "p-1": "n2"}
    assert ssn.jobs["default/p"].sub_job.nominated_hyper_node == ""


def test_an_unknown_hypernode_falls_back(monkeypatch):
    ssn = _allocate_with_nomination(monkeypatch, _flat_cluster({"p-0": "n1", "p-1": "n1"}), "gone")
    assert [r.outcome for r in ssn.nominations] == ["invalidated"]
    assert _nodes(ssn) == {"p-0": "n2", "p-1": "n2"}


def test_the_plan_is_not_checked_for_readiness(monkeypatch):
    # p-1's nominated n1 passes validation on its own, but once p-0 holds n1's only cpu neither Idle nor
    # FutureIdle fits: p-1 is silently left Pending, the job is not ready and the statement stays as it is.
    ssn = _allocate_with_nomination(monkeypatch, _flat_cluster({"p-0": "n1", "p-1": "n1"}, cpus=("1", "8")),
                                    CLUSTER_TOP_HYPER_NODE)
    assert [r.outcome for r in ssn.nominations] == ["redeemed"]
    assert ssn.nominations[0].placed == {"default/p-0": "n1"}
    job = ssn.jobs["default/p"]
    assert {t.name: t.status for t in job.tasks.values()} == {"p-0": TaskStatus.Allocated, "p-1": TaskStatus.Pending}
    assert job.sub_job.nominated_hyper_node == CLUSTER_TOP_HYPER_NODE  # not committed: not cleared
