"""nodegroup plugin: queue affinity to node groups, hierarchy inheritance, per-group resource limits.

The first cases are upstream's nodegroup_test.go (TestNodeGroup, TestNodeGroupResourceLimits,
TestNodeGroupResourceLimitAllocationEvent) restated: those tests call the session's PredicateFn and
NodeOrderFn directly, never an action, so `schedcheck upstream-tests` extracts none of them.
"""

from __future__ import annotations

import pytest

from schedcheck.reference.api.resource_info import Resource
from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.k8s import ClusterObjects, NodeGroupTerms, Queue, QueueAffinity
from schedcheck.reference.plugins.nodegroup import (
    AFFINITY_NOT_FOUND,
    LABEL_NOT_FOUND,
    LIMIT_EXCEEDED,
    LIMIT_INVALID,
    NODE_GROUP_LABEL,
    NODE_UNSATISFIED,
    RESOURCE_LIMITS_ANNOTATION,
    GroupAffinity,
    GroupLimit,
    LimitAnnotationError,
    exceeded_names,
    parse_resource_limits,
)
from schedcheck.scenario.dump import queue_document
from schedcheck.scenario.loader import scenario_from_document
from tests.builders import node, pod, pod_group, res

OK = "ok"


def affinity(required=(), preferred=(), anti_required=(), anti_preferred=()) -> QueueAffinity:
    return QueueAffinity(NodeGroupTerms(list(required), list(preferred)),
                         NodeGroupTerms(list(anti_required), list(anti_preferred)))


def queue(name: str, aff: QueueAffinity | None = None, parent: str = "", annotations=None) -> Queue:
    return Queue(name=name, uid=f"queue-{name}", affinity=aff, parent=parent, annotations=dict(annotations or {}))


def grouped_node(name: str, group: str | None, cpu: str = "4", memory: str = "16Gi"):
    return node(name, cpu=cpu, memory=memory, labels={NODE_GROUP_LABEL: group} if group is not None else {})


# Upstream's TestNodeGroup nodes: n1..n4 in group1..group4, n5 without the label.
FIVE_NODES = [grouped_node(f"n{i}", f"group{i}") for i in range(1, 5)] + [grouped_node("n5", None)]
Q1_AFFINITY = affinity(["group1", "group3"], ["group3"], ["group2", "group4"], ["group4"])


def session(queues, nodes, pods=None, groups=None, arguments=None, hierarchy=False, queue_of_p="q"):
    pods = pods if pods is not None else [pod("p", group="pg", cpu="2", memory="4Gi")]
    groups = groups if groups is not None else [pod_group("pg", 0, queue=queue_of_p)]
    option = PluginOption("nodegroup", arguments=dict(arguments or {}))
    if hierarchy:
        option.flags["enableHierarchy"] = True
    apply_plugin_conf_defaults(option)
    objects = ClusterObjects(nodes=list(nodes), pods=list(pods), pod_groups=list(groups), queues=list(queues))
    return open_session(SchedulerCache(objects), SchedulerConf(actions=["allocate"], tiers=[Tier([option])]), 0, 0)


def task(ssn, name: str = "p"):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def outcome(err) -> str:
    if err is None:
        return OK
    assert isinstance(err, FitError), err
    assert [s.code for s in err.statuses] == [StatusCode.UnschedulableAndUnresolvable]
    return err.statuses[0].reason


def verdicts(ssn, name: str = "p") -> dict[str, str]:
    t = task(ssn, name)
    return {n: outcome(ssn.predicate_fn(t, ssn.nodes[n])) for n in sorted(ssn.nodes)}


def scores(ssn, name: str = "p") -> dict[str, float]:
    t = task(ssn, name)
    return {n: ssn.node_order_map_fn(t, ssn.nodes[n])[1] for n in sorted(ssn.nodes)}


# ------------------------------------------------------------------ upstream's TestNodeGroup


def test_soft_constraints_within_the_hard_ones():
    ssn = session([queue("q", Q1_AFFINITY)], FIVE_NODES)
    assert scores(ssn) == {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0}
    # group4 is in both anti-affinity lists: the preferred one lets it through, at score -1
    assert verdicts(ssn) == {"n1": OK, "n2": NODE_UNSATISFIED, "n3": OK, "n4": OK, "n5": LABEL_NOT_FOUND}


def test_soft_constraints_outside_the_hard_ones():
    ssn = session([queue("q", affinity(["group1"], ["group3"], ["group2"], ["group4"]))], FIVE_NODES)
    assert scores(ssn) == {"n1": 100, "n2": 0, "n3": 50, "n4": -1, "n5": 0}
    assert verdicts(ssn) == {"n1": OK, "n2": NODE_UNSATISFIED, "n3": OK, "n4": OK, "n5": LABEL_NOT_FOUND}


def test_non_strict_queue_without_affinity_gets_only_unlabelled_nodes():
    ssn = session([queue("q")], FIVE_NODES, arguments={"strict": False})
    assert scores(ssn) == dict.fromkeys(["n1", "n2", "n3", "n4", "n5"], 0)
    assert verdicts(ssn) == {**dict.fromkeys(["n1", "n2", "n3", "n4"], AFFINITY_NOT_FOUND), "n5": OK}


def test_strict_queue_without_affinity_gets_no_node():
    ssn = session([queue("q", parent="root")], FIVE_NODES)
    assert scores(ssn) == dict.fromkeys(["n1", "n2", "n3", "n4", "n5"], 0)
    assert verdicts(ssn) == {**dict.fromkeys(["n1", "n2", "n3", "n4"], AFFINITY_NOT_FOUND), "n5": LABEL_NOT_FOUND}


def test_affinity_inherited_from_the_parent():
    queues = [queue("root", Q1_AFFINITY), queue("q1", Q1_AFFINITY, parent="root"), queue("q", parent="q1")]
    ssn = session(queues, FIVE_NODES, hierarchy=True)
    assert scores(ssn) == {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0}
    assert verdicts(ssn) == {"n1": OK, "n2": NODE_UNSATISFIED, "n3": OK, "n4": OK, "n5": LABEL_NOT_FOUND}


def test_affinity_inherited_from_a_further_ancestor():
    queues = [queue("root", Q1_AFFINITY), queue("mid", parent="root"), queue("q", parent="mid")]
    ssn = session(queues, FIVE_NODES, hierarchy=True)
    assert scores(ssn) == {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0}
    assert verdicts(ssn)["n3"] == OK


def test_preferred_order_scores_earlier_groups_higher():
    ssn = session([queue("q", affinity(preferred=["group1", "group3"]))], FIVE_NODES,
                  arguments={"enablePreferredOrder": True})
    assert scores(ssn) == {"n1": 50, "n2": 0, "n3": 25, "n4": 0, "n5": 0}
    assert verdicts(ssn) == {"n1": OK, "n2": NODE_UNSATISFIED, "n3": OK, "n4": NODE_UNSATISFIED, "n5": LABEL_NOT_FOUND}


# ------------------------------------------------------------------ hierarchy edges


def test_without_enable_hierarchy_nothing_is_inherited():
    queues = [queue("root", Q1_AFFINITY), queue("q", parent="root")]
    ssn = session(queues, FIVE_NODES)
    assert verdicts(ssn)["n1"] == AFFINITY_NOT_FOUND
    assert scores(ssn)["n3"] == 0


def test_an_empty_affinity_is_the_queues_own_and_blocks_inheritance():
    queues = [queue("root", Q1_AFFINITY), queue("q", QueueAffinity(), parent="root")]
    ssn = session(queues, FIVE_NODES, hierarchy=True)
    assert verdicts(ssn)["n1"] == AFFINITY_NOT_FOUND
    assert scores(ssn)["n3"] == 0


def test_a_queue_without_parent_inherits_from_root():
    ssn = session([queue("root", affinity(["group2"])), queue("q")], FIVE_NODES, hierarchy=True)
    assert verdicts(ssn)["n2"] == OK
    assert scores(ssn)["n2"] == 100


def test_a_missing_parent_or_a_cycle_ends_the_walk():
    ssn = session([queue("root", affinity(["group2"])), queue("q", parent="gone")], FIVE_NODES, hierarchy=True)
    assert verdicts(ssn)["n2"] == AFFINITY_NOT_FOUND
    cycle = [queue("root", affinity(["group2"])), queue("a", parent="b"), queue("b", parent="q"),
             queue("q", parent="a")]
    assert verdicts(session(cycle, FIVE_NODES, hierarchy=True))["n2"] == AFFINITY_NOT_FOUND
    cycle[1] = queue("a", affinity(["group3"]), parent="b")
    assert verdicts(session(cycle, FIVE_NODES, hierarchy=True))["n3"] == OK  # q -> a, found before the loop closes


# ------------------------------------------------------------------ affinity arithmetic


def test_admission_order_anti_required_beats_affinity_and_anti_preferred_beats_both():
    aff = GroupAffinity.of(affinity(["a", "b"], ["c"], ["b", "c", "d"], ["d", "e"]))
    assert aff is not None
    assert [aff.admits(g) for g in "abcdef"] == [True, False, False, True, True, False]
    assert [aff.score(g, False) for g in "abcdef"] == [100, 100, 50, -1, -1, 0]


def test_preferred_order_with_a_repeated_group_keeps_its_last_index():
    aff = GroupAffinity.of(affinity(["a"], preferred=["a", "b", "a"]))
    assert aff is not None
    # two distinct groups: a at index 2 scores 50 * 0 / 2, b at index 1 scores 50 * 1 / 2
    assert aff.score("a", True) == 100
    assert aff.score("b", True) == 25
    assert aff.score("b", False) == 50


def test_unset_affinity_means_no_queue_rule_at_all():
    assert GroupAffinity.of(None) is None
    empty = GroupAffinity.of(QueueAffinity(NodeGroupTerms(), None))
    assert empty is not None and empty.unset()
    assert not GroupAffinity.of(affinity(anti_preferred=["x"])).unset()


def test_strict_argument_read_as_go_bool():
    ssn = session([queue("q")], FIVE_NODES, arguments={"strict": "false"})
    assert verdicts(ssn)["n5"] == OK
    ssn = session([queue("q")], FIVE_NODES, arguments={"strict": "nope"})  # unparsable: stays true
    assert verdicts(ssn)["n5"] == LABEL_NOT_FOUND


def test_non_strict_does_not_admit_an_unlabelled_node_for_a_queue_with_affinity():
    ssn = session([queue("q", affinity(["group1"]))], FIVE_NODES, arguments={"strict": False})
    assert verdicts(ssn)["n5"] == LABEL_NOT_FOUND


def test_a_task_whose_job_left_the_session_fails_with_a_plain_error():
    ssn = session([queue("q", Q1_AFFINITY)], FIVE_NODES)
    t = task(ssn)
    del ssn.jobs[t.job]
    err = ssn.predicate_fn(t, ssn.nodes["n1"])
    assert err is not None and not isinstance(err, FitError)
    assert ssn.node_order_map_fn(t, ssn.nodes["n3"])[1] == 0


# ------------------------------------------------------------------ resource limits (upstream's cases)

TWO_GROUPS = [grouped_node("n1", "group1", cpu="16", memory="64Gi"), grouped_node("n2", "group2", cpu="16",
                                                                                  memory="64Gi")]
BOTH = affinity(["group1", "group2"], ["group1"])


def limited(annotation: str | None, pods=None, groups=None):
    annotations = {} if annotation is None else {RESOURCE_LIMITS_ANNOTATION: annotation}
    return session([queue("q", BOTH, annotations=annotations)], TWO_GROUPS, pods=pods, groups=groups)


@pytest.mark.parametrize("annotation, expected", [
    (None, {"n1": OK, "n2": OK}),
    ('{"group1":{"cpu":"3","memory":"8Gi"}}', {"n1": OK, "n2": OK}),
    ('{"group1":{"cpu":"3"}}', {"n1": OK, "n2": OK}),  # memory not named: unlimited
    ('{"group1":{"cpu":"1"}}', {"n1": LIMIT_EXCEEDED, "n2": OK}),
    ('{"group1":{"cpu":', {"n1": LIMIT_INVALID, "n2": LIMIT_INVALID}),
    ("", {"n1": OK, "n2": OK}),
    ("null", {"n1": OK, "n2": OK}),
    ('{"group1":null}', {"n1": OK, "n2": OK}),
    ('{"group1":{"cpu":null}}', {"n1": LIMIT_EXCEEDED, "n2": OK}),  # a null quantity is zero
    ('{"group1":{"cpu":1}}', {"n1": LIMIT_EXCEEDED, "n2": OK}),  # a bare number is a quantity
    ('{"group1":{"cpu":2}}', {"n1": OK, "n2": OK}),  # 2 of 2: not over
    ('{"group1":{"cpu":true}}', {"n1": LIMIT_INVALID, "n2": LIMIT_INVALID}),
    ('{"group1":{"cpu":"lots"}}', {"n1": LIMIT_INVALID, "n2": LIMIT_INVALID}),
    ('{"group1":{"pods":"1"}}', {"n1": OK, "n2": OK}),  # a task counts one pod
    ('{"group1":{"pods":"0"}}', {"n1": LIMIT_EXCEEDED, "n2": OK}),
    ('{"group2":{"memory":"4Gi"},"group1":{"memory":"3Gi"}}', {"n1": LIMIT_EXCEEDED, "n2": OK}),
    ('{"group1":[]}', {"n1": LIMIT_INVALID, "n2": LIMIT_INVALID}),
    ('["group1"]', {"n1": LIMIT_INVALID, "n2": LIMIT_INVALID}),
])
def test_limit_annotation(annotation, expected):
    assert verdicts(limited(annotation)) == expected


def test_invalid_limits_reject_even_an_unlabelled_node_in_non_strict_mode():
    objects = [queue("q", annotations={RESOURCE_LIMITS_ANNOTATION: "{"})]
    ssn = session(objects, FIVE_NODES, arguments={"strict": False})
    assert verdicts(ssn)["n5"] == LIMIT_INVALID


def test_running_tasks_of_the_queue_count_against_the_group_limit():
    pods = [pod("used", group="pg-used", cpu="2", memory="4Gi", node_name="n1", phase="Running"),
            pod("p", group="pg", cpu="2", memory="4Gi")]
    groups = [pod_group("pg-used", 0, queue="q", phase="Running"), pod_group("pg", 0, queue="q")]
    ssn = limited('{"group1":{"cpu":"3","memory":"8Gi"}}', pods, groups)
    assert verdicts(ssn) == {"n1": LIMIT_EXCEEDED, "n2": OK}


def test_tasks_of_another_queue_do_not_count():
    pods = [pod("other", group="pg-other", cpu="2", memory="4Gi", node_name="n1", phase="Running"),
            pod("p", group="pg", cpu="2", memory="4Gi")]
    groups = [pod_group("pg-other", 0, queue="default", phase="Running"), pod_group("pg", 0, queue="q")]
    ssn = limited('{"group1":{"cpu":"3"}}', pods, groups)
    assert verdicts(ssn)["n1"] == OK


def test_allocate_and_evict_events_move_the_group_usage():
    pods = [pod("p1", group="pg1", cpu="2", memory="4Gi"), pod("p2", group="pg2", cpu="2", memory="4Gi")]
    groups = [pod_group("pg1", 0, queue="q"), pod_group("pg2", 0, queue="q")]
    ssn = session([queue("q", affinity(["group1"]), annotations={RESOURCE_LIMITS_ANNOTATION:
                                                                  '{"group1":{"cpu":"3","memory":"8Gi"}}'})],
                  TWO_GROUPS[:1], pods=pods, groups=groups)
    t1, t2, n1 = task(ssn, "p1"), task(ssn, "p2"), ssn.nodes["n1"]
    assert ssn.predicate_fn(t1, n1) is None
    assert ssn.allocate(t1, n1) is None
    assert outcome(ssn.predicate_fn(t2, n1)) == LIMIT_EXCEEDED
    ssn.fire_deallocate(t1)
    assert ssn.predicate_fn(t2, n1) is None


def test_exceeding_needs_the_tolerance():
    limit = GroupLimit(Resource(1000, 100, {"nvidia.com/gpu": 1000}), {"cpu", "memory", "nvidia.com/gpu", "foo"})
    assert exceeded_names(res(1000.05, 100.05, nvidia_com__gpu=1000.05), limit) == []
    assert exceeded_names(res(1000.25, 100.5, nvidia_com__gpu=1000.5), limit) == ["cpu", "memory", "nvidia.com/gpu"]
    assert exceeded_names(res(5000, 0), GroupLimit(Resource(), set())) == []  # nothing named: no limit


def test_parse_resource_limits_keeps_the_named_dimensions():
    limits = parse_resource_limits({RESOURCE_LIMITS_ANNOTATION: '{"g":{"cpu":" 1500m ","nvidia.com/gpu":2,"foo":"1"}}'})
    assert limits["g"].names == {"cpu", "nvidia.com/gpu", "foo"}
    assert limits["g"].resource.milli_cpu == 1500
    assert limits["g"].resource.get("nvidia.com/gpu") == 2000
    assert limits["g"].resource.get("foo") == 0  # not a resource upstream keeps: a limit of 0
    with pytest.raises(LimitAnnotationError):
        parse_resource_limits({RESOURCE_LIMITS_ANNOTATION: '{"g":{"cpu":NaN}}'})


# ------------------------------------------------------------------ the scenario format


def _scenario(*objects):
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(objects)}


def _queue_doc(spec):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": spec}


def test_loader_reads_spec_affinity_and_tells_empty_from_absent():
    doc = _scenario(_queue_doc({"affinity": {
        "nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["a"],
                              "preferredDuringSchedulingIgnoredDuringExecution": ["b", "c"]},
        "nodeGroupAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["d"]}}}))
    scenario = scenario_from_document(doc, "<test>")
    q = next(q for q in scenario.objects.queues if q.name == "q")
    assert q.affinity == QueueAffinity(NodeGroupTerms(["a"], ["b", "c"]), NodeGroupTerms(["d"], []))
    assert not any("affinity" in w for w in scenario.warnings)
    again = scenario_from_document(_scenario(queue_document(q)), "<dump>")
    assert next(x for x in again.objects.queues if x.name == "q").affinity == q.affinity
    empty = scenario_from_document(_scenario(_queue_doc({"affinity": {}})), "<test>")
    assert next(x for x in empty.objects.queues if x.name == "q").affinity == QueueAffinity()
    absent = scenario_from_document(_scenario(_queue_doc({})), "<test>")
    assert next(x for x in absent.objects.queues if x.name == "q").affinity is None
