"""Pod-level resources (spec.resources) on some pending pods.

Drawn rarely, after every other draw of a scenario (so that the draws of earlier samples stay put). A chosen
pod gets pod-level cpu and memory requests, limits, or both, always what the API server accepts: requests at
least the containers' aggregate request (summed, init containers maxed in with the sidecars before them),
limits at least the requests, the containers' aggregate request and their aggregate limit (so no container
limit exceeds the pod's). With limits only, the API server's defaults fill the requests in. Only pending pods
change: a running pod's larger request could overfill its node. Shrinks to no pod-level resources at all,
then to the containers' own amounts.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import CPU, MEMORY, choice, format_resources, rarely, sometimes
from schedcheck.reference.k8s import Container
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.pod_resources import aggregate_container_limits, aggregate_container_requests

KINDS = ("requests", "limits", "both")
_EXTRA = {CPU: (Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2)),
          MEMORY: (Fraction(0), Fraction(2**29), Fraction(2**30))}


def _containers(docs: list[dict[str, Any]] | None) -> list[Container]:
    out = []
    for doc in docs or []:
        resources = doc.get("resources") or {}
        limits = {n: Quantity.parse(v) for n, v in (resources.get("limits") or {}).items()}
        requests = {**limits, **{n: Quantity.parse(v) for n, v in (resources.get("requests") or {}).items()}}
        out.append(Container(doc.get("name", ""), requests, restart_policy=doc.get("restartPolicy"), limits=limits))
    return out


def pod_level_resources(draw: st.DrawFn, spec: dict[str, Any]) -> dict[str, dict[str, str]]:
    """spec.resources for a pod spec, which the API server accepts for its containers."""
    containers, init = _containers(spec.get("containers")), _containers(spec.get("initContainers"))
    aggregate = aggregate_container_requests(containers, init)
    aggregate_limits = aggregate_container_limits(containers, init)
    kind = draw(choice(KINDS))
    requests: dict[str, Fraction] = {}
    for name in (CPU, MEMORY):
        value = aggregate.get(name, Fraction(0)) + draw(choice(_EXTRA[name]))
        if value > 0:
            requests[name] = value
    if not requests:
        requests[CPU] = Fraction(1)
    out: dict[str, dict[str, str]] = {}
    if kind != "limits":
        out["requests"] = format_resources(requests)
    if kind != "requests":
        limits = {}
        for name in requests:
            floor = max(requests[name], aggregate.get(name, Fraction(0)), aggregate_limits.get(name, Fraction(0)))
            limits[name] = floor + draw(choice(_EXTRA[name]))
        out["limits"] = format_resources(limits)
    return out


def apply_pod_level_resources(draw: st.DrawFn, job_docs: list[dict[str, Any]], percent: int = 6) -> None:
    """Rarely (`percent`%), pod-level resources on some pending pods (in place); else no further draws."""
    if not draw(rarely(percent)):
        return
    for pod in job_docs:
        if pod["kind"] != "Pod" or pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        if pod.get("status", {}).get("phase", "Pending") != "Pending" or not draw(sometimes(35)):
            continue
        spec = pod["spec"] = dict(pod["spec"])  # drafts may share their parts between pods: change a copy
        spec["resources"] = pod_level_resources(draw, spec)
