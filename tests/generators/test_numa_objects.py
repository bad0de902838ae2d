"""The generators draw numa-aware with Numatopology objects and Guaranteed pods carrying a topology policy, in
the forms the reference reads (judged by its own readers), consistent with their nodes, shrinking to the plain
case."""

from __future__ import annotations

import copy
from collections import Counter
from functools import cache
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings

from schedcheck.generators import numa
from schedcheck.generators.confs import TIER_SETS, conf_features, default_conf, scheduler_confs
from schedcheck.generators.consistency import cluster_problems
from schedcheck.generators.scenarios import sample_documents, scenarios
from schedcheck.reference.plugins.numaaware import NUMA_POLICY_KEY, pod_qos
from schedcheck.invariants.known import known_assertion_for
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util.assertion import AssertionViolation
from schedcheck.scenario.loader import scenario_from_document
from tests.generators.test_plugin_objects import FIND


def _with_numa(conf: dict[str, Any]) -> dict[str, Any]:
    conf = copy.deepcopy(conf)
    if "numa-aware" not in conf_features(conf).plugins:
        conf["tiers"][-1]["plugins"].append({"name": "numa-aware"})
    return conf


@cache
def documents() -> tuple[dict[str, Any], ...]:
    return tuple(sample_documents(scenarios(confs=scheduler_confs().map(_with_numa), min_nodes=2, min_jobs=3),
                                  60, 3))


def test_the_policy_key_is_the_one_the_reference_reads():
    assert numa.POLICY_KEY == NUMA_POLICY_KEY


def test_documents_load_without_warnings_and_are_consistent():
    for doc in documents():
        assert scenario_from_document(doc, "<generated>").warnings == []
        assert cluster_problems(doc) == []


def test_objects_describe_their_nodes_and_pods_carry_policies():
    seen: Counter[str] = Counter()
    for doc in documents():
        scenario = scenario_from_document(doc, "<generated>")
        nodes = {n.name: n for n in scenario.objects.nodes}
        for topo in scenario.objects.numatopologies:
            node = nodes[topo.name]
            whole = int(node.allocatable["cpu"].as_fraction())
            assert len(topo.cpu_detail) == min(numa.MAX_CPUS, max(1, whole))
            assert topo.numa_res["cpu"].allocatable <= set(topo.cpu_detail)
            numas = {info.numa for info in topo.cpu_detail.values()}
            seen[f"{len(numas)} NUMA nodes"] += 1
            seen[topo.policies["TopologyManagerPolicy"]] += 1
            seen["reserved"] += bool(topo.res_reserved)
            seen["pinned pods"] += bool(topo.pod_allocations)
            seen["smt"] += len({info.core for info in topo.cpu_detail.values()}) < len(topo.cpu_detail)
        for pod in scenario.objects.pods:
            if NUMA_POLICY_KEY in pod.annotations:
                seen["with a policy"] += 1
                seen["guaranteed with a policy"] += pod_qos(pod) == "Guaranteed"
    wanted = ("1 NUMA nodes", "2 NUMA nodes", "4 NUMA nodes", "single-numa-node", "best-effort", "restricted",
              "none", "reserved", "pinned pods", "smt", "with a policy")
    assert all(seen[key] > 0 for key in wanted), seen
    assert seen["guaranteed with a policy"] > seen["with a policy"] // 2, seen


def _places_by_numa(doc: dict[str, Any]) -> bool:
    scenario = scenario_from_document(doc, "<generated>")
    scheduler = Scheduler(scenario.objects, scenario.conf, seed=0, now=scenario.now, server_options=scenario.options)
    try:
        scheduler.run_once()
    except AssertionViolation as exc:  # upstream's own known panic (task-topology, F21) ends the session
        if known_assertion_for(exc) is None:
            raise
        return False
    return any(scheduler.cache.unassigned_numa_pods.values())


def test_the_reference_places_some_pods_by_numa():
    search = settings(max_examples=300, deadline=None, database=None, phases=[Phase.generate], derandomize=True,
                      suppress_health_check=list(HealthCheck))
    doc = find(scenarios(confs=scheduler_confs().map(_with_numa), min_nodes=2, min_jobs=3), _places_by_numa,
               settings=search)
    assert any(o["kind"] == "Numatopology" for o in doc["objects"])


def test_default_scenarios_add_numa_aware_last_and_shrink_to_a_plain_conf_plus_the_plugin():
    doc = find(scenarios(), lambda d: "numa-aware" in conf_features(d["schedulerConf"]).plugins, settings=FIND)
    conf = doc["schedulerConf"]
    assert conf["actions"] == default_conf()["actions"]
    tiers = [[p for p in tier["plugins"] if p["name"] != "numa-aware"] for tier in conf["tiers"]]
    assert tiers in TIER_SETS.values() and conf["tiers"][-1]["plugins"][-1] == {"name": "numa-aware"}


def test_scenarios_shrink_to_no_object_and_no_policy():
    doc = find(scenarios(confs=scheduler_confs().map(_with_numa)),
               lambda d: any(o["kind"] == "Pod" for o in d["objects"]), settings=FIND)
    assert not [o for o in doc["objects"] if o["kind"] == "Numatopology"]
    assert not [o for o in doc["objects"] if NUMA_POLICY_KEY in o["metadata"].get("annotations", {})]
