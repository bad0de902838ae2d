"""numa-aware: policies, the CPU-manager provider, the plugin's predicate, score, events and session close
(pkg/scheduler/plugins/numaaware/: policy/*_test.go, provider/cpumanager/cpu_mng_test.go, numaaware_test.go).

The policy and provider cases are upstream's test vectors restated; the plugin cases run real sessions.
"""

from __future__ import annotations

import pytest

from schedcheck.reference.api.numa_info import (
    CPUInfo,
    NumaResource,
    Numatopology,
    NumatopoInfo,
    PodAllocation,
    PodMeta,
    format_cpuset,
    parse_cpuset,
    refresh_numa_scheduler_info,
)
from schedcheck.reference.api.unschedule_info import StatusCode
from schedcheck.reference.framework.framework import close_session, open_session
from schedcheck.reference.k8s import ClusterObjects, Container, Pod
from schedcheck.reference.plugins import numaaware_cpumanager as cm
from schedcheck.reference.plugins.numaaware import NUMA_POLICY_KEY, normalize_score, pod_qos
from schedcheck.reference.plugins.numaaware_policy import (
    PolicyBestEffort,
    PolicyRestricted,
    PolicySingleNumaNode,
    TopologyHint,
    get_policy,
    is_narrower_than,
    iterate_bit_masks,
    mask_of,
)
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util.go_sort import go_sort_slice
from tests.builders import node, pod, pod_group, rl
from tests.framework.helpers import conf


def H(ids, preferred):  # noqa: N802 - a hint, as upstream's tables write them
    return TopologyHint(None if ids is None else mask_of(ids), preferred)


# -- policies (policy_best_effort_test.go, policy_restricted_test.go, policy_single_numa_node_test.go) ----

CPU_GPU_CASES = [  # (cpu hints, gpu hints)
    ([H([0, 1], False), H([0], True)], [H([0, 1], False), H([0], True)]),
    ([H([0, 1], False), H([1], True)], [H([0, 1], False), H([1], True)]),
    ([H([0, 1], False), H([0], True), H([1], True)], [H([0, 1], False), H([0], True), H([1], True)]),
    ([H([0, 1], False), H([0], True)], [H([0, 1], False), H([1], True)]),
    ([H([0, 1], False), H([0], True)], [H([0, 1], True)]),
    ([H([0, 1], True)], [H([0, 1], True)]),
]
BEST_EFFORT_AND_RESTRICTED = [H([0], True), H([1], True), H([0], True), H([0], False), H([0], True), H([0, 1], True)]
SINGLE_NUMA_NODE = [H([0], True), H([1], True), H([0], True), H([0, 1], False), H([0, 1], False)]


@pytest.mark.parametrize("case", range(6))
@pytest.mark.parametrize("policy", [PolicyBestEffort, PolicyRestricted])
def test_best_effort_and_restricted_pick_upstreams_best_hint(policy, case):
    cpu, gpu = CPU_GPU_CASES[case]
    best, admit = policy([0, 1]).predicate([{"cpu": cpu}, {"gpu": gpu}])
    assert best == BEST_EFFORT_AND_RESTRICTED[case]
    assert admit == (True if policy is PolicyBestEffort else best.preferred)


@pytest.mark.parametrize("case", range(5))
def test_single_numa_node_picks_upstreams_best_hint(case):
    cpu, gpu = CPU_GPU_CASES[case]
    best, admit = PolicySingleNumaNode([0, 1]).predicate([{"cpu": cpu}, {"gpu": gpu}])
    assert best == SINGLE_NUMA_NODE[case] and admit == best.preferred


def test_none_admits_with_no_affinity_and_unknown_names_behave_as_none():
    assert get_policy("none", [0, 1]).predicate([{"cpu": []}]) == (TopologyHint(None, False), True)
    assert get_policy("static", [0, 1]).predicate([{"cpu": []}]) == (TopologyHint(None, False), True)


def test_no_preference_and_no_possible_affinity():
    # a provider with nothing to say prefers everything; an empty list makes nothing preferred
    assert PolicyRestricted([0, 1]).predicate([None]) == (H([0, 1], True), True)
    assert PolicyRestricted([0, 1]).predicate([{"cpu": []}]) == (H([0, 1], False), False)
    assert PolicySingleNumaNode([0, 1]).predicate([{"cpu": None}]) == (H([0, 1], True), True)


def test_bitmask_order_and_narrowness():
    seen = []
    iterate_bit_masks([0, 1, 3], lambda m: seen.append(m))
    assert seen == [mask_of(x) for x in ([0], [1], [3], [0, 1], [0, 3], [1, 3], [0, 1, 3])]
    assert is_narrower_than(mask_of([1]), mask_of([0, 1]))
    assert is_narrower_than(mask_of([0]), mask_of([1])) and not is_narrower_than(mask_of([1]), mask_of([0]))


# -- the CPU manager (cpu_mng_test.go) ---------------------------------------------------------------------

DETAILS = {0: CPUInfo(0, 0, 0), 1: CPUInfo(0, 0, 0), 2: CPUInfo(0, 0, 1), 3: CPUInfo(0, 0, 1),
           4: CPUInfo(1, 1, 2), 5: CPUInfo(1, 1, 2), 6: CPUInfo(1, 1, 3), 7: CPUInfo(1, 1, 3)}
INFO = NumatopoInfo("n1", cpu_detail=DETAILS)


def cpus(n: int) -> Container:
    return Container("c", requests={"cpu": Quantity(n)})


@pytest.mark.parametrize("request_, free, hints", [
    (4, "0-7", [H([0], True), H([1], True), H([0, 1], False)]),
    (4, "1-7", [H([1], True), H([0, 1], False)]),
    (5, "0-7", [H([0, 1], True)]),
    (8, "0-7", [H([0, 1], True)]),
    (9, "0-7", []),
    (4, "2-5", [H([0, 1], False)]),
])
def test_topology_hints(request_, free, hints):
    assert cm.get_topology_hints(cpus(request_), INFO, {"cpu": parse_cpuset(free)}) == {"cpu": hints}


@pytest.mark.parametrize("request_, free, hint, expected", [
    (4, "0-7", H([0], True), "0-3"),
    (4, "1-7", H([1], True), "4-7"),
    (5, "0-7", H([0, 1], True), "0-4"),
    (5, "1-7", H([0, 1], True), "1,4-7"),  # the free-socket quirk: socket 1 whole, then CPU 1
    (8, "1-7", H([0, 1], True), ""),  # a failed take answers the empty set
])
def test_allocate(request_, free, hint, expected):
    assert format_cpuset(cm.allocate(cpus(request_), hint, INFO, {"cpu": parse_cpuset(free)})["cpu"]) == expected


def test_fractional_or_missing_cpu_requests_ask_for_nothing():
    assert cm.guaranteed_cpus(Container("c", requests={"cpu": Quantity.parse("1500m")})) == 0
    assert cm.guaranteed_cpus(Container("c", requests={"cpu": Quantity.parse("2000m")})) == 2
    assert cm.get_topology_hints(Container("c"), INFO, {"cpu": parse_cpuset("0-7")}) is None
    assert cm.get_topology_hints(Container("c", requests={"cpu": Quantity.parse("500m")}), INFO,
                                 {"cpu": parse_cpuset("0-7")}) is None


def test_reserved_cpus_are_never_offered():
    info = NumatopoInfo("n1", cpu_detail=DETAILS, res_reserved={"cpu": Quantity.parse("1500m")})  # ceil: 2
    assert cm.allocate(cpus(2), H([0], True), info, {"cpu": parse_cpuset("0-7")})["cpu"] == frozenset({2, 3})


def test_go_sort_slice_matches_go_on_comparators_that_are_not_orders():
    # outputs of Go 1.26's sort.Slice on these inputs (insertion sort up to 12 elements, pdqsort above)
    xs = [(i * 7919) % 20 for i in range(20)]
    a = list(xs)
    go_sort_slice(a, lambda x, y: x % 3 < y % 3 or x > y)
    assert a == [18, 15, 12, 19, 16, 13, 17, 9, 6, 3, 0, 14, 11, 10, 8, 7, 4, 1, 5, 2]
    b = list(range(20))
    go_sort_slice(b, lambda x, y: x % 4 < y % 4 or x < y)
    assert b == [0, 4, 8, 1, 5, 9, 2, 3, 12, 13, 16, 17, 6, 7, 10, 11, 14, 18, 15, 19]
    c = [(i * 7919) % 50 for i in range(50)]
    go_sort_slice(c, lambda x, y: x % 5 > y % 5 or x % 2 < y % 2 or x < y)
    assert c[:16] == [4, 14, 9, 0, 3, 19, 2, 6, 7, 24, 34, 44, 29, 39, 49, 1]


# -- pieces of the plugin ----------------------------------------------------------------------------------


def test_pod_qos():
    def p(*containers, qos=""):
        return Pod("p", "default", "u", containers=list(containers), qos_class=qos)

    g = Container("c", requests=rl(cpu="2", memory="1Gi"), limits=rl(cpu="2", memory="1Gi"))
    assert pod_qos(p(g)) == "Guaranteed"
    assert pod_qos(p(g, Container("d", requests=rl(cpu="1"), limits=rl(cpu="1")))) == "Burstable"  # no memory limit
    assert pod_qos(p(Container("c", requests=rl(cpu="1", memory="1Gi"), limits=rl(cpu="2", memory="1Gi")))) == \
        "Burstable"
    assert pod_qos(p(Container("c"))) == "BestEffort"
    assert pod_qos(p(Container("c"), qos="Guaranteed")) == "Guaranteed"  # status.qosClass wins


def test_normalize_score_reversed():
    assert normalize_score(100, True, [1, 2, 0]) == [50, 0, 100]
    assert normalize_score(100, True, [0, 0]) == [100, 100]
    assert normalize_score(100, True, [3, 2]) == [0, 34]


def test_refresh_pre_occupies_every_record_while_one_is_unlisted():
    info = NumatopoInfo("n1", numa_res_map={"cpu": NumaResource(parse_cpuset("0-7"), 8)},
                        pod_allocations=[PodAllocation(uid="u-a")])
    a, b = PodMeta("u-a", "a", "default"), PodMeta("u-b", "b", "default")
    records = {a: {"cpu": parse_cpuset("0-1")}, b: {"cpu": parse_cpuset("4")}}
    view, kept = refresh_numa_scheduler_info(info, records)
    assert format_cpuset(view.numa_res_map["cpu"].allocatable) == "2-3,5-7" and kept == records
    info.pod_allocations.append(PodAllocation(name="b", namespace="default"))
    view, kept = refresh_numa_scheduler_info(info, records)
    assert format_cpuset(view.numa_res_map["cpu"].allocatable) == "0-7" and kept == {}


# -- sessions ----------------------------------------------------------------------------------------------


def topology(name: str, policy: str = "single-numa-node", free: str = "0-7", cpu_manager: str = "static",
             **extra) -> Numatopology:
    details = {i: CPUInfo(i // 4, i // 4, i) for i in range(8)}  # 2 NUMA nodes of 4 CPUs, one socket each
    return Numatopology(name, {"CPUManagerPolicy": cpu_manager, "TopologyManagerPolicy": policy},
                        {"cpu": NumaResource(parse_cpuset(free), 8)}, details, **extra)


def guaranteed(name: str, group: str, cpu: str, policy: str | None = "single-numa-node", **extra) -> Pod:
    p = pod(name, group=group, cpu=cpu, memory="1Gi", **extra)
    for c in p.containers:
        c.limits = dict(c.requests)
    if policy is not None:
        p.annotations[NUMA_POLICY_KEY] = policy
    return p


def scheduler(objects: ClusterObjects, actions="enqueue, allocate"):
    return Scheduler(objects, conf(["priority", "gang"], ["predicates", "numa-aware"], actions=actions), seed=0)


def session(objects: ClusterObjects):
    """A session with numa-aware alone, so that predicate_fn asks it only."""
    s = Scheduler(objects, conf(["numa-aware"]), seed=0)
    return s, open_session(s.cache, s.conf, 0, 0)


def test_predicate_reasons_and_codes():
    objects = ClusterObjects(
        nodes=[node(n, cpu="8") for n in ("plain", "dynamic", "other", "empty", "numa")],
        numatopologies=[topology("dynamic", cpu_manager="none"), topology("other", policy="best-effort"),
                        topology("empty", free=""), topology("numa")],
        pods=[guaranteed("a-0", "a", "5"), guaranteed("b-0", "b", "2")], pod_groups=[pod_group("a", 1),
                                                                                    pod_group("b", 1)])
    s, ssn = session(objects)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == "a-0")
    reasons = {}
    for name in ("plain", "dynamic", "other", "empty", "numa"):
        err = ssn.predicate_fn(task, ssn.nodes[name])
        reasons[name] = (err.statuses[0].code, err.statuses[0].reason) if err is not None else None
    assert reasons == {
        "plain": (StatusCode.Error, "numa info is empty"),
        "dynamic": (StatusCode.Error, "cpu manager policy isn't static"),
        "other": (StatusCode.Error, "task topology policy[single-numa-node] is different with node[best-effort]"),
        "empty": (StatusCode.Error, "cpu allocatable map is empty"),
        "numa": (StatusCode.UnschedulableAndUnresolvable, "container main cannot be assigned by numa"),
    }
    small = next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == "b-0")
    assert ssn.predicate_fn(small, ssn.nodes["numa"]) is None
    assert ssn.plugins["numa-aware"].assign_res[small.uid]["numa"] == {"cpu": frozenset({0, 1})}


def test_only_guaranteed_pods_and_policy_less_pods_judged_by_the_nodes_policy():
    burstable = pod("c-0", group="c", cpu="6", memory="1Gi")
    no_policy = guaranteed("d-0", "d", "6", policy=None)
    objects = ClusterObjects(nodes=[node("numa", cpu="8"), node("none", cpu="8")],
                             numatopologies=[topology("numa"), topology("none", policy="none")],
                             pods=[burstable, no_policy], pod_groups=[pod_group("c", 1), pod_group("d", 1)])
    s, ssn = session(objects)
    tasks = {t.name: t for j in ssn.jobs.values() for t in j.tasks.values()}
    assert ssn.predicate_fn(tasks["c-0"], ssn.nodes["numa"]) is None  # Burstable: not considered
    err = ssn.predicate_fn(tasks["d-0"], ssn.nodes["numa"])  # no policy, but the node's single-numa-node
    assert err is not None and err.statuses[0].code == StatusCode.UnschedulableAndUnresolvable
    assert ssn.predicate_fn(tasks["d-0"], ssn.nodes["none"]) is None  # a none node is not judged at all
    assert "none" not in ssn.plugins["numa-aware"].assign_res.get(tasks["d-0"].uid, {})
    assert ssn.batch_node_order_fn(tasks["d-0"], [ssn.nodes["numa"]]) == {}  # no policy: no score


def test_score_prefers_fewer_numa_nodes():
    objects = ClusterObjects(nodes=[node("split", cpu="8"), node("whole", cpu="8")],
                             numatopologies=[topology("split", policy="best-effort", free="2-3,6-7"),
                                             topology("whole", policy="best-effort", free="0-3")],
                             pods=[guaranteed("a-0", "a", "3", policy="best-effort")], pod_groups=[pod_group("a", 1)])
    s, ssn = session(objects)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values())
    for n in ssn.nodes.values():
        assert ssn.predicate_fn(task, n) is None
    assert ssn.batch_node_order_fn(task, [ssn.nodes["split"], ssn.nodes["whole"]]) == {"split": 0.0, "whole": 50.0}


def test_session_close_records_and_the_next_session_pre_occupies_them():
    objects = ClusterObjects(nodes=[node("n1", cpu="8")], numatopologies=[topology("n1")],
                             pods=[guaranteed("a-0", "a", "3"), guaranteed("b-0", "b", "2")],
                             pod_groups=[pod_group("a", 1), pod_group("b", 1)])
    s = scheduler(objects)
    s.run_once()
    records = s.cache.unassigned_numa_pods["n1"]
    assert {m.name: format_cpuset(v["cpu"]) for m, v in records.items()} == {"a-0": "0-2", "b-0": "4-5"}
    s.advance()
    snapshot = s.cache.snapshot()
    assert format_cpuset(snapshot.nodes["n1"].numa_scheduler_info.numa_res_map["cpu"].allocatable) == "3,6-7"
    # the pods are deleted: their records go from the node their tasks named
    s.cache.world.pods.clear()
    s.advance()
    assert not s.cache.unassigned_numa_pods.get("n1")


def test_discarded_allocations_give_the_cpus_back():
    # a gang of two 3-cpu single-numa pods where only one fits: the statement is discarded, nothing recorded
    objects = ClusterObjects(nodes=[node("n1", cpu="8")], numatopologies=[topology("n1", free="0-3")],
                             pods=[guaranteed(f"g-{i}", "g", "3") for i in range(2)], pod_groups=[pod_group("g", 2)])
    s = scheduler(objects)
    report = s.run_once()
    plugin = report.session.plugins["numa-aware"]
    assert plugin.task_bind_node == {} and plugin.node_res_sets["n1"]["cpu"] == frozenset(range(4))
    assert not s.cache.unassigned_numa_pods


def test_close_session_with_nothing_placed_adds_nothing():
    objects = ClusterObjects(nodes=[node("n1", cpu="8")], numatopologies=[topology("n1")])
    s, ssn = session(objects)
    close_session(ssn)
    assert s.cache.unassigned_numa_pods == {}


def test_a_record_on_a_node_without_cpu_sets_is_upstreams_nil_dereference():
    from schedcheck.reference.util.assertion import AssertionViolation

    bare = topology("n1", policy="best-effort")
    bare.numa_res = {}  # static, best-effort, but no cpu entry in spec.numares
    objects = ClusterObjects(nodes=[node("n1", cpu="8")], numatopologies=[bare],
                             pods=[guaranteed("a-0", "a", "2", policy=None)], pod_groups=[pod_group("a", 1)])
    s = scheduler(objects)
    s.run_once()  # placed with an empty cpu set, recorded at close
    assert {m.name: v for m, v in s.cache.unassigned_numa_pods["n1"].items()} == {"a-0": {"cpu": frozenset()}}
    s.advance()
    with pytest.raises(AssertionViolation, match="spec.numares lacks"):
        s.cache.snapshot()


def test_a_node_without_numa_info_in_the_batch_node_order_is_upstreams_nil_pointer_panic():
    """docs/findings.md row 40: getNodeNumaNumForTask reads every listed node's CPU details through its NUMA
    info; a node without one panics master (seen in a generated nightly document through the adapter). The
    reference raises the upstream assertion there, reported as known finding F40."""
    from schedcheck.invariants.known import known_assertion_for
    from schedcheck.reference.util.assertion import AssertionViolation

    objects = ClusterObjects(nodes=[node("numa", cpu="8"), node("plain", cpu="8")],
                             numatopologies=[topology("numa", policy="best-effort", free="0-3")],
                             pods=[guaranteed("a-0", "a", "3", policy="best-effort")], pod_groups=[pod_group("a", 1)])
    s, ssn = session(objects)
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values())
    assert ssn.predicate_fn(task, ssn.nodes["numa"]) is None
    assert ssn.batch_node_order_fn(task, [ssn.nodes["numa"]]) == {"numa": 0.0}
    with pytest.raises(AssertionViolation, match="nil pointer") as err:
        ssn.batch_node_order_fn(task, [ssn.nodes["numa"], ssn.nodes["plain"]])
    assert known_assertion_for(err.value).id == "F40"
