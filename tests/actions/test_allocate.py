"""allocate's job loop (semantics §8.2), on small clusters built in code."""

from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf

TIERS = (["priority", "gang", "conformance"], ["predicates", "nodeorder"])


def _run(objects: ClusterObjects, actions: str = "enqueue, allocate", seed: int = 0):
    scheduler = Scheduler(objects, conf(*TIERS, actions=actions), seed=seed)
    report = scheduler.run_once()
    return scheduler, report.session


def _statuses(ssn, job: str) -> dict[str, TaskStatus]:
    return {t.name: t.status for t in ssn.jobs[job].tasks.values()}


def test_gang_is_committed_only_when_min_member_is_placed():
    objects = ClusterObjects(nodes=[node("n1", cpu="2")], pods=[pod(f"p-{i}") for i in range(3)],
                             pod_groups=[pod_group("pg", 3)])
    scheduler, ssn = _run(objects)
    assert not scheduler.cache.log.binds
    assert set(_statuses(ssn, "default/pg").values()) == {TaskStatus.Pending}
    assert [op.op for op in ssn.operations] == ["allocate", "allocate", "unallocate", "unallocate"]


def test_gang_commit_binds_every_task():
    objects = ClusterObjects(nodes=[node("n1", cpu="2"), node("n2", cpu="2")],
                             pods=[pod(f"p-{i}") for i in range(3)], pod_groups=[pod_group("pg", 3)])
    scheduler, ssn = _run(objects)
    assert len(scheduler.cache.log.binds) == 3
    assert set(_statuses(ssn, "default/pg").values()) == {TaskStatus.Binding}


def test_ready_job_takes_one_task_per_pop():
    # Both jobs are ready from the start (minMember 0), so each pop places and commits one
    # task, then pushes the job back. Job order (priority, gang readiness, creation, uid)
    # does not change between pops here, so job a is drained first.
    objects = ClusterObjects(nodes=[node("n1", cpu="8")],
                             pods=[pod(f"a-{i}", group="a") for i in range(2)] + [pod(f"b-{i}", group="b") for i in range(2)],
                             pod_groups=[pod_group("a", 0), pod_group("b", 0)])
    _, ssn = _run(objects)
    ops = [(op.op, op.task.split("/")[1]) for op in ssn.operations]
    assert ops == [("allocate", "a-0"), ("bind", "a-0"), ("allocate", "a-1"), ("bind", "a-1"),
                   ("allocate", "b-0"), ("bind", "b-0"), ("allocate", "b-1"), ("bind", "b-1")]


def test_pending_job_without_enqueue_action_is_set_inqueue_and_allocated():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("p-0")], pod_groups=[pod_group("pg", 1)])
    scheduler, ssn = _run(objects, actions="allocate")
    assert len(scheduler.cache.log.binds) == 1


def test_pending_job_is_skipped_when_enqueue_is_configured_but_did_not_admit_it():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("p-0")], pod_groups=[pod_group("pg", 1)])
    scheduler, _ = _run(objects, actions="allocate, enqueue")  # enqueue runs after allocate here
    assert not scheduler.cache.log.binds


def test_future_idle_pipelines_instead_of_allocating():
    objects = ClusterObjects(
        nodes=[node("n1", cpu="2")],
        pods=[pod("old-0", group="old", cpu="2", node_name="n1", phase="Running", deletion_timestamp="2026-01-01T00:00:00Z"),
              pod("p-0", cpu="2")],
        pod_groups=[pod_group("pg", 1), pod_group("old", 1, phase="Running")],
    )
    scheduler, ssn = _run(objects)
    assert not scheduler.cache.log.binds
    assert _statuses(ssn, "default/pg") == {"p-0": TaskStatus.Pipelined}
    assert ssn.nodes["n1"].pipelined.milli_cpu == 2000


def test_pipelined_but_not_ready_statement_stays_applied_for_the_session():
    # pg needs 2; one fits now, one only in FutureIdle: the job is pipelined, not ready,
    # so its statement is neither committed nor discarded and keeps the node's resources.
    objects = ClusterObjects(
        nodes=[node("n1", cpu="2")],
        pods=[pod("old-0", group="old", cpu="1", node_name="n1", phase="Running", deletion_timestamp="2026-01-01T00:00:00Z"),
              pod("p-0"), pod("p-1"), pod("z-late-0", group="z-late")],
        pod_groups=[pod_group("pg", 2), pod_group("old", 1, phase="Running"), pod_group("z-late", 1)],
    )
    scheduler, ssn = _run(objects)
    assert sorted(_statuses(ssn, "default/pg").values()) == [TaskStatus.Allocated, TaskStatus.Pipelined]
    # z-late comes after pg in job order (uid); the phantom state leaves it no room
    assert _statuses(ssn, "default/z-late") == {"z-late-0": TaskStatus.Pending}
    assert not scheduler.cache.log.binds


def test_nominated_node_is_tried_first():
    objects = ClusterObjects(nodes=[node("n1", cpu="8"), node("n2", cpu="8")],
                             pods=[pod("p-0", nominated_node_name="n2")], pod_groups=[pod_group("pg", 1)])
    for seed in range(5):
        scheduler, _ = _run(objects, seed=seed)
        assert [b.node for b in scheduler.cache.log.binds] == ["n2"]


def test_best_effort_tasks_are_left_to_backfill():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("p-0", cpu="", memory="")], pod_groups=[pod_group("pg", 1)])
    scheduler, _ = _run(objects)
    assert not scheduler.cache.log.binds
    scheduler, _ = _run(objects, actions="enqueue, allocate, backfill")
    assert [b.task for b in scheduler.cache.log.binds] == ["default/p-0"]


def test_same_seed_same_decisions_and_ties_recorded():
    objects = ClusterObjects(nodes=[node(f"n{i}") for i in range(4)], pods=[pod(f"p-{i}") for i in range(3)],
                             pod_groups=[pod_group("pg", 3)])
    first = [(b.task, b.node) for b in _run(objects, seed=11)[0].cache.log.binds]
    again = [(b.task, b.node) for b in _run(objects, seed=11)[0].cache.log.binds]
    assert first == again
    _, ssn = _run(objects, seed=11)
    assert ssn.ties and all(t.chosen in t.candidates and len(t.candidates) > 1 for t in ssn.ties)
