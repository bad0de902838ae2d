"""generators/dra.py apply_dra_quotas (drawn last): capacity's DRA quotas, device counts and consumable-capacity
dimensions, only where a scenario drew DRA claims under a conf with capacity; the documents load cleanly and the
faithful reference keeps queue.capacity-dra-within-quota."""

from __future__ import annotations

import functools

from schedcheck.generators import scenarios as module
from schedcheck.generators.dra import apply_dra, apply_dra_quotas
from schedcheck.generators.scenarios import sample_documents, scenarios
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import scenario_from_document


def test_quotas_are_drawn_only_with_claims_and_capacity_and_the_documents_load_and_keep_the_rule(monkeypatch):
    monkeypatch.setattr(module, "apply_dra", functools.partial(apply_dra, percent=100))
    monkeypatch.setattr(module, "apply_dra_quotas", functools.partial(apply_dra_quotas, percent=100))
    # which samples reach a conf with capacity moves with every draw added to the generators: seeds until
    # some quota documents, one with a claim asking for capacity, are found (or 30 seeds of 60 documents)
    quota_docs: list = []
    for seed in range(30):
        found = _quota_documents(sample_documents(scenarios(), count=60, seed=seed))
        quota_docs += found
        if len(quota_docs) >= 3 and any(_asks_capacity(doc) for doc in quota_docs):
            break
    assert quota_docs, "no sample drew a DRA quota"
    asked = 0
    for doc in quota_docs:
        scenario = scenario_from_document(doc, "<generated>")
        assert not [w for w in scenario.warnings if "deviceclass" in w or "nil map" in w], scenario.warnings
        asked += _asks_capacity(doc)
        engine = InvariantEngine(only=["queue.capacity-dra-within-quota"])
        result = run_scenario(scenario, engine=engine)
        assert result.violations == [] and [f for f in result.findings if f.get("known") != "F50"] == []
    assert asked, "no quota sample drew a claim asking for capacity"


def _asks_capacity(doc: dict) -> bool:
    return any(o["kind"] == "ResourceClaim" and "capacity" in o["spec"]["devices"]["requests"][0]["exactly"]
               for o in doc["objects"])


def _quota_documents(docs: list) -> list:
    quota_docs = []
    for doc in docs:
        named = [name for o in doc["objects"] if o["kind"] == "Queue"
                 for name in (o.get("spec") or {}).get("capability") or {} if "deviceclass/" in name]
        capacity = any(p.get("name") == "capacity" for t in doc["schedulerConf"].get("tiers", [])
                       for p in t.get("plugins", []))
        claims = any(o["kind"] == "ResourceClaim" for o in doc["objects"])
        assert not named or (capacity and claims)
        if named:
            quota_docs.append(doc)
    return quota_docs
