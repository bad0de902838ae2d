"""queue.capacity-allocated and queue.capacity-within-real-capability, flat and hierarchical."""

from __future__ import annotations

import schedcheck.reference.plugins.capacity as capacity
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.scheduler import Scheduler
from schedcheck.invariants.engine import InvariantEngine
from tests.builders import node, pod, pod_group, rl
from tests.framework.helpers import conf

TIERS = (["priority", "gang", "conformance"], ["capacity", "predicates"])


def _hierarchy() -> ClusterObjects:
    """root > eng (capability 3 cpu) > {team-a, team-b}; team-a's jobs ask for 4 cpu in 1-cpu tasks."""
    queues = [Queue("root", "root"), Queue("eng", "eng", parent="root", capability=rl(cpu="3", memory="8Gi")),
              Queue("team-a", "team-a", parent="eng"), Queue("team-b", "team-b", parent="eng")]
    return ClusterObjects(
        nodes=[node("n1", cpu="8", memory="16Gi")],
        pods=[pod(f"a-{i}", group="a", cpu="1", memory="1Gi") for i in range(4)]
        + [pod("b-0", group="b", cpu="1", memory="1Gi")],
        pod_groups=[pod_group("a", 1, queue="team-a", phase="Inqueue"), pod_group("b", 1, queue="team-b",
                                                                                   phase="Inqueue")],
        queues=queues,
    )


def _run(objects: ClusterObjects, rule: str, hierarchy: bool = True) -> list[str]:
    engine = InvariantEngine(only=[rule])
    flags = {"capacity": {"enableHierarchy": True}} if hierarchy else {}
    Scheduler(objects, conf(*TIERS, actions="enqueue, allocate", **flags), hooks_factory=engine.hooks).run(1)
    return [v.message for v in engine.violations]


def test_passes_on_the_faithful_plugin():
    for rule in ("queue.capacity-allocated", "queue.capacity-within-real-capability"):
        assert _run(_hierarchy(), rule) == []
        assert _run(_hierarchy(), rule, hierarchy=False) == []


def test_fires_when_an_ancestor_is_not_charged(monkeypatch):
    original = capacity.CapacityPlugin._apply

    def apply_leaf_only(self, task, removing):
        saved = self.hierarchy
        self.hierarchy = False  # the bug: ancestors skipped
        try:
            return original(self, task, removing)
        finally:
            self.hierarchy = saved
    monkeypatch.setattr(capacity.CapacityPlugin, "_apply", apply_leaf_only)
    found = _run(_hierarchy(), "queue.capacity-allocated")
    assert any("ancestor queue eng" in message for message in found)


def test_fires_when_only_the_leaf_bound_is_checked(monkeypatch):
    monkeypatch.setattr(capacity.CapacityPlugin, "_branch", lambda self, queue_id: [queue_id])
    found = _run(_hierarchy(), "queue.capacity-within-real-capability")
    assert any("queue eng (an ancestor of team-" in message for message in found)


def _reclaim_past_capability() -> ClusterObjects:
    """ml (capability = deserved = 8 cpu) runs 7 cpu and wants 2 more; batch runs 2 cpu on a roomy second node."""
    queues = [Queue("ml", "ml", capability=rl(cpu="8", memory="100Gi"), deserved=rl(cpu="8", memory="100Gi")),
              Queue("batch", "batch", capability=rl(cpu="2", memory="5Gi"))]
    return ClusterObjects(
        nodes=[node("a", cpu="8", memory="100Gi"), node("b", cpu="8", memory="100Gi")],
        pods=[pod("ml-0", group="ml-run", cpu="7", memory="90Gi", node_name="a", phase="Running"),
              pod("ml-1", group="ml-new", cpu="2", memory="5Gi"),
              pod("etl-0", group="etl", cpu="2", memory="5Gi", node_name="b", phase="Running")],
        pod_groups=[pod_group("ml-run", 1, queue="ml", phase="Running"),
                    pod_group("ml-new", 1, queue="ml", phase="Inqueue"),
                    pod_group("etl", 1, queue="batch", phase="Running")],
        queues=queues,
    )


def _run_reclaim(objects: ClusterObjects) -> tuple[list[str], InvariantEngine]:
    engine = InvariantEngine(only=["queue.capacity-reclaim-within-real-capability"])
    Scheduler(objects, conf(*TIERS, actions="enqueue, allocate, reclaim"), hooks_factory=engine.hooks).run(1)
    return [v.message for v in engine.violations], engine


def test_reclaim_bound_passes_on_the_faithful_plugin():
    messages, engine = _run_reclaim(_reclaim_past_capability())
    assert messages == []
    # and a reclaim that stays within realCapability (ml's capability raised to 9 cpu, and b only as large as etl,
    # so that allocate cannot place ml-1 and reclaim must) is judged and passes
    objects = _reclaim_past_capability()
    objects.queues[0] = Queue("ml", "ml", capability=rl(cpu="9", memory="100Gi"), deserved=rl(cpu="9", memory="100Gi"))
    objects.nodes[1] = node("b", cpu="2", memory="100Gi")
    messages, engine = _run_reclaim(objects)
    assert messages == [] and engine.checks["queue.capacity-reclaim-within-real-capability"] > 0


def test_reclaim_bound_fires_when_preemptive_skips_real_capability():
    from schedcheck.mutants import mutant

    with mutant("capacity-reclaim-past-real-capability"):
        messages, _ = _run_reclaim(_reclaim_past_capability())
    assert any("reclaim pipelined task" in m and "queue ml" in m and "(dimensions cpu)" in m for m in messages)


def _inqueue_cluster(bound_half: bool = True) -> ClusterObjects:
    """team (capability 6 cpu) holds half (Inqueue, minResources 4 cpu) with half-0 bound (2 cpu), and next
    (Pending, minResources 2 cpu)."""
    return ClusterObjects(
        nodes=[node("n1", cpu="16", memory="64Gi")],
        pods=[pod("half-0", group="half", cpu="2", memory="2Gi", **({"node_name": "n1"} if bound_half else {})),
              pod("half-1", group="half", cpu="2", memory="2Gi"),
              pod("next-0", group="next", cpu="2", memory="2Gi")],
        pod_groups=[pod_group("half", 2, queue="team", phase="Inqueue", min_resources=rl(cpu="4", memory="4Gi")),
                    pod_group("next", 1, queue="team", phase="Pending", min_resources=rl(cpu="2", memory="2Gi"))],
        queues=[Queue("team", "team", capability=rl(cpu="6", memory="60Gi"))],
    )


def _run_inqueue(objects: ClusterObjects, hierarchy: bool = False) -> tuple[list[str], InvariantEngine]:
    engine = InvariantEngine(only=["queue.capacity-inqueue-recomputed"])
    flags = {"capacity": {"enableHierarchy": True}} if hierarchy else {}
    Scheduler(objects, conf(*TIERS, actions="enqueue, allocate", **flags), hooks_factory=engine.hooks).run(2)
    return [v.message for v in engine.violations], engine


def test_inqueue_recomputation_passes_on_the_faithful_plugin():
    for bound in (True, False):
        messages, engine = _run_inqueue(_inqueue_cluster(bound))
        assert messages == [] and engine.checks["queue.capacity-inqueue-recomputed"] > 0
    messages, _ = _run_inqueue(_hierarchy(), hierarchy=True)
    assert messages == []


def test_inqueue_recomputation_fires_when_allocated_tasks_are_reserved_again():
    from schedcheck.mutants import mutant

    with mutant("capacity-inqueue-counts-allocated"):
        messages, _ = _run_inqueue(_inqueue_cluster())
    assert any("queue team: capacity's inqueue is <cpu 4000.00" in m and "<cpu 2000.00" in m for m in messages)


def test_inqueue_recomputation_fires_when_an_admission_is_not_reserved(monkeypatch):
    monkeypatch.setattr(capacity.CapacityPlugin, "job_enqueued", lambda self, job: None)
    messages, _ = _run_inqueue(_inqueue_cluster())
    assert any("queue team: capacity's inqueue is <cpu 2000.00" in m and "<cpu 4000.00" in m for m in messages)


def _best_effort_cluster() -> ClusterObjects:
    """scavenger (no deserved) and guaranteed (deserved 4 cpu) each want the one 4-cpu node."""
    return ClusterObjects(
        nodes=[node("n1", cpu="4", memory="16Gi")],
        pods=[pod("scavenge-0", group="scavenge", cpu="4"), pod("train-0", group="train", cpu="4")],
        pod_groups=[pod_group("scavenge", 1, queue="scavenger", phase="Inqueue"),
                    pod_group("train", 1, queue="guaranteed", phase="Inqueue")],
        queues=[Queue("scavenger", "scavenger"), Queue("guaranteed", "guaranteed", deserved=rl(cpu="4", memory="8Gi"))],
    )


def test_share_passes_on_the_faithful_plugin():
    for objects, hierarchy in ((_best_effort_cluster(), False), (_hierarchy(), True), (_hierarchy(), False)):
        engine = InvariantEngine(only=["queue.capacity-share"])
        flags = {"capacity": {"enableHierarchy": True}} if hierarchy else {}
        Scheduler(objects, conf(*TIERS, actions="enqueue, allocate", **flags), hooks_factory=engine.hooks).run(1)
        assert engine.violations == [] and engine.checks["queue.capacity-share"] > 0


def test_share_fires_when_a_best_effort_queue_gets_share_zero():
    from schedcheck.mutants import mutant

    engine = InvariantEngine(only=["queue.capacity-share"])
    with mutant("capacity-best-effort-share-zero"):
        Scheduler(_best_effort_cluster(), conf(*TIERS, actions="enqueue, allocate"), hooks_factory=engine.hooks).run(1)
    assert any("best-effort queue scavenger: capacity's share is 0" in v.message for v in engine.violations)


def test_share_fires_when_the_handlers_leave_it_stale(monkeypatch):
    monkeypatch.setattr(capacity.CapacityQueueAttr, "update_share", lambda self: None)  # stays as constructed
    engine = InvariantEngine(only=["queue.capacity-share"])
    Scheduler(_best_effort_cluster(), conf(*TIERS, actions="enqueue, allocate"), hooks_factory=engine.hooks).run(1)
    assert engine.violations


def _gpu_over_deserved() -> ClusterObjects:
    """gpu-team is above deserved on GPUs only; cpu-team's web-0 wants the 4 cpu its etl-0 holds on n1."""
    gpu_node = node("g1", cpu="2", memory="16Gi")
    gpu_node.allocatable.update(rl(nvidia_com__gpu="2"))
    render = pod("render-0", group="render", cpu="1", node_name="g1", phase="Running")
    render.containers[0].requests.update(rl(nvidia_com__gpu="2"))
    render.containers[0].limits.update(rl(nvidia_com__gpu="2"))
    return ClusterObjects(
        nodes=[node("n1", cpu="4", memory="16Gi"), gpu_node],
        pods=[render, pod("etl-0", group="etl", cpu="4", node_name="n1", phase="Running"),
              pod("web-0", group="web", cpu="4")],
        pod_groups=[pod_group("render", 1, queue="gpu-team", phase="Running"),
                    pod_group("etl", 0, queue="gpu-team", phase="Running"),
                    pod_group("web", 1, queue="cpu-team", phase="Inqueue")],
        queues=[Queue("gpu-team", "gpu-team", reclaimable=True, deserved=rl(cpu="6", memory="32Gi", nvidia_com__gpu="1")),
                Queue("cpu-team", "cpu-team", deserved=rl(cpu="4", memory="8Gi"))],
    )


def _run_relevant(objects: ClusterObjects, tiers=(["priority", "gang", "conformance", "capacity"], ["nodeorder"])):
    engine = InvariantEngine(only=["victim.capacity-reclaim-relevant"])
    Scheduler(objects, conf(*tiers, actions="enqueue, allocate, reclaim"), hooks_factory=engine.hooks).run(1)
    return [v.message for v in engine.violations]


def test_reclaim_relevance_passes_on_the_faithful_plugin():
    assert _run_relevant(_gpu_over_deserved()) == []
    # gpu-team above deserved on cpu too (deserved 4 cpu): etl-0 is a fair victim, judged and passing
    objects = _gpu_over_deserved()
    objects.queues[0] = Queue("gpu-team", "gpu-team", reclaimable=True,
                              deserved=rl(cpu="4", memory="32Gi", nvidia_com__gpu="1"))
    assert _run_relevant(objects) == []


def test_reclaim_relevance_fires_when_any_dimension_over_deserved_suffices():
    from schedcheck.mutants import mutant

    with mutant("capacity-reclaim-any-dimension"):
        found = _run_relevant(_gpu_over_deserved())
    assert any("reclaim took default/etl-0 from queue gpu-team" in m for m in found), found
