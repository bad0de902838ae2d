"""The cache: snapshot isolation and the world between sessions."""

from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.k8s import ClusterObjects, PriorityClass
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf


def _objects():
    return ClusterObjects(
        nodes=[node("n1", cpu="2"), node("n2", cpu="2", ready=False)],
        pods=[pod("p-0"), pod("p-1"), pod("x-0", group="missing-queue"), pod("solo", group="")],
        pod_groups=[pod_group("pg", 2), pod_group("missing-queue", 1, queue="nope")],
        priority_classes=[PriorityClass("high", 100), PriorityClass("base", 7, global_default=True)],
    )


def test_snapshot_ignores_ready_condition_but_leaves_out_uninitialised_nodes():
    objects = _objects()
    objects.pods.append(pod("ghost-0", group="", node_name="ghost", phase="Running"))
    cache = SchedulerCache(objects)
    snap = cache.snapshot()
    # upstream's setNodeState marks every known node Ready, whatever its conditions say;
    # a node known only because a pod names it is uninitialised and NotReady
    assert set(snap.nodes) == {"n1", "n2"} and "ghost" in cache.nodes
    assert set(snap.jobs) == {"default/pg"}
    assert {"default", "root"} <= set(snap.queues)
    assert snap.jobs["default/pg"].priority == 7  # the global default class


def test_session_changes_do_not_reach_the_cache_until_commit():
    cache = SchedulerCache(_objects())
    snap = cache.snapshot()
    task = next(iter(snap.jobs["default/pg"].tasks.values()))
    snap.nodes["n1"].add_task(task)
    task.pod.node_name = "n1"
    assert not cache.nodes["n1"].tasks
    assert all(not t.pod.node_name for t in cache.jobs["default/pg"].tasks.values())


def test_cycles_bind_then_run_and_evicted_pods_release_then_vanish():
    objects = _objects()
    objects.nodes = [node("n1", cpu="3")]
    objects.pods.append(pod("old", group="", node_name="n1", phase="Running", cpu="1"))
    scheduler = Scheduler(objects, conf(["gang", "priority"]), seed=0)
    scheduler.run_once()
    assert {b.task for b in scheduler.cache.log.binds} == {"default/p-0", "default/p-1"}
    scheduler.advance()
    statuses = {t.name: t.status for t in scheduler.cache.jobs["default/pg"].tasks.values()}
    assert statuses == {"p-0": TaskStatus.Running, "p-1": TaskStatus.Running}
    # evict through the cache, as a committed statement would
    task = next(iter(scheduler.cache.jobs["default/pg"].tasks.values()))
    scheduler.cache.evict(task, "test")
    scheduler.advance()
    released = scheduler.cache.jobs["default/pg"].tasks[task.uid]
    assert released.status == TaskStatus.Releasing
    assert scheduler.cache.nodes["n1"].releasing.milli_cpu == 1000
    scheduler.advance()
    assert task.uid not in scheduler.cache.jobs["default/pg"].tasks


def test_caller_objects_are_never_modified():
    objects = _objects()
    Scheduler(objects, conf(["gang"]), seed=0).run(2)
    assert all(not p.node_name for p in objects.pods if p.name.startswith("p-"))
    assert all(pg.phase == "" for pg in objects.pod_groups)


def test_clock_starts_at_the_latest_timestamp_or_the_given_now_and_ticks_per_session():
    objects = _objects()
    objects.pods[0].creation_timestamp = "2026-05-01T10:00:00Z"
    scheduler = Scheduler(objects, conf(["gang"]))
    first = scheduler.run_once().session.now
    scheduler.advance()
    assert scheduler.run_once().session.now == first + 1.0
    assert Scheduler(objects, conf(["gang"]), now="2026-05-01T10:05:00Z").cache.cluster.clock - first == 300


def test_evicted_pod_is_terminating_and_disrupted_in_the_next_session():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("r-0", node_name="n1", phase="Running")],
                             pod_groups=[pod_group("pg", 1, phase="Running")])
    scheduler = Scheduler(objects, conf(["gang"]))
    task = next(iter(scheduler.cache.jobs["default/pg"].tasks.values()))
    scheduler.cache.evict(task, "preempt")
    scheduler.advance()
    world_pod = scheduler.cache.world.pods[0]
    assert world_pod.deletion_timestamp
    assert any(c.type == "DisruptionTarget" and c.reason == "PreemptionByScheduler" for c in world_pod.conditions)


def test_injected_faults_failed_bind_and_slow_eviction():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("p-0"), pod("r-0", group="run", node_name="n1",
                                                                       phase="Running")],
                             pod_groups=[pod_group("pg", 1), pod_group("run", 1, phase="Running")])
    scheduler = Scheduler(objects, conf(["gang"]))
    scheduler.cache.cluster.failing_binds.add("default/p-0")
    scheduler.cache.cluster.slow_evictions["default/r-0"] = 1
    scheduler.run_once()
    assert [b.task for b in scheduler.cache.log.binds] == ["default/p-0"]
    task = next(iter(scheduler.cache.jobs["default/run"].tasks.values()))
    scheduler.cache.evict(task, "test")
    scheduler.advance()
    world = {p.name: p for p in scheduler.cache.world.pods}
    assert world["p-0"].node_name == "" and world["p-0"].phase == "Pending"  # the bind failed
    assert world["r-0"].deletion_timestamp  # terminating
    scheduler.advance()
    assert "r-0" in {p.name for p in scheduler.cache.world.pods}  # slow: one more session
    scheduler.advance()
    assert "r-0" not in {p.name for p in scheduler.cache.world.pods}
