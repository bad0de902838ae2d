"""task-topology plugin: PodGroup annotations, buckets, task order, node scores (topology.go, manager.go,
bucket.go, util.go).

Upstream's topology_test.go (Test_readTopologyFromPgAnnotations) builds JobInfos by hand, not with
uthelper.TestCommonStruct, so `schedcheck upstream-tests` extracts nothing from it; its cases are
restated first. The corpus scenarios task-topology-*.yaml check whole sessions against upstream.
"""

from __future__ import annotations

import pytest

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.plugin import get_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import TASK_SPEC_KEY, ClusterObjects, Container, Pod, PodGroup
from schedcheck.reference.plugins.task_topology import (
    AFFINITY_ANNOTATION,
    ANTI_AFFINITY_ANNOTATION,
    TASK_ORDER_ANNOTATION,
    TaskTopology,
    TaskTopologyPlugin,
    TopologyAnnotationError,
    read_topology,
)
from schedcheck.reference.plugins.task_topology_buckets import JobManager, request_score
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.assertion import AssertionViolation
from tests.builders import node, pod, pod_group, res

JOB = "default/tf"


# ------------------------------------------------------------------ builders


def member(name: str, role: str | None, node_name: str = "", cpu: str = "1", memory: str = "1Gi",
           group: str = "tf", **extra) -> Pod:
    """A pod of job `group` whose task-spec annotation is `role` (None: no annotation)."""
    annotations = {} if role is None else {TASK_SPEC_KEY: role}
    phase = "Running" if node_name else "Pending"
    return pod(name, group=group, cpu=cpu, memory=memory, annotations=annotations, node_name=node_name,
               phase=phase, **extra)


def session(pods, nodes=None, annotations=None, arguments=None, groups=None) -> Session:
    nodes = nodes if nodes is not None else [node("n1"), node("n2")]
    groups = groups if groups is not None else [pod_group("tf", 1, annotations=dict(annotations or {}))]
    option = PluginOption("task-topology", arguments=dict(arguments or {}))
    apply_plugin_conf_defaults(option)
    objects = ClusterObjects(nodes=list(nodes), pods=list(pods), pod_groups=list(groups))
    return open_session(SchedulerCache(objects), SchedulerConf(actions=["allocate"], tiers=[Tier([option])]), 0, 0)


def plugin(ssn: Session) -> TaskTopologyPlugin:
    found = ssn.plugins["task-topology"]
    assert isinstance(found, TaskTopologyPlugin)
    return found


def manager(ssn: Session, job: str = JOB) -> JobManager:
    return plugin(ssn).managers[job]


def task(ssn: Session, name: str) -> TaskInfo:
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def buckets(ssn: Session, job: str = JOB) -> list[tuple[list[str], dict[str, int]]]:
    """Each bucket's pending task names (sorted) and its members per node."""
    return [(sorted(t.name for t in b.tasks.values()), dict(b.nodes)) for b in manager(ssn, job).buckets]


def scores(ssn: Session, name: str) -> dict[str, float]:
    t = task(ssn, name)
    return {n: round(plugin(ssn).node_order(t, ssn.nodes[n]), 6) for n in sorted(ssn.nodes)}


def bind(ssn: Session, name: str, node_name: str) -> None:
    """What an allocate does for the plugin: the task gets its node and the allocate event fires."""
    t = task(ssn, name)
    ssn.jobs[t.job].update_task_status(t, TaskStatus.Allocated)
    t.node_name = node_name
    ssn.nodes[node_name].add_task(t)
    ssn.fire_allocate(t)


# ------------------------------------------------------------------ upstream's Test_readTopologyFromPgAnnotations


def hand_job(roles: list[str], annotations: dict[str, str] | None) -> JobInfo:
    """The test's hand-built JobInfo: tasks with a role and a name, a PodGroup with the annotations."""
    job = JobInfo("job1")
    job.name, job.namespace = "job1", "default"
    job.pod_group = PodGroup("job1", "default", "uid-job1", annotations=dict(annotations or {}))
    counts: dict[str, int] = {}
    for i, role in enumerate(roles):
        index = counts.get(role, 0)
        counts[role] = index + 1
        t = TaskInfo(Pod(f"job1-{role}-{index}", "default", f"uid-{i}", annotations={TASK_SPEC_KEY: role}))
        job.tasks[str(i)] = t
    return job


SIX = ["ps", "ps", "worker", "worker", "chief", "evaluator"]
SIX_DASHED = ["ps-some", "ps-some", "worker-another-some", "worker-another-some", "chief-kk", "evaluator-tt"]
FOUR = ["ps", "ps", "worker", "worker"]


def annotated(affinity: str, anti: str, order: str) -> dict[str, str]:
    return {AFFINITY_ANNOTATION: affinity, ANTI_AFFINITY_ANNOTATION: anti, TASK_ORDER_ANNOTATION: order}


UPSTREAM_CASES = [
    ("correct annotation", SIX, annotated("ps,worker;ps,chief", "ps;worker,chief", "ps,worker,chief,evaluator"),
     TaskTopology([["ps", "worker"], ["ps", "chief"]], [["ps"], ["worker", "chief"]],
                  ["ps", "worker", "chief", "evaluator"]), None),
    ("task names with dashes", SIX_DASHED,
     annotated("ps-some,worker-another-some;ps-some,chief-kk", "ps-some;worker-another-some,chief-kk",
               "ps-some,worker-another-some,chief-kk,evaluator-tt"),
     TaskTopology([["ps-some", "worker-another-some"], ["ps-some", "chief-kk"]],
                  [["ps-some"], ["worker-another-some", "chief-kk"]],
                  ["ps-some", "worker-another-some", "chief-kk", "evaluator-tt"]), None),
    ("nil annotation", [], None, None, None),
    ("invalid annotation", SIX,
     annotated("$%GF$^trtqwrg^", "ps;worker,chief;#@FGEW^vfa897bgs;;", "ps,worker,chief,evaluator,,,"),
     None, "task $%GF$^trtqwrg^ do not exist in job <default/job1>"),
    ("invalid task name", FOUR, annotated("ps,worker", "ps", "ps,worker,chief"),
     None, "task chief do not exist in job <default/job1>"),
    ("duplicate task name", FOUR, annotated("ps,worker", "ps,ps", "ps,worker"),
     None, "task ps is duplicate in job <default/job1>"),
    ("redundant punctuation", SIX,
     annotated("ps,worker;ps,,chief,;", "ps;worker,chief;;;", "ps,worker,chief,evaluator,,,"),
     TaskTopology([["ps", "worker"], ["ps", "", "chief", ""], [""]],
                  [["ps"], ["worker", "chief"], [""], [""], [""]],
                  ["ps", "worker", "chief", "evaluator", "", "", ""]), None),
]


@pytest.mark.parametrize("description, roles, annotations, topology, error", UPSTREAM_CASES,
                         ids=[case[0] for case in UPSTREAM_CASES])
def test_read_topology_from_pod_group_annotations(description, roles, annotations, topology, error):
    job = hand_job(roles, annotations)
    if error is None:
        assert read_topology(job) == topology
    else:
        with pytest.raises(TopologyAnnotationError) as raised:
            read_topology(job)
        assert str(raised.value) == error


# ------------------------------------------------------------------ annotations, further edges


def test_the_affinity_is_checked_before_the_anti_affinity():
    job = hand_job(FOUR, {ANTI_AFFINITY_ANNOTATION: "nope", AFFINITY_ANNOTATION: "ps,ps"})
    with pytest.raises(TopologyAnnotationError, match="task ps is duplicate"):
        read_topology(job)


def test_a_name_may_repeat_across_groups_but_not_in_the_task_order():
    job = hand_job(FOUR, {AFFINITY_ANNOTATION: "ps;ps,worker", TASK_ORDER_ANNOTATION: "ps,worker,ps"})
    with pytest.raises(TopologyAnnotationError, match="task ps is duplicate"):
        read_topology(job)
    assert read_topology(hand_job(FOUR, {AFFINITY_ANNOTATION: "ps;ps,worker"})).affinity == [["ps"], ["ps", "worker"]]


def test_only_the_keys_present_are_read():
    topology = read_topology(hand_job(FOUR, {TASK_ORDER_ANNOTATION: "worker"}))
    assert topology == TaskTopology(None, None, ["worker"])
    assert read_topology(hand_job(FOUR, {"volcano.sh/task-topology": "ps,worker"})) is None


def test_an_empty_annotation_gives_a_manager_with_no_bucket():
    ssn = session([member("tf-ps-0", "ps")], annotations={AFFINITY_ANNOTATION: ""})
    assert buckets(ssn) == []
    assert scores(ssn, "tf-ps-0") == {"n1": 0.0, "n2": 0.0}


def test_an_invalid_annotation_leaves_the_job_without_topology():
    ssn = session([member("tf-ps-0", "ps")], annotations={AFFINITY_ANNOTATION: "ps,chief"})
    assert plugin(ssn).managers == {}


def test_a_job_without_pending_tasks_gets_no_manager():
    ssn = session([member("tf-ps-0", "ps", node_name="n1")], annotations={AFFINITY_ANNOTATION: "ps"})
    assert plugin(ssn).managers == {}


def test_a_role_from_the_label_passes_the_check_but_keeps_the_task_out_of_buckets():
    # affinityCheck reads TaskRole (annotation, else label); getTaskName reads the annotation only.
    labelled = member("tf-ps-0", None, labels={TASK_SPEC_KEY: "ps"})
    ssn = session([labelled, member("tf-ps-1", "ps")], annotations={AFFINITY_ANNOTATION: "ps"})
    assert buckets(ssn) == [(["tf-ps-1"], {})]
    assert manager(ssn).bucket_of(task(ssn, "tf-ps-0")) is None


def test_the_task_order_alone_puts_no_task_in_a_bucket():
    ssn = session([member("tf-ps-0", "ps"), member("tf-worker-0", "worker")],
                  annotations={TASK_ORDER_ANNOTATION: "worker,ps"})
    assert buckets(ssn) == []
    assert plugin(ssn).task_order(task(ssn, "tf-ps-0"), task(ssn, "tf-worker-0")) == 0


# ------------------------------------------------------------------ topology tables


def test_each_name_keeps_the_highest_priority_of_its_kinds():
    jm = JobManager(JOB)
    jm.apply([["a", "b"], ["c"]], [["a"], ["b", "d"]], [])
    assert jm.priority == {"a": 4, "b": 3, "c": 2, "d": 1}
    assert jm.self_affinity == {"c"} and jm.self_anti_affinity == {"a"}
    assert jm.inter_affinity == {"a": {"b"}, "b": {"a"}}
    assert jm.inter_anti_affinity == {"b": {"d"}, "d": {"b"}}


def test_the_task_order_counts_down_from_the_list_length():
    jm = JobManager(JOB)
    jm.apply([], [], ["ps", "worker", "chief", "", ""])
    assert jm.order == {"ps": 5, "worker": 4, "chief": 3, "": 1}


def test_affinity_to_a_set_of_names():
    jm = JobManager(JOB)
    jm.apply([["ps", "worker"], ["worker"]], [["worker"], ["ps", "chief"]], [])
    names = {"ps": 2, "worker": 3, "chief": 1}
    assert jm.affinity_to("worker", names, only_anti=False) == 2 + 3 - 3
    assert jm.affinity_to("worker", names, only_anti=True) == -3
    assert jm.affinity_to("ps", names, only_anti=False) == 3 - 1
    assert jm.affinity_to("", names, only_anti=False) == 0
    empty = JobManager(JOB)
    empty.apply([[""]], [], [])  # affinity ";": a self-affine empty name, never a task's
    assert empty.self_affinity == {""} and empty.affinity_to("", {"": 2}, only_anti=False) == 0


def test_request_score_weighs_a_milli_cpu_a_mib_and_a_scalar_unit_alike():
    assert request_score(res(1000, 1024**3, nvidia__com__gpu=1000)) == 1000 + 1024 + 1000


# ------------------------------------------------------------------ buckets


def test_tasks_on_nodes_open_one_bucket_per_node_in_node_name_order():
    pods = [member("tf-ps-0", "ps", "n2"), member("tf-ps-1", "ps", "n1"), member("tf-ps-2", "ps", "n1"),
            member("tf-worker-0", "worker")]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "ps,worker"})
    # worker-0: +2 for bucket 0 (two ps on n1), +1 for bucket 1
    assert buckets(ssn) == [(["tf-worker-0"], {"n1": 2}), ([], {"n2": 1})]
    assert manager(ssn).max_size == 3


def test_a_finished_task_still_counts_on_its_node():
    done = member("tf-ps-1", "ps", "n2")
    done.phase = "Succeeded"
    ssn = session([member("tf-ps-0", "ps"), done], annotations={AFFINITY_ANNOTATION: "ps"})
    assert buckets(ssn) == [(["tf-ps-0"], {"n2": 1})]
    assert scores(ssn, "tf-ps-0") == {"n1": 50.0, "n2": 100.0}


def test_self_anti_affinity_opens_a_bucket_per_task():
    workers = [member(f"tf-worker-{i}", "worker") for i in range(3)]
    ssn = session(workers, annotations={ANTI_AFFINITY_ANNOTATION: "worker"})
    assert buckets(ssn) == [(["tf-worker-0"], {}), (["tf-worker-1"], {}), (["tf-worker-2"], {})]
    assert manager(ssn).max_size == 1


def test_an_equal_affinity_goes_to_the_bucket_with_the_lower_request_score():
    # ps (4) sorts before chief and worker (1); chief-0 sorts before worker-0 by pod name.
    pods = [member("tf-ps-0", "ps", cpu="2"), member("tf-ps-1", "ps"), member("tf-chief-0", "chief"),
            member("tf-worker-0", "worker")]
    ssn = session(pods, annotations={ANTI_AFFINITY_ANNOTATION: "ps;chief,worker"})
    # chief-0: 0 for both, bucket 1 is lighter; worker-0: -1 for bucket 1 (chief-0), 0 for bucket 0
    assert buckets(ssn) == [(["tf-ps-0", "tf-worker-0"], {}), (["tf-chief-0", "tf-ps-1"], {})]


def test_the_task_order_annotation_changes_the_buckets():
    pods = [member("tf-ps-0", "ps"), member("tf-worker-0", "worker"), member("tf-worker-1", "worker")]
    topology = {AFFINITY_ANNOTATION: "ps,worker", ANTI_AFFINITY_ANNOTATION: "worker"}
    # By priority the workers (4) come first and split; the ps in front pulls both workers in.
    assert buckets(session(pods, annotations=topology)) == [(["tf-ps-0", "tf-worker-0"], {}), (["tf-worker-1"], {})]
    ordered = session(pods, annotations={**topology, TASK_ORDER_ANNOTATION: "ps,worker"})
    assert buckets(ordered) == [(["tf-ps-0", "tf-worker-0", "tf-worker-1"], {})]


def test_tasks_without_a_topology_name_stay_out():
    pods = [member("tf-ps-0", "ps"), member("tf-eval-0", "evaluator"), member("tf-x-0", None)]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "ps", TASK_ORDER_ANNOTATION: "evaluator,ps"})
    assert buckets(ssn) == [(["tf-ps-0"], {})]


# ------------------------------------------------------------------ task order


def doc_example() -> Session:
    """The example of TaskOrderFn's comment: A = [a1 a3 | a2 | a4 out], B = [b1 b2 | b3 out]."""
    pods = [member("a-p-1", "p", group="a"), member("a-q-2", "q", group="a"), member("a-p-3", "p", group="a"),
            member("a-x-4", "x", group="a"),
            member("b-p-1", "p", group="b"), member("b-p-2", "p", group="b"), member("b-x-3", "x", group="b")]
    groups = [pod_group("a", 1, annotations={ANTI_AFFINITY_ANNOTATION: "p,q"}),
              pod_group("b", 1, annotations={AFFINITY_ANNOTATION: "p"})]
    return session(pods, groups=groups)


def test_the_example_of_upstreams_comment():
    ssn = doc_example()
    assert buckets(ssn, "default/a") == [(["a-p-1", "a-p-3"], {}), (["a-q-2"], {})]
    assert buckets(ssn, "default/b") == [(["b-p-1", "b-p-2"], {})]
    order = plugin(ssn).task_order
    t = {name: task(ssn, name) for name in ["a-p-1", "a-q-2", "a-p-3", "a-x-4", "b-p-1", "b-p-2", "b-x-3"]}
    assert order(t["a-p-1"], t["a-q-2"]) == -1  # the bigger bucket first
    assert order(t["a-q-2"], t["a-p-3"]) == 1
    assert order(t["a-p-1"], t["a-p-3"]) == 0  # same task name
    assert order(t["a-q-2"], t["a-x-4"]) == -1  # in a bucket before out of one
    assert order(t["b-x-3"], t["a-q-2"]) == 1  # ... even across jobs
    assert order(t["a-q-2"], t["b-p-1"]) == 0  # both in buckets of different jobs: not this plugin's call
    assert order(t["a-x-4"], t["b-x-3"]) == 0 and order(t["a-x-4"], t["a-x-4"]) == 0


def test_a_job_without_topology_makes_every_comparison_equal():
    pods = [member("tf-ps-0", "ps"), member("other-0", None, group="other")]
    groups = [pod_group("tf", 1, annotations={AFFINITY_ANNOTATION: "ps"}), pod_group("other", 1)]
    ssn = session(pods, groups=groups)
    assert plugin(ssn).task_order(task(ssn, "tf-ps-0"), task(ssn, "other-0")) == 0
    assert plugin(ssn).task_order(task(ssn, "other-0"), task(ssn, "tf-ps-0")) == 0


def test_in_one_bucket_the_task_order_then_the_priority_decide():
    pods = [member("tf-ps-0", "ps"), member("tf-worker-0", "worker"), member("tf-chief-0", "chief")]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "ps,worker,chief;chief", TASK_ORDER_ANNOTATION: "worker"})
    order = plugin(ssn).task_order
    ps, worker, chief = task(ssn, "tf-ps-0"), task(ssn, "tf-worker-0"), task(ssn, "tf-chief-0")
    assert buckets(ssn) == [(["tf-chief-0", "tf-ps-0", "tf-worker-0"], {})]
    assert order(worker, chief) == -1 and order(chief, worker) == 1  # the listed order wins
    assert order(ps, chief) == 0  # both inter affinity (3): chief's self affinity (2) is lower


def test_the_bigger_bucket_goes_first_until_binding_shrinks_it():
    pods = [member("tf-p-0", "p", cpu="2"), member("tf-p-1", "p"), member("tf-q-0", "q")]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "p,q", ANTI_AFFINITY_ANNOTATION: "p"})
    assert buckets(ssn) == [(["tf-p-0"], {}), (["tf-p-1", "tf-q-0"], {})]  # q-0 to the lighter bucket
    p0, p1 = task(ssn, "tf-p-0"), task(ssn, "tf-p-1")
    assert plugin(ssn).task_order(p0, p1) == 1
    bind(ssn, "tf-q-0", "n1")
    assert plugin(ssn).task_order(p0, p1) == -1  # equal sizes now: the older bucket first


# ------------------------------------------------------------------ node order


def affinity_cluster(**kwargs) -> Session:
    """ps-0 runs on n1; two pending workers; affinity ps,worker and self anti-affinity of worker."""
    pods = [member("tf-ps-0", "ps", "n1"), member("tf-worker-0", "worker"), member("tf-worker-1", "worker")]
    return session(pods, annotations={AFFINITY_ANNOTATION: "ps,worker", ANTI_AFFINITY_ANNOTATION: "worker"}, **kwargs)


def test_members_on_the_node_and_pending_members_score_scaled_to_the_biggest_bucket():
    ssn = affinity_cluster()
    assert buckets(ssn) == [(["tf-worker-0", "tf-worker-1"], {"n1": 1})]
    assert scores(ssn, "tf-worker-0") == {"n1": 100.0, "n2": round(200 / 3, 6)}
    bind(ssn, "tf-worker-0", "n1")
    # n1: 2 members - 1 (worker-0 bound there this session, self anti-affinity) + 1 pending
    assert scores(ssn, "tf-worker-1") == {"n1": round(200 / 3, 6), "n2": round(100 / 3, 6)}


def test_the_weight_multiplies_before_scaling():
    ssn = affinity_cluster(arguments={"task-topology.weight": 3})
    assert plugin(ssn).weight == 3
    assert scores(ssn, "tf-worker-0") == {"n1": 300.0, "n2": 200.0}


@pytest.mark.parametrize("arguments, weight", [({}, 1), ({"task-topology.weight": "3"}, 1),
                                                ({"task-topology.weight": 2.5}, 1), ({"task-topology.weight": 0}, 0),
                                                ({"task-topology.weight": -2}, -2)])
def test_the_weight_argument_is_read_as_an_int_only(arguments, weight):
    built = get_plugin_builder("task-topology")(arguments)
    assert isinstance(built, TaskTopologyPlugin) and built.weight == weight


def test_a_node_the_bucket_does_not_fit_loses_a_point_per_member_taken_out():
    pods = [member("tf-ps-0", "ps"), member("tf-worker-0", "worker"), member("tf-worker-1", "worker")]
    ssn = session(pods, nodes=[node("n1", cpu="2"), node("n2", cpu="1"), node("n3", cpu="3")],
                  annotations={AFFINITY_ANNOTATION: "ps,worker"})
    assert scores(ssn, "tf-ps-0") == {"n1": round(200 / 3, 6), "n2": round(100 / 3, 6), "n3": 100.0}


def test_members_taken_out_are_walked_in_joining_order():
    # worker-1 is big; worker-0 joined first and is taken out first, then worker-1 (upstream: map order).
    pods = [member("tf-ps-0", "ps"), member("tf-worker-0", "worker"), member("tf-worker-1", "worker", cpu="3")]
    ssn = session(pods, nodes=[node("n1", cpu="2")],
                  annotations={AFFINITY_ANNOTATION: "ps,worker", TASK_ORDER_ANNOTATION: "ps,worker"})
    assert list(t.name for t in manager(ssn).buckets[0].tasks.values()) == ["tf-ps-0", "tf-worker-0", "tf-worker-1"]
    assert scores(ssn, "tf-ps-0") == {"n1": round(1 * 100 / 3, 6)}  # 3 - 2 members out


def test_a_task_that_does_not_fit_the_node_scores_zero_whatever_its_bucket():
    pods = [member("tf-ps-0", "ps", "n1", cpu="3"), member("tf-worker-0", "worker", cpu="2")]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "ps,worker"})
    assert scores(ssn, "tf-worker-0") == {"n1": 0.0, "n2": 50.0}


def test_releasing_resources_count_as_room():
    pods = [member("tf-ps-0", "ps", "n1", cpu="3"), member("tf-worker-0", "worker", cpu="2"),
            member("old-0", None, "n1", group="old", deletion_timestamp="2026-01-01T00:00:00Z")]
    groups = [pod_group("tf", 1, annotations={AFFINITY_ANNOTATION: "ps,worker"}), pod_group("old", 1)]
    ssn = session(pods, nodes=[node("n1", cpu="5"), node("n2", cpu="4")], groups=groups)
    assert ssn.nodes["n1"].idle.milli_cpu == 1000 and ssn.nodes["n1"].releasing.milli_cpu == 1000
    assert scores(ssn, "tf-worker-0") == {"n1": 100.0, "n2": 50.0}


def test_out_of_bucket_and_no_topology_score_zero():
    pods = [member("tf-ps-0", "ps"), member("tf-x-0", None), member("other-0", "ps", group="other")]
    groups = [pod_group("tf", 1, annotations={AFFINITY_ANNOTATION: "ps"}), pod_group("other", 1)]
    ssn = session(pods, groups=groups)
    assert scores(ssn, "tf-x-0") == {"n1": 0.0, "n2": 0.0}
    assert scores(ssn, "other-0") == {"n1": 0.0, "n2": 0.0}
    assert scores(ssn, "tf-ps-0") == {"n1": 100.0, "n2": 100.0}


def test_anti_affinity_sees_only_tasks_bound_in_this_session():
    pods = [member("tf-worker-0", "worker", "n1"), member("tf-worker-1", "worker"), member("tf-worker-2", "worker")]
    ssn = session(pods, annotations={ANTI_AFFINITY_ANNOTATION: "worker"})
    assert buckets(ssn) == [([], {"n1": 1}), (["tf-worker-1"], {}), (["tf-worker-2"], {})]
    assert scores(ssn, "tf-worker-1") == {"n1": 100.0, "n2": 100.0}  # worker-0 ran before: no penalty
    bind(ssn, "tf-worker-1", "n2")
    assert scores(ssn, "tf-worker-2") == {"n1": 100.0, "n2": 0.0}


def test_affinity_to_tasks_bound_this_session_adds_nothing_beyond_the_bucket_count():
    pods = [member("tf-ps-0", "ps"), member("tf-worker-0", "worker")]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "ps,worker"})
    bind(ssn, "tf-ps-0", "n1")
    assert scores(ssn, "tf-worker-0") == {"n1": 100.0, "n2": 50.0}  # 1 there + 1 pending of 2; 0 + 1


def test_an_allocate_event_is_never_undone():
    ssn = affinity_cluster()
    bind(ssn, "tf-worker-0", "n1")
    ssn.fire_deallocate(task(ssn, "tf-worker-0"))  # no deallocate handler upstream
    bucket = manager(ssn).buckets[0]
    assert (bucket.nodes, bucket.bound, list(bucket.tasks)) == ({"n1": 2}, 2, [task(ssn, "tf-worker-1").uid])
    assert bucket.request.milli_cpu == 1000
    ssn.fire_allocate(task(ssn, "tf-worker-0"))  # bound again: counted again, its request taken again
    assert (bucket.nodes, bucket.bound, bucket.request.milli_cpu) == ({"n1": 3}, 3, 0)
    assert manager(ssn).node_task_names == {"n1": {"worker": 2}}


def test_a_task_placed_again_after_a_discard_trips_upstreams_asserting_sub():
    # allocate places ps-0, gang discards it (no deallocate handler), preempt pipelines it again: the
    # bucket's pending request is already empty and upstream's Resource.Sub panics (seen through the
    # Go adapter with enqueue, allocate, preempt, one 2-cpu node, minMember 3).
    ssn = session([member("tf-ps-0", "ps", cpu="2"), member("tf-worker-0", "worker")],
                  annotations={ANTI_AFFINITY_ANNOTATION: "ps"})
    assert buckets(ssn) == [(["tf-ps-0"], {})]
    ps = task(ssn, "tf-ps-0")
    ps.node_name = "n1"
    ssn.fire_allocate(ps)
    ssn.fire_deallocate(ps)
    with pytest.raises(AssertionViolation, match="resource is not sufficient"):
        ssn.fire_allocate(ps)


def test_the_allocate_event_counts_a_named_task_outside_any_bucket_on_its_node():
    pods = [member("tf-ps-0", "ps"), member("tf-eval-0", "evaluator")]
    ssn = session(pods, annotations={AFFINITY_ANNOTATION: "ps"})
    assert manager(ssn).bucket_of(task(ssn, "tf-eval-0")) is None
    bind(ssn, "tf-eval-0", "n1")
    assert manager(ssn).node_task_names == {"n1": {"evaluator": 1}}
    assert buckets(ssn) == [(["tf-ps-0"], {})]


def test_the_plugin_forgets_its_managers_at_session_close():
    ssn = affinity_cluster()
    p = plugin(ssn)
    p.on_session_close(ssn)
    assert p.managers == {}
    assert p.node_order(task(ssn, "tf-worker-0"), ssn.nodes["n1"]) == 0.0


def test_the_request_score_keeps_fractions():
    # 1.5 cpu and 1536Mi: float division keeps fractions; the request's `pods: 1` scalar counts too.
    t = TaskInfo(Pod("p", "default", "u", containers=[Container("c", {"cpu": Quantity.parse("1.5"),
                                                                       "memory": Quantity.parse("1536Mi")})]))
    assert request_score(t.resreq) == 1500 + 1536 + 1
    assert request_score(res(1, 1024**2 // 2)) == 1.5
