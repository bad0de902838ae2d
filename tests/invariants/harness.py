"""Run a small cluster under the invariant engine, optionally corrupting state at a checkpoint first."""

from __future__ import annotations

from collections.abc import Callable

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference.k8s import ClusterObjects, PriorityClass, Queue
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group, rl
from tests.framework.helpers import conf

TIERS = (["priority", "gang", "conformance"], ["predicates", "nodeorder"])
FAIR_TIERS = (["priority", "gang", "conformance"], ["drf", "predicates", "proportion", "nodeorder"])
# hook list name -> where a corruption runs (before the engine's own hook of that list)
WHEN = {"open": "on_session_open", "operation": "on_operation", "statement": "on_statement_end",
        "action": "on_action_end", "closed": "on_session_closed"}


def cluster(kind: str = "basic") -> ClusterObjects:
    """basic: one gang that fits and one that cannot; partial-gang: a gang only part of which fits;
    preempt: a low-priority job to evict."""
    if kind == "capped-queue":
        # queue "capped" deserves at most 2 cpu / 1Gi / 1 pod; job a (two 2-cpu tasks, min 2) wants more
        capped = Queue("capped", "capped", capability=rl(cpu="2", memory="1Gi", pods="1"),
                       guarantee=rl(cpu="1"))
        return ClusterObjects(
            nodes=[node("n1", cpu="8", memory="8Gi")],
            pods=[pod(f"a-{i}", group="a", cpu="2", memory="1Gi") for i in range(2)]
            + [pod("b-0", group="b", cpu="2", memory="1Gi"), pod("c-0", group="c", cpu="2", memory="1Gi")],
            pod_groups=[pod_group("a", 2, queue="capped"), pod_group("b", 1, queue="capped"),
                        pod_group("c", 1, queue="capped")],
            queues=[capped],
        )
    if kind == "preempt-gang-min":  # the victim job sits exactly at its minAvailable
        objects = cluster("preempt")
        objects.pod_groups[0].min_member = 2
        return objects
    if kind == "reclaim-own-queue":  # n1 holds a task of the reclaimer's own queue, n2 one of qb
        return ClusterObjects(
            nodes=[node("n1", cpu="2"), node("n2", cpu="2")],
            pods=[pod("mate-0", group="mate", cpu="1", node_name="n1", phase="Running"),
                  pod("hog-0", group="hog", cpu="2", node_name="n2", phase="Running"),
                  pod("want-0", group="want", cpu="2")],
            pod_groups=[pod_group("mate", 0, queue="qa", phase="Running"),
                        pod_group("hog", 0, queue="qb", phase="Running"),
                        pod_group("want", 1, queue="qa", phase="Inqueue")],
            queues=[Queue("qa", "qa", weight=3), Queue("qb", "qb")],
        )
    if kind == "preempt-gang-discard":  # the first task preempts, the second cannot: the gang is discarded
        return ClusterObjects(
            nodes=[node("n1", cpu="4")],
            pods=[pod(f"low-{i}", group="low", cpu="2", node_name="n1", phase="Running") for i in range(2)]
            + [pod(f"high-{i}", group="high", cpu="3") for i in range(2)],
            pod_groups=[pod_group("low", 0, phase="Running"),
                        pod_group("high", 2, phase="Inqueue", priority_class_name="high")],
            priority_classes=[PriorityClass("high", 1000)],
        )
    if kind == "preempt-gang-discard-bound":  # as preempt-gang-discard, with Bound victims
        objects = cluster("preempt-gang-discard")
        for p in objects.pods:
            if p.name.startswith("low-"):
                p.phase = "Pending"  # on a node and pending: Bound
        return objects
    if kind == "preempt-insufficient":  # evicting the only allowed victim is not enough: discarded
        return ClusterObjects(
            nodes=[node("n1", cpu="4")],
            pods=[pod("small-0", group="small", cpu="1", node_name="n1", phase="Running"),
                  pod("big-0", group="big", cpu="3", node_name="n1", phase="Running"),
                  pod("new-0", group="new", cpu="2")],
            pod_groups=[pod_group("small", 0, phase="Running", priority_class_name="p1"),
                        pod_group("big", 0, phase="Running", priority_class_name="p100"),
                        pod_group("new", 1, phase="Inqueue", priority_class_name="p50")],
            priority_classes=[PriorityClass("p1", 1), PriorityClass("p50", 50), PriorityClass("p100", 100)],
        )
    if kind == "preempt-fits":  # room is already free: preempt must pipeline without evicting
        objects = cluster("preempt")
        objects.nodes = [node("n1", cpu="6")]
        return objects
    if kind == "preempt-equal":  # the victim job has the same priority: no preemption is allowed
        objects = cluster("preempt")
        objects.pod_groups[0].priority_class_name = "high"
        return objects
    if kind == "preempt-two-victims":  # the lower-priority small victim goes first though the big one suffices
        return ClusterObjects(
            nodes=[node("n1", cpu="4")],
            pods=[pod("small-0", group="small", cpu="1", node_name="n1", phase="Running"),
                  pod("big-0", group="big", cpu="3", node_name="n1", phase="Running"),
                  pod("new-0", group="new", cpu="3")],
            pod_groups=[pod_group("small", 0, phase="Running", priority_class_name="p1"),
                        pod_group("big", 0, phase="Running", priority_class_name="p2"),
                        pod_group("new", 1, phase="Inqueue", priority_class_name="p100")],
            priority_classes=[PriorityClass("p1", 1), PriorityClass("p2", 2), PriorityClass("p100", 100)],
        )
    if kind in ("reclaim", "reclaim-within-deserved", "reclaim-overused"):
        return _reclaim_cluster(kind)
    if kind == "enqueue-over-capability":  # job b's minResources exceed what queue "capped" may hold
        capped = Queue("capped", "capped", capability=rl(cpu="2", memory="4Gi"))
        return ClusterObjects(
            nodes=[node("n1", cpu="8", memory="8Gi")],
            pods=[pod("a-0", group="a", cpu="1"), pod("b-0", group="b", cpu="1")],
            pod_groups=[pod_group("a", 1, queue="capped", min_resources=rl(cpu="1")),
                        pod_group("b", 1, queue="capped", min_resources=rl(cpu="4"))],
            queues=[capped],
        )
    if kind == "overcommit-two-jobs":  # a 4-cpu node (idle 4.8 at the default factor); two 3-cpu minimums
        return ClusterObjects(
            nodes=[node("n1", cpu="4", memory="8Gi")],
            pods=[pod("a-0", group="a", cpu="3"), pod("b-0", group="b", cpu="3")],
            pod_groups=[pod_group("a", 1, min_resources=rl(cpu="3")), pod_group("b", 1, min_resources=rl(cpu="3"))],
        )
    if kind == "overcommit-too-big":  # a 6-cpu minimum on a 4-cpu node: overcommit rejects it
        return ClusterObjects(
            nodes=[node("n1", cpu="4", memory="8Gi")],
            pods=[pod("a-0", group="a", cpu="6")],
            pod_groups=[pod_group("a", 1, min_resources=rl(cpu="6"))],
        )
    if kind == "capacity-siblings":  # root > eng (4 cpu) > team-a, team-b; each team's job wants 3 cpu
        return ClusterObjects(
            nodes=[node("n1", cpu="8", memory="16Gi")],
            pods=[pod("a-0", group="a", cpu="3"), pod("b-0", group="b", cpu="3")],
            pod_groups=[pod_group("a", 1, queue="team-a", min_resources=rl(cpu="3")),
                        pod_group("b", 1, queue="team-b", min_resources=rl(cpu="3"))],
            queues=[Queue("root", "root"), Queue("eng", "eng", parent="root", capability=rl(cpu="4", memory="8Gi")),
                    Queue("team-a", "team-a", parent="eng"), Queue("team-b", "team-b", parent="eng")],
        )
    if kind == "weighted-queues":  # two queues (weights 3 and 1) both asking for more than the 8-cpu node
        return ClusterObjects(
            nodes=[node("n1", cpu="8", memory="16Gi")],
            pods=[pod(f"a-{i}", group="a", cpu="1") for i in range(8)] + [pod(f"b-{i}", group="b", cpu="1")
                                                                           for i in range(8)],
            pod_groups=[pod_group("a", 1, queue="qa", phase="Inqueue"), pod_group("b", 1, queue="qb",
                                                                                   phase="Inqueue")],
            queues=[Queue("qa", "qa", weight=3, guarantee=rl(cpu="3")), Queue("qb", "qb", guarantee=rl(cpu="3"))],
        )
    if kind == "reclaim-two-victims":  # qb runs two 1-cpu pods on the full 2-cpu n1; qa wants 1 cpu
        return ClusterObjects(
            nodes=[node("n1", cpu="2")],
            pods=[pod(f"hog-{i}", group="hog", cpu="1", node_name="n1", phase="Running") for i in range(2)]
            + [pod("want-0", group="want", cpu="1")],
            pod_groups=[pod_group("hog", 0, queue="qb", phase="Running"),
                        pod_group("want", 1, queue="qa", phase="Inqueue")],
            queues=[Queue("qa", "qa"), Queue("qb", "qb")],
        )
    if kind == "preempt-never":  # the high-priority pod may not preempt (preemptionPolicy: Never)
        objects = cluster("preempt")
        for p in objects.pods:
            if p.name.startswith("high-"):
                p.preemption_policy = "Never"
        return objects
    if kind == "partial-gang":
        return ClusterObjects(nodes=[node("n1", cpu="4")], pods=[pod(f"g-{i}", group="g", cpu="2") for i in range(3)],
                              pod_groups=[pod_group("g", 3)])
    if kind == "basic":
        return ClusterObjects(
            nodes=[node("n1", cpu="4"), node("n2", cpu="4")],
            pods=[pod(f"fit-{i}", group="fit", cpu="2") for i in range(3)]
            + [pod(f"big-{i}", group="big", cpu="3") for i in range(2)]
            + [pod("run-0", group="run", cpu="1", node_name="n2", phase="Running")],
            pod_groups=[pod_group("fit", 3), pod_group("big", 2), pod_group("run", 1, phase="Running")],
        )
    return ClusterObjects(
        nodes=[node("n1", cpu="4")],
        pods=[pod(f"low-{i}", group="low", cpu="2", node_name="n1", phase="Running") for i in range(2)]
        + [pod("high-0", group="high", cpu="2")],
        pod_groups=[pod_group("low", 1, phase="Running"), pod_group("high", 1, phase="Inqueue",
                                                                      priority_class_name="high")],
        priority_classes=[PriorityClass("high", 1000)],
    )


def _reclaim_cluster(kind: str) -> ClusterObjects:
    """Two queues on two nodes; queue qb's job "hog" holds a 2-cpu pod on each node; qa wants 2 cpu."""
    qa, qb = Queue("qa", "qa"), Queue("qb", "qb")
    nodes = [node("n1", cpu="3"), node("n2", cpu="3")]
    pods = [pod("hog-0", group="hog", cpu="2", node_name="n1", phase="Running"),
            pod("hog-1", group="hog", cpu="2", node_name="n2", phase="Running"),
            pod("want-0", group="want", cpu="2")]
    groups = [pod_group("hog", 0, queue="qb", phase="Running"), pod_group("want", 1, queue="qa", phase="Inqueue")]
    if kind == "reclaim":  # n1 and n2 are full; qb is over its deserved share
        nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    if kind == "reclaim-overused":  # qa is capped at what it already runs, so it is overused
        qa = Queue("qa", "qa", capability=rl(cpu="1", memory="1Gi", pods="1"))
        pods.append(pod("run-0", group="run", cpu="1", memory="1Gi", node_name="n1", phase="Running"))
        groups.append(pod_group("run", 1, queue="qa", phase="Running"))
    return ClusterObjects(nodes=nodes, pods=pods, pod_groups=groups, queues=[qa, qb])


def check(invariant_id: str | None, objects: ClusterObjects | None = None,
          actions: str = "enqueue, allocate, backfill", corrupt: tuple[str, Callable] | None = None,
          cycles: int = 1, tiers=TIERS) -> InvariantEngine:
    """Run under the engine with one invariant (or, with None, the whole catalog)."""
    engine = InvariantEngine(only=[invariant_id] if invariant_id else None)

    def hooks():
        h = engine.hooks()
        if corrupt is not None:
            when, fn = corrupt
            getattr(h, WHEN[when]).insert(0, fn)
        return h

    scheduler = Scheduler(objects or cluster(), conf(*tiers, actions=actions), hooks_factory=hooks)
    scheduler.run(cycles)
    return engine
