"""What is left on each generated node, tracked exactly (`NodeLedger`), and whether a pod may sit on a
node (its node selector, required node affinity and NoExecute tolerations): placed pods never
overfill a node or land where they could not run."""


from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from schedcheck.generators.quantities import (
    PODS,
    Amounts,
    add,
    amounts,
    fits,
    maximum,
    subtract,
)


def tolerates(tolerations: Sequence[Mapping[str, str]], taint: Mapping[str, str]) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint["effect"]:
            continue
        if not tol.get("key") and tol.get("operator") == "Exists":
            return True
        if tol.get("key") != taint["key"]:
            continue
        if tol.get("operator") == "Exists" or tol.get("value", "") == taint.get("value", ""):
            return True
    return False


def selector_matches(selector: Mapping[str, str] | None, labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def affinity_matches(affinity: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Required node affinity (In / NotIn / Exists on labels), OR over terms, AND within one."""
    if not affinity:
        return True
    required = affinity.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    for term in required.get("nodeSelectorTerms", []):
        ok = True
        for req in term.get("matchExpressions", []):
            value = labels.get(req["key"])
            op = req["operator"]
            if op == "In":
                ok = value is not None and value in req.get("values", [])
            elif op == "NotIn":
                ok = value is None or value not in req.get("values", [])
            elif op == "Exists":
                ok = value is not None
            elif op == "DoesNotExist":
                ok = value is None
            else:
                ok = False
            if not ok:
                break
        if ok:
            return True
    return False


class NodeLedger:
    """Each node's remaining allocatable, exactly; where a pod may already be running."""

    def __init__(self, node_docs: Iterable[Mapping[str, Any]]) -> None:
        self.names: list[str] = []
        self.remaining: dict[str, Amounts] = {}
        self.labels: dict[str, dict[str, str]] = {}
        self.taints: dict[str, list[dict[str, str]]] = {}
        for doc in node_docs:
            name = doc["metadata"]["name"]
            self.names.append(name)
            self.remaining[name] = amounts(doc["status"]["allocatable"])
            self.labels[name] = dict(doc["metadata"].get("labels", {}))
            self.taints[name] = list(doc.get("spec", {}).get("taints", []))

    def candidates(self, request: Mapping[str, Fraction], pod_spec: Mapping[str, Any] | None = None) -> list[str]:
        """Nodes the pod could be running on: it fits, matches them and tolerates their NoExecute taints.

        A NoSchedule taint or a cordon added after the pod started does not evict it, so those
        do not exclude a node.
        """
        spec = pod_spec or {}
        tolerations = spec.get("tolerations", [])
        out = []
        for name in self.names:
            if not fits(request, self.remaining[name]):
                continue
            if not selector_matches(spec.get("nodeSelector"), self.labels[name]):
                continue
            if not affinity_matches(spec.get("affinity"), self.labels[name]):
                continue
            if any(t["effect"] == "NoExecute" and not tolerates(tolerations, t) for t in self.taints[name]):
                continue
            out.append(name)
        return out

    def place(self, name: str, request: Mapping[str, Fraction]) -> None:
        subtract(self.remaining[name], request)


def pod_request(spec: Mapping[str, Any]) -> Amounts:
    """What a pod holds on its node: containers summed, init containers maxed in, overhead added, one pod
    slot."""
    total: Amounts = {}
    for container in spec.get("containers", []):
        total = add(total, amounts(container.get("resources", {}).get("requests", {})))
    for container in spec.get("initContainers", []):
        total = maximum(total, amounts(container.get("resources", {}).get("requests", {})))
    if spec.get("overhead"):
        total = add(total, amounts(spec["overhead"]))
    total[PODS] = total.get(PODS, Fraction(0)) + 1
    return total


# ---------------------------------------------------------------- queues


