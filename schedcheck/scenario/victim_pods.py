"""The Pod of an extender's victim that is not a pod of the session (reference_impl/plugins/extender_victims.py):
read as a scenario's Pod document, which is a Pod's JSON form. Importing the scenario layer registers it."""

from __future__ import annotations

from typing import Any

from schedcheck.reference import k8s
from schedcheck.reference.plugins.extender_victims import set_pod_decoder
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.fields import Fields

WHERE = "an extender's reply"


def pod_from_json(doc: dict[str, Any]) -> k8s.Pod:
    """The Pod as Go decodes it: its identity as given (Go's zero values when absent, no defaults); raises
    ValueError where the scenario reader refuses the document."""
    from schedcheck.scenario.objects import _read_pod

    f = Fields(WHERE, "Pod")
    try:
        meta = f.mapping(doc.get("metadata"), "metadata")
        name = f.string(meta.get("name"), "metadata.name")
        namespace = f.string(meta.get("namespace"), "metadata.namespace")
        f.obj = f"Pod {namespace}/{name}"
        out = k8s.ClusterObjects()
        _read_pod(f, doc, name, namespace, f.string(meta.get("uid"), "metadata.uid"), out)
    except ScenarioError as err:
        raise ValueError(f"{err.obj}: {err.field}: {err.reason}") from None
    return out.pods[0]


set_pod_decoder(pod_from_json)
