"""The Hypothesis strategies of generators/: every document loads, replays and runs clean; the
clusters are consistent; bounds hold; examples shrink to simple clusters; seeds reproduce."""

from __future__ import annotations

import copy
import inspect
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import schedcheck.reference.scheduler  # noqa: F401 - registers every action and plugin
from schedcheck.generators.confs import (
    ACTION_ORDERS,
    TIER_SETS,
    conf_features,
    default_conf,
    scheduler_confs,
)
from schedcheck.generators.consistency import cluster_problems
from schedcheck.generators.jobs import jobs
from schedcheck.generators.nodes import node_lists
from schedcheck.generators.queues import (
    ROOT, hierarchical_queues, leaf_queues, priority_classes, queue_lists, queue_trees,
)
from schedcheck.generators.vocabulary import GROUP_NAME
from schedcheck.generators.quantities import (
    amount,
    cpu_quantities,
    format_quantity,
    gpu_quantities,
    memory_quantities,
    node_pods_quantities,
    node_shapes,
    requests,
)
from schedcheck.generators.scenarios import (
    profile_scenarios,
    sample_documents,
    scenario_name,
    scenario_profiles,
    scenarios,
    to_yaml,
)
from schedcheck.reference.actions.base import get_action
from schedcheck.scenario.conf_loader import parse_scheduler_conf
from schedcheck.reference.framework.plugin import get_plugin_builder
from schedcheck.reference.quantity import Quantity
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario_text, scenario_from_document
from tests.generators.test_found import UPSTREAM_FINDINGS

QUICK = settings(max_examples=60, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# find() keeps the last example the condition accepted; the explain phase would replay variations
# of the minimal one after shrinking (each accepted), so it is left out. Derandomized: shrinking
# ends in a local minimum now and then (a few percent of random starts), so the start is fixed.
FIND = settings(max_examples=2000, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def of_kind(doc, kind):
    return [o for o in doc["objects"] if o["kind"] == kind]


def job_pods(doc, group):
    ns, name = group["metadata"]["namespace"], group["metadata"]["name"]
    return [p for p in of_kind(doc, "Pod")
            if p["metadata"]["namespace"] == ns and p["metadata"].get("annotations", {}).get(GROUP_NAME) == name]


def has_running_job_pod(doc):
    return any(p["status"]["phase"] == "Running" and GROUP_NAME in p["metadata"].get("annotations", {})
               for p in of_kind(doc, "Pod"))


# ---------------------------------------------------------------- quantities


@settings(QUICK, max_examples=200)
@given(st.one_of(cpu_quantities(), memory_quantities(), gpu_quantities(), cpu_quantities(32), memory_quantities(64),
                 node_pods_quantities(), node_shapes().map(lambda s: s[0]), node_shapes().map(lambda s: s[1])))
def test_quantities_are_kubernetes_quantities(text):
    quantity = Quantity.parse(text)
    assert not quantity.is_negative()


@settings(QUICK, max_examples=200)
@given(requests())
def test_requests_leave_dimensions_out_but_never_invent_names(req):
    assert set(req) <= {"cpu", "memory", "nvidia.com/gpu"}


@settings(QUICK, max_examples=200)
@given(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]),
       st.fractions(min_value=0, max_value=10**6).map(lambda f: Fraction(round(f * 10**9), 10**9)))
def test_format_quantity_is_exact(name, value):
    assert amount(format_quantity(name, value)) == value


def test_quantities_shrink_to_small_round_values():
    assert find(cpu_quantities(), lambda q: True, settings=FIND) == "1"
    assert find(memory_quantities(), lambda q: True, settings=FIND) == "1Gi"
    assert find(gpu_quantities(), lambda q: True, settings=FIND) == "1"
    assert find(node_shapes(), lambda s: True, settings=FIND) == ("4", "16Gi")
    assert find(node_pods_quantities(), lambda q: True, settings=FIND) == "110"
    # the odd and edge values are there to be found, and shrink to the simplest of their kind
    assert find(cpu_quantities(), lambda q: amount(q) % 1 != 0, settings=FIND) == "500m"
    assert find(cpu_quantities(), lambda q: 0 < amount(q) * 1000 <= Fraction(1, 10), settings=FIND) == "100u"
    assert find(memory_quantities(), lambda q: 0 < amount(q) < 1, settings=FIND) == "500m"


# ---------------------------------------------------------------- confs


@settings(QUICK, max_examples=200)
@given(scheduler_confs(gang_actions=True))
def test_confs_are_accepted_as_upstream_would(conf):
    warnings: list[str] = []
    parsed = parse_scheduler_conf(conf, "<generated>", warnings)
    assert warnings == []
    assert all(get_action(a) is not None for a in parsed.actions)
    for tier in parsed.tiers:
        names = [p.name for p in tier.plugins]
        assert all(get_plugin_builder(n) is not None for n in names), names  # no plugin the reference skips
        assert len(names) == len(set(names))
        if any(p.name == "drf" and p.flags.get("enableHierarchy") for p in tier.plugins):
            assert "proportion" not in names
    every = {p.name for t in parsed.tiers for p in t.plugins}
    assert not {"capacity", "proportion"} <= every


def test_conf_shrinks_to_the_default_conf():
    assert find(scheduler_confs(), lambda c: True, settings=FIND) == default_conf()


def test_conf_with_preemption_shrinks_to_default_tiers():
    conf = find(scheduler_confs(), lambda c: "preempt" in c["actions"], settings=FIND)
    assert conf == {**default_conf(), "actions": ACTION_ORDERS[1]}


def test_conf_with_capacity_shrinks_to_the_capacity_docs_conf():
    conf = find(scheduler_confs(), lambda c: "capacity" in conf_features(c).plugins, settings=FIND)
    assert conf == {"actions": ACTION_ORDERS[0], "tiers": [{"plugins": t} for t in TIER_SETS["capacity"]]}


# ---------------------------------------------------------------- objects


@settings(QUICK)
@given(queue_trees(0, 6))
def test_queue_trees_are_trees_under_root(tree):
    assert nx.is_arborescence(tree)
    assert next(iter(nx.topological_sort(tree))) == ROOT
    assert len(tree) <= 7
    assert set(leaf_queues(tree)) <= set(tree) - {ROOT}


def test_queue_tree_shrinks_to_the_smallest_deep_tree():
    tree = find(queue_trees(1, 5), lambda t: nx.dag_longest_path_length(t) >= 2, settings=FIND)
    assert sorted(tree.edges) == [("default", "prod"), (ROOT, "default")]


@settings(QUICK)
@given(st.data())
def test_hierarchical_queues_nest(data):
    tree = data.draw(queue_trees(1, 5))
    docs = data.draw(hierarchical_queues(tree, deserved=True, capability_total={"cpu": 32, "memory": 128}))
    assert {d["metadata"]["name"] for d in docs} == set(tree) - {ROOT}
    for doc in docs:
        parent = next(iter(tree.predecessors(doc["metadata"]["name"])))
        assert doc["spec"].get("parent", ROOT) == parent
        path = doc["metadata"]["annotations"]["volcano.sh/hierarchy"].split("/")
        assert path == nx.shortest_path(tree, ROOT, doc["metadata"]["name"])
    assert cluster_problems({"objects": docs}) == []


@settings(QUICK)
@given(queue_lists(5, deserved=True, guarantee_total={"cpu": 8, "memory": 32}))
def test_flat_queues_keep_guarantees_within_the_cluster(docs):
    names = [d["metadata"]["name"] for d in docs]
    assert len(names) == len(set(names))
    total = sum(amount(d["spec"].get("guarantee", {}).get("resource", {}).get("cpu", "0")) for d in docs)
    assert total <= 8
    assert cluster_problems({"objects": docs}) == []


@settings(QUICK)
@given(priority_classes(4))
def test_priority_classes(docs):
    assert len({d["metadata"]["name"] for d in docs}) == len(docs) <= 4
    assert sum(1 for d in docs if d.get("globalDefault")) <= 1


@settings(QUICK, max_examples=100)
@given(st.data())
def test_jobs_are_consistent_with_their_nodes(data):
    nodes = data.draw(node_lists(1, 3))
    docs = data.draw(jobs(nodes, max_pods=5))
    group, pods = docs[0], docs[1:]
    assert group["kind"] == "PodGroup" and all(p["kind"] == "Pod" for p in pods)
    assert 1 <= group["spec"]["minMember"] <= len(pods)
    roles = {p["metadata"]["annotations"].get("volcano.sh/task-spec") for p in pods}
    assert set(group["spec"].get("minTaskMember", {})) <= roles
    assert cluster_problems({"objects": nodes + docs}) == []


def test_job_with_role_minimums_shrinks_to_one_pod_per_role():
    docs = find(jobs(), lambda d: "minTaskMember" in d[0]["spec"], settings=FIND)
    group, pods = docs[0], docs[1:]
    assert group["spec"]["minTaskMember"] == {"ps": 0, "worker": 0}
    assert group["spec"]["minMember"] == 1
    assert [p["metadata"]["name"] for p in pods] == ["tf-0-ps-0", "tf-0-worker-0"]
    assert all(p["status"]["phase"] == "Pending" for p in pods)


def test_consistency_checker_sees_impossible_clusters():
    doc = find(scenarios(), has_running_job_pod, settings=FIND)
    assert cluster_problems(doc) == []
    pod = next(p for p in of_kind(doc, "Pod") if p["status"]["phase"] == "Running")
    broken = copy.deepcopy(doc)
    next(p for p in of_kind(broken, "Pod") if p["status"]["phase"] == "Running")["spec"]["nodeName"] = "nowhere"
    assert any("does not exist" in p for p in cluster_problems(broken))
    broken = copy.deepcopy(doc)
    twin = copy.deepcopy(pod)
    twin["metadata"]["name"] += "-twin"
    twin["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "64"
    broken["objects"].append(twin)
    assert any("more than its allocatable" in p for p in cluster_problems(broken))
    broken = copy.deepcopy(doc)
    of_kind(broken, "PodGroup")[0]["spec"]["minMember"] = 5
    assert any("minMember 5" in p for p in cluster_problems(broken))


# ---------------------------------------------------------------- scenarios


@settings(QUICK, max_examples=200)
@given(scenarios())
def test_generated_scenarios_load_without_error_or_warning(doc):
    scenario = scenario_from_document(doc, "<generated>")
    assert scenario.warnings == []
    assert scenario.name == doc["metadata"]["name"] == scenario_name(doc)
    assert scenario.cycles == doc["cycles"]


@settings(QUICK, max_examples=40)
@given(scenarios())
def test_generated_scenarios_save_and_replay(doc):
    text = to_yaml(doc)
    assert "&id" not in text  # no YAML aliases: every object reads on its own
    from_file = load_scenario_text(text, "generated.yaml")
    assert from_file.document == doc
    assert from_file.objects == scenario_from_document(doc, "<generated>").objects
    first = run_scenario(from_file, seed=0)
    again = run_scenario(scenario_from_document(doc, "<generated>"), seed=0)
    assert first.to_json(with_trace=True) == again.to_json(with_trace=True)


@settings(QUICK, max_examples=150)
@given(scenarios())
def test_generated_clusters_are_states_a_real_cluster_can_be_in(doc):
    assert cluster_problems(doc) == []


@settings(QUICK, max_examples=100)
@given(scenarios())
def test_clean_reference_runs_generated_scenarios_without_safety_violations(doc):
    result = run_scenario(scenario_from_document(doc, "<generated>"), seed=0)
    unexpected = [v for v in result.violations if v["id"] not in UPSTREAM_FINDINGS]
    assert unexpected == [], to_yaml(doc)


BOUND_NAMES = ("max_nodes", "max_jobs", "max_pods_per_job", "max_queues", "max_priority_classes", "max_cycles")


def check_bounds(doc, bounds, min_nodes=1, min_jobs=0):
    assert min_nodes <= len(of_kind(doc, "Node")) <= bounds["max_nodes"]
    groups = of_kind(doc, "PodGroup")
    assert min_jobs <= len(groups) <= bounds["max_jobs"]
    for group in groups:
        # a job with more roles than max_pods_per_job still has one pod per role
        assert 1 <= len(job_pods(doc, group)) <= max(bounds["max_pods_per_job"], 2)
    assert len(of_kind(doc, "Queue")) <= bounds["max_queues"]
    assert len(of_kind(doc, "PriorityClass")) <= bounds["max_priority_classes"]
    assert 1 <= doc["cycles"] <= bounds["max_cycles"]
    assert doc["apiVersion"] == "schedcheck/v1" and doc["kind"] == "Scenario"


@settings(QUICK)
@given(st.data())
def test_bounds_are_respected(data):
    bounds = data.draw(st.fixed_dictionaries({
        "max_nodes": st.integers(1, 5),
        "max_jobs": st.integers(0, 4),
        "max_pods_per_job": st.integers(1, 4),
        "max_queues": st.integers(0, 3),
        "max_priority_classes": st.integers(0, 3),
        "max_cycles": st.integers(1, 3),
    }))
    min_nodes = data.draw(st.integers(1, bounds["max_nodes"]))
    min_jobs = data.draw(st.integers(0, bounds["max_jobs"]))
    doc = data.draw(scenarios(**bounds, min_nodes=min_nodes, min_jobs=min_jobs))
    check_bounds(doc, bounds, min_nodes, min_jobs)


def test_profiles():
    assert set(scenario_profiles) == {"ci", "nightly"}
    parameters = inspect.signature(scenarios).parameters
    for bounds in scenario_profiles.values():
        assert set(bounds) == set(BOUND_NAMES) <= set(parameters)
    ci, nightly = scenario_profiles["ci"], scenario_profiles["nightly"]
    assert ci["max_nodes"] <= 4 and ci["max_jobs"] <= 5 and ci["max_cycles"] <= 3
    assert all(nightly[k] >= ci[k] for k in BOUND_NAMES) and nightly != ci


@pytest.mark.parametrize("profile", sorted(scenario_profiles))
def test_profile_documents_respect_their_bounds(profile):
    for doc in sample_documents(profile_scenarios(profile), count=8, seed=11):
        check_bounds(doc, scenario_profiles[profile])
        assert cluster_problems(doc) == []
        scenario_from_document(doc, "<generated>")


def test_minimal_scenario_is_one_empty_node_under_the_default_conf():
    doc = find(scenarios(), lambda d: True, settings=FIND)
    assert [o["kind"] for o in doc["objects"]] == ["Node"]
    assert doc["schedulerConf"] == default_conf()
    assert doc["cycles"] == 1 and "now" not in doc


def test_minimal_scenario_with_a_running_pod_is_one_node_one_job_one_pod():
    doc = find(scenarios(), has_running_job_pod, settings=FIND)
    assert [o["kind"] for o in doc["objects"]] == ["Node", "PodGroup", "Pod"]
    node, group, pod = doc["objects"]
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "16Gi", "pods": "110"}
    assert group["spec"] == {"minMember": 1, "queue": "default"}
    assert group["status"]["phase"] == "Running"
    assert pod["spec"]["nodeName"] == "node-0"
    for name, quantity in pod["spec"]["containers"][0].get("resources", {}).get("requests", {}).items():
        assert amount(quantity) % (2**30 if name == "memory" else 1) == 0  # round: whole cores, whole Gi
    # upstream's default actions and a plain tier set: which set can depend on the shrinker's path (a tier set
    # with more argument-taking plugins moves the later draws), as in test_plugin_objects' shrink tests; seen
    # once in a full -n 2 run (the minimal tiers), never alone
    conf = doc["schedulerConf"]
    assert conf["actions"] == default_conf()["actions"] and "configurations" not in conf
    assert [t["plugins"] for t in conf["tiers"]] in TIER_SETS.values() and doc["cycles"] == 1


def test_documents_are_determined_by_the_seed():
    strategy = profile_scenarios("ci")
    first = sample_documents(strategy, count=6, seed=3)
    assert first == sample_documents(strategy, count=6, seed=3)
    assert first != sample_documents(strategy, count=6, seed=4)
    assert len({d["metadata"]["name"] for d in first}) == len({to_yaml(d) for d in first})
