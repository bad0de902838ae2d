"""Services and ReplicaSets over a job kind's pods, for PodTopologySpread's system default constraints
(nodeorder's `podtopologyspread.weight` scores a pod without constraints of its own by the pods its
Services and controller select). Drawn only when the conf's nodeorder scores spread; a Service selects
the kind's `app` label, a ReplicaSet selects it and becomes the controller of the kind's pods that have
no spread constraints of their own. Shrinks towards a Service (no pod changes) and towards none."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import choice

_KINDS = ("Service", "ReplicaSet")


def spread_scored(conf: dict[str, Any]) -> bool:
    """Does the conf's nodeorder score PodTopologySpread (`podtopologyspread.weight`, 2 when unset)?"""
    for tier in conf.get("tiers", []):
        for plugin in tier.get("plugins", []):
            if plugin.get("name") == "nodeorder":
                weight = (plugin.get("arguments") or {}).get("podtopologyspread.weight", 2)
                return str(weight) not in ("0", "0.0")
    return False


@st.composite
def default_spread_selector(draw: st.DrawFn, namespace: str, app: str, pods: list[dict[str, Any]]
                            ) -> dict[str, Any]:
    """A Service or ReplicaSet in `namespace` selecting `app`; a ReplicaSet is made the controller of the
    `pods` (the kind's pods there) that carry no topologySpreadConstraints."""
    kind = draw(choice(_KINDS))
    meta = {"name": f"{app}-{kind.lower()}", "namespace": namespace}
    if kind == "Service":
        return {"apiVersion": "v1", "kind": "Service", "metadata": meta,
                "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}}
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": meta["name"], "controller": True}
    for pod in pods:
        if not pod["spec"].get("topologySpreadConstraints"):
            pod["metadata"]["ownerReferences"] = [dict(ref)]
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": app}}}}
