"""enqueue.admits-what-fits: with proportion alone deciding, enqueue leaves no job Pending that fits."""

from __future__ import annotations

import schedcheck.reference.plugins.proportion as proportion
from schedcheck.reference.framework.session import REJECT
from schedcheck.reference.k8s import ClusterObjects, Queue
from tests.builders import node, pod, pod_group, rl
from tests.invariants.harness import check

RULE = "enqueue.admits-what-fits"
TIERS = (["priority", "gang", "conformance"], ["proportion", "predicates"])
WITH_OVERCOMMIT = (["priority", "gang", "conformance"], ["proportion", "overcommit", "predicates"])


def _capped(cpu: str = "3") -> ClusterObjects:
    """A queue capped at 4 cpu and two jobs asking 3 cpu each: one is admitted, the other cannot fit."""
    return ClusterObjects(
        nodes=[node("n1", cpu="8", memory="16Gi")],
        queues=[Queue("q", "q", capability=rl(cpu="4", memory="8Gi"))],
        pods=[pod("a-0", group="a", cpu=cpu), pod("b-0", group="b", cpu=cpu)],
        pod_groups=[pod_group("a", 1, queue="q", min_resources=rl(cpu=cpu)),
                    pod_group("b", 1, queue="q", min_resources=rl(cpu=cpu))],
    )


def _findings(engine) -> list[str]:
    assert engine.findings == []  # a safety rule: what it finds is a violation
    return [v.invariant for v in engine.violations]


def test_passes_when_the_second_job_does_not_fit():
    assert _findings(check(RULE, _capped(), actions="enqueue", tiers=TIERS)) == []


def test_passes_when_both_are_admitted():
    assert _findings(check(RULE, _capped(cpu="2"), actions="enqueue", tiers=TIERS)) == []


def test_fires_when_proportion_rejects_a_job_that_fits(monkeypatch):
    monkeypatch.setattr(proportion.ProportionPlugin, "job_enqueueable", lambda self, job: REJECT)
    assert RULE in _findings(check(RULE, _capped(cpu="2"), actions="enqueue", tiers=TIERS))


def test_is_silent_when_another_plugin_shares_the_vote(monkeypatch):
    monkeypatch.setattr(proportion.ProportionPlugin, "job_enqueueable", lambda self, job: REJECT)
    assert _findings(check(RULE, _capped(cpu="2"), actions="enqueue", tiers=WITH_OVERCOMMIT)) == []
