"""generators/dra.py: the rare DRA draws (admin access here) come out as documents the reader takes without a
warning and the reference runs without breaking an invariant; DeviceTaintRules and class extended resources,
without effect at 1.36's defaults, are not drawn."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from schedcheck.generators.dra import apply_dra
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import scenario_from_document

NODES = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
          "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}} for i in range(3)]
GROUPS = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
           "metadata": {"name": f"g{i}", "namespace": "default"}, "spec": {"minMember": 1, "queue": "default"},
           "status": {"phase": "Inqueue"}} for i in range(4)]
PODS = [{"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"p{i}", "namespace": "default", "annotations": {"scheduling.k8s.io/group-name": f"g{i}"}},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
         "status": {"phase": "Pending"}} for i in range(4)]


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    nodes, pods = copy.deepcopy(NODES), copy.deepcopy(PODS)
    dra = apply_dra(draw, nodes, pods, percent=100)
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": "drawn"},
            "schedulerConf": {"actions": "enqueue, allocate", "tiers": [
                {"plugins": [{"name": "priority"}, {"name": "gang"}]},
                {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}]}]},
            "objects": [*nodes, *GROUPS, *pods, *dra]}


def _admin(doc: dict[str, Any]) -> bool:
    return any(r.get("exactly", {}).get("adminAccess") for o in doc["objects"] if o["kind"] == "ResourceClaim"
               for r in o["spec"]["devices"]["requests"])


def test_each_rare_draw_loads_and_runs_clean() -> None:
    quick = settings(max_examples=3000, database=None, suppress_health_check=list(HealthCheck), deadline=None,
                     phases=[Phase.generate])  # the first example found: shrinking it is not the point
    doc = find(documents(), _admin, settings=quick)
    scenario = scenario_from_document(doc, "drawn.yaml")
    assert scenario.warnings == []
    result = run_scenario(scenario)
    assert result.violations == [], result.violations


def test_no_draw_adds_an_object_without_effect() -> None:
    quick = settings(max_examples=300, database=None, suppress_health_check=list(HealthCheck), deadline=None)

    @given(documents())
    @quick
    def loads_without_warning(doc: dict[str, Any]) -> None:
        assert not any(o["kind"] == "DeviceTaintRule" for o in doc["objects"])
        assert scenario_from_document(doc, "drawn.yaml").warnings == []
    loads_without_warning()


def test_the_rare_draws_shrink_away() -> None:
    doc = find(documents(), lambda d: True, settings=settings(database=None))  # the simplest document drawn
    assert any(o["kind"] == "DeviceClass" for o in doc["objects"])  # DRA forced on (percent=100)
    assert not _admin(doc)
