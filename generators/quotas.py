"""ResourceQuota documents: a namespace's quota with status.used equal to what its pods hold."""


from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st
from schedcheck.generators.ledger import pod_request
from schedcheck.generators.quantities import (
    CPU,
    MEMORY,
    PODS,
    Amounts,
    add,
    choice,
    format_resources,
)

QUOTA_NAMES: tuple[tuple[str, ...], ...] = (
    (CPU, MEMORY),
    ("requests.cpu", "requests.memory"),
    (PODS,),
    (CPU, MEMORY, PODS),
)


@st.composite
def resource_quotas(draw: st.DrawFn, namespace: str, used: Mapping[str, Fraction]) -> dict[str, Any]:
    """A ResourceQuota whose status.used is what the namespace's placed pods hold, and whose
    hard limits are at least that plus some headroom (shrinking to none)."""
    names = draw(choice(QUOTA_NAMES))
    hard: dict[str, Fraction] = {}
    used_out: dict[str, Fraction] = {}
    for name in names:
        base = name.removeprefix("requests.")
        current = used.get(base, Fraction(0))
        used_out[name] = current
        if base == MEMORY:
            headroom = Fraction(draw(st.integers(0, 64))) * 2**30
        else:
            headroom = Fraction(draw(st.integers(0, 32)))
        hard[name] = current + headroom
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "compute", "namespace": namespace},
        "spec": {"hard": format_resources(hard)},
        "status": {"hard": format_resources(hard), "used": format_resources(used_out)},
    }


def namespace_usage(pod_docs: Iterable[Mapping[str, Any]]) -> dict[str, Amounts]:
    """Requests held by the placed, unterminated pods of each namespace."""
    out: dict[str, Amounts] = {}
    for doc in pod_docs:
        if doc.get("kind") != "Pod" or not doc["spec"].get("nodeName"):
            continue
        if doc["status"].get("phase") in ("Succeeded", "Failed"):
            continue
        ns = doc["metadata"].get("namespace", "default")
        out[ns] = add(out.get(ns, {}), pod_request(doc["spec"]))
    return out

