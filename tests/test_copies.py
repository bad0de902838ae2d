"""The fast copies the gate relies on give what copy.deepcopy gives, with nothing shared that can change."""

from __future__ import annotations

import copy
import datetime

import yaml

from schedcheck.reference.k8s import ClusterObjects, Container, Node, Pod
from schedcheck.reference.quantity import Quantity
from schedcheck.scenario.loader import load_scenario_text
from schedcheck.scenario.tree_copy import copy_document


def _objects() -> ClusterObjects:
    node = Node(name="n1", uid="n1", allocatable={"cpu": Quantity.parse("4")}, labels={"zone": "a"})
    pod = Pod(name="p1", namespace="ns", uid="p1", labels={"app": "x"},
              containers=[Container("main", {"cpu": Quantity.parse("1")})])
    return ClusterObjects(nodes=[node], pods=[pod])


def test_world_copy_equals_and_shares_nothing_mutable():
    world = _objects()
    twin = copy.deepcopy(world)
    assert twin == world
    twin.nodes[0].labels["zone"] = "b"
    twin.pods[0].containers[0].requests["cpu"] = Quantity.parse("2")
    twin.pods[0].labels["app"] = "y"
    assert world.nodes[0].labels == {"zone": "a"}
    assert world.pods[0].containers[0].requests["cpu"] == Quantity.parse("1")
    assert world.pods[0].labels == {"app": "x"}


def test_world_copy_keeps_aliases():
    world = _objects()
    world.pods.append(world.pods[0])  # one pod listed twice: the copy lists one copied pod twice
    twin = copy.deepcopy(world)
    assert twin.pods[0] is twin.pods[1] and twin.pods[0] is not world.pods[0]


def test_quantity_is_its_own_copy_and_parses_the_same():
    q = Quantity.parse("1500m")
    assert copy.deepcopy(q) is q and copy.copy(q) is q
    assert Quantity.parse("1500m").milli_value() == 1500 and Quantity.parse(" 1500m ").milli_value() == 1500
    assert str(Quantity.parse("2Gi")) == "2Gi" and Quantity.parse("2Gi") is Quantity.parse("2Gi")


def test_document_copy_is_deep_and_equal():
    doc = yaml.safe_load("a: [1, {b: c, when: 2026-01-01T00:00:00Z}]\nd: {e: null, f: 1.5, g: true}")
    twin = copy_document(doc)
    assert twin == doc == copy.deepcopy(doc)
    twin["a"][1]["b"] = "changed"
    twin["d"]["e"] = 1
    assert doc["a"][1]["b"] == "c" and doc["d"]["e"] is None
    assert isinstance(twin["a"][1]["when"], datetime.datetime)


def test_document_copy_copies_inside_tuples():
    example = ({"doc": [1, {"k": "v"}]}, [{"conf": 1}])  # a drawn (document, conf variants) pair
    twin = copy_document(example)
    assert twin == example and type(twin) is tuple
    twin[0]["doc"][1]["k"] = "changed"
    twin[1][0]["conf"] = 2
    assert example == ({"doc": [1, {"k": "v"}]}, [{"conf": 1}])


def test_document_copy_of_a_recursive_alias_falls_back_to_deepcopy():
    doc = yaml.safe_load("a: &x [1, *x]")
    twin = copy_document(doc)
    assert twin["a"][1] is twin["a"] and twin["a"] is not doc["a"]


def test_loaded_scenario_keeps_its_own_document():
    text = "apiVersion: schedcheck/v1\nkind: Scenario\nmetadata: {name: s}\nobjects: []\n"
    scenario = load_scenario_text(text, "s.yaml")
    assert scenario.document["metadata"] == {"name": "s"}


def test_a_scenario_under_another_conf_runs_as_its_document_would():
    from schedcheck.gate_properties import with_conf
    from schedcheck.generators.confs import default_conf
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import fresh_copy, scenario_from_document, with_scheduler_conf

    doc = yaml.safe_load(open("schedcheck/mutant_scenarios/drf-allocate-forgotten.yaml").read())
    other = default_conf()
    other["actions"] = "enqueue, allocate, preempt, backfill"
    variant = with_conf(doc, other)
    base = scenario_from_document(doc, "<test>")
    before = copy.deepcopy(base.objects)
    shortcut = with_scheduler_conf(base, other, variant)
    assert shortcut.conf.actions == ["enqueue", "allocate", "preempt", "backfill"]
    assert shortcut.document is variant and shortcut.name == variant["metadata"]["name"]
    read = scenario_from_document(variant, "<test>")
    assert run_scenario(shortcut, consume=True).to_json() == run_scenario(read).to_json()
    assert run_scenario(fresh_copy(base), consume=True).to_json() == run_scenario(base).to_json()
    assert base.objects == before  # the copies were consumed, never the scenario they came from
