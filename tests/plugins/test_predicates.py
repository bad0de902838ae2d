"""predicates plugin: pod count, NodeUnschedulable, NodeAffinity, TaintToleration, PrePredicate, mirror."""

from __future__ import annotations

import pytest

from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import Session
from schedcheck.reference.framework.statement import Statement, StatementError
from schedcheck.reference.k8s import (
    GROUP_NAME_ANNOTATION,
    ClusterObjects,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)
from schedcheck.reference.plugins.k8s_mirror import session_mirror
from schedcheck.reference.plugins.predicates import required_terms_conflict
from tests.builders import node, pod, pod_group

UAU = StatusCode.UnschedulableAndUnresolvable


def open_ssn(nodes, pods, arguments=None, flags=None) -> Session:
    groups = sorted({p.annotations[GROUP_NAME_ANNOTATION] for p in pods})
    objects = ClusterObjects(nodes=nodes, pods=pods, pod_groups=[pod_group(g, 1, phase="Inqueue") for g in groups])
    option = PluginOption("predicates", arguments=dict(arguments or {}), flags=dict(flags or {}))
    apply_plugin_conf_defaults(option)
    return open_session(SchedulerCache(objects), SchedulerConf(actions=["allocate"], tiers=[Tier([option])]),
                        cycle=0, seed=0)


def task_of(ssn: Session, name: str):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def check(ssn: Session, task_name: str, node_name: str):
    """PrePredicate then Predicate, as every action asks them."""
    task = task_of(ssn, task_name)
    ssn.pre_predicate_fn(task)
    return ssn.predicate_fn(task, ssn.nodes[node_name])


def statuses(err) -> list[tuple[StatusCode, str]]:
    assert isinstance(err, FitError)
    return [(s.code, s.reason) for s in err.statuses]


def running(name: str, node_name: str, **extra) -> Pod:
    return pod(name, group="run", node_name=node_name, phase="Running", **extra)


def term(*exprs: tuple, fields: tuple = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm([NodeSelectorRequirement(k, op, list(v)) for k, op, v in exprs],
                            [NodeSelectorRequirement(k, op, list(v)) for k, op, v in fields])


def affinity_pod(*terms: NodeSelectorTerm, **extra) -> Pod:
    return pod("p", node_affinity=NodeAffinity(required=list(terms)), **extra)


# -- pod count and the mirror ---------------------------------------------------------------


def test_pod_count_is_plain_unschedulable_so_preempt_accepts_it():
    ssn = open_ssn([node("n1", pods="2")], [running("r-0", "n1"), running("r-1", "n1"), pod("p")])
    err = check(ssn, "p", "n1")
    assert statuses(err) == [(StatusCode.Unschedulable, "node(s) pod number exceeded")]
    assert err.statuses[0].plugin == "predicates"
    p, n1 = task_of(ssn, "p"), ssn.nodes["n1"]
    assert ssn.predicate_for_allocate_action(p, n1) is not None
    assert ssn.predicate_for_preempt_action(p, n1) is None


def test_node_without_pods_allocatable_is_always_full():
    ssn = open_ssn([node("n1", pods="0")], [pod("p")])
    assert statuses(check(ssn, "p", "n1")) == [(StatusCode.Unschedulable, "node(s) pod number exceeded")]


def test_releasing_pod_at_open_still_counts():
    dying = running("r-0", "n1", deletion_timestamp="2024-01-01T00:00:00Z")
    ssn = open_ssn([node("n1", pods="1")], [dying, pod("p")])
    assert task_of(ssn, "r-0").status.name == "Releasing"
    assert check(ssn, "p", "n1") is not None


def test_in_session_eviction_frees_the_pod_slot_and_a_discard_does_not_give_it_back():
    ssn = open_ssn([node("n1", pods="1")], [running("r-0", "n1"), pod("p")])
    victim = task_of(ssn, "r-0")
    stmt = Statement(ssn)
    stmt.evict(victim, "preempt")
    assert check(ssn, "p", "n1") is None
    stmt.discard()  # unevict: the Reserve plugins fail for a task without PreFilter state
    assert victim.status.name == "Running"
    assert session_mirror(ssn).nodes["n1"].num_pods == 0
    assert check(ssn, "p", "n1") is None


def test_allocate_and_pipeline_add_to_the_mirror_and_undo_removes():
    ssn = open_ssn([node("n1", pods="2")], [pod("a"), pod("b"), pod("c")])
    a, b, n1 = task_of(ssn, "a"), task_of(ssn, "b"), ssn.nodes["n1"]
    mirror = session_mirror(ssn).nodes["n1"]
    for t in (a, b):
        assert ssn.pre_predicate_fn(t) is None
    stmt = Statement(ssn)
    stmt.allocate(a, n1)
    stmt.pipeline(b, "n1", False)
    assert mirror.num_pods == 2 and mirror.cpu == 2000
    assert statuses(check(ssn, "c", "n1")) == [(StatusCode.Unschedulable, "node(s) pod number exceeded")]
    stmt.discard()
    assert mirror.num_pods == 0 and mirror.cpu == 0


def test_allocation_without_pre_predicate_is_rolled_back_by_the_reserve_failure():
    ssn = open_ssn([node("n1")], [pod("a")])
    with pytest.raises(StatementError, match="not found"):
        Statement(ssn).allocate(task_of(ssn, "a"), ssn.nodes["n1"])
    assert session_mirror(ssn).nodes["n1"].num_pods == 0


def test_with_enable_predicate_off_pre_predicate_never_runs_so_every_allocation_rolls_back():
    ssn = open_ssn([node("n1")], [pod("a")], flags={"enablePredicate": False})
    a = task_of(ssn, "a")
    assert ssn.pre_predicate_fn(a) is None  # dispatched to nobody
    with pytest.raises(StatementError, match="not found"):
        Statement(ssn).allocate(a, ssn.nodes["n1"])


# -- NodeUnschedulable --------------------------------------------------------------------


@pytest.mark.parametrize(("tolerations", "fits"), [
    ([], False),
    ([Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")], True),
    ([Toleration(operator="Exists")], True),  # empty key + Exists tolerates everything
    ([Toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")], False),
    ([Toleration("node.kubernetes.io/unschedulable", "Equal", value="x")], False),
])
def test_cordon_and_its_toleration(tolerations, fits):
    ssn = open_ssn([node("n1", unschedulable=True)], [pod("p", tolerations=tolerations)])
    err = check(ssn, "p", "n1")
    assert (err is None) == fits
    if not fits:
        assert statuses(err) == [(UAU, "node(s) were unschedulable")]
        assert ssn.predicate_for_preempt_action(task_of(ssn, "p"), ssn.nodes["n1"]) is not None


def test_cordon_aborts_before_taints_but_after_pod_count():
    n1 = node("n1", pods="1", unschedulable=True, taints=[Taint("k", "NoSchedule")])
    ssn = open_ssn([n1], [running("r-0", "n1"), pod("p")])
    assert statuses(check(ssn, "p", "n1")) == [
        (StatusCode.Unschedulable, "node(s) pod number exceeded"), (UAU, "node(s) were unschedulable")]


# -- NodeAffinity -------------------------------------------------------------------------

REASON = "node(s) didn't match Pod's node affinity/selector"


def _fits(labels: dict, p: Pod, name: str = "n1", **arguments) -> bool:
    ssn = open_ssn([node(name, labels=labels)], [p], arguments)
    err = check(ssn, p.name, name)
    if err is not None:
        assert statuses(err) == [(UAU, REASON)]
    return err is None


def test_node_selector_needs_every_label():
    assert _fits({"a": "1", "b": "2"}, pod("p", node_selector={"a": "1", "b": "2"}))
    assert not _fits({"a": "1"}, pod("p", node_selector={"a": "1", "b": "2"}))
    assert not _fits({}, pod("p", node_selector={"a": ""}))  # an empty value still needs the key


def test_terms_are_ored_and_expressions_anded():
    t1 = term(("zone", "In", ["a"]), ("disk", "Exists", []))
    t2 = term(("zone", "In", ["b"]))
    assert _fits({"zone": "a", "disk": "ssd"}, affinity_pod(t1, t2))
    assert not _fits({"zone": "a"}, affinity_pod(t1, t2))
    assert _fits({"zone": "b"}, affinity_pod(t1, t2))


def test_node_selector_and_required_terms_both_apply():
    p = affinity_pod(term(("zone", "In", ["a"])), node_selector={"gpu": "yes"})
    assert _fits({"zone": "a", "gpu": "yes"}, p)
    assert not _fits({"zone": "a"}, p)


@pytest.mark.parametrize(("expr", "labels", "fits"), [
    (("k", "In", ["x", "y"]), {"k": "y"}, True),
    (("k", "In", ["x"]), {}, False),
    (("k", "NotIn", ["x"]), {}, True),  # NotIn matches a missing label
    (("k", "NotIn", ["x"]), {"k": "x"}, False),
    (("k", "Exists", []), {"k": ""}, True),
    (("k", "DoesNotExist", []), {"k": ""}, False),
    (("k", "Gt", ["5"]), {"k": "6"}, True),
    (("k", "Gt", ["5"]), {"k": "5"}, False),
    (("k", "Lt", ["5"]), {"k": "-7"}, True),  # the node side is parsed as any Go int64
    (("k", "Gt", ["5"]), {"k": "6.5"}, False),  # a non-integer label never compares
    (("k", "Gt", ["1.5"]), {"k": "2"}, False),  # a non-integer requirement makes the term invalid
    (("k", "Lt", ["-1"]), {"k": "-5"}, False),  # "-1" is not a valid label value: invalid term
    (("k", "Gt", ["1", "2"]), {"k": "3"}, False),  # Gt takes exactly one value
    (("k", "Lt", ["9"]), {}, False),
    (("k", "In", []), {"k": ""}, False),  # In without values is invalid
    (("k", "Exists", ["x"]), {"k": "x"}, False),  # Exists with values is invalid
    (("k", "Foo", ["x"]), {"k": "x"}, False),
    (("bad key!", "Exists", []), {"bad key!": "x"}, False),
])
def test_operators(expr, labels, fits):
    assert _fits(labels, affinity_pod(term(expr))) == fits


def test_an_invalid_term_fails_alone_and_other_terms_still_match():
    p = affinity_pod(term(("k", "Gt", ["x"])), term(("zone", "In", ["a"])))
    assert _fits({"zone": "a", "k": "9"}, p)


def test_match_fields_on_metadata_name():
    assert _fits({}, affinity_pod(term(fields=(("metadata.name", "In", ["n1"]),))), name="n1")
    assert not _fits({}, affinity_pod(term(fields=(("metadata.name", "In", ["n2"]),))), name="n1")
    assert _fits({}, affinity_pod(term(fields=(("metadata.name", "NotIn", ["n2"]),))), name="n1")
    assert not _fits({}, affinity_pod(term(fields=(("metadata.name", "In", ["n1", "n2"]),))), name="n1")
    assert not _fits({}, affinity_pod(term(fields=(("metadata.name", "Exists", []),))), name="n1")


def test_empty_required_selects_nothing_and_empty_terms_are_ignored():
    assert not _fits({"a": "1"}, pod("p", node_affinity=NodeAffinity(required=[])))
    assert not _fits({"a": "1"}, affinity_pod(NodeSelectorTerm()))
    assert _fits({"a": "1"}, affinity_pod(NodeSelectorTerm(), term(("a", "Exists", []))))
    assert _fits({"a": "1"}, pod("p", node_affinity=NodeAffinity(required=None)))


def test_node_affinity_can_be_disabled():
    p = pod("p", node_selector={"a": "1"})
    assert _fits({}, p, **{"predicate.NodeAffinityEnable": False})
    assert _fits({}, p, **{"predicate.NodeAffinityEnable": "false"})
    assert not _fits({}, p, **{"predicate.NodeAffinityEnable": "maybe"})  # unparsable: default kept


# -- TaintToleration ----------------------------------------------------------------------


@pytest.mark.parametrize(("taint", "tolerations", "fits"), [
    (Taint("k", "NoSchedule", "v"), [], False),
    (Taint("k", "NoExecute", "v"), [], False),
    (Taint("k", "PreferNoSchedule", "v"), [], True),
    (Taint("k", "NoSchedule", "v"), [Toleration("k", "Equal", "v")], True),
    (Taint("k", "NoSchedule", "v"), [Toleration("k", "Equal", "w")], False),
    (Taint("k", "NoSchedule", "v"), [Toleration("k", "", "v", "NoSchedule")], True),  # "" means Equal
    (Taint("k", "NoSchedule", "v"), [Toleration("k", "Exists", effect="NoExecute")], False),
    (Taint("k", "NoSchedule", "v"), [Toleration("", "Equal", "v")], True),  # empty key: any key
    (Taint("k", "NoSchedule", "5"), [Toleration("k", "Gt", "1")], False),  # gate off: never tolerates
])
def test_taints(taint, tolerations, fits):
    ssn = open_ssn([node("n1", taints=[taint])], [pod("p", tolerations=tolerations)])
    err = check(ssn, "p", "n1")
    assert (err is None) == fits
    if not fits:
        assert statuses(err) == [(UAU, "node(s) had untolerated taint(s)")]


def test_taint_toleration_can_be_disabled():
    ssn = open_ssn([node("n1", taints=[Taint("k", "NoSchedule")])], [pod("p")],
                   {"predicate.TaintTolerationEnable": False})
    assert check(ssn, "p", "n1") is None


# -- PrePredicate ---------------------------------------------------------------------------


def test_pre_predicate_rejects_required_terms_pinned_to_disjoint_node_names():
    # term 1 pins {a} and {z}: empty intersection; term 2 likewise {b} and {z}; the union is empty
    pinned = [term(fields=(("metadata.name", "In", [n]), ("metadata.name", "In", ["z"]))) for n in ("a", "b")]
    p = affinity_pod(*pinned)
    assert required_terms_conflict(p)
    ssn = open_ssn([node("n1")], [p])
    err = ssn.pre_predicate_fn(task_of(ssn, "p"))
    assert str(err) == "plugin NodeAffinity pre-predicates failed pod affinity terms conflict"
    assert not isinstance(err, FitError)
    ssn = open_ssn([node("n1")], [p], {"predicate.NodeAffinityEnable": False})
    assert ssn.pre_predicate_fn(task_of(ssn, "p")) is None


def test_no_conflict_when_a_term_does_not_pin_names_or_names_overlap():
    assert not required_terms_conflict(affinity_pod(term(fields=(("metadata.name", "In", ["a"]),)),
                                                    term(("zone", "Exists", []))))
    assert not required_terms_conflict(affinity_pod(term(fields=(("metadata.name", "In", ["a", "b"]),
                                                                 ("metadata.name", "In", ["b"]),))))
    assert not required_terms_conflict(pod("p"))


def test_pre_predicate_accepts_sidecar_init_containers():
    from schedcheck.reference.k8s import Container

    p = pod("p", init_containers=[Container("side", restart_policy="Always")])
    ssn = open_ssn([node("n1")], [p])
    assert ssn.pre_predicate_fn(task_of(ssn, "p")) is None


# -- predicate.CacheEnable ------------------------------------------------------------------


def test_equivalence_cache_keys_on_template_uid_and_turns_a_failure_into_error():
    tpl = {"volcano.sh/template-uid": "t1"}
    pods = [pod("p-0", node_selector={"a": "1"}, annotations=tpl), pod("p-1", annotations=tpl),
            pod("q", node_selector={"a": "1"})]
    ssn = open_ssn([node("n1")], pods, {"predicate.CacheEnable": True})
    assert statuses(check(ssn, "p-0", "n1")) == [(UAU, REASON)]
    # same template: the cached verdict wins although p-1 itself would fit
    assert statuses(check(ssn, "p-1", "n1")) == [(StatusCode.Error, "plugin equivalence cache predicates failed")]
    assert statuses(check(ssn, "q", "n1")) == [(UAU, REASON)]  # no template uid: never cached


def test_equivalence_cache_lets_a_cached_fit_through():
    tpl = {"volcano.sh/template-uid": "t1"}
    ssn = open_ssn([node("n1")], [pod("p-0", annotations=tpl), pod("p-1", node_selector={"a": "1"}, annotations=tpl)],
                   {"predicate.CacheEnable": True})
    assert check(ssn, "p-0", "n1") is None
    assert check(ssn, "p-1", "n1") is None


def test_a_predicate_without_its_pre_predicate_fails_on_the_missing_inter_pod_affinity_state():
    ssn = open_ssn([node("n1")], [pod("p")])
    err = ssn.predicate_fn(task_of(ssn, "p"), ssn.nodes["n1"])
    assert statuses(err) == [(StatusCode.Error, 'reading "PreFilterInterPodAffinity" from cycleState: not found')]
