"""enqueue.overcommit: admissions judged against overcommit's rule, restated."""

from __future__ import annotations

import schedcheck.reference.plugins.overcommit as overcommit
from schedcheck.reference.k8s import ClusterObjects
from tests.builders import node, pod, pod_group, rl
from tests.invariants.harness import check

RULE = "enqueue.overcommit"
TIERS = (["priority", "gang", "conformance"], ["overcommit", "predicates"])
SLA_FIRST = (["sla"], ["overcommit", "predicates"])


def _two_jobs(cpu: str = "3") -> ClusterObjects:
    """One 4-cpu node (idle 4.8 with the default factor); two jobs asking for 3 cpu each: one fits."""
    return ClusterObjects(
        nodes=[node("n1", cpu="4", memory="8Gi")],
        pods=[pod("a-0", group="a", cpu=cpu), pod("b-0", group="b", cpu=cpu)],
        pod_groups=[pod_group("a", 1, min_resources=rl(cpu=cpu)), pod_group("b", 1, min_resources=rl(cpu=cpu))],
    )


def _violations(engine) -> list[str]:
    return [v.invariant for v in engine.violations]


def test_passes_when_overcommit_admits_one_of_two():
    assert _violations(check(RULE, _two_jobs(), actions="enqueue", tiers=TIERS)) == []


def test_passes_when_both_fit():
    assert _violations(check(RULE, _two_jobs(cpu="2"), actions="enqueue", tiers=TIERS)) == []


def test_fires_when_admissions_are_not_added_to_inqueue(monkeypatch):
    monkeypatch.setattr(overcommit.OvercommitPlugin, "job_enqueued", lambda self, job: None)
    assert RULE in _violations(check(RULE, _two_jobs(), actions="enqueue", tiers=TIERS))


def test_fires_when_the_factor_is_taken_as_unlimited(monkeypatch):
    monkeypatch.setattr(overcommit, "overcommit_factor", lambda arguments: 100.0)
    big = _two_jobs(cpu="6")
    assert RULE in _violations(check(RULE, big, actions="enqueue", tiers=TIERS))


def test_is_silent_when_an_earlier_tier_may_permit(monkeypatch):
    monkeypatch.setattr(overcommit.OvercommitPlugin, "job_enqueued", lambda self, job: None)
    assert _violations(check(RULE, _two_jobs(), actions="enqueue", tiers=SLA_FIRST)) == []


CAPACITY_TIERS = (["priority", "gang", "conformance"], ["capacity", "predicates"])


def _capacity_cluster():
    from schedcheck.reference.k8s import Queue

    queues = [Queue("root", "root"), Queue("eng", "eng", parent="root", capability=rl(cpu="4", memory="8Gi")),
              Queue("team-a", "team-a", parent="eng"), Queue("team-b", "team-b", parent="eng")]
    return ClusterObjects(
        nodes=[node("n1", cpu="8", memory="16Gi")],
        pods=[pod("a-0", group="a", cpu="3"), pod("b-0", group="b", cpu="3")],
        pod_groups=[pod_group("a", 1, queue="team-a", min_resources=rl(cpu="3")),
                    pod_group("b", 1, queue="team-b", min_resources=rl(cpu="3"))],
        queues=queues,
    )


def _capacity_run(rule: str):
    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.reference.scheduler import Scheduler
    from tests.framework.helpers import conf

    engine = InvariantEngine(only=[rule])
    Scheduler(_capacity_cluster(), conf(*CAPACITY_TIERS, actions="enqueue", capacity={"enableHierarchy": True}),
              hooks_factory=engine.hooks).run(1)
    return [v.message for v in engine.violations]


def test_capacity_admission_passes_on_the_faithful_plugin():
    assert _capacity_run("enqueue.capacity-within-real-capability") == []


def test_capacity_admission_fires_when_ancestors_are_not_checked(monkeypatch):
    import schedcheck.reference.plugins.capacity as capacity

    original = capacity.CapacityPlugin.job_enqueueable

    def leaf_only(self, job):
        saved = self._branch
        self._branch = lambda queue_id: [queue_id]  # the bug: the ancestors' realCapability is skipped
        try:
            return original(self, job)
        finally:
            self._branch = saved
    monkeypatch.setattr(capacity.CapacityPlugin, "job_enqueueable", leaf_only)
    found = _capacity_run("enqueue.capacity-within-real-capability")
    assert any("queue eng" in message for message in found)


PROGRESS = "enqueue.overcommit-admits-what-fits"


def _in_turn():
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    engine = InvariantEngine(only=[PROGRESS])
    run_scenario(load_scenario(Path(__file__).resolve().parents[2] / "tests/scenarios/overcommit-admits-in-turn.yaml"),
                 engine=engine)
    assert engine.findings == []  # a safety rule: what it finds is a violation
    return [v.invariant for v in engine.violations]


def test_overcommit_progress_passes_when_the_third_job_does_not_fit():
    assert _in_turn() == []


def test_overcommit_progress_fires_when_an_admission_is_counted_twice():
    from schedcheck.mutants import mutant

    with mutant("overcommit-inqueue-doubled"):
        assert PROGRESS in _in_turn()
