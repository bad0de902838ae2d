"""In-place resize status (status.containerStatuses[].resources / allocatedResources, the pod-level
status.resources / allocatedResources, the PodResizePending condition): the reader, Volcano's task request and
limit, the k8s mirror's node-side and scorer-side counts, and task.request-from-pod; and spec.os, accepted and
not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.reference import k8s
from schedcheck.reference.api import task_info
from schedcheck.reference.api.task_info import get_pod_resource_limit, get_pod_resource_request
from schedcheck.reference.plugins.k8s_mirror import compute_pod_requests
from schedcheck.reference.quantity import Quantity
from schedcheck.runner import run_scenario
from schedcheck.scenario.dump import pod_document
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario, scenario_from_document

Q = Quantity.parse
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
GI = 1024 ** 3


def _doc(status: dict[str, Any], containers: list | None = None, init: list | None = None,
         resources: dict | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers if containers is not None
                            else [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}
    if init is not None:
        spec["initContainers"] = init
    if resources is not None:
        spec["resources"] = resources
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": spec, "status": {"phase": "Running", **status}}
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [pod]}


def _read(status: dict[str, Any], **kw: Any) -> tuple[k8s.Pod, list[str]]:
    scenario = scenario_from_document(_doc(status, **kw), "s.yaml")
    return scenario.objects.pods[0], scenario.warnings


def _refused(status: dict[str, Any], **kw: Any) -> str:
    with pytest.raises(ScenarioError) as info:
        scenario_from_document(_doc(status, **kw), "s.yaml")
    text = str(info.value)
    assert "\n" not in text and "s.yaml" in text and "Pod default/p" in text
    return text


# -- the reader ---------------------------------------------------------------------------------------------


def test_status_resources_attach_to_their_containers_and_the_kubelet_report_is_read_silently():
    pod, warnings = _read({
        "containerStatuses": [{"name": "a", "ready": True, "restartCount": 2, "image": "busybox",
                               "imageID": "x", "containerID": "containerd://1", "started": True,
                               "state": {"running": {}}, "lastState": {},
                               "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "4"}},
                               "allocatedResources": {"cpu": "2"}}],
        "resources": {"requests": {"cpu": "5"}}, "allocatedResources": {"cpu": "5"}})
    a = pod.containers[0]
    assert a.status_resources == k8s.PodResources({"cpu": Q("3")}, {"cpu": Q("4")})
    assert a.allocated_resources == {"cpu": Q("2")}
    assert pod.status_resources == k8s.PodResources({"cpu": Q("5")}, {})
    assert pod.allocated_resources == {"cpu": Q("5")}
    assert not [w for w in warnings if "Pod" in w], warnings


def test_an_entry_without_resources_leaves_them_unset_and_unknown_keys_are_warned():
    pod, warnings = _read({"containerStatuses": [{"name": "a", "colour": "red"}]})
    assert pod.containers[0].status_resources is None and pod.status_resources is None
    assert any("status.containerStatuses[].colour" in w for w in warnings)


@pytest.mark.parametrize("status, kw, field, words", [
    ({"containerStatuses": [{"name": "b"}]}, {}, "status.containerStatuses[0].name",
     "names no container of spec.containers"),
    ({"containerStatuses": [{"name": "side"}]},
     {"init": [{"name": "side", "restartPolicy": "Always"}]}, "status.containerStatuses[0].name",
     "it is in spec.initContainers"),
    ({"initContainerStatuses": [{"name": "a"}]}, {}, "status.initContainerStatuses[0].name",
     "it is in spec.containers"),
    ({"containerStatuses": [{"name": "a"}, {"name": "a"}]}, {}, "status.containerStatuses[1].name",
     "two entries"),
    ({"containerStatuses": [{"resources": {}}]}, {}, "status.containerStatuses[0].name", "missing"),
    ({"containerStatuses": [{"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}, {},
     "status.containerStatuses[0].resources.requests.cpu", "quantity"),
    ({"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "-1"}}]}, {},
     "status.containerStatuses[0].allocatedResources.cpu", "negative"),
    ({"resources": {"requests": "3"}}, {}, "status.resources.requests", "mapping"),
    ({"allocatedResources": {"memory": "x"}}, {}, "status.allocatedResources.memory", "quantity"),
])
def test_bad_resize_status_is_refused_in_one_line(status, kw, field, words):
    text = _refused(status, **kw)
    assert field in text and words in text, text


def test_the_dump_reads_back_the_same():
    pod, _ = _read({"containerStatuses": [{"name": "a", "resources": {"requests": {"cpu": "3"}},
                                           "allocatedResources": {"cpu": "3"}}],
                    "initContainerStatuses": [{"name": "side", "resources": {}}],
                    "resources": {"requests": {"cpu": "4"}}, "allocatedResources": {"cpu": "4"}},
                   init=[{"name": "side", "restartPolicy": "Always"}], resources={"requests": {"cpu": "2"}})
    doc = {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [pod_document(pod)]}
    again = scenario_from_document(doc, "again.yaml").objects.pods[0]
    assert again.containers == pod.containers and again.init_containers == pod.init_containers
    assert (again.status_resources, again.allocated_resources) == (pod.status_resources, pod.allocated_resources)


# -- the reference ------------------------------------------------------------------------------------------


def _container(name: str, requests: dict | None = None, status: dict | None = None,
               allocated: dict | None = None, limits: dict | None = None, status_limits: dict | None = None,
               restart_policy: str | None = None) -> k8s.Container:
    def q(listed):
        return {n: Q(v) for n, v in (listed or {}).items()}
    status_resources = None
    if status is not None or status_limits is not None:
        status_resources = k8s.PodResources(q(status), q(status_limits))
    return k8s.Container(name, q(requests), restart_policy=restart_policy, limits=q(limits),
                         status_resources=status_resources, allocated_resources=q(allocated))


def _pod(containers, init=None, infeasible: bool = False, **kw) -> k8s.Pod:
    conditions = [k8s.PodCondition("PodResizePending", "True", reason="Infeasible")] if infeasible else []
    return k8s.Pod(name="p", namespace="ns", uid="p", containers=containers, init_containers=init or [],
                   conditions=conditions, **kw)


def test_task_request_takes_the_most_of_spec_actuated_and_allocated():
    shrinking = _pod([_container("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "3"}, {"cpu": "2", "memory": "2Gi"})])
    r = get_pod_resource_request(shrinking)
    assert (r.milli_cpu, r.memory) == (3000, 2 * GI)
    # Infeasible: the spec drops out of the maximum
    growing = _pod([_container("a", {"cpu": "4"}, {"cpu": "1"}, {"cpu": "1"})], infeasible=True)
    assert get_pod_resource_request(growing).milli_cpu == 1000
    assert get_pod_resource_request(_pod(growing.containers)).milli_cpu == 4000
    # a container without a status entry counts its spec
    assert get_pod_resource_request(_pod([_container("a", {"cpu": "4"}, allocated={"cpu": "9"})])).milli_cpu == 4000


def test_only_sidecars_among_init_containers_take_their_status():
    pod = _pod([_container("main", {"cpu": "500m"})],
               init=[_container("plain", {"cpu": "100m"}, {"cpu": "4"}),
                     _container("side", {"cpu": "500m"}, {"cpu": "3"}, restart_policy="Always")])
    assert get_pod_resource_request(pod).milli_cpu == 3500


def test_task_limit_takes_the_larger_of_spec_and_actuated_limits_even_when_infeasible():
    pod = _pod([_container("a", limits={"cpu": "4"}, status_limits={"cpu": "2", "memory": "1Gi"})], infeasible=True)
    limit = get_pod_resource_limit(pod)
    assert (limit.milli_cpu, limit.memory) == (4000, GI)


def test_task_request_reads_no_pod_level_status():
    pod = _pod([_container("a", {"cpu": "500m"})], resources=k8s.PodResources({"cpu": Q("1")}, {}),
               status_resources=k8s.PodResources({"cpu": Q("3")}, {}), allocated_resources={"cpu": Q("3")})
    assert get_pod_resource_request(pod).milli_cpu == 1000


def test_k8s_node_side_reads_status_and_the_scorer_side_the_spec():
    pod = _pod([_container("a", {"cpu": "500m"}, {"cpu": "2"}), _container("b")])
    req = compute_pod_requests(pod)
    assert (req.cpu, req.non0_cpu) == (2000, 2100)  # b gets the 100m default
    assert (req.score_cpu, req.score_non0_cpu) == (500, 600)


def test_k8s_pod_level_status_counts_and_a_resource_the_effective_list_lacks_counts_zero():
    pod = _pod([_container("a", {"cpu": "500m"})],
               resources=k8s.PodResources({"cpu": Q("1"), "memory": Q("1Gi")}, {}),
               status_resources=k8s.PodResources({"cpu": Q("3")}, {}), allocated_resources={"cpu": Q("3")})
    req = compute_pod_requests(pod)
    assert (req.cpu, req.memory, req.score_cpu, req.score_memory) == (3000, GI, 1000, GI)
    # Infeasible: max(actuated, allocated) names no memory, so the pod-level memory counts zero on the node
    pod.conditions = [k8s.PodCondition("PodResizePending", "True", reason="Infeasible")]
    req = compute_pod_requests(pod)
    assert (req.cpu, req.memory, req.non0_memory) == (3000, 0, 0)
    # the first PodResizePending condition decides
    pod.conditions = [k8s.PodCondition("PodResizePending", "True", reason="Deferred"),
                      k8s.PodCondition("PodResizePending", "True", reason="Infeasible")]
    assert compute_pod_requests(pod).memory == GI


# -- task.request-from-pod ----------------------------------------------------------------------------------


def _violations(path: Path) -> list[str]:
    engine = InvariantEngine(only=["task.request-from-pod"])
    run_scenario(load_scenario(path), engine=engine)
    return [v.invariant for v in engine.violations]


def test_request_from_pod_passes_the_faithful_reference_and_catches_a_task_that_ignores_resize_status(monkeypatch):
    path = SCENARIOS / "resources-resize-status-task-request.yaml"
    assert _violations(path) == []
    def spec_only(c, limits, infeasible):
        return task_info.Resource.from_resource_list(c.limits if limits else c.requests)
    monkeypatch.setattr(task_info, "_own_resources", spec_only)
    assert "task.request-from-pod" in _violations(path)


# -- spec.os (accepted, not read) ---------------------------------------------------------------------------


def test_spec_os_is_accepted_without_a_warning_and_checked_as_the_api_server_does():
    doc = _doc({})
    doc["objects"][0]["spec"]["os"] = {"name": "windows"}
    scenario = scenario_from_document(doc, "s.yaml")
    assert not [w for w in scenario.warnings if "os" in w], scenario.warnings
    for bad, words in (({"name": "plan9"}, "expected one of linux, windows"), ({}, "missing"), ("linux", "mapping")):
        doc["objects"][0]["spec"]["os"] = bad
        with pytest.raises(ScenarioError) as info:
            scenario_from_document(doc, "s.yaml")
        assert "spec.os" in str(info.value) and words in str(info.value), str(info.value)
