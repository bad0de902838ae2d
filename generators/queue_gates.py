"""Volcano's queue-allocation scheduling gate (SchedulingGatesQueueAdmission), drawn rarely: the feature
gate on in the scenario's schedulerOptions (most of the time when drawn at all), and some pending,
unbound pods held by Volcano's gate (in front of any gate they already have), most of them opted in with
the annotation. Drawn after every other draw of `scenarios()`, so earlier samples stay put; every choice
shrinks to "no gate"."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import rarely, sometimes
from schedcheck.reference.api.task_info import QUEUE_ALLOCATION_GATE
from schedcheck.reference.features import SCHEDULING_GATES_QUEUE_ADMISSION


def apply_queue_gates(draw: st.DrawFn, doc: dict[str, Any], job_docs: list[dict[str, Any]]) -> None:
    """Switch the feature gate and gate some pods (in place)."""
    if not draw(rarely(25)):
        return
    if draw(sometimes(80)):
        options = dict(doc.get("schedulerOptions") or {})
        options["featureGates"] = {SCHEDULING_GATES_QUEUE_ADMISSION: True}
        doc["schedulerOptions"] = options
    for pod in job_docs:
        spec = pod.get("spec", {})
        if pod["kind"] != "Pod" or spec.get("nodeName") or pod.get("status", {}).get("phase") != "Pending":
            continue
        if not draw(sometimes(50)):
            continue
        spec["schedulingGates"] = [{"name": QUEUE_ALLOCATION_GATE}, *spec.get("schedulingGates", [])]
        if draw(sometimes(85)):
            pod["metadata"].setdefault("annotations", {})[QUEUE_ALLOCATION_GATE] = "true"
