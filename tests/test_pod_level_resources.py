"""Pod-level resources (spec.resources, the PodLevelResources gate on as in k8s v1.36.1): the reader's defaults
and refusals, the task's requests and limits (upstream's amend functions), the k8s mirror's requests, the QoS
class, and task.request-from-pod."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from schedcheck.invariants.catalog.pods import restated_request
from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference import k8s
from schedcheck.reference.api import task_info
from schedcheck.reference.api.task_info import get_pod_resource_limit, get_pod_resource_request
from schedcheck.reference.plugins.k8s_mirror import compute_pod_requests
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.qos import pod_qos
from schedcheck.runner import run_scenario
from schedcheck.scenario.dump import pod_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario, scenario_from_document

Q = Quantity.parse
ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
GI = 1024 ** 3


def _doc(resources: Any = None, containers: list | None = None, init: list | None = None,
         **spec: Any) -> dict[str, Any]:
    spec = dict(spec)
    spec["containers"] = containers if containers is not None else [{"name": "c"}]
    if init is not None:
        spec["initContainers"] = init
    if resources is not None:
        spec["resources"] = resources
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [pod]}


def _read(resources: Any = None, **kw: Any) -> k8s.Pod:
    scenario = scenario_from_document(_doc(resources, **kw), "s.yaml")
    assert not [w for w in scenario.warnings if "spec.resources" in w], scenario.warnings
    return scenario.objects.pods[0]


def _refused(resources: Any, **kw: Any) -> str:
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(_doc(resources, **kw), "s.yaml")
    text = str(info.value)
    assert "\n" not in text and "s.yaml" in text and "default/p" in text
    return text


def _c(name: str, requests: dict | None = None, limits: dict | None = None, **extra: Any) -> dict[str, Any]:
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "resources": resources, **extra}


def _amounts(listed: dict[str, Quantity]) -> dict[str, Fraction]:
    return {name: q.as_fraction() for name, q in listed.items()}


# -- the reader ---------------------------------------------------------------------------------------------


def test_absent_empty_and_given_pod_level_resources():
    assert _read().resources is None
    assert _read({}).resources == k8s.PodResources({}, {})
    pod = _read({"requests": {"cpu": "3", "memory": "1Gi"}}, containers=[_c("c", {"cpu": "1"})])
    assert _amounts(pod.resources.requests) == {"cpu": 3, "memory": GI}
    assert pod.resources.limits == {}


def test_requests_default_to_limits_when_no_container_asks():
    pod = _read({"limits": {"cpu": "2", "memory": "1Gi"}})
    assert _amounts(pod.resources.requests) == {"cpu": 2, "memory": GI}


def test_requests_default_to_the_containers_aggregate_before_the_limit():
    # regular 500m + sidecar 250m = 750m; init 1 + 250m = 1250m -> 1250m; memory only from the limit
    pod = _read({"limits": {"cpu": "4", "memory": "2Gi"}},
                containers=[_c("c", {"cpu": "500m"})],
                init=[_c("side", {"cpu": "250m"}, restartPolicy="Always"), _c("init", {"cpu": "1"})])
    assert _amounts(pod.resources.requests) == {"cpu": Fraction(5, 4), "memory": 2 * GI}


def test_a_given_pod_level_request_is_kept():
    pod = _read({"requests": {"cpu": "3"}, "limits": {"cpu": "4"}}, containers=[_c("c", {"cpu": "1"})])
    assert _amounts(pod.resources.requests) == {"cpu": 3}


def test_hugepage_limits_default_to_the_containers_and_requests_to_those_limits():
    pod = _read({"requests": {"cpu": "1"}},
                containers=[_c("c", limits={"hugepages-2Mi": "4Mi"}), _c("d", limits={"hugepages-2Mi": "2Mi"})])
    assert _amounts(pod.resources.limits) == {"hugepages-2Mi": 6 * 1024 ** 2}
    assert _amounts(pod.resources.requests) == {"cpu": 1, "hugepages-2Mi": 6 * 1024 ** 2}


@pytest.mark.parametrize("resources, containers, field, words", [
    ({"requests": {"nvidia.com/gpu": "1"}}, None, "spec.resources.requests.nvidia.com/gpu", "only cpu, memory"),
    ({"limits": {"ephemeral-storage": "1Gi"}}, None, "spec.resources.limits.ephemeral-storage", "only cpu"),
    ({"claims": [{"name": "x"}]}, None, "spec.resources.claims", "claims may not be set"),
    ({"requests": {"cpu": "3"}, "limits": {"cpu": "2"}}, None, "spec.resources.requests.cpu", "at most"),
    ({"requests": {"cpu": "1"}}, [_c("a", {"cpu": "1"}), _c("b", {"cpu": "500m"})], "spec.resources.requests.cpu",
     "below the containers' aggregate request of 1500m"),
    ({"limits": {"cpu": "1"}}, [_c("a", {"cpu": "500m"}, {"cpu": "2"})], "spec.containers[0].resources.limits.cpu",
     "above the pod-level limit"),
    ({"requests": {"hugepages-2Mi": "2Mi", "cpu": "1"}}, None, "spec.resources.limits.hugepages-2Mi",
     "needs a limit"),
    ({"limits": {"hugepages-2Mi": "2Mi"}}, None, "spec.resources", "require cpu or memory"),
    # (the containers' hugepages requests equal their limits, so the request check fires first)
    ({"requests": {"cpu": "1"}, "limits": {"hugepages-2Mi": "2Mi"}}, [_c("a", limits={"hugepages-2Mi": "4Mi"})],
     "spec.resources.requests.hugepages-2Mi", "below the containers' aggregate request"),
    ({"requests": {"cpu": "1"}, "limits": {"hugepages-2Mi": "2Mi"}},
     [_c("a", {"hugepages-2Mi": "1Mi"}, {"hugepages-2Mi": "4Mi"})],
     "spec.resources.limits.hugepages-2Mi", "below the containers' aggregate limit of 4194304"),
    ({"requests": {"cpu": "x"}}, None, "spec.resources.requests.cpu", ""),
    ({"requests": {"memory": "-1"}}, None, "spec.resources.requests.memory", "negative"),
    (["cpu"], None, "spec.resources", "mapping"),
])
def test_what_the_api_server_refuses_is_refused_in_one_line(resources, containers, field, words):
    kw = {"containers": containers} if containers is not None else {}
    text = _refused(resources, **kw)
    assert field in text and words in text


def test_unknown_keys_under_spec_resources_are_still_warned():
    scenario = scenario_from_document(_doc({"requests": {"cpu": "1"}, "colour": "red"}), "s.yaml")
    assert any("spec.resources.colour" in w for w in scenario.warnings)
    assert not any("spec.resources.requests" in w for w in scenario.warnings)


def test_the_dump_reads_back_the_same():
    pod = _read({"limits": {"cpu": "2", "memory": "1Gi"}}, containers=[_c("c", {"cpu": "500m"})])
    doc = {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [pod_document(pod)]}
    assert scenario_from_document(doc, "again.yaml").objects.pods[0].resources == pod.resources


# -- the reference ------------------------------------------------------------------------------------------


def _pod(requests=None, limits=None, containers=None, init=None, overhead=None, qos="") -> k8s.Pod:
    resources = None if requests is None and limits is None else k8s.PodResources(
        {n: Q(v) for n, v in (requests or {}).items()}, {n: Q(v) for n, v in (limits or {}).items()})
    return k8s.Pod(name="p", namespace="ns", uid="p", containers=containers or [], init_containers=init or [],
                   overhead={n: Q(v) for n, v in (overhead or {}).items()}, resources=resources, qos_class=qos)


def _container(name: str, requests: dict | None = None, limits: dict | None = None) -> k8s.Container:
    return k8s.Container(name, {n: Q(v) for n, v in (requests or {}).items()},
                         limits={n: Q(v) for n, v in (limits or {}).items()})


def test_task_request_takes_the_pod_level_then_overhead():
    pod = _pod(requests={"cpu": "3", "hugepages-2Mi": "2Mi"}, limits={"hugepages-2Mi": "2Mi"},
               containers=[_container("a", {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})],
               overhead={"cpu": "250m", "memory": "64Mi"})
    r = get_pod_resource_request(pod)
    assert r.milli_cpu == 3250  # pod level 3, not the container's 1, plus the overhead
    assert r.memory == GI + 64 * 1024 ** 2  # memory not at pod level: the container's
    assert r.scalars["hugepages-2Mi"] == 2 * 1024 ** 2 * 1000  # scalars are counted in thousandths
    assert r.scalars["nvidia.com/gpu"] == 1000 and r.scalars["pods"] == 1
    without = get_pod_resource_request(_pod(containers=pod.containers, overhead={"cpu": "250m"}))
    assert without.milli_cpu == 1250


def test_task_limit_takes_the_pod_level_and_overhead_only_where_limited():
    pod = _pod(limits={"cpu": "2"}, containers=[_container("a", limits={"cpu": "1"})],
               overhead={"cpu": "100m", "memory": "64Mi"})
    limit = get_pod_resource_limit(pod)
    assert limit.milli_cpu == 2100
    assert limit.memory == 0  # no memory limit: the overhead is not added to it
    assert get_pod_resource_limit(_pod(containers=pod.containers)).milli_cpu == 1000


def test_k8s_requests_and_the_two_non_zero_counts():
    # pod level memory only; container a asks 500m cpu, b nothing
    pod = _pod(requests={"memory": "1Gi"}, containers=[_container("a", {"cpu": "500m"}), _container("b")])
    req = compute_pod_requests(pod)
    assert (req.cpu, req.memory) == (500, GI)
    # CalculateResource: cpu is in the total, so no default is filled in for b
    assert (req.non0_cpu, req.non0_memory) == (500, GI)
    # the scorers' calculatePodResourceRequest fills 100m in for b, the pod level sets memory
    assert (req.score_non0_cpu, req.score_non0_memory) == (600, GI)
    # no pod level: both counts fill 100m / 200Mi in for every missing container request
    plain = compute_pod_requests(_pod(containers=pod.containers))
    assert (plain.non0_cpu, plain.score_non0_cpu, plain.non0_memory) == (600, 600, 2 * 200 * 1024 ** 2)
    # pod level with neither cpu anywhere: CalculateResource's default applies per container
    bare = compute_pod_requests(_pod(requests={"memory": "1Gi"}, containers=[_container("a"), _container("b")]))
    assert (bare.cpu, bare.non0_cpu, bare.score_non0_cpu, bare.non0_memory) == (0, 200, 200, GI)


def test_qos_class_follows_the_pod_level():
    best_effort_containers = [_container("a")]
    assert pod_qos(_pod(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"},
                        containers=best_effort_containers)) == "Guaranteed"
    assert pod_qos(_pod(requests={"cpu": "1"}, containers=best_effort_containers)) == "Burstable"
    assert pod_qos(_pod(limits={"cpu": "1"}, requests={"cpu": "1"}, containers=best_effort_containers)) == "Burstable"
    # an empty spec.resources is still the pod-level branch: BestEffort whatever the containers ask
    guaranteed = [_container("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})]
    empty = _pod(containers=guaranteed)
    empty.resources = k8s.PodResources()
    assert pod_qos(empty) == "BestEffort"
    assert pod_qos(_pod(containers=guaranteed)) == "Guaranteed"
    assert pod_qos(_pod(containers=guaranteed, qos="Burstable")) == "Burstable"  # status.qosClass first


# -- task.request-from-pod ----------------------------------------------------------------------------------


def test_restated_request_takes_the_pod_level():
    pod = _pod(requests={"cpu": "3"}, containers=[_container("a", {"cpu": "1", "memory": "1Gi"})],
               overhead={"cpu": "100m"})
    assert restated_request(pod) == {"cpu": Fraction(31, 10), "memory": GI}


def _violations(path: Path) -> list[str]:
    engine = InvariantEngine(only=["task.request-from-pod"])
    run_scenario(load_scenario(path), engine=engine)
    return [v.invariant for v in engine.violations]


def test_request_from_pod_passes_the_faithful_reference_and_catches_a_task_that_ignores_the_pod_level(monkeypatch):
    path = SCENARIOS / "resources-pod-level-requests.yaml"
    assert _violations(path) == []
    original = task_info.get_pod_resource_request

    def ignores_pod_level(pod):
        return original(type(pod)(**{**pod.__dict__, "resources": None}))
    monkeypatch.setattr(task_info, "get_pod_resource_request", ignores_pod_level)
    assert "task.request-from-pod" in _violations(path)


def test_the_minimiser_lowers_pod_level_quantities_too():
    from schedcheck.minimize.passes.quantities import _resource_maps

    doc = _doc({"requests": {"cpu": "3"}, "limits": {"cpu": "4", "memory": "1Gi"}})
    assert ("request", ("objects", 0, "spec", "resources", "requests")) in _resource_maps(doc)
    assert ("request", ("objects", 0, "spec", "resources", "limits")) in _resource_maps(doc)
