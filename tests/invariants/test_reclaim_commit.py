"""gang.reclaim-commit-pipelined: reclaim keeps a job's evictions only when the job ends up pipelined."""

from __future__ import annotations

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf

RULE = "gang.reclaim-commit-pipelined"
TIERS = (["priority", "gang", "conformance"], ["proportion", "nodeorder"])


def _cluster(gang_size: int) -> ClusterObjects:
    """batch runs 8 cpu on two 4-cpu nodes (deserved 4); prod's gang train wants gang_size 4-cpu tasks."""
    return ClusterObjects(
        nodes=[node("n1", cpu="4", memory="16Gi"), node("n2", cpu="4", memory="16Gi")],
        pods=[pod("hog-0", group="hog", cpu="4", node_name="n1", phase="Running"),
              pod("hog-1", group="hog", cpu="4", node_name="n2", phase="Running")]
        + [pod(f"train-{i}", group="train", cpu="4") for i in range(gang_size)],
        pod_groups=[pod_group("hog", 1, queue="batch", phase="Running"),
                    pod_group("train", gang_size, queue="prod", phase="Inqueue")],
        queues=[Queue("batch", "batch", reclaimable=True), Queue("prod", "prod")],
    )


def _run(objects: ClusterObjects) -> tuple[list[str], InvariantEngine, Scheduler]:
    engine = InvariantEngine(only=[RULE])
    scheduler = Scheduler(objects, conf(*TIERS, actions="enqueue, allocate, reclaim"), hooks_factory=engine.hooks)
    scheduler.run(1)
    return [v.message for v in engine.violations], engine, scheduler


def test_passes_when_the_gang_is_discarded_and_when_it_is_pipelined():
    for size in (2, 1):  # 2: train-1 finds no victim, the statement is discarded; 1: train is pipelined
        messages, engine, _ = _run(_cluster(size))
        assert messages == []
    assert engine.checks[RULE] > 0  # the single-task gang's statement was committed and judged


def test_fires_when_reclaim_commits_a_gang_that_is_not_pipelined():
    from schedcheck.mutants import mutant

    with mutant("reclaim-commits-unpipelined-job"):
        messages, _, _ = _run(_cluster(2))
    assert any("reclaim committed job" in m and "train" in m and "not pipelined" in m for m in messages)
