"""generators/pod_level_resources.py: pod-level resources the API server accepts, read without warnings."""

from __future__ import annotations

import functools

from hypothesis import given, settings
from hypothesis import strategies as st

from schedcheck.generators.pod_level_resources import apply_pod_level_resources
from schedcheck.generators.scenarios import sample_documents, scenarios
from schedcheck.scenario.loader import scenario_from_document

_CONTAINER = st.fixed_dictionaries({"name": st.just("c")}, optional={"resources": st.fixed_dictionaries(
    {}, optional={"requests": st.fixed_dictionaries({}, optional={"cpu": st.sampled_from(["500m", "1", "2"]),
                                                                "memory": st.sampled_from(["256Mi", "1Gi"])}),
                  "limits": st.fixed_dictionaries({}, optional={"cpu": st.sampled_from(["2", "3"]),
                                                              "memory": st.sampled_from(["2Gi"])})})})
_INIT = st.builds(lambda c, sidecar: {**c, "name": "i", **({"restartPolicy": "Always"} if sidecar else {})},
                  _CONTAINER, st.booleans())


def _scenario(pods):
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": pods}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_drawn_pod_level_resources_are_accepted_without_warnings(data):
    pods = []
    for i in range(data.draw(st.integers(1, 4))):
        spec = {"containers": data.draw(st.lists(_CONTAINER, min_size=1, max_size=3))}
        init = data.draw(st.lists(_INIT, max_size=2))
        if init:
            spec["initContainers"] = [{**c, "name": f"i{j}"} for j, c in enumerate(init)]
        spec["containers"] = [{**c, "name": f"c{j}"} for j, c in enumerate(spec["containers"])]
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
                     "spec": spec, "status": {"phase": "Pending"}})
    apply_pod_level_resources(data.draw, pods, percent=100)
    scenario = scenario_from_document(_scenario(pods), "<generated>")
    assert [w for w in scenario.warnings if "group-name annotation" not in w] == []  # (no PodGroups here)
    for doc, pod in zip(pods, scenario.objects.pods):
        assert (pod.resources is None) == ("resources" not in doc["spec"])


def test_scenarios_draw_pod_level_resources_last_and_the_documents_load_cleanly(monkeypatch):
    from schedcheck.generators import scenarios as module

    monkeypatch.setattr(module, "apply_pod_level_resources",
                        functools.partial(apply_pod_level_resources, percent=100))
    docs = sample_documents(scenarios(), count=40, seed=3)
    with_pod_level = [d for d in docs if any(o["kind"] == "Pod" and "resources" in o["spec"] for o in d["objects"])]
    assert with_pod_level, "no sample drew pod-level resources"
    for doc in with_pod_level:
        assert scenario_from_document(doc, "<generated>").warnings == []
