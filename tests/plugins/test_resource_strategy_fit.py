"""resource-strategy-fit plugin: arguments, the strategy score, sra and the proportional predicate.

The expected numbers are upstream's own unit tests (pkg/scheduler/plugins/resource-strategy-fit/*_test.go)
plus hand-worked cases for what those leave out.
"""

from __future__ import annotations

import pytest

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.plugin import get_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION, ClusterObjects, Container, Node, Pod
from schedcheck.reference.plugins.resource_strategy_fit import (
    LEAST_ALLOCATED as LEAST,
    MOST_ALLOCATED as MOST,
    SCORING_TYPE_ANNOTATION,
    SCORING_WEIGHT_ANNOTATION,
    ResourceStrategy,
    ResourceStrategyFitPlugin,
    StrategyFit,
    find_resource_strategy,
    parse_pod_weights,
    resource_score,
    strategy_fit_config,
    strategy_fit_score,
    valid_pattern,
)
from schedcheck.reference.plugins.resource_strategy_fit_proportional import (
    BaseResource,
    ProportionalConfig,
    check_proportional,
    proportional_rates,
)
from schedcheck.reference.plugins.resource_strategy_fit_sra import SraConfig, sra_weights
from tests.builders import node, pod, pod_group, res, rl

T4, A10, GPU_NAME = "nvidia.com/t4", "nvidia.com/a10", "nvidia.com/gpu"


# -- helpers -------------------------------------------------------------------------------------


def bare_task(cpu: float, memory: float, annotations: dict[str, str] | None = None) -> TaskInfo:
    """A task whose request is exactly cpu / memory (no `pods`), as upstream's buildTaskInfo."""
    task = TaskInfo(pod("p", group="", cpu="", memory="", annotations=dict(annotations or {})))
    task.resreq = res(cpu, memory)
    return task


def bare_node(used_cpu: float, used_memory: float, cpu: float, memory: float) -> NodeInfo:
    info = NodeInfo(None, "n")
    info.used, info.allocatable = res(used_cpu, used_memory), res(cpu, memory)
    return info


def fit(weight: int, **resources: tuple[str, int]) -> StrategyFit:
    return StrategyFit(weight, {name: ResourceStrategy(*entry) for name, entry in resources.items()})


def pod_with(name: str, node_name: str = "", **requests: str) -> Pod:
    """A pod of group pg requesting `requests` (rl spelling: nvidia_com__t4 is nvidia.com/t4)."""
    phase = "Running" if node_name else "Pending"
    return Pod(name=name, namespace="c1", uid=f"uid-{name}", annotations={GROUP_NAME_ANNOTATION: "pg"},
               containers=[Container("main", rl(**requests))], node_name=node_name, phase=phase)


def node_with(name: str, **allocatable: str) -> Node:
    return Node(name=name, uid=f"uid-{name}", allocatable=rl(**allocatable))


def open_ssn(nodes, pods, arguments) -> Session:
    objects = ClusterObjects(nodes=nodes, pods=pods,
                             pod_groups=[pod_group("pg", 0, namespace="c1", phase="Inqueue")])
    option = PluginOption("resource-strategy-fit", arguments=dict(arguments))
    apply_plugin_conf_defaults(option)
    return open_session(SchedulerCache(objects), SchedulerConf(actions=["allocate"], tiers=[Tier([option])]),
                        cycle=0, seed=0)


def scores(ssn: Session) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            out[task.name] = {name: ssn.node_order_map_fn(task, n)[1] for name, n in ssn.nodes.items()}
    return out


def assert_scores(got: dict[str, dict[str, float]], want: dict[str, dict[str, float]]) -> None:
    assert got.keys() == want.keys()
    for task, by_node in want.items():
        assert got[task] == pytest.approx(by_node, abs=1e-8), task


# -- arguments -----------------------------------------------------------------------------------


def test_default_arguments():
    config = strategy_fit_config({})
    assert config == fit(10, cpu=(LEAST, 1), memory=(LEAST, 1))
    plugin = ResourceStrategyFitPlugin({})
    assert plugin.sra.weight == 0 and plugin.proportional is None


def test_weights_types_and_defaults_are_normalised():
    config = strategy_fit_config({
        "resourceStrategyFitWeight": -3,  # negative -> 10
        "resources": {"cpu": {"type": "MostAllocated", "weight": 0}, "memory": {"Type": "leastallocated",
                                                                             "WEIGHT": 2.9},
                      "example.com/foo": None},
    })
    assert config.weight == 10
    assert config.resources == {"cpu": ResourceStrategy(MOST, 1),  # weight 0 -> 1
                                 "memory": ResourceStrategy(LEAST, 2),  # fields fold case, 2.9 truncates
                                 "example.com/foo": ResourceStrategy(LEAST, 1)}  # type is case-sensitive
    assert strategy_fit_config({"resourceStrategyFitWeight": 0}).weight == 0
    assert strategy_fit_config({"resourceStrategyFitWeight": None}).weight == 0  # null decodes to 0
    assert strategy_fit_config({"resources": {}}).resources.keys() == {"cpu", "memory"}


def test_invalid_wildcards_are_dropped_without_falling_back_to_the_defaults():
    # upstream Test_calculateWeight test4 .. test7
    entry = {"type": "MostAllocated", "weight": 2}
    assert strategy_fit_config({"resources": {"cpu": {"type": "LeastAllocated", "weight": 1}, "*": entry}}) \
        == fit(10, cpu=(LEAST, 1))
    config = strategy_fit_config({"resources": {"nvidia.com/gpu/*": {"type": "MostAllocated", "weight": 3},
                                                "cloudml.gpu**": entry, "cloudml.*.gpu": entry,
                                                "*.com/gpu": entry, "*test*resource*": entry}})
    assert config == fit(10, **{"nvidia.com/gpu/*": (MOST, 3)})
    assert strategy_fit_config({"resources": {"*": entry}}).resources == {}
    assert [valid_pattern(p) for p in ("a/b", "a/*", "*", "a**", "*a", "a*b")] == [True, True] + [False] * 4


def test_undecodable_arguments_keep_their_defaults():
    # upstream exits (klog.Fatalf); the reference keeps the default of the argument at fault
    assert strategy_fit_config({"resourceStrategyFitWeight": "5"}).weight == 10
    assert strategy_fit_config({"resources": {"cpu": {"weight": "2"}}}).resources.keys() == {"cpu", "memory"}
    plugin = ResourceStrategyFitPlugin({"sra": {"enable": "true", "weight": 3},
                                        "proportional": {"enable": True, "resources": [GPU_NAME]}})
    assert plugin.sra.weight == 0 and plugin.proportional is None


def test_sra_and_proportional_arguments():
    # upstream TestArguments
    plugin = get_plugin_builder("resource-strategy-fit")({
        "sra": {"enable": True, "resources": "nvidia.com/t4, nvidia.com/a10", "weight": 3,
                "resourceWeight": {T4: 1, A10: 2}},
        "proportional": {"enable": True, "resources": "nvidia.com/t4, nvidia.com/a10",
                         "resourceProportion": {"nvidia.com/t4.cpu": 3, "nvidia.com/t4.memory": 6,
                                                "nvidia.com/a10.cpu": 4, "nvidia.com/a10.memory": 8}},
    })
    assert plugin.sra.weight == 3 and plugin.sra.weight_sum == 3 and plugin.sra.resources == {T4: 1, A10: 2}
    assert plugin.proportional == {T4: BaseResource(3.0, 6.0), A10: BaseResource(4.0, 8.0)}


def test_sra_weights_defaults_and_quirks():
    weights = sra_weights(SraConfig(True, " a, ,b,a ", 0, {"a": 0, "b": -4}))
    assert weights.weight == 0  # no default weight
    assert weights.resources == {"a": 0, "b": 1}  # negative -> 1, 0 kept
    assert weights.weight_sum == 1  # a counted twice (0 + 1 + 0)
    assert sra_weights(SraConfig(True, "c", 1, {})).resources == {"c": 1}


def test_proportional_rates_defaults():
    rates = proportional_rates(ProportionalConfig(True, "g, h", {"g.cpu": -1, "g.memory": 0.5}))
    assert rates == {"g": BaseResource(1.0, 0.5), "h": BaseResource(1.0, 1.0)}
    assert proportional_rates(ProportionalConfig(True, "", {})) == {}


# -- the strategy score --------------------------------------------------------------------------


@pytest.mark.parametrize("task, node_info, config, want", [
    # upstream TestScore
    ((100, 100), (200, 200, 500, 500), fit(10, cpu=(LEAST, 1), memory=(LEAST, 1)), 400),
    ((100, 100), (200, 200, 400, 400), fit(10, cpu=(LEAST, 1), memory=(LEAST, 1)), 250),
    ((100, 100), (200, 200, 500, 500), fit(10, cpu=(MOST, 1), memory=(MOST, 1)), 600),
    ((100, 100), (200, 200, 400, 400), fit(10, cpu=(MOST, 1), memory=(MOST, 1)), 750),
    ((100, 100), (200, 200, 500, 500), fit(10, cpu=(LEAST, 2), memory=(MOST, 1)), 466.66666667),
    ((100, 100), (200, 200, 500, 500), fit(10, cpu=(LEAST, 1), memory=(MOST, 2)), 533.33333333),
    ((0, 100), (200, 200, 500, 500), fit(10, cpu=(LEAST, 1), memory=(MOST, 2)), 600),
    ((100, 100), (200, 200, 0, 400), fit(10, cpu=(LEAST, 1), memory=(MOST, 2)), 500),  # alloc 0: weight counts
    ((100, 100), (200, 200, 500, 500), fit(10, memory=(MOST, 2)), 600),
    ((0, 0), (200, 200, 500, 500), fit(10, cpu=(LEAST, 1), memory=(LEAST, 1)), 0),
    ((100, 100), (500, 500, 500, 500), fit(10, cpu=(LEAST, 1), memory=(LEAST, 1)), 0),  # no room
    ((100, 100), (200, 200, 500, 500), fit(10, cpu=(LEAST, 3), memory=(MOST, 1)), 450),
    ((100, 100), (200, 200, 500, 500), fit(20, cpu=(LEAST, 5), memory=(LEAST, 5)), 800),
])
def test_score(task, node_info, config, want):
    assert strategy_fit_score(bare_task(*task), bare_node(*node_info), config) == pytest.approx(want, abs=1e-8)


def test_one_resource_without_room_zeroes_the_whole_score():
    # cpu alone would score (500 - 300) / 500 * 100 * 10 = 400; memory 300 + 300 > 500
    config = fit(10, cpu=(LEAST, 1), memory=(LEAST, 1))
    assert strategy_fit_score(bare_task(100, 300), bare_node(200, 300, 500, 500), config) == 0.0
    assert strategy_fit_score(bare_task(100, 300), bare_node(200, 300, 500, 500), fit(10, cpu=(LEAST, 1))) \
        == pytest.approx(400)


@pytest.mark.parametrize("annotations, want", [
    # upstream TestScore, pod-level cases; the conf says LeastAllocated 1/1
    ({SCORING_TYPE_ANNOTATION: LEAST, SCORING_WEIGHT_ANNOTATION: '{"cpu": 2, "memory": 1}'}, 400),
    ({SCORING_TYPE_ANNOTATION: MOST, SCORING_WEIGHT_ANNOTATION: '{"cpu": 1, "memory": 2}'}, 600),
    ({SCORING_TYPE_ANNOTATION: LEAST, SCORING_WEIGHT_ANNOTATION: "invalid-json"}, 0),
    ({SCORING_TYPE_ANNOTATION: LEAST, SCORING_WEIGHT_ANNOTATION: '{"cpu": 2}'}, 400),
    # hand-worked: cpu most .6 * 1 over weight 1 -> 600; memory not named, so not scored
    ({SCORING_TYPE_ANNOTATION: MOST, SCORING_WEIGHT_ANNOTATION: '{"cpu": 1}'}, 600),
    ({SCORING_TYPE_ANNOTATION: MOST}, 0),  # weight annotation missing
    ({SCORING_TYPE_ANNOTATION: MOST, SCORING_WEIGHT_ANNOTATION: ""}, 0),
    ({SCORING_TYPE_ANNOTATION: MOST, SCORING_WEIGHT_ANNOTATION: '{"cpu": 1.5}'}, 0),  # not an int
    ({SCORING_TYPE_ANNOTATION: MOST, SCORING_WEIGHT_ANNOTATION: "null"}, 0),  # nothing named
    ({SCORING_TYPE_ANNOTATION: "Balanced", SCORING_WEIGHT_ANNOTATION: '{"cpu": 1}'}, 0),  # unknown type
    # cpu LeastAllocated .4 * 2, memory weight null -> 0: .8 / 2 * 1000 = 400
    ({SCORING_TYPE_ANNOTATION: LEAST, SCORING_WEIGHT_ANNOTATION: '{"cpu": 2, "memory": null}'}, 400),
    ({SCORING_WEIGHT_ANNOTATION: '{"cpu": 7}'}, 400),  # no type: the conf's strategies apply
])
def test_pod_level_annotations(annotations, want):
    config = fit(10, cpu=(LEAST, 1), memory=(LEAST, 1))
    got = strategy_fit_score(bare_task(100, 100, annotations), bare_node(200, 200, 500, 500), config)
    assert got == pytest.approx(want, abs=1e-8)


def test_pod_weights_follow_go_json():
    assert parse_pod_weights(' {"cpu": -2, "cpu": 3} ') == {"cpu": 3}
    assert parse_pod_weights("null") == {}
    for text in ('{"cpu": "1"}', '{"cpu": true}', "[1]", '{"cpu": 1e2}', '{"cpu": NaN}', '{"cpu": 1} x',
                 '{"cpu": 9223372036854775808}'):
        with pytest.raises(ValueError):
            parse_pod_weights(text)


def test_resource_scores():
    # upstream Test_mostRequestedScore / Test_leastRequestedScore
    assert resource_score(MOST, 0, 0, 0, 0) == 0 and resource_score(LEAST, 0, 0, 0, 0) == 0
    assert resource_score(MOST, 1, 2, 2, 1) is None and resource_score(LEAST, 1, 2, 2, 1) is None
    assert resource_score(MOST, 1, 1, 4, 3) == 1.5 and resource_score(LEAST, 1, 1, 4, 3) == 1.5
    assert resource_score(MOST, 1, 1, 3, 3) == 2.0 and resource_score(LEAST, 1, 1, 3, 3) == 1.0
    assert resource_score("Other", 5, 5, 1, 1) == 0.0  # an unknown type skips the room check


def test_find_resource_strategy():
    # upstream Test_findResourceConfigWithPrefix
    most3, least1, most2 = ResourceStrategy(MOST, 3), ResourceStrategy(LEAST, 1), ResourceStrategy(MOST, 2)
    assert find_resource_strategy("nvidia.com/gpu", {"nvidia.com/gpu": most3, "nvidia.com/*": least1}) == most3
    assert find_resource_strategy("nvidia.com/gpu/v100", {"nvidia.com/gpu/*": most2, "nvidia.com/*": least1}) \
        == most2
    assert find_resource_strategy("example.com/foo", {"nvidia.com/gpu/*": most2}) is None
    assert find_resource_strategy("any.resource", {}) is None
    assert find_resource_strategy("cloudml.gpu/tensorflow/v2", {
        "cloudml/*": ResourceStrategy(MOST, 1), "cloudml.gpu/*": ResourceStrategy(LEAST, 2),
        "cloudml.gpu/tensorflow/*": most3}) == most3


# -- in a session --------------------------------------------------------------------------------


def upstream_plugin_nodes():
    """The nodes of upstream TestResourceStrategyFitPlugin (4 cpu, 4Gi, 10 pods)."""
    extra = {"n1": {"nvidia_com__gpu": "10"}, "n2": {"nvidia_com__gpu": "5"}, "n3": {"example_com__foo": "10"},
             "n4": {"example_com__foo": "5"}, "n5": {"nvidia_com__gpu": "10", "example_com__foo": "5"},
             "n6": {"example_com__foo": "10"}}
    return {name: node_with(name, cpu="4", memory="4Gi", pods="10", **more) for name, more in extra.items()}


def test_session_scores_of_extended_resources():
    # upstream TestResourceStrategyFitPlugin, first case: foo LeastAllocated, gpu MostAllocated, cpu and
    # memory unconfigured; a node lacking the resource has allocatable 0 there and scores 0
    nodes = upstream_plugin_nodes()
    pods = [pod_with("p1", cpu="1", memory="1Gi", example_com__foo="2"),
            pod_with("p2", cpu="1", memory="1Gi", example_com__foo="3"),
            pod_with("p3", cpu="1", memory="10Gi", nvidia_com__gpu="2"),
            pod_with("p4", cpu="1", memory="1Gi", nvidia_com__gpu="3")]
    args = {"resourceStrategyFitWeight": 10, "resources": {GPU_NAME: {"type": "MostAllocated", "weight": 1},
                                                           "example.com/foo": {"type": "LeastAllocated", "weight": 1}}}
    ssn = open_ssn([nodes[n] for n in ("n1", "n2", "n3", "n4")], pods, args)
    assert_scores(scores(ssn), {"p1": {"n1": 0, "n2": 0, "n3": 800, "n4": 600},
                                "p2": {"n1": 0, "n2": 0, "n3": 700, "n4": 400},
                                "p3": {"n1": 200, "n2": 400, "n3": 0, "n4": 0},
                                "p4": {"n1": 300, "n2": 600, "n3": 0, "n4": 0}})
    args["resources"]["example.com/foo"]["weight"] = 2
    ssn = open_ssn([nodes["n5"], nodes["n6"]],
                   [pod_with("p5", cpu="1", memory="1Gi", nvidia_com__gpu="4", example_com__foo="4")], args)
    assert_scores(scores(ssn), {"p5": {"n5": 266.66666666, "n6": 399.99999999}})


def sra_nodes():
    """The nodes of upstream sra_test TestNode."""
    return [node("n1", cpu="32", memory="64Gi", pods="10"),
            node_with("n2", cpu="8", memory="16Gi", pods="10", nvidia_com__t4="16"),
            node_with("n3", cpu="8", memory="16Gi", pods="10", nvidia_com__a10="16"),
            node_with("n4", cpu="8", memory="16Gi", pods="10", nvidia_com__t4="8", nvidia_com__a10="16")]


def sra_pods():
    return [pod_with("p1", cpu="1", memory="1Gi"), pod_with("p2", cpu="1.5", memory="0Gi", nvidia_com__t4="2"),
            pod_with("p3", cpu="2", memory="4Gi", nvidia_com__a10="2"),
            pod_with("p4", cpu="3", memory="4Gi", nvidia_com__t4="1", nvidia_com__a10="3")]


SRA_BOTH = {"enable": True, "resources": "nvidia.com/t4, nvidia.com/a10", "weight": 5,
            "resourceWeight": {T4: 2, A10: 3}}
SRA_T4 = {"enable": True, "resources": "nvidia.com/t4", "weight": 5, "resourceWeight": {T4: 2}}
T4_FIT = {"resourceStrategyFitWeight": 8, "resources": {T4: {"type": "MostAllocated", "weight": 3},
                                                         "cpu": {"type": "LeastAllocated", "weight": 1}}}
T4_FIT_SCORES = {"p1": {"n1": 775, "n2": 700, "n3": 700, "n4": 700},
                 "p2": {"n1": 190.625, "n2": 237.5, "n3": 162.5, "n4": 312.5},
                 "p3": {"n1": 750, "n2": 600, "n3": 600, "n4": 600},
                 "p4": {"n1": 181.25, "n2": 162.5, "n3": 125, "n4": 200}}


@pytest.mark.parametrize("args, want", [
    # upstream sra_test TestNode case1 .. case4
    ({"resourceStrategyFitWeight": 0, "sra": SRA_BOTH},
     {"p1": {"n1": 500, "n2": 300, "n3": 200, "n4": 0}, "p2": {"n1": 0, "n2": 300, "n3": 0, "n4": 0},
      "p3": {"n1": 0, "n2": 0, "n3": 200, "n4": 0}, "p4": {"n1": 0, "n2": 0, "n3": 0, "n4": 0}}),
    ({"resourceStrategyFitWeight": 0, "sra": SRA_T4},
     {"p1": {"n1": 500, "n2": 0, "n3": 500, "n4": 0}, "p2": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
      "p3": {"n1": 0, "n2": 0, "n3": 500, "n4": 0}, "p4": {"n1": 0, "n2": 0, "n3": 0, "n4": 0}}),
    ({**T4_FIT, "sra": {**SRA_T4, "weight": 0}}, T4_FIT_SCORES),
    ({**T4_FIT, "sra": SRA_T4},
     {task: {n: s + (500 if (task, n) in {("p1", "n1"), ("p1", "n3"), ("p3", "n3")} else 0)
             for n, s in by_node.items()} for task, by_node in T4_FIT_SCORES.items()}),
])
def test_sra_session_scores(args, want):
    assert_scores(scores(open_ssn(sra_nodes(), sra_pods(), args)), want)


def test_node_order_registration():
    nodes, pods = sra_nodes()[:1], sra_pods()[:1]
    assert not open_ssn(nodes, pods, {"resourceStrategyFitWeight": 0}).has_fn("node_order")
    assert not open_ssn(nodes, pods, {"resourceStrategyFitWeight": 0, "sra": {**SRA_T4, "weight": -1}}) \
        .has_fn("node_order")
    assert open_ssn(nodes, pods, {}).has_fn("node_order")
    assert not open_ssn(nodes, pods, {}).has_fn("predicate")
    assert open_ssn(nodes, pods, {"proportional": {"enable": True}}).has_fn("predicate")


# -- the proportional predicate ------------------------------------------------------------------


def gpu_task(cpu: str, memory: str, gpu: str) -> TaskInfo:
    return TaskInfo(pod_with("t", cpu=cpu, memory=memory, nvidia_com__gpu=gpu))


def gpu_node(cpu: str, memory: str, gpu: str) -> NodeInfo:
    return NodeInfo(node_with("n", cpu=cpu, memory=memory, nvidia_com__gpu=gpu))


@pytest.mark.parametrize("task, node_args, want", [
    # upstream Test_checkNodeResourceIsProportional: 4 cpu and 4 GB kept per idle GPU
    (("4", "4G", "0"), ("30", "30G", "6"), StatusCode.Success),  # 26 left >= 24
    (("10", "10G", "0"), ("30", "30G", "6"), StatusCode.UnschedulableAndUnresolvable),  # 20 < 24
    (("10", "10G", "1"), ("30", "30G", "6"), StatusCode.Success),  # a GPU task is not held back
    (("10", "10G", "0"), ("26", "26G", "2"), StatusCode.Success),  # 16 >= 8
    # hand-worked: cpu fits (26 - 2 = 24 >= 24) but memory does not (30G - 7G = 23G < 24G)
    (("2", "7G", "0"), ("26", "30G", "6"), StatusCode.UnschedulableAndUnresolvable),
    (("2", "6G", "0"), ("26", "30G", "6"), StatusCode.Success),
])
def test_check_proportional(task, node_args, want):
    status = check_proportional(gpu_task(*task), gpu_node(*node_args), {GPU_NAME: BaseResource(4, 4)})
    assert status.code == want
    if want != StatusCode.Success:
        assert status.reason == "proportional of resource nvidia.com/gpu check failed"


def test_proportional_skips_resources_the_node_does_not_list():
    task = TaskInfo(pod_with("t", cpu="30", memory="1G"))
    assert check_proportional(task, NodeInfo(node("n", cpu="32")), {GPU_NAME: BaseResource(4, 4)}).code \
        == StatusCode.Success
    # listed at 0: nothing is kept back, but the node must still hold the task's cpu and memory
    zero = NodeInfo(node_with("n", cpu="32", memory="8Gi", nvidia_com__gpu="0"))
    assert check_proportional(task, zero, {GPU_NAME: BaseResource(4, 4)}).code == StatusCode.Success
    big = TaskInfo(pod_with("t", cpu="33", memory="1G"))
    assert check_proportional(big, zero, {GPU_NAME: BaseResource(4, 4)}).code \
        == StatusCode.UnschedulableAndUnresolvable


def test_predicate_in_a_session_returns_a_fit_error():
    args = {"proportional": {"enable": True, "resources": "nvidia.com/gpu",
                             "resourceProportion": {"nvidia.com/gpu.cpu": 4, "nvidia.com/gpu.memory": 4}}}
    nodes = [node_with("n1", cpu="30", memory="30G", pods="10", nvidia_com__gpu="6")]
    ssn = open_ssn(nodes, [pod_with("small", cpu="4", memory="4G"), pod_with("large", cpu="10", memory="10G")],
                   args)
    tasks = {t.name: t for job in ssn.jobs.values() for t in job.tasks.values()}
    assert ssn.predicate_fn(tasks["small"], ssn.nodes["n1"]) is None
    err = ssn.predicate_fn(tasks["large"], ssn.nodes["n1"])
    assert isinstance(err, FitError) and err.codes() == {StatusCode.UnschedulableAndUnresolvable}
    assert err.reasons() == ["proportional of resource nvidia.com/gpu check failed"]


def test_used_comes_from_running_pods():
    # n1 runs a 1-cpu pod; LeastAllocated cpu only: (4000 - 1000 - 1000) / 4000 * 100 * 10 = 500
    args = {"resources": {"cpu": {"type": "LeastAllocated", "weight": 1}}}
    ssn = open_ssn([node("n1")], [pod_with("r", node_name="n1", cpu="1"), pod_with("p", cpu="1")], args)
    assert scores(ssn)["p"] == {"n1": 500.0}
