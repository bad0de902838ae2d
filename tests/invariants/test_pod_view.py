"""task.status-from-pod and task.request-from-pod: what the scheduler reads off each pod, restated."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from schedcheck.invariants.catalog.pods import restated_request, restated_status
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.mutants import mutant
from schedcheck.reference.k8s import Container, Pod
from schedcheck.reference.quantity import Quantity
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

HERE = Path(__file__).resolve().parents[2]
CASES = [("task.status-from-pod", "tests/scenarios/gang-pipelined-phantom.yaml", "task-status-ignores-deletion"),
         ("task.request-from-pod", "tests/scenarios/resources-init-containers.yaml", "request-ignores-init-containers"),
         ("task.request-from-pod", "tests/scenarios/resources-pod-overhead.yaml", "request-ignores-overhead")]


def _violations(rule: str, path: str) -> list[str]:
    engine = InvariantEngine(only=[rule])
    run_scenario(load_scenario(HERE / path), engine=engine)
    return [v.invariant for v in engine.violations]


@pytest.mark.parametrize("rule, path, bug", CASES)
def test_passes_on_the_faithful_reference(rule, path, bug):
    assert _violations(rule, path) == []


@pytest.mark.parametrize("rule, path, bug", CASES)
def test_fires_when_the_pod_is_misread(rule, path, bug):
    with mutant(bug):
        assert rule in _violations(rule, path)


def _q(text: str) -> Quantity:
    return Quantity.parse(text)


def test_restated_request_follows_kubernetes():
    pod = Pod(name="p", namespace="ns", uid="p",
              containers=[Container("a", {"cpu": _q("1")}), Container("b", {"cpu": _q("500m")})],
              init_containers=[Container("sidecar", {"cpu": _q("250m")}, restart_policy="Always"),
                               Container("init", {"cpu": _q("2")})],
              overhead={"cpu": _q("100m")})
    # regular 1.5 + sidecar 0.25 = 1.75; init peak 2 + 0.25 = 2.25 -> max 2.25, + overhead 0.1
    assert restated_request(pod)["cpu"] == Fraction(235, 100)


def test_restated_status_follows_get_task_status():
    deleting = Pod(name="p", namespace="n", uid="u", phase="Running", deletion_timestamp="t")
    assert restated_status(deleting) == "Releasing"
    assert restated_status(Pod(name="p", namespace="n", uid="u", phase="Pending", node_name="n1")) == "Bound"
    assert restated_status(Pod(name="p", namespace="n", uid="u", phase="Weird")) == "Unknown"
