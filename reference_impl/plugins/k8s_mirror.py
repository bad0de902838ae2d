"""The session's k8s view of nodes, and the k8s helper semantics the predicates and nodeorder plugins share.

Upstream builds `ssn.NodeMap` at OpenSession (pkg/scheduler/framework/util.go
GenerateNodeMapAndSlice): one k8s NodeInfo per node holding the pod of EVERY task
stored on the node, whatever its status. Only the predicates plugin's event
handlers keep it current; nodeorder merely reads it (semantics §3.6). Here the
mirror is built lazily, once per session, by whichever plugin opens first.

A mirror node keeps only what these plugins read: the pod count and the
k8s-computed request sums (requested, non-zero requested, nvidia.com/gpu).

The helpers re-implement, for k8s v1.36.1 / apimachinery v0.36.1:
- pod requests (component-helpers resource.PodRequests, pod-level resources included, see
  util/pod_resources.py; the scheduler's PodInfo.CalculateResource and the resource-allocation
  scorers' calculatePodResourceRequest, with the 100m / 200Mi non-missing defaults);
- node selector terms (component-helpers scheduling/corev1/nodeaffinity,
  apimachinery labels.NewRequirement / Requirement.Matches, fields selectors);
- toleration matching (k8s.io/api core/v1 Toleration.ToleratesTaint with the
  TaintTolerationComparisonOperators gate off, its default).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import TYPE_CHECKING

from schedcheck.reference.k8s import Node, NodeSelectorTerm, Pod, PreferredSchedulingTerm, Taint, Toleration
from schedcheck.reference.util.pod_resources import pod_level_requests_set, pod_requests

if TYPE_CHECKING:
    from schedcheck.reference.api.node_info import NodeInfo
    from schedcheck.reference.framework.session import Session

GPU = "nvidia.com/gpu"
DEFAULT_MILLI_CPU_REQUEST = 100  # pkg/scheduler/util/pod_resources.go
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_NON_MISSING = {"cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000), "memory": Fraction(DEFAULT_MEMORY_REQUEST)}
_SESSION_ATTR = "_k8s_mirror"


# -- pod requests ---------------------------------------------------------------------------


class PodRequests:
    """A pod's requests as the k8s scheduler counts them (cpu in milli, memory in bytes, gpu in units).

    cpu, memory, gpu, non0_*: PodInfo.CalculateResource, what a node's Requested and NonZeroRequested hold for
    the pod; it reads in-place resize status (the global InPlacePodVerticalScaling gate, locked on).
    score_*: the resource-allocation scorers' own count of the incoming pod (calculatePodResourceRequest: the
    spec alone, since Volcano's nodeorder hands the scorers no EnableInPlacePodVerticalScaling; score_non0_*
    with the 100m / 200Mi defaults for every missing container request). Without resize status they differ only
    for a pod with pod-level requests: CalculateResource then fills in a default only for a resource the pod's
    total leaves out."""

    __slots__ = ("cpu", "memory", "gpu", "non0_cpu", "non0_memory", "score_non0_cpu", "score_non0_memory",
                 "score_cpu", "score_memory", "score_gpu")

    def __init__(self, cpu: int, memory: int, gpu: int, non0_cpu: int, non0_memory: int,
                 score_non0_cpu: int | None = None, score_non0_memory: int | None = None,
                 score_cpu: int | None = None, score_memory: int | None = None, score_gpu: int | None = None) -> None:
        self.cpu = cpu
        self.memory = memory
        self.gpu = gpu
        self.non0_cpu = non0_cpu
        self.non0_memory = non0_memory
        self.score_non0_cpu = non0_cpu if score_non0_cpu is None else score_non0_cpu
        self.score_non0_memory = non0_memory if score_non0_memory is None else score_non0_memory
        self.score_cpu = cpu if score_cpu is None else score_cpu
        self.score_memory = memory if score_memory is None else score_memory
        self.score_gpu = gpu if score_gpu is None else score_gpu


def aggregate_pod_requests(pod: Pod, non_missing: bool) -> dict[str, Fraction]:
    """resource.PodRequests (pod-level requests in place of the containers', overhead added), with the
    100m / 200Mi defaults for every missing container request when `non_missing`."""
    return pod_requests(pod, _NON_MISSING if non_missing else None)


def _value(q: Fraction | int) -> int:
    """Quantity.Value(): rounded away from zero."""
    return math.ceil(q) if q >= 0 else math.floor(q)


def _milli(q: Fraction | int) -> int:
    return _value(Fraction(q) * 1000)


def compute_pod_requests(pod: Pod) -> PodRequests:
    actual = pod_requests(pod, use_status=True)
    if pod_level_requests_set(pod):
        # getNonMissingContainerRequests: a default only where neither the pod level nor a container asks
        defaults = {name: value for name, value in _NON_MISSING.items() if name not in actual}
        non0 = pod_requests(pod, defaults, use_status=True) if defaults else actual
    else:
        non0 = pod_requests(pod, _NON_MISSING, use_status=True)
    spec = pod_requests(pod)
    scored = pod_requests(pod, _NON_MISSING)
    return PodRequests(
        cpu=_milli(actual.get("cpu", 0)),
        memory=_value(actual.get("memory", 0)),
        gpu=_value(actual.get(GPU, 0)),
        non0_cpu=_milli(non0.get("cpu", 0)),
        non0_memory=_value(non0.get("memory", 0)),
        score_non0_cpu=_milli(scored.get("cpu", 0)),
        score_non0_memory=_value(scored.get("memory", 0)),
        score_cpu=_milli(spec.get("cpu", 0)),
        score_memory=_value(spec.get("memory", 0)),
        score_gpu=_value(spec.get(GPU, 0)),
    )


# -- the mirror -----------------------------------------------------------------------------


def host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    """(protocol, host IP, host port) of the pod's containers' ports exposed on the node (NodePorts), with
    HostPortInfo's defaults: protocol TCP, address 0.0.0.0."""
    return [(p.protocol or "TCP", p.host_ip or "0.0.0.0", p.host_port)
            for c in pod.containers for p in c.ports if p.host_port > 0]


class MirrorNode:
    """One k8s NodeInfo: allocatable, pod multiset (by pod UID) and request sums."""

    __slots__ = ("name", "node", "pods", "pod_objects", "affinity_pods", "num_pods", "cpu", "memory", "gpu",
                 "non0_cpu", "non0_memory", "alloc_cpu", "alloc_memory", "alloc_gpu", "version", "used_ports")

    def __init__(self, name: str, node: Node | None) -> None:
        self.name = name
        self.node = node
        allocatable = node.allocatable if node is not None else {}
        self.alloc_cpu = allocatable["cpu"].milli_value() if "cpu" in allocatable else 0
        self.alloc_memory = allocatable["memory"].value() if "memory" in allocatable else 0
        self.alloc_gpu = allocatable[GPU].value() if GPU in allocatable else 0
        self.pods: dict[str, int] = {}  # uid -> multiplicity (AddPodInfo does not deduplicate)
        self.pod_objects: dict[str, Pod] = {}  # uid -> the pod (its labels and affinity, for InterPodAffinity)
        self.affinity_pods: dict[str, Pod] = {}  # the entries of pod_objects with pod (anti-)affinity
        self.num_pods = 0
        self.cpu = self.memory = self.gpu = self.non0_cpu = self.non0_memory = 0
        self.version = 0  # bumped on every change, for readers that cache per-node values
        # NodeInfo.UsedPorts: a set of (protocol, host IP, port), not a count: a pod leaving removes its ports
        # even when another pod on the node holds the same one (HostPortInfo.Remove)
        self.used_ports: set[tuple[str, str, int]] = set()

    def _apply(self, req: PodRequests, sign: int) -> None:
        self.version += 1
        self.cpu += sign * req.cpu
        self.memory += sign * req.memory
        self.gpu += sign * req.gpu
        self.non0_cpu += sign * req.non0_cpu
        self.non0_memory += sign * req.non0_memory


class K8sMirror:
    """The per-session NodeMap, plus the set of tasks whose PrePredicate ran (their k8s cycle state)."""

    def __init__(self, nodes: dict[str, NodeInfo]) -> None:
        self.requests: dict[str, PodRequests] = {}
        self.nodes: dict[str, MirrorNode] = {}
        # Task UIDs whose PrePredicate reached the VolumeBinding/DRA PreFilters in this session;
        # their Reserve plugins need that state (see predicates.py).
        self.prefiltered: set[str] = set()
        # The nodes whose affinity_pods is not empty: InterPodAffinity walks only these for an incoming pod
        # without terms of its own (the other pods add nothing to its counts or scores).
        self.affinity_nodes: dict[str, MirrorNode] = {}
        for name, info in nodes.items():
            mirror_node = MirrorNode(name, info.node)
            self.nodes[name] = mirror_node
            for task in info.tasks.values():
                self._add(mirror_node, task.pod)

    def pod_requests(self, pod: Pod) -> PodRequests:
        if not pod.uid:
            return compute_pod_requests(pod)
        req = self.requests.get(pod.uid)
        if req is None:
            req = self.requests[pod.uid] = compute_pod_requests(pod)
        return req

    def _add(self, node: MirrorNode, pod: Pod) -> None:
        node.pods[pod.uid] = node.pods.get(pod.uid, 0) + 1
        node.pod_objects[pod.uid] = pod
        if pod.pod_affinity is not None or pod.pod_anti_affinity is not None:
            node.affinity_pods[pod.uid] = pod
            self.affinity_nodes[node.name] = node
        elif node.affinity_pods:
            self._forget_affinity(node, pod.uid)
        node.used_ports.update(host_ports(pod))
        node.num_pods += 1
        node._apply(self.pod_requests(pod), 1)

    def add_pod(self, node_name: str, pod: Pod) -> None:
        node = self.nodes.get(node_name)
        if node is not None:
            self._add(node, pod)

    def remove_pod(self, node_name: str, pod: Pod) -> None:
        """RemovePod: by UID; a pod that is absent (or has no UID) is left alone, as upstream logs and returns."""
        node = self.nodes.get(node_name)
        if node is None or not pod.uid or pod.uid not in node.pods:
            return
        node.used_ports.difference_update(host_ports(node.pod_objects.get(pod.uid, pod)))
        left = node.pods[pod.uid] - 1
        if left:
            node.pods[pod.uid] = left
        else:
            del node.pods[pod.uid]
            node.pod_objects.pop(pod.uid, None)
            if node.affinity_pods:
                self._forget_affinity(node, pod.uid)
        node.num_pods -= 1
        node._apply(self.pod_requests(pod), -1)

    def _forget_affinity(self, node: MirrorNode, uid: str) -> None:
        node.affinity_pods.pop(uid, None)
        if not node.affinity_pods:
            self.affinity_nodes.pop(node.name, None)


def session_mirror(ssn: Session) -> K8sMirror:
    """The session's mirror, built from `ssn.nodes` on first use."""
    mirror = getattr(ssn, _SESSION_ATTR, None)
    if mirror is None:
        mirror = K8sMirror(ssn.nodes)
        setattr(ssn, _SESSION_ATTR, mirror)
    return mirror


# -- label syntax (apimachinery validation) --------------------------------------------------

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_GO_INT = re.compile(r"[+-]?[0-9]+")


def parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64); None where Go returns an error."""
    if not _GO_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def is_label_key(key: str) -> bool:
    parts = key.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return False
    name = parts[-1]
    return 0 < len(name) <= 63 and _NAME.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    return value == "" or (len(value) <= 63 and _NAME.fullmatch(value) is not None)


# -- node selector terms --------------------------------------------------------------------


class SelectorTerm:
    """A parsed NodeSelectorTerm: expressions ANDed over labels, matchFields ANDed over metadata.name.

    A term that failed to parse (`valid` false) matches nothing.
    """

    __slots__ = ("labels", "fields", "valid")

    def __init__(self, term: NodeSelectorTerm) -> None:
        self.valid = True
        self.labels: list[tuple[str, str, frozenset[str], int]] | None = None
        self.fields: list[tuple[str, bool, str]] | None = None
        if term.match_expressions:
            self.labels = []
            for req in term.match_expressions:
                parsed = _parse_label_requirement(req.key, req.operator, req.values)
                if parsed is None:
                    self.valid = False
                else:
                    self.labels.append(parsed)
        if term.match_fields:
            self.fields = []
            for req in term.match_fields:
                if req.operator not in ("In", "NotIn") or len(req.values) != 1:
                    self.valid = False
                else:
                    self.fields.append((req.key, req.operator == "In", req.values[0]))

    def matches(self, node: Node) -> bool:
        if not self.valid:
            return False
        if self.labels is not None:
            labels = node.labels
            for key, op, values, number in self.labels:
                if not _requirement_matches(labels, key, op, values, number):
                    return False
        if self.fields is not None and node.name:  # upstream checks fields only when the node has a name
            for key, equal, value in self.fields:
                actual = node.name if key == "metadata.name" else ""
                if (actual == value) != equal:
                    return False
        return True


def _parse_label_requirement(key: str, op: str, values: list[str]) -> tuple[str, str, frozenset[str], int] | None:
    """labels.NewRequirement: None on any validation error."""
    if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt") or not is_label_key(key):
        return None
    number = 0
    if op in ("In", "NotIn") and not values:
        return None
    if op in ("Exists", "DoesNotExist") and values:
        return None
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            return None
        parsed = parse_int64(values[0])
        if parsed is None:
            return None
        number = parsed
    if not all(is_label_value(v) for v in values):
        return None
    return key, op, frozenset(values), number


def _requirement_matches(labels: dict[str, str], key: str, op: str, values: frozenset[str], number: int) -> bool:
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if key not in labels:
        return False
    actual = parse_int64(labels[key])
    if actual is None:
        return False
    return actual > number if op == "Gt" else actual < number


def requirement_holds(labels: dict[str, str], key: str, op: str, values: list[str]) -> bool | None:
    """labels.NewRequirement(key, op, values).Matches(labels); None when the requirement is invalid."""
    parsed = _parse_label_requirement(key, op, values)
    if parsed is None:
        return None
    return _requirement_matches(labels, *parsed)


def node_selector_terms_match(terms: list[NodeSelectorTerm], node: Node) -> bool:
    """MatchNodeSelectorTerms: any non-empty term matches (an empty term, or no term, matches nothing)."""
    return any(SelectorTerm(t).matches(node) for t in terms if not _is_empty_term(t))


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class RequiredNodeAffinity:
    """nodeaffinity.GetRequiredNodeAffinity: the pod's nodeSelector AND its required terms (ORed)."""

    __slots__ = ("selector", "terms")

    def __init__(self, pod: Pod) -> None:
        self.selector = tuple(pod.node_selector.items())
        affinity = pod.node_affinity
        self.terms: list[SelectorTerm] | None = None
        if affinity is not None and affinity.required is not None:
            # empty terms select nothing; so does a selector with no terms at all
            self.terms = [SelectorTerm(t) for t in affinity.required if not _is_empty_term(t)]

    def matches(self, node: Node) -> bool:
        labels = node.labels
        for key, value in self.selector:
            if key not in labels or labels[key] != value:
                return False
        if self.terms is None:
            return True
        return any(term.matches(node) for term in self.terms)


class PreferredTermsError(Exception):
    """NewPreferredSchedulingTerms failed: a (non-skipped) preferred term does not parse."""


def compile_preferred_terms(terms: list[PreferredSchedulingTerm]) -> list[tuple[SelectorTerm, int]]:
    """nodeaffinity.NewPreferredSchedulingTerms: weight-0 and empty terms skipped; any parse error fails all."""
    compiled = []
    for term in terms:
        if term.weight == 0 or _is_empty_term(term.preference):
            continue
        parsed = SelectorTerm(term.preference)
        if not parsed.valid:
            raise PreferredTermsError(f"invalid preferred scheduling term: {term.preference}")
        compiled.append((parsed, term.weight))
    return compiled


# -- tolerations ----------------------------------------------------------------------------


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint with comparison operators disabled (Lt/Gt never match)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def tolerations_tolerate(tolerations: list[Toleration] | tuple[Toleration, ...], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def tolerations_key(tolerations: list[Toleration]) -> tuple:
    return tuple((t.key, t.operator, t.value, t.effect) for t in tolerations)


def node_affinity_key(pod: Pod) -> tuple:
    """A hashable form of the pod's nodeSelector and node affinity, to share parsed forms across pods."""
    affinity = pod.node_affinity

    def term_key(term: NodeSelectorTerm) -> tuple:
        return (tuple((r.key, r.operator, tuple(r.values)) for r in term.match_expressions),
                tuple((r.key, r.operator, tuple(r.values)) for r in term.match_fields))

    required = None
    preferred: tuple = ()
    if affinity is not None:
        if affinity.required is not None:
            required = tuple(term_key(t) for t in affinity.required)
        preferred = tuple((p.weight, term_key(p.preference)) for p in affinity.preferred)
    return tuple(sorted(pod.node_selector.items())), required, preferred
