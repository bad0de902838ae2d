"""reclaim (semantics §8.5, upstream actions/reclaim/reclaim.go), on small clusters built in code.

Plugin decisions that proportion would make (Overused, Preemptive) are injected as callbacks
registered under a configured plugin's name, so these tests do not depend on proportion.
"""

from __future__ import annotations

from schedcheck.reference.actions.reclaim import Reclaim
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf, session

TIERS = (["priority", "gang", "conformance"], ["predicates", "nodeorder"])
ACTIONS = "enqueue, allocate, reclaim"


def queue(name: str, created: str, reclaimable: bool | None = None) -> Queue:
    return Queue(name, f"uid-{name}", creation_timestamp=created, reclaimable=reclaimable)


QUEUES = [queue("q1", "2025-01-01T00:00:00Z"), queue("q2", "2025-01-02T00:00:00Z"),
          queue("q3", "2025-01-03T00:00:00Z")]


def running(name: str, group: str, node_name: str = "n1", cpu: str = "1", **extra):
    extra.setdefault("phase", "Running")
    return pod(name, group=group, cpu=cpu, node_name=node_name, **extra)


def cluster(nodes, pods, groups, queues=QUEUES) -> ClusterObjects:
    return ClusterObjects(nodes=nodes, pods=pods, pod_groups=groups, queues=list(queues))


def owner(min_member: int = 0, queue_name: str = "q2", name: str = "other"):
    return pod_group(name, min_member, phase="Running", queue=queue_name)


def reclaimer(min_member: int = 1, queue_name: str = "q1", name: str = "want"):
    return pod_group(name, min_member, phase="Inqueue", queue=queue_name)


def basic(victim_extra=None, reclaimer_extra=None, victim_queue: str = "q2", queues=QUEUES) -> ClusterObjects:
    return cluster([node("n1", cpu="2")],
                   [running("other-0", "other", cpu="2", **(victim_extra or {})),
                    pod("want-0", group="want", cpu="2", **(reclaimer_extra or {}))],
                   [owner(queue_name=victim_queue), reclaimer()], queues)


def run(objects: ClusterObjects, actions: str = ACTIONS, cycles: int = 1):
    scheduler = Scheduler(objects, conf(*TIERS, actions=actions))
    report = None
    for index in range(cycles):
        if index:
            scheduler.advance()
        report = scheduler.run_once()
    return scheduler, report.session


def open_only(objects: ClusterObjects) -> Session:
    return session(objects, conf(*TIERS, actions=ACTIONS))


def evicted_names(log) -> list[str]:
    return sorted(record.task.split("/")[1] for record in log.evictions)


def status(ssn: Session, job: str, name: str) -> TaskStatus:
    return next(t.status for t in ssn.jobs[f"default/{job}"].tasks.values() if t.name == name)


def test_reclaims_a_running_task_of_another_queue_and_pipelines():
    scheduler, ssn = run(basic())
    assert evicted_names(scheduler.cache.log) == ["other-0"]
    task = next(iter(ssn.jobs["default/want"].tasks.values()))
    assert task.status == TaskStatus.Pipelined and task.node_name == "n1" and task.eviction_occurred
    assert scheduler.cache.log.evictions[0].reason == "reclaim"


def test_reclaimed_task_is_bound_two_cycles_later():
    scheduler, ssn = run(basic(), cycles=2)
    assert status(ssn, "other", "other-0") == TaskStatus.Releasing
    assert status(ssn, "want", "want-0") == TaskStatus.Pipelined
    scheduler.advance()
    scheduler.run_once()
    assert [b.task for b in scheduler.cache.log.binds] == ["default/want-0"]


def test_non_reclaimable_queue_is_protected():
    queues = [QUEUES[0], queue("q2", "2025-01-02T00:00:00Z", reclaimable=False)]
    scheduler, ssn = run(basic(queues=queues))
    assert not scheduler.cache.log.evictions
    assert status(ssn, "want", "want-0") == TaskStatus.Pending


def test_same_queue_is_not_reclaimed():
    scheduler, _ = run(basic(victim_queue="q1"))
    assert not scheduler.cache.log.evictions


def test_bound_tasks_are_not_reclaimees():
    objects = basic(victim_extra={"phase": "Pending"})  # placed but not running: Bound
    scheduler, _ = run(objects)
    assert not scheduler.cache.log.evictions


def test_preemptable_false_tasks_are_not_reclaimees():
    scheduler, _ = run(basic(victim_extra={"annotations": {"volcano.sh/preemptable": "false"}}))
    assert not scheduler.cache.log.evictions


def test_preemption_policy_never_skips_the_task():
    scheduler, _ = run(basic(reclaimer_extra={"preemption_policy": "Never"}))
    assert not scheduler.cache.log.evictions


def test_gang_protects_a_victim_job_at_min_member():
    objects = cluster([node("n1", cpu="2")],
                      [running("other-0", "other", cpu="2"), pod("want-0", group="want", cpu="2")],
                      [owner(min_member=1), reclaimer()])
    scheduler, _ = run(objects)
    assert not scheduler.cache.log.evictions


def test_overused_queue_cannot_reclaim():
    ssn = open_only(basic())
    ssn.add_fn("overused", "gang", lambda q: q.name == "q1")
    Reclaim().execute(ssn)
    assert not ssn.operations


def test_preemptive_false_skips_the_task():
    ssn = open_only(basic())
    seen = []
    ssn.add_fn("preemptive", "gang", lambda q, tasks: seen.append((q.name, [t.name for t in tasks])) or False)
    Reclaim().execute(ssn)
    assert not ssn.operations
    assert seen == [("q1", ["want-0"])]  # upstream passes the candidates as a list


def test_job_not_pipelined_discards_its_evictions():
    objects = cluster([node("n1", cpu="2")],
                      [running("other-0", "other", cpu="2"), pod("want-0", group="want", cpu="2"),
                       pod("want-1", group="want", cpu="2")],
                      [owner(), reclaimer(min_member=2)])
    scheduler, ssn = run(objects)
    assert not scheduler.cache.log.evictions
    assert [op.op for op in ssn.operations if op.action == "reclaim"] == ["evict", "pipeline", "unpipeline", "unevict"]
    assert status(ssn, "other", "other-0") == TaskStatus.Running


def test_eviction_stops_as_soon_as_the_task_fits():
    objects = cluster([node("n1", cpu="4")],
                      [running(f"other-{i}", "other") for i in range(4)] + [pod("want-0", group="want", cpu="2")],
                      [owner(), reclaimer()])
    scheduler, _ = run(objects)
    assert len(scheduler.cache.log.evictions) == 2


def test_future_idle_alone_suffices_without_eviction():
    # n1 has 1 cpu idle and a releasing 1-cpu pod: no eviction, a pipeline without EvictionOccurred.
    objects = cluster([node("n1", cpu="3")],
                      [running("other-0", "other"), running("gone-0", "gone", deletion_timestamp="2025-01-01T00:00:00Z"),
                       pod("want-0", group="want", cpu="2")],
                      [owner(), owner(name="gone"), reclaimer()])
    ssn = open_only(objects)
    Reclaim().execute(ssn)
    assert [op.op for op in ssn.operations] == ["pipeline"]
    task = next(iter(ssn.jobs["default/want"].tasks.values()))
    assert not task.eviction_occurred


def test_victims_follow_victim_queue_order():
    # Without a VictimQueueOrderFn the order is !QueueOrderFn: the later-created queue q3 goes first.
    objects = cluster([node("n1", cpu="2")],
                      [running("other-0", "other"), running("third-0", "third"), pod("want-0", group="want")],
                      [owner(), owner(queue_name="q3", name="third"), reclaimer()])
    scheduler, _ = run(objects)
    assert evicted_names(scheduler.cache.log) == ["third-0"]


def test_nodes_are_tried_in_predicate_order_without_scoring():
    # n1 would only offer a 4-cpu victim, n2 a 1-cpu one; reclaim takes n1 anyway (first in order).
    objects = cluster([node("n1", cpu="4"), node("n2", cpu="1")],
                      [running("big-0", "other", cpu="4"), running("small-0", "other", node_name="n2"),
                       pod("want-0", group="want")],
                      [owner(), reclaimer()])
    scheduler, ssn = run(objects)
    assert evicted_names(scheduler.cache.log) == ["big-0"]
    assert next(iter(ssn.jobs["default/want"].tasks.values())).node_name == "n1"


def test_every_starving_job_of_a_queue_is_tried():
    objects = cluster([node("n1", cpu="2")],
                      [running("other-0", "other"), running("other-1", "other"),
                       pod("want-0", group="want"), pod("also-0", group="also")],
                      [owner(), reclaimer(), reclaimer(name="also")])
    scheduler, ssn = run(objects)
    assert len(scheduler.cache.log.evictions) == 2
    assert status(ssn, "want", "want-0") == TaskStatus.Pipelined
    assert status(ssn, "also", "also-0") == TaskStatus.Pipelined


def test_pre_predicate_failure_skips_the_task():
    ssn = open_only(basic())
    ssn.add_fn("pre_predicate", "gang", lambda task: Exception("volume not bound"))
    Reclaim().execute(ssn)
    assert not ssn.operations
