"""queue.proportion-recomputed: proportion's state against a from-scratch recomputation."""

from __future__ import annotations

import pytest

import schedcheck.reference.plugins.proportion as proportion
from schedcheck.reference.api.resource_info import Resource
from tests.invariants.harness import FAIR_TIERS, check, cluster

RULE = "queue.proportion-recomputed"


def _ids(engine) -> list[str]:
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("kind", ["capped-queue", "enqueue-over-capability", "reclaim", "basic", "partial-gang"])
def test_passes_on_the_faithful_plugin(kind):
    assert _ids(check(RULE, cluster(kind), actions="enqueue, allocate, backfill", tiers=FAIR_TIERS)) == []


def test_fires_when_deserved_forgets_the_weight(monkeypatch):
    original = proportion._grow_deserved
    monkeypatch.setattr(proportion, "_grow_deserved", lambda attr, remaining, fraction: original(attr, remaining, 1.0))
    objects = cluster("reclaim")
    assert RULE in _ids(check(RULE, objects, tiers=FAIR_TIERS))


def test_fires_when_a_deserved_share_is_corrupted():
    def corrupt(ssn, *_):
        for attr in ssn.plugins["proportion"].queue_attrs.values():
            attr.deserved = Resource(attr.deserved.milli_cpu + 1000, attr.deserved.memory)
    assert RULE in _ids(check(RULE, cluster("capped-queue"), corrupt=("action", corrupt), tiers=FAIR_TIERS))


def test_fires_when_enqueue_does_not_reserve_the_admitted_minimum(monkeypatch):
    monkeypatch.setattr(proportion.ProportionPlugin, "job_enqueued", lambda self, job: None)
    engine = check(RULE, cluster("enqueue-over-capability"), actions="enqueue", tiers=FAIR_TIERS)
    assert any("inqueue" in v.message for v in engine.violations)


def test_fires_when_the_share_is_not_updated(monkeypatch):
    monkeypatch.setattr(proportion.QueueAttr, "update_share", lambda self: None)
    assert RULE in _ids(check(RULE, cluster("capped-queue"), tiers=FAIR_TIERS))


def test_drf_share_passes_on_the_faithful_plugin():
    for kind in ("basic", "partial-gang", "capped-queue"):
        engine = check("queue.drf-share", cluster(kind), actions="enqueue, allocate, backfill", tiers=FAIR_TIERS)
        assert engine.violations == []


def test_drf_share_fires_when_the_share_is_not_updated(monkeypatch):
    import schedcheck.reference.plugins.drf as drf

    monkeypatch.setattr(drf.DrfPlugin, "update_share", lambda self, attr: None)
    engine = check("queue.drf-share", cluster("basic"), tiers=FAIR_TIERS)
    assert "queue.drf-share" in _ids(engine)
