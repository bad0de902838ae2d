"""The generators sometimes draw a Service or ReplicaSet over a job kind's pods, only where nodeorder scores
PodTopologySpread, so that the system default constraints are reached; the documents read back with the
selectors the reference derives."""

from __future__ import annotations

from functools import cache
from typing import Any

from schedcheck.generators.scenarios import profile_scenarios, sample_documents
from schedcheck.generators.spread_defaults import spread_scored
from schedcheck.reference.plugins.pod_topology_spread import DefaultSelectors
from schedcheck.scenario.loader import scenario_from_document


@cache
def documents() -> tuple[dict[str, Any], ...]:
    return tuple(sample_documents(profile_scenarios("ci"), 300, 11))


def test_spread_scored_reads_nodeorders_weight() -> None:
    def conf(*plugins: dict[str, Any]) -> dict[str, Any]:
        return {"tiers": [{"plugins": list(plugins)}]}
    assert spread_scored(conf({"name": "nodeorder"}))  # 2 when unset
    assert not spread_scored(conf({"name": "nodeorder", "arguments": {"podtopologyspread.weight": 0}}))
    assert spread_scored(conf({"name": "nodeorder", "arguments": {"podtopologyspread.weight": 1}}))
    assert not spread_scored(conf({"name": "gang"}))


def test_services_and_replica_sets_are_drawn_only_where_spread_is_scored_and_select_pods() -> None:
    kinds = {"Service": 0, "ReplicaSet": 0}
    defaulted = 0
    for doc in documents():
        drawn = [o for o in doc["objects"] if o["kind"] in kinds]
        if not drawn:
            continue
        assert spread_scored(doc["schedulerConf"]), doc["metadata"]["name"]
        for o in drawn:
            kinds[o["kind"]] += 1
        objects = scenario_from_document(doc, "generated").objects
        selectors = DefaultSelectors(objects)
        for pod in objects.pods:
            if pod.topology_spread_constraints:
                assert pod.controller_ref is None or pod.controller_ref.kind != "ReplicaSet"
            elif selectors.selector(pod) is not None:
                defaulted += 1
    assert kinds["Service"] > 0 and kinds["ReplicaSet"] > 0, kinds
    assert defaulted > 0
