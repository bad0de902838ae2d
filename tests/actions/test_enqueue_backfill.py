"""enqueue admission order and backfill of best-effort tasks (semantics §8.1, §8.3)."""

from schedcheck.reference.framework.session import REJECT
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group, rl
from tests.framework.helpers import conf


def _scheduler(objects, actions):
    return Scheduler(objects, conf(["priority", "gang", "conformance"], ["predicates", "nodeorder"], actions=actions))


def test_enqueue_admits_every_pending_job_without_min_resources():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("a-0", group="a"), pod("b-0", group="b")],
                             pod_groups=[pod_group("a", 1), pod_group("b", 1, phase="Running")])
    scheduler = _scheduler(objects, "enqueue")
    ssn = scheduler.run_once().session
    assert ssn.jobs["default/a"].pod_group.phase == "Inqueue"
    assert scheduler.cache.pod_group_phases()["default/a"] == "Inqueue"


def test_enqueue_asks_the_vote_only_for_jobs_with_min_resources(monkeypatch):
    import schedcheck.reference.scheduler as scheduler_module

    original = scheduler_module.open_session

    def open_with_a_rejecting_vote(*args, **kwargs):
        ssn = original(*args, **kwargs)
        ssn.add_fn("job_enqueueable", "gang", lambda job: REJECT)
        return ssn

    monkeypatch.setattr(scheduler_module, "open_session", open_with_a_rejecting_vote)
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("a-0", group="a"), pod("b-0", group="b")],
                             pod_groups=[pod_group("a", 1, min_resources=rl(cpu="1")), pod_group("b", 1)])
    ssn = _scheduler(objects, "enqueue").run_once().session
    assert ssn.jobs["default/a"].pod_group.phase == "Pending"  # rejected by the vote
    assert ssn.jobs["default/b"].pod_group.phase == "Inqueue"  # no minResources: never asked


def test_enqueue_covers_every_queue():
    objects = ClusterObjects(
        nodes=[node("n1")],
        pods=[pod(f"{g}-0", group=g) for g in ("a1", "a2", "b1")],
        pod_groups=[pod_group("a1", 1, queue="qa"), pod_group("a2", 1, queue="qa"), pod_group("b1", 1, queue="qb")],
        queues=[Queue("qa", "qa"), Queue("qb", "qb")],
    )
    ssn = _scheduler(objects, "enqueue").run_once().session
    assert {j.uid for j in ssn.jobs.values() if j.pod_group.phase == "Inqueue"} == {
        "default/a1", "default/a2", "default/b1"}


def test_backfill_places_best_effort_pods_without_a_resource_check():
    objects = ClusterObjects(nodes=[node("n1", cpu="1", pods="3")],
                             pods=[pod(f"be-{i}", cpu="", memory="") for i in range(4)] + [pod("big", group="x", cpu="1")],
                             pod_groups=[pod_group("pg", 1, phase="Inqueue"), pod_group("x", 1)])
    scheduler = _scheduler(objects, "enqueue, allocate, backfill")
    ssn = scheduler.run_once().session
    bound = sorted(b.task for b in scheduler.cache.log.binds)
    # "big" fills the cpu; three best-effort pods still fit by pod count (pods: 3 minus "big")
    assert "default/big" in bound and len([b for b in bound if "be-" in b]) == 2
    assert ssn.nodes["n1"].idle.milli_cpu == 0
