"""nodeorder plugin: k8s scorers with worked examples, normalisation, weights and the shared mirror."""

from __future__ import annotations

import pytest

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.k8s import (
    GROUP_NAME_ANNOTATION,
    ClusterObjects,
    Container,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
)
from schedcheck.reference.plugins.nodeorder import ScoreError, balanced_resource_score, default_normalize
from tests.builders import node, pod, pod_group, rl

ONLY = {"leastrequested.weight": 0, "mostrequested.weight": 0, "balancedresource.weight": 0,
        "nodeaffinity.weight": 0, "tainttoleration.weight": 0}


def open_ssn(nodes, pods, nodeorder_args=None, plugins=("predicates", "nodeorder")) -> Session:
    groups = sorted({p.annotations[GROUP_NAME_ANNOTATION] for p in pods})
    objects = ClusterObjects(nodes=nodes, pods=pods, pod_groups=[pod_group(g, 1, phase="Inqueue") for g in groups])
    options = []
    for name in plugins:
        option = PluginOption(name, arguments=dict(nodeorder_args or {}) if name == "nodeorder" else {})
        apply_plugin_conf_defaults(option)
        options.append(option)
    return open_session(SchedulerCache(objects), SchedulerConf(actions=["allocate"], tiers=[Tier(options)]),
                        cycle=0, seed=0)


def only(**weights: int) -> dict:
    return {**ONLY, **{k.replace("_", "."): v for k, v in weights.items()}}


def task_of(ssn: Session, name: str):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def scores(ssn: Session, task_name: str) -> dict[str, float]:
    return ssn.batch_node_order_fn(task_of(ssn, task_name), ssn.node_list)


def running(name: str, node_name: str, **extra) -> Pod:
    return pod(name, group="run", node_name=node_name, phase="Running", **extra)


def test_default_weights_worked_example():
    # p asks 1 cpu / 2Gi; n1 (4 cpu, 8Gi) already runs 1 cpu / 1Gi, n2 is empty.
    # n1 least: cpu (4000-2000)*100/4000 = 50, mem (8-3)*100/8 = 62 (62.5 truncated);
    #           (50*50 + 62*50) / 100 = 56
    #    balanced: with pod cpu .5 mem .375 -> std .0625 -> 93; without .25/.125 -> 93;
    #              50 + (50 + 93 - 93) / 2 = 75
    #    taints: no PreferNoSchedule taint anywhere -> reversed normalisation gives 100, x3 = 300
    # n2 least: 75 and 75 -> 75; balanced: .25/.25 -> 100, 0/0 -> 100 -> 75; taints 300
    ssn = open_ssn([node("n1"), node("n2")], [running("r-0", "n1", cpu="1", memory="1Gi"),
                                              pod("p", cpu="1", memory="2Gi")])
    assert scores(ssn, "p") == {"n1": 56 + 75 + 300, "n2": 75 + 75 + 300}


def test_least_allocated_counts_missing_requests_as_100m_and_200mi():
    # The running pod has no requests (non-zero: 100m, 200Mi); p asks 200m and no memory (200Mi).
    # cpu (1000-300)*100/1000 = 70; mem (1024-400)*100/1024 = 60 (60.9); (70*50 + 60*50)/100 = 65
    ssn = open_ssn([node("n1", cpu="1", memory="1Gi")],
                   [running("r-0", "n1", cpu="", memory=""), pod("p", cpu="200m", memory="")],
                   only(leastrequested_weight=1))
    assert scores(ssn, "p") == {"n1": 65.0}


def test_explicit_zero_request_is_not_missing():
    # cpu: 0 explicitly stays 0: (1000-0)*100/1000 = 100; mem missing -> 200Mi -> 80 (80.47)
    ssn = open_ssn([node("n1", cpu="1", memory="1Gi")], [pod("p", cpu="0", memory="")],
                   only(leastrequested_weight=1))
    assert scores(ssn, "p") == {"n1": (100 * 50 + 80 * 50) // 100}


def test_least_allocated_over_capacity_scores_zero_for_that_resource():
    # cpu 5000 > 4000 -> 0; mem (8-2)*100/8 = 75 -> (0*50 + 75*50)/100 = 37
    ssn = open_ssn([node("n1")], [running("r-0", "n1", cpu="3", memory="1Gi"), pod("p", cpu="2", memory="1Gi")],
                   only(leastrequested_weight=2))
    assert scores(ssn, "p") == {"n1": 37.0 * 2}


def test_most_allocated_clamps_to_capacity():
    # cpu min(5000, 4000)*100/4000 = 100; mem 2Gi of 8Gi -> 25; (100 + 25) / 2 = 62
    ssn = open_ssn([node("n1")], [running("r-0", "n1", cpu="3", memory="1Gi"), pod("p", cpu="2", memory="1Gi")],
                   only(mostrequested_weight=1))
    assert scores(ssn, "p") == {"n1": 62.0}


def test_balanced_allocation_truncates_the_halved_change():
    # with pod: cpu .25, mem .375 -> std .0625 -> 93; empty node -> 100; 50 + (50 - 7) / 2 = 71
    ssn = open_ssn([node("n1")], [pod("p", cpu="1", memory="3Gi")], only(balancedresource_weight=1))
    assert scores(ssn, "p") == {"n1": 71.0}


def test_balanced_allocation_uses_actual_requests_and_skips_best_effort_pods():
    # r-0 has no requests (0 actual); p: cpu .2, mem 0 -> std .1 -> 90; without 100 -> 50 + 40/2 = 70
    ssn = open_ssn([node("n1", cpu="1", memory="1Gi")],
                   [running("r-0", "n1", cpu="", memory=""), pod("p", cpu="200m", memory=""),
                    pod("be", cpu="", memory="")], only(balancedresource_weight=1))
    assert scores(ssn, "p") == {"n1": 70.0}
    assert scores(ssn, "be") == {"n1": 0.0}


def test_balanced_allocation_with_a_gpu_uses_the_population_std():
    # fractions .25, .25, .5: mean 1/3, variance 1/72, std .1179 -> 88; without pod 0,0,0 -> 100
    # 50 + (50 + 88 - 100) / 2 = 69
    gpu_node = Node("n1", "uid-n1", allocatable=rl(cpu="4", memory="8Gi", pods="110", nvidia_com__gpu="4"))
    gpu_pod = pod("p")
    gpu_pod.containers = [Container("main", rl(cpu="1", memory="2Gi", nvidia_com__gpu="2"))]
    ssn = open_ssn([gpu_node, node("n2")], [gpu_pod], only(balancedresource_weight=1))
    # n2 has no gpu: the gpu entry is dropped -> .25/.25 -> 100 -> 75
    assert scores(ssn, "p") == {"n1": 69.0, "n2": 75.0}


def test_balanced_score_helper():
    assert balanced_resource_score([]) == 100
    assert balanced_resource_score([(3, 4)]) == 100
    assert balanced_resource_score([(8, 4), (0, 4)]) == 50  # fractions capped at 1


def _labelled(name: str, **labels: str) -> Node:
    return node(name, labels=labels)


def _preferred(*terms: tuple[int, str, str, list[str]]) -> NodeAffinity:
    return NodeAffinity(preferred=[
        PreferredSchedulingTerm(w, NodeSelectorTerm([NodeSelectorRequirement(k, op, v)])) for w, k, op, v in terms])


def test_node_affinity_sums_matching_weights_and_normalises_to_the_best_node():
    # raw: n1 10 + 30 = 40, n2 10, n3 0 -> 100, 25, 0 -> x2
    p = pod("p", node_affinity=_preferred((10, "zone", "In", ["a"]), (30, "ssd", "Exists", []),
                                          (0, "zone", "Exists", [])))  # weight 0 is ignored
    ssn = open_ssn([_labelled("n1", zone="a", ssd="1"), _labelled("n2", zone="a"), _labelled("n3")], [p],
                   only(nodeaffinity_weight=2))
    assert scores(ssn, "p") == {"n1": 200.0, "n2": 50.0, "n3": 0.0}


def test_node_affinity_without_preferred_terms_is_skipped():
    ssn = open_ssn([_labelled("n1", zone="a")], [pod("p")], only(nodeaffinity_weight=2))
    assert scores(ssn, "p") == {"n1": 0.0}


def test_invalid_preferred_term_fails_the_whole_batch():
    p = pod("p", node_affinity=_preferred((10, "k", "Gt", ["1.5"])))
    ssn = open_ssn([_labelled("n1", k="2")], [p], only(nodeaffinity_weight=1))
    with pytest.raises(ScoreError):
        scores(ssn, "p")
    ssn = open_ssn([_labelled("n1", k="2")], [p], only(leastrequested_weight=1))  # scorer off: no error
    assert scores(ssn, "p") == {"n1": 81.0}  # cpu 75, mem 87 (87.5) -> (75*50 + 87*50) / 100


def test_taint_toleration_counts_prefer_no_schedule_and_reverses():
    # raw untolerated PreferNoSchedule: n1 2, n2 1 (its NoSchedule taint does not count), n3 0
    # reversed: 100 - 100*2/2 = 0, 100 - 100*1/2 = 50, 100 -> x3
    n1 = node("n1", taints=[Taint("k1", "PreferNoSchedule"), Taint("k2", "PreferNoSchedule")])
    n2 = node("n2", taints=[Taint("k1", "PreferNoSchedule"), Taint("k3", "NoSchedule")])
    pods = [pod("p"), pod("t", tolerations=[Toleration("k1", "Exists", effect="PreferNoSchedule")]),
            pod("u", tolerations=[Toleration("k1", "Exists", effect="NoSchedule")])]
    ssn = open_ssn([n1, n2, node("n3")], pods, only(tainttoleration_weight=3))
    assert scores(ssn, "p") == {"n1": 0.0, "n2": 150.0, "n3": 300.0}
    assert scores(ssn, "t") == {"n1": 0.0, "n2": 300.0, "n3": 300.0}  # raw 1, 0, 0
    assert scores(ssn, "u") == scores(ssn, "p")  # a NoSchedule toleration does not count here


def test_normalisation_helper():
    assert default_normalize([0, 0], reverse=False) == [0, 0]
    assert default_normalize([0, 0], reverse=True) == [100, 100]
    assert default_normalize([3, 1, 0], reverse=False) == [100, 33, 0]
    assert default_normalize([3, 1, 0], reverse=True) == [0, 67, 100]


def test_zero_weights_disable_every_scorer_and_non_int_weights_are_ignored():
    ssn = open_ssn([node("n1")], [pod("p")], ONLY)
    assert scores(ssn, "p") == {"n1": 0.0}
    ssn = open_ssn([node("n1")], [pod("p")], {**ONLY, "leastrequested.weight": "3"})  # not an int: default 1
    assert scores(ssn, "p") == {"n1": 81.0}


def test_requested_follows_in_session_allocations_and_evictions():
    ssn = open_ssn([node("n1")], [running("r-0", "n1", cpu="2", memory="2Gi"), pod("a", cpu="1", memory="1Gi"),
                                  pod("p", cpu="1", memory="1Gi")], only(leastrequested_weight=1))
    # with r-0: cpu 3000 -> 25, mem 3Gi -> 62 -> 43
    assert scores(ssn, "p") == {"n1": 43.0}
    a, n1 = task_of(ssn, "a"), ssn.nodes["n1"]
    assert ssn.pre_predicate_fn(a) is None
    stmt = Statement(ssn)
    stmt.allocate(a, n1)  # + a: cpu 4000 -> 0, mem 4Gi -> 50 -> 25
    assert scores(ssn, "p") == {"n1": 25.0}
    stmt.evict(task_of(ssn, "r-0"), "test")  # - r-0: cpu 2000 -> 50, mem 2Gi -> 75 -> 62
    assert scores(ssn, "p") == {"n1": 62.0}


def test_without_the_predicates_plugin_the_mirror_stays_as_opened():
    ssn = open_ssn([node("n1")], [pod("a", cpu="1", memory="1Gi"), pod("p", cpu="1", memory="1Gi")],
                   only(leastrequested_weight=1), plugins=("nodeorder",))
    before = scores(ssn, "p")
    Statement(ssn).allocate(task_of(ssn, "a"), ssn.nodes["n1"])
    assert scores(ssn, "p") == before
