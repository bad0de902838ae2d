"""The domain-aware minimiser: it shrinks failing scenarios while the same invariant keeps failing."""

from __future__ import annotations

import copy

import pytest

from schedcheck.invariants.registry import QUALITY
from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.reference.quantity import Quantity
from schedcheck.minimize import (
    failing_predicate,
    minimize,
    minimize_with_stats,
    scenario_counts,
)
from schedcheck.scenario.loader import scenario_from_document

GANG = "gang.commit-ready"
GANG_MUTANT = "gang-commit-too-few"
TIERS = [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
         {"plugins": [{"name": "predicates"}, {"name": "nodeorder"}]}]


# ---------------------------------------------------------------- scenario documents (also used by test_replay)


def node_doc(name: str, cpu: str = "4", memory: str = "8Gi", taints: list | None = None) -> dict:
    resources = {"cpu": cpu, "memory": memory, "pods": "110"}
    doc = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
           "status": {"capacity": dict(resources), "allocatable": dict(resources),
                      "conditions": [{"type": "Ready", "status": "True"}]}}
    if taints:
        doc["spec"] = {"taints": taints}
    return doc


def pod_doc(name: str, group: str, cpu: str = "1", memory: str = "1Gi", node: str | None = None,
            phase: str = "Pending") -> dict:
    requests = {"cpu": cpu, "memory": memory}
    doc = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": group},
                        "annotations": {"scheduling.k8s.io/group-name": group, "volcano.sh/task-spec": "worker"}},
           "spec": {"schedulerName": "volcano",
                    "containers": [{"name": "main", "image": "busybox",
                                    "resources": {"requests": requests, "limits": dict(requests)}}]},
           "status": {"phase": phase}}
    if node:
        doc["spec"]["nodeName"] = node
    return doc


def group_doc(name: str, min_member: int, queue: str = "default", phase: str = "Pending", **spec) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minMember": min_member, "queue": queue, **spec}, "status": {"phase": phase}}


def queue_doc(name: str, weight: int = 1) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": weight, "reclaimable": True}}


def scenario_doc(name: str, objects: list, actions: str = "enqueue, allocate", cycles: int = 1) -> dict:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": name},
            "schedulerConf": {"actions": actions, "tiers": copy.deepcopy(TIERS)}, "cycles": cycles,
            "objects": objects}


def partial_gang_doc(noise: int = 0) -> dict:
    """tests/invariants/harness.py's "partial-gang" cluster (one 4-cpu node, a gang of three 2-cpu pods
    with minMember 3), plus `noise` irrelevant nodes, queues and two-pod jobs that all fit."""
    objects = [node_doc("n1", cpu="4")] + [pod_doc(f"g-{i}", "g", cpu="2") for i in range(3)] + [group_doc("g", 3)]
    for i in range(noise):
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if i % 3 == 0 else None
        objects.append(node_doc(f"extra-{i}", cpu="8", memory="16Gi", taints=taints))
        objects.append(queue_doc(f"q{i}", weight=i + 1))
        objects.append(group_doc(f"job-{i}", 2, queue=f"q{i}", minResources={"cpu": "3", "memory": "2Gi"}))
        objects += [pod_doc(f"job-{i}-{k}", f"job-{i}", cpu="1500m", memory="1536Mi") for k in range(2)]
    if noise:
        objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": "high"}, "value": 1000})
    return scenario_doc("partial-gang-plus-noise" if noise else "partial-gang", objects, cycles=2 if noise else 1)


# ---------------------------------------------------------------- the big case


@pytest.fixture(scope="module")
def gang_case():
    doc = partial_gang_doc(noise=10)
    still_fails = failing_predicate(GANG, seed=0, mutant=GANG_MUTANT)
    minimised, stats = minimize_with_stats(doc, still_fails)
    return doc, still_fails, minimised, stats


def test_the_noisy_scenario_fails_only_with_the_bug():
    doc = partial_gang_doc(noise=10)
    assert failing_predicate(GANG, 0, GANG_MUTANT)(doc)
    assert not failing_predicate(GANG, 0, None)(doc)


def test_minimisation_shrinks_a_large_failing_scenario(gang_case):
    doc, still_fails, minimised, stats = gang_case
    before, after = scenario_counts(doc), scenario_counts(minimised)
    assert before["nodes"] == 11 and before["jobs"] == 11 and before["pods"] == 23 and before["queues"] == 10
    assert still_fails(minimised)
    assert after["nodes"] <= 1 and after["jobs"] <= 1
    assert after["pods"] < before["pods"] and after["queues"] == 0 and after["cycles"] == 1
    assert after["objects"] < before["objects"] / 5
    assert stats.initially_failing and not stats.budget_exhausted
    assert stats.before == before and stats.after == after
    assert stats.accepted > 0 and stats.attempts > stats.accepted
    assert sum(stats.by_pass.values()) == stats.accepted
    # it is still a scenario anyone can run, and the input was left alone
    scenario_from_document(minimised, "<minimised>")
    assert doc == partial_gang_doc(noise=10)


def test_minimisation_simplifies_the_configuration(gang_case):
    _, _, minimised, _ = gang_case
    conf = minimised["schedulerConf"]
    plugins = [p["name"] for tier in conf["tiers"] for p in tier["plugins"]]
    assert "gang" in plugins and len(plugins) <= 2
    assert conf["actions"] == "allocate"
    assert all(tier["plugins"] for tier in conf["tiers"])  # no empty tier left behind


def test_minimisation_drops_fields_and_rounds_quantities(gang_case):
    _, _, minimised, _ = gang_case
    pods = [o for o in minimised["objects"] if o["kind"] == "Pod"]
    assert pods
    for pod in pods:
        assert set(pod["metadata"].get("annotations", {})) <= {"scheduling.k8s.io/group-name"}
        assert "labels" not in pod["metadata"]
        container = pod["spec"]["containers"][0]
        assert "image" not in container and "limits" not in container.get("resources", {})
    for group in (o for o in minimised["objects"] if o["kind"] == "PodGroup"):
        assert "minResources" not in group["spec"]
    for node in (o for o in minimised["objects"] if o["kind"] == "Node"):
        assert "taints" not in node.get("spec", {}) and "conditions" not in node.get("status", {})
        assert node["status"]["allocatable"]["cpu"] in ("1", "2", "3", "4")


def test_minimisation_is_deterministic(gang_case):
    doc, still_fails, minimised, stats = gang_case
    again, stats_again = minimize_with_stats(doc, still_fails)
    assert again == minimised
    assert (stats_again.attempts, stats_again.accepted) == (stats.attempts, stats.accepted)


# ---------------------------------------------------------------- the budget and edge cases


def test_a_zero_budget_stops_before_any_reduction():
    doc = partial_gang_doc(noise=3)
    minimised, stats = minimize_with_stats(doc, failing_predicate(GANG, 0, GANG_MUTANT), budget_seconds=0)
    assert stats.budget_exhausted and stats.attempts == 1 and stats.accepted == 0
    assert minimised == doc


def test_the_budget_stops_a_slow_minimisation(monkeypatch):
    """Each attempt costs 0.05 s of a fake clock, so a 0.3 s budget allows a handful, deterministically."""
    import schedcheck.minimize.reducer as minimize_module

    doc = partial_gang_doc(noise=10)
    real = failing_predicate(GANG, 0, GANG_MUTANT)
    clock = [1000.0]
    monkeypatch.setattr(minimize_module.time, "monotonic", lambda: clock[0])

    def slow(candidate):
        clock[0] += 0.05
        return real(candidate)

    minimised, stats = minimize_with_stats(doc, slow, budget_seconds=0.3)
    assert stats.budget_exhausted and 1 < stats.attempts <= 8
    assert real(minimised)  # whatever it got to still fails


def test_a_scenario_that_does_not_fail_is_returned_unchanged():
    doc = partial_gang_doc(noise=2)
    minimised, stats = minimize_with_stats(doc, lambda candidate: False)
    assert minimised == doc and not stats.initially_failing and stats.attempts == 1


def test_reductions_on_a_pure_predicate():
    """Without the scheduler: keep only what the predicate needs, lower the rest to round values."""
    objects = [node_doc(f"n{i}", cpu="7500m", memory="3Gi") for i in range(4)]
    objects += [pod_doc(f"p{i}", "g", cpu="2500m", memory="1536Mi") for i in range(5)] + [group_doc("g", 5)]
    doc = scenario_doc("pure", objects, actions="enqueue, allocate, backfill", cycles=4)

    def needs(candidate):
        kinds = [o.get("kind") for o in candidate.get("objects", [])]
        conf = candidate.get("schedulerConf") or {}
        plugins = [p.get("name") for t in conf.get("tiers", []) for p in t.get("plugins", [])]
        cpus = [Quantity.parse(c.get("resources", {}).get("requests", {}).get("cpu", "0")).as_fraction()
                for o in candidate.get("objects", []) if o.get("kind") == "Pod"
                for c in o.get("spec", {}).get("containers", [])]
        return (kinds.count("Node") >= 1 and "gang" in plugins and "allocate" in conf.get("actions", "")
                and any(cpu >= 2 for cpu in cpus))

    minimised = minimize(doc, needs)
    counts = scenario_counts(minimised)
    assert counts["nodes"] == 1 and counts["pods"] == 1 and counts["cycles"] == 1
    assert minimised["schedulerConf"] == {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}
    pod = next(o for o in minimised["objects"] if o["kind"] == "Pod")
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "2"}  # 2500m rounded down
    node = next(o for o in minimised["objects"] if o["kind"] == "Node")
    assert node["status"] == {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}


def test_a_kind_list_and_a_text_conf_are_normalised():
    doc = partial_gang_doc(noise=1)
    doc["objects"] = {"apiVersion": "v1", "kind": "List", "items": doc["objects"]}
    doc["schedulerConf"] = "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n"
    minimised = minimize(doc, failing_predicate(GANG, 0, GANG_MUTANT))
    assert isinstance(minimised["objects"], list) and isinstance(minimised["schedulerConf"], dict)
    assert failing_predicate(GANG, 0, GANG_MUTANT)(minimised)


# ---------------------------------------------------------------- the predicate


def test_the_predicate_treats_unreadable_documents_as_not_failing():
    doc = partial_gang_doc()
    doc["objects"][1]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2 cores"
    assert not failing_predicate(GANG, 0, GANG_MUTANT)(doc)
    assert not failing_predicate(GANG, 0, GANG_MUTANT)({"apiVersion": "schedcheck/v1", "kind": "Scenario",
                                                        "objects": 3})


def test_the_predicate_rejects_an_unknown_mutant():
    with pytest.raises(ValueError, match="unknown mutant"):
        failing_predicate(GANG, 0, "no-such-bug")


def test_the_predicate_counts_quality_findings():
    """evict-before-fit is caught by eviction.needed, a quality rule (a finding, not a violation)."""
    assert get_invariant("eviction.needed").severity == QUALITY
    objects = [node_doc("n1", cpu="6"), pod_doc("low-0", "low", cpu="2", node="n1", phase="Running"),
               pod_doc("low-1", "low", cpu="2", node="n1", phase="Running"), pod_doc("high-0", "high", cpu="2"),
               group_doc("low", 1, phase="Running"), group_doc("high", 1, phase="Inqueue", priorityClassName="high"),
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000}]
    doc = scenario_doc("preempt-fits", objects, actions="enqueue, preempt")
    assert failing_predicate("eviction.needed", 0, "evict-before-fit")(doc)
    assert not failing_predicate("eviction.needed", 0, None)(doc)


# ---------------------------------------------------------------- the cause, not only the invariant id (issue 14)

FULL = "test.node-full"


@pytest.fixture
def node_full_rule():
    """A node rule that fires for two causes: a node filled up to its pod limit (what predicates allow),
    or over it (what happens once predicates are dropped). Like node.pod-limit at gate seeds 4-6, a
    minimiser that keeps only the id drops predicates and reports the second cause for the first."""
    from schedcheck.invariants import registry
    from schedcheck.invariants.violation import Violation

    @registry.invariant(FULL, "test: a node that had a task allocated holds fewer pods than its limit", "node",
                        "tests/test_minimize.py", (registry.CLOSE,))
    def node_full(ctx):
        placed = {op.node for op in ctx.ssn.operations if op.op == "allocate"}
        for name in sorted(placed):
            node = ctx.ssn.nodes[name]
            if len(node.tasks) >= node.allocatable.max_task_num:
                yield Violation("", f"node {name} is full", [f"node {name}"], "< limit", len(node.tasks))

    yield FULL
    del registry._CATALOG[FULL]


def full_node_doc() -> dict:
    """One node allowing 2 pods with one running; two pending single-pod jobs; predicates among 5 plugins."""
    node = node_doc("n1", cpu="8", memory="16Gi")
    for key in ("capacity", "allocatable"):
        node["status"][key]["pods"] = "2"
    objects = [node, pod_doc("old-0", "old", node="n1", phase="Running"), group_doc("old", 1, phase="Running")]
    for name in ("a", "b"):
        objects += [pod_doc(f"{name}-0", name), group_doc(name, 1, phase="Inqueue")]
    return scenario_doc("full-node", objects)


def plugins_of(doc: dict) -> list[str]:
    return [p["name"] for tier in doc["schedulerConf"]["tiers"] for p in tier["plugins"]]


def test_node_rules_guard_predicates_and_requires_is_always_guarded():
    from schedcheck.minimize import guarded_plugins

    assert "predicates" in guarded_plugins("node.pod-limit")
    assert "gang" in guarded_plugins(GANG) and "proportion" in guarded_plugins("queue.deserved-bounds")
    assert guarded_plugins("upstream.assert") == ()


def test_dropping_predicates_fails_the_same_id_for_another_cause(node_full_rule):
    from schedcheck.minimize import failure_cause

    doc = full_node_doc()
    without = copy.deepcopy(doc)
    without["schedulerConf"]["tiers"][1]["plugins"] = [{"name": "nodeorder"}]
    with_predicates, without_predicates = failure_cause(doc, FULL), failure_cause(without, FULL)
    assert with_predicates is not None and without_predicates is not None  # the same id fails either way
    assert with_predicates != without_predicates
    assert dict(with_predicates.plugins)["predicates"] is not None
    assert dict(without_predicates.plugins)["predicates"] is None
    assert (with_predicates.action, with_predicates.checkpoint, with_predicates.roles) == ("", "close", ("node",))


def test_the_minimiser_keeps_the_cause_where_the_id_alone_would_lose_it(node_full_rule):
    from schedcheck.minimize import failure_cause

    doc = full_node_doc()
    id_only = minimize(doc, lambda candidate: failure_cause(candidate, FULL) is not None)
    assert "predicates" not in plugins_of(id_only)  # the trap: the id survives without its cause

    predicate = failing_predicate(FULL, original=doc)
    kept = minimize(doc, predicate)
    assert "predicates" in plugins_of(kept) and len(plugins_of(kept)) < len(plugins_of(doc))
    assert failure_cause(kept, FULL) == failure_cause(doc, FULL) == predicate.cause


def test_without_an_original_the_first_failing_document_sets_the_cause(node_full_rule):
    doc = full_node_doc()
    predicate = failing_predicate(FULL)
    assert predicate.cause is None
    assert "predicates" in plugins_of(minimize(doc, predicate))
    assert predicate.cause is not None
