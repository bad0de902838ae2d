"""node.placement-fits: allocate within Idle, pipeline within FutureIdle."""

from __future__ import annotations

from tests.invariants.harness import check, cluster

RULE = "node.placement-fits"


def test_passes_on_the_faithful_scheduler():
    for kind in ("basic", "partial-gang", "preempt", "reclaim", "preempt-two-victims"):
        actions = "enqueue, allocate, preempt, reclaim, backfill"
        assert check(RULE, cluster(kind), actions=actions).violations == []


def test_fires_when_a_placement_leaves_idle_below_zero():
    def corrupt(ssn, op):
        if op.op == "allocate":
            ssn.nodes[op.node].idle.milli_cpu = -1000.0
    engine = check(RULE, cluster("basic"), corrupt=("operation", corrupt))
    assert engine.violations and "without room" in engine.violations[0].message


def test_reclaim_stops_when_the_reclaimer_fits(monkeypatch):
    import schedcheck.reference.actions.reclaim as reclaim
    from schedcheck.reference.k8s import ClusterObjects, Queue
    from tests.builders import node, pod, pod_group

    def two_victims() -> ClusterObjects:
        """qb runs two 1-cpu pods on the full 2-cpu n1; qa's job wants 1 cpu: one eviction is enough."""
        return ClusterObjects(
            nodes=[node("n1", cpu="2")],
            pods=[pod(f"hog-{i}", group="hog", cpu="1", node_name="n1", phase="Running") for i in range(2)]
            + [pod("want-0", group="want", cpu="1")],
            pod_groups=[pod_group("hog", 0, queue="qb", phase="Running"),
                        pod_group("want", 1, queue="qa", phase="Inqueue")],
            queues=[Queue("qa", "qa"), Queue("qb", "qb")])

    rule = "eviction.reclaim-stops-when-fits"
    faithful = check(rule, two_victims(), actions="enqueue, reclaim")
    assert faithful.violations == []

    def evict_everything(self, node_stmt, task, node, victims):
        """The bug: every victim offered is evicted, not only until the reclaimer fits."""
        queue = self.ssn.build_victims_priority_queue(victims, task)
        evicted = False
        while not queue.empty():
            node_stmt.evict(queue.pop(), "reclaim")
            evicted = True
        node_stmt.pipeline(task, node.name, evicted)
        return True
    monkeypatch.setattr(reclaim.Reclaim, "_evict_until_fits", evict_everything)
    engine = check(rule, two_victims(), actions="enqueue, reclaim")
    assert rule in [v.invariant for v in engine.violations]


def test_a_never_preempting_pod_evicts_nobody(monkeypatch):
    import schedcheck.reference.actions.preempt as preempt
    from schedcheck.reference.k8s import ClusterObjects, PriorityClass
    from tests.builders import node, pod, pod_group

    rule = "victim.preemptor-policy"

    def never() -> ClusterObjects:
        return ClusterObjects(
            nodes=[node("n1", cpu="2")],
            pods=[pod("low-0", group="low", cpu="2", node_name="n1", phase="Running"),
                  pod("high-0", group="high", cpu="2", preemption_policy="Never")],
            pod_groups=[pod_group("low", 0, phase="Running"),
                        pod_group("high", 1, phase="Inqueue", priority_class_name="high")],
            priority_classes=[PriorityClass("high", 1000)])

    assert check(rule, never(), actions="enqueue, allocate, preempt").violations == []
    monkeypatch.setattr(preempt, "preemption_policy_never", lambda task: False)  # the bug: the policy is ignored
    assert rule in [v.invariant for v in check(rule, never(), actions="enqueue, allocate, preempt").violations]


def test_evictions_reach_the_cache_exactly():
    from schedcheck.mutants import mutant

    rule = "statement.evictions-reach-the-cache"
    for kind in ("preempt", "preempt-gang-discard", "reclaim", "preempt-two-victims"):
        assert check(rule, cluster(kind), actions="enqueue, allocate, preempt, reclaim").violations == []
    with mutant("commit-loses-evictions"):
        engine = check(rule, cluster("preempt"), actions="enqueue, allocate, preempt")
    assert [v.invariant for v in engine.violations] == [rule] and "lost" in engine.violations[0].message


def test_fires_when_a_discarded_eviction_leaks_into_the_cache(monkeypatch):
    from schedcheck.reference.framework.statement import Statement

    rule = "statement.evictions-reach-the-cache"
    original = Statement.discard

    def discard(self):
        for op in self.operations:
            if op.name == "evict":
                self.ssn.cache.evict(op.task, op.reason)  # the bug: the discarded eviction reaches the cache
        original(self)
    monkeypatch.setattr(Statement, "discard", discard)
    engine = check(rule, cluster("preempt-gang-discard"), actions="enqueue, allocate, preempt")
    assert any("leaked" in v.message for v in engine.violations)
