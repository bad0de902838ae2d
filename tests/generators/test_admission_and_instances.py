"""The generators' admission pressure (generators/admission.py) and subgroups by replica instance
(generators/topology.py apply_instance_sub_groups)."""

from __future__ import annotations

import copy
from fractions import Fraction

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from schedcheck.generators.admission import admission_room, apply_admission_pressure
from schedcheck.generators.quantities import amount
from schedcheck.generators.topology import INSTANCE_KEY, apply_instance_sub_groups
from schedcheck.generators.vocabulary import GROUP_NAME, TASK_SPEC
from schedcheck.mutants import mutant
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import scenario_from_document

QUICK = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def _group(name: str, phase: str = "Pending", min_member: int = 1, **spec) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"minMember": min_member, "queue": "default", **spec}, "status": {"phase": phase}}


def _pod(name: str, group: str, node: str | None = None, role: str | None = None) -> dict:
    annotations = {GROUP_NAME: group, **({TASK_SPEC: role} if role else {})}
    spec = {"schedulerName": "volcano",
            "containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "annotations": annotations},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def _waiting_cluster() -> list[dict]:
    """Two nodes (8 cpu); a running job holding 2 cpu; an Inqueue job reserving 1 cpu; three waiting jobs."""
    return [_node("n1"), _node("n2"),
            _group("run", "Running"), _pod("run-0", "run", "n1"), _pod("run-1", "run", "n2"),
            _group("held", "Inqueue", minResources={"cpu": "1"}), _pod("held-0", "held"),
            _group("a"), _pod("a-0", "a"), _group("b", "Inqueue"), _pod("b-0", "b"), _group("c"), _pod("c-0", "c")]


def _scenario(objects: list[dict]) -> dict:
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": "pressure"},
            "schedulerConf": {"actions": "enqueue, allocate",
                              "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                                        {"plugins": [{"name": "overcommit"}, {"name": "predicates"}]}]},
            "objects": objects}


def test_admission_room_is_overcommitted_allocatable_less_used_and_inqueue():
    room = admission_room(_waiting_cluster())
    assert room["cpu"] == Fraction(6, 5) * 8 - 2 - 1
    assert room["memory"] == Fraction(6, 5) * 32 * 2**30 - 2 * 2**30
    assert admission_room(_waiting_cluster(), Fraction(1))["cpu"] == 8 - 2 - 1


@settings(QUICK)
@given(st.data())
def test_admission_pressure_sizes_only_waiting_jobs_within_the_room(data):
    objects = _waiting_cluster()
    before = copy.deepcopy(objects)
    apply_admission_pressure(data.draw, objects, objects)
    groups = {d["metadata"]["name"]: d for d in objects if d["kind"] == "PodGroup"}
    before_groups = {d["metadata"]["name"]: d for d in before if d["kind"] == "PodGroup"}
    assert [d for d in objects if d["kind"] == "Node"] == [d for d in before if d["kind"] == "Node"]
    assert objects[2:5] == before[2:5]  # a job with a pod on a node is not waiting
    for name in ("held", "a", "b", "c"):  # every job with no pod on a node, admitted or not
        resized = groups[name]["spec"].get("minResources")
        if resized == before_groups[name]["spec"].get("minResources"):
            continue
        assert groups[name]["status"]["phase"] == "Pending"
        cpu = amount(resized["cpu"])
        (pod,) = [d for d in objects if d["kind"] == "Pod" and d["metadata"]["name"] == f"{name}-0"]
        # the pod asks for at least the minimum (it grew where it asked for less), and was not shrunk
        asked = amount(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"])
        assert asked >= max(cpu, 1)
        # at most 0.9 of the room, which is largest once `held` is Pending again and reserves nothing
        assert Fraction(1, 10) <= cpu <= Fraction(9, 10) * (Fraction(6, 5) * 8 - 2)


def _found(predicate, max_examples: int) -> list[dict]:
    """The objects of the first draw of the pass for which `predicate(objects)` holds."""
    kept: list[list[dict]] = []

    def trial(data) -> bool:
        objects = _waiting_cluster()
        apply_admission_pressure(data.draw, objects, objects)
        if predicate(objects):
            kept.append(objects)
            return True
        return False

    find(st.data(), trial, settings=settings(database=None, max_examples=max_examples, phases=[Phase.generate]))
    return kept[0]


def test_admission_pressure_shrinks_to_leaving_the_jobs_alone():
    # Hypothesis tries the simplest draw first: every `sometimes` False
    assert _found(lambda objects: True, 1) == _waiting_cluster()


def test_admission_pressure_holds_one_admission_back_and_overcommit_rejects_it():
    """Some draw sizes two waiting jobs so that each fits the room alone and not both; overcommit then admits
    exactly one of them (its inqueue accounting decides, which the pass exists to exercise)."""
    def contested(objects) -> bool:
        sized = [d for d in objects if d["kind"] == "PodGroup" and d["metadata"]["name"] in ("a", "b", "c")
                 and d["spec"].get("minResources")]
        room = admission_room(objects)["cpu"]
        cpus = sorted(amount(d["spec"]["minResources"]["cpu"]) for d in sized)
        held = next(d for d in objects if d["kind"] == "PodGroup" and d["metadata"]["name"] == "held")
        return len(cpus) == 2 and cpus[1] <= room < cpus[0] + cpus[1] and held["status"]["phase"] == "Inqueue"

    objects = _found(contested, 2000)
    doc = _scenario(objects)
    doc["schedulerConf"]["actions"] = "enqueue"
    phases = run_scenario(scenario_from_document(doc, "pressure"), seed=0).pod_group_phases
    sized = sorted(f"ml/{d['metadata']['name']}" for d in objects if d["kind"] == "PodGroup"
                   and d["metadata"]["name"] in ("a", "b", "c") and d["spec"].get("minResources"))
    assert sorted(phases[name] for name in sized) == ["Inqueue", "Pending"]


@settings(QUICK)
@given(st.data())
def test_instance_sub_groups_label_whole_instances_and_ask_for_some_of_them(data):
    objects = [_group("plain", min_member=2), *[_pod(f"plain-{i}", "plain") for i in range(5)],
               _group("roles", min_member=2), _pod("roles-0", "roles", role="ps"), _pod("roles-1", "roles", role="worker"),
               _group("one"), _pod("one-0", "one")]
    before = copy.deepcopy(objects)
    apply_instance_sub_groups(data.draw, objects, data.draw(st.sampled_from([None, 1, 2])))
    groups = {d["metadata"]["name"]: d for d in objects if d["kind"] == "PodGroup"}
    assert objects[6:] == before[6:]  # jobs with roles, and single pods, keep what they had
    policies = groups["plain"]["spec"].get("subGroupPolicy")
    if policies is None:
        assert objects == before
        return
    (policy,) = policies
    size = policy["subGroupSize"]
    indices = [int(p["metadata"]["labels"][INSTANCE_KEY]) for p in objects[1:6]]
    assert indices == [i // size for i in range(5)]
    assert policy["matchLabelKeys"] == [INSTANCE_KEY] and 1 <= policy["minSubGroups"] <= max(indices) + 1


def test_instance_sub_groups_decide_readiness_by_whole_instances():
    """Four pods in two instances of two, minMember 2, both instances required: with room for three pods,
    gang holds the job back (CheckSubJobReady), where minMember alone would have bound some."""
    objects = [{**_node("n1"), "status": {"allocatable": {"cpu": "3", "memory": "16Gi", "pods": "110"}}},
               _group("plain", "Inqueue", min_member=2), *[_pod(f"plain-{i}", "plain") for i in range(4)]]
    kept: list[list[dict]] = []

    def both_required(data) -> bool:
        trial = copy.deepcopy(objects)
        apply_instance_sub_groups(data.draw, trial, None)
        policy = (trial[1]["spec"].get("subGroupPolicy") or [{}])[0]
        if policy.get("subGroupSize") == 2 and policy.get("minSubGroups") == 2:
            kept.append(trial)
            return True
        return False

    find(st.data(), both_required, settings=settings(database=None, max_examples=500, phases=[Phase.generate]))
    doc = _scenario(kept[-1])
    doc["schedulerConf"]["actions"] = "allocate"
    assert run_scenario(scenario_from_document(copy.deepcopy(doc), "instances"), seed=0).binds == {}
    with mutant("gang-ignores-min-sub-groups"):
        assert run_scenario(scenario_from_document(copy.deepcopy(doc), "instances"), seed=0).binds != {}
