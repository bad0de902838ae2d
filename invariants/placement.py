"""Where a pod clearly may not go, restated from Kubernetes' scheduling rules without the plugin's code.

The predicates plugin runs the kube-scheduler filters NodeUnschedulable, NodeAffinity (nodeSelector and
required node affinity) and TaintToleration. This module answers only the clear cases: a requirement
it cannot read for certain (an unknown operator, a value that is not a number for Gt/Lt, an empty
term) counts as possibly met, so the rule built on it never judges what it does not understand.
"""

from __future__ import annotations

from schedcheck.reference.k8s import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, Taint, Toleration

HARD_EFFECTS = ("NoSchedule", "NoExecute")
CORDON = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """v1.Toleration.ToleratesTaint."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    return toleration.operator in ("", "Equal") and toleration.value == taint.value


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _clearly_fails(req: NodeSelectorRequirement, labels: dict[str, str]) -> bool:
    present, value = req.key in labels, labels.get(req.key)
    if req.operator == "In":
        return bool(req.values) and (not present or value not in req.values)
    if req.operator == "NotIn":
        return present and value in req.values
    if req.operator == "Exists":
        return not present
    if req.operator == "DoesNotExist":
        return present
    if req.operator in ("Gt", "Lt") and len(req.values) == 1:
        bound = _int(req.values[0])
        if bound is None:
            return False
        if not present:
            return True
        have = _int(value or "")
        if have is None:
            return False
        return have <= bound if req.operator == "Gt" else have >= bound
    return False


def _field_clearly_fails(req: NodeSelectorRequirement, node: Node) -> bool:
    if req.key != "metadata.name" or len(req.values) != 1 or req.operator not in ("In", "NotIn"):
        return False
    return (node.name == req.values[0]) != (req.operator == "In")


def _term_clearly_fails(term: NodeSelectorTerm, node: Node) -> bool:
    return any(_clearly_fails(r, node.labels) for r in term.match_expressions) or any(
        _field_clearly_fails(r, node) for r in term.match_fields)


def excluded_by(pod: Pod, node: Node, affinity_on: bool = True, taints_on: bool = True) -> str:
    """Why the pod clearly may not run on the node, or "" when nothing clearly forbids it."""
    if node.unschedulable and not any(tolerates(t, CORDON) for t in pod.tolerations):
        return "the node is cordoned (spec.unschedulable) and the pod does not tolerate it"
    if affinity_on:
        for key, value in sorted(pod.node_selector.items()):
            if node.labels.get(key) != value:
                return f"nodeSelector {key}={value} does not match the node's labels"
        required = pod.node_affinity.required if pod.node_affinity is not None else None
        terms = [t for t in required or () if t.match_expressions or t.match_fields]
        if terms and all(_term_clearly_fails(t, node) for t in terms):
            return "no required node-affinity term matches the node"
    if taints_on:
        for taint in node.taints:
            if taint.effect in HARD_EFFECTS and not any(tolerates(t, taint) for t in pod.tolerations):
                return f"taint {taint.key}={taint.value}:{taint.effect} is not tolerated"
    return ""


def label_selector_matches(selector, labels: dict[str, str]) -> bool:
    """metav1.LabelSelectorAsSelector(selector).Matches(labels), restated; None selects nothing."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    checks = {"In": lambda r: r.key in labels and labels[r.key] in r.values,
              "NotIn": lambda r: r.key not in labels or labels[r.key] not in r.values,
              "Exists": lambda r: r.key in labels, "DoesNotExist": lambda r: r.key not in labels}
    return all(checks[r.operator](r) for r in selector.match_expressions)


def volume_excludes(terms: list[NodeSelectorTerm] | None, node: Node) -> bool:
    """A PersistentVolume's required node affinity clearly excludes the node. The volume binder matches it
    against the node's labels alone, so matchFields are not judged; neither is a list without a readable term."""
    readable = [t for t in terms or () if t.match_expressions]
    return bool(readable) and all(any(_clearly_fails(r, node.labels) for r in t.match_expressions) for t in readable)
