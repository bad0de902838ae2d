"""Jobs: a PodGroup and its pods, consistent with each other and with the nodes.

Per-role minimums match the `volcano.sh/task-spec` annotations, minResources (when present) is the
sum of the first minMember pods' requests, and pods that are already placed (Running, Bound,
Releasing, Succeeded, Failed) sit on existing nodes whose allocatable they do not exceed, that match
their node selector and whose NoExecute taints they tolerate. A pod that fits nowhere stays Pending,
so a generated cluster is always a state a real cluster could be in.

Jobs are drawn in two steps: `job_drafts()` draws everything but placement (pure data, so
`st.lists` can drop any job when shrinking), and `place_jobs()` resolves the drafts against a
`NodeLedger`. `filler_job()` and `system_pods()` take what the nodes have left (a full cluster;
kube-system pods of another scheduler).

Shrinking: lists shrink to fewer elements, numbers to their smallest, every `sampled_from` lists its
simplest choice first; optional features are drawn with `rarely()`/`sometimes()`, which shrink to
"absent"."""


from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st
from schedcheck.generators.ledger import NodeLedger, pod_request
from schedcheck.generators.quantities import (
    CPU,
    MEMORY,
    PODS,
    Amounts,
    add,
    choice,
    fits,
    format_resources,
    rarely,
    requests,
    sometimes,
)
from schedcheck.generators.swarm import PLAIN, Swarm
from schedcheck.generators.vocabulary import (
    ACCELERATOR_LABEL,
    BOUND,
    FAILED,
    GROUP_NAME,
    HOSTNAME_LABEL,
    IMAGES,
    SCHEDULING_GATE,
    JOB_KINDS,
    NAMESPACES,
    PENDING,
    PLACED_STATES,
    POD_STATES,
    PREEMPTABLE,
    RELEASING,
    RUNNING,
    SCHEDULER_NAME,
    SLA_WAITING_TIME,
    SUCCEEDED,
    TASK_SPEC,
    TERMINATED_STATES,
    TOLERATIONS,
    ZONE_LABEL,
    timestamp,
)


@dataclass
class RoleDraft:
    name: str  # "" for a job without roles
    requests: dict[str, str]
    pods: list[tuple[str, int]]  # per pod: (state, node preference)
    minimum: int | None = None  # spec.minTaskMember[name]
    init_requests: dict[str, str] | None = None
    sidecar_requests: dict[str, str] | None = None


@dataclass
class JobDraft:
    """Everything about a job except where its placed pods run (see place_jobs)."""

    kind: str
    namespace: str
    queue: str
    created: int  # seconds after BASE_TIME
    roles: list[RoleDraft]
    min_member_extra: int  # minMember = lowest allowed + this, capped at the pod count
    min_resources: bool
    priority_class: str | None
    spec_priority: bool  # write spec.priority too, as a dump from a real cluster has it
    preemptable: str | None
    node_selector: dict[str, str] | None
    tolerations: list[dict[str, str]]
    affinity: dict[str, Any] | None
    phase_choice: int
    sla_waiting_time: str | None = None
    nominate: int | None = None  # a pending pod carries status.nominatedNodeName (node preference)
    host_port: tuple[str, int] | None = None  # (protocol, port) every pod exposes on its node (swarm)
    pod_affinity: dict[str, Any] | None = None  # podAffinity / podAntiAffinity of every pod (swarm)
    spread: list[dict[str, Any]] | None = None  # topologySpreadConstraints of every pod (with pod_affinity)
    image: str | None = None  # the main container's image (ImageLocality)
    gated: int | None = None  # every pending pod whose index is at least this carries a scheduling gate
    overhead: dict[str, str] | None = None  # spec.overhead of every pod (a RuntimeClass's, set at admission)

    @property
    def pod_count(self) -> int:
        return sum(len(r.pods) for r in self.roles)


_STAGES = ("pending", "running", "mixed")


# Extra containers of a role's pods, one draw: mostly just "main" (the shrink target).
_CONTAINER_SETS = st.sampled_from([()] * 16 + [("init",), ("sidecar",), ("init", "sidecar")])
_SIDECAR_REQUESTS = {CPU: "100m", MEMORY: "128Mi"}


@cache
@st.composite
def _role_draft(draw: st.DrawFn, name: str, max_pods: int, stage: str, max_nodes: int, odd: bool,
                gpu: bool | None, role_minimums: bool, large: bool = False, best_effort: bool = False) -> RoleDraft:
    count = draw(st.integers(1, max(1, max_pods)))
    req = draw(requests(max_cores=32, max_gi=64, gpu=gpu, odd=odd) if large else requests(gpu=gpu, odd=odd))
    if best_effort and draw(sometimes(40)):
        req = {}  # BestEffort pods (swarm): they preempt only BestEffort victims, backfill places them
    pods = []
    for _ in range(count):
        if stage == "pending":
            state = PENDING
        elif stage == "running":
            state = RUNNING
        else:
            state = draw(choice(POD_STATES))
        preference = draw(st.integers(0, max(0, max_nodes - 1))) if state != PENDING and max_nodes > 1 else 0
        pods.append((state, preference))
    minimum = draw(st.integers(0, count)) if role_minimums else None
    extra = draw(_CONTAINER_SETS)
    init = draw(requests(odd=odd, gpu=False)) if "init" in extra else None
    sidecar = dict(_SIDECAR_REQUESTS) if "sidecar" in extra else None
    return RoleDraft(name=name, requests=req, pods=pods, minimum=minimum, init_requests=init,
                     sidecar_requests=sidecar)


def _in_zones(*zones: str) -> dict[str, Any]:
    return {"key": ZONE_LABEL, "operator": "In", "values": list(zones)}


_TOL_DEDICATED, _TOL_SPOT, _TOL_GPU, _TOL_MAINTENANCE, _TOL_ALL = TOLERATIONS
_REQUIRED_A = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [_in_zones("zone-a")]}]}}}
_REQUIRED_AB = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [_in_zones("zone-a", "zone-b")]}]}}}
_PREFERRED_B = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 50, "preference": {"matchExpressions": [_in_zones("zone-b")]}}]}}
_PREFERRED_A = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 100, "preference": {"matchExpressions": [_in_zones("zone-a")]}}]}}
# (nodeSelector, tolerations, affinity) of a job's pods, one draw: mostly none (the shrink target).
PLACEMENT_CONSTRAINTS: tuple[tuple[dict[str, str] | None, tuple[dict[str, str], ...], dict[str, Any] | None], ...] = (
    ((None, (), None),) * 24
    + (
        ({ZONE_LABEL: "zone-a"}, (), None),
        ({ZONE_LABEL: "zone-b"}, (), None),
        ({ACCELERATOR_LABEL: "nvidia"}, (_TOL_GPU,), None),
        (None, (_TOL_DEDICATED,), None),
        (None, (_TOL_SPOT,), None),
        (None, (_TOL_GPU,), None),
        (None, (_TOL_MAINTENANCE,), None),
        (None, (_TOL_ALL,), None),
        (None, (_TOL_DEDICATED, _TOL_MAINTENANCE), None),
        (None, (), _REQUIRED_A),
        (None, (), _REQUIRED_AB),
        (None, (), _PREFERRED_B),
        (None, (), _PREFERRED_A),
        ({ZONE_LABEL: "zone-a"}, (_TOL_DEDICATED,), _PREFERRED_A),
    )
)
_PLACEMENT = st.sampled_from(PLACEMENT_CONSTRAINTS)
_PREEMPTABLE = st.sampled_from((None,) * 6 + ("true", "false"))
_MOSTLY_NOT_PREEMPTABLE = st.sampled_from((None, "false", "false", "true"))
_HOST_PORTS = st.sampled_from((("TCP", 8080), ("UDP", 8080), ("TCP", 9090)))
# spec.overhead as RuntimeClass admission writes it: a sandboxed runtime's (kata's documented 250m / 160Mi), a
# gVisor-like small one, a large VM-based one
_OVERHEADS = st.sampled_from(({CPU: "250m", MEMORY: "160Mi"}, {CPU: "100m", MEMORY: "64Mi"},
                              {CPU: "1", MEMORY: "1Gi"}))


def _preferred_pod_term(kind: str, weight: int, key: str) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": kind}}, "topologyKey": key}}


# Preferred pod (anti-)affinity of a job's pods towards the pods of a kind of job (the `app` label every
# generated pod carries): next to the parameter servers, away from its own kind, within a zone.
_POD_AFFINITIES = st.sampled_from((
    {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        _preferred_pod_term("tf", 100, HOSTNAME_LABEL)]}},
    {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        _preferred_pod_term("batch", 50, HOSTNAME_LABEL)]}},
    {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        _preferred_pod_term("mpi", 30, ZONE_LABEL)]},
     "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         _preferred_pod_term("spark", 70, HOSTNAME_LABEL)]}},
    # Required terms (the InterPodAffinity filter): one per host for its own kind, near a kind in its zone.
    {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _preferred_pod_term("tf", 1, HOSTNAME_LABEL)["podAffinityTerm"]]}},
    {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        _preferred_pod_term("batch", 1, ZONE_LABEL)["podAffinityTerm"]]}},
))


# Spread constraints of a job's pods over their own kind (PodTopologySpread: hard ones filter in predicates,
# soft ones score in nodeorder): one per host, even across zones, or a minimum of zones.
_SPREADS = st.sampled_from((
    [{"maxSkew": 1, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": "DoNotSchedule"}],
    [{"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule"}],
    [{"maxSkew": 2, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3}],
    [{"maxSkew": 1, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": "DoNotSchedule",
      "nodeTaintsPolicy": "Honor", "nodeAffinityPolicy": "Ignore"}],
    [{"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "ScheduleAnyway"}],
    [{"maxSkew": 2, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": "ScheduleAnyway"},
     {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "ScheduleAnyway"}],
    [{"maxSkew": 1, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": "DoNotSchedule"},
     {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "ScheduleAnyway", "nodeTaintsPolicy": "Honor"}],
))


@cache
@st.composite
def job_drafts(
    draw: st.DrawFn,
    queues: Sequence[str] = ("default",),
    priority_classes: Sequence[str] = (),
    max_pods: int = 4,
    max_nodes: int = 4,
    odd: bool = True,
    gpu: bool | None = None,
    sla: bool = False,
    swarm: Swarm = PLAIN,
) -> JobDraft:
    """A job without placement: kind and roles, pod templates and states, gang minimums; `swarm` boosts
    the rare features it switches on."""
    kind = draw(choice(tuple(JOB_KINDS)))
    role_names = JOB_KINDS[kind] or ("",)
    stage = draw(choice(_STAGES))
    # Most pods are small; a large job's pods take a good part of a node (up to 32 cores, 64Gi),
    # so that running jobs fill nodes and pending ones have to wait, preempt or reclaim.
    large = draw(rarely(25))
    role_minimums = bool(JOB_KINDS[kind]) and draw(sometimes(40))
    budget = max(len(role_names), max_pods)
    roles = []
    for i, role in enumerate(role_names):
        left = budget - sum(len(r.pods) for r in roles) - (len(role_names) - i - 1)
        # The leading role (ps, master, driver) has one or two pods; the last one the rest.
        share = max(1, left if i == len(role_names) - 1 else min(2, left))
        roles.append(draw(_role_draft(role, share, stage, max_nodes, odd, gpu, role_minimums, large,
                                      swarm.best_effort)))
    selector, tolerations, affinity = draw(_PLACEMENT)
    return JobDraft(
        kind=kind,
        namespace=draw(choice(NAMESPACES)),
        queue=draw(choice(tuple(queues))) if len(queues) > 1 else (queues[0] if queues else "default"),
        created=draw(st.integers(0, 3600)),
        roles=roles,
        min_member_extra=draw(st.integers(0, budget)),
        min_resources=draw(sometimes(80 if swarm.min_resources else 30)),
        # None first (the shrink target), but a job usually names one of the classes there are.
        priority_class=draw(choice((None, *priority_classes, *priority_classes)))
        if priority_classes else None,
        spec_priority=draw(rarely(20)) if priority_classes else False,
        preemptable=draw(_MOSTLY_NOT_PREEMPTABLE if swarm.not_preemptable else _PREEMPTABLE),
        node_selector=dict(selector) if selector else None,
        tolerations=[dict(t) for t in tolerations],
        affinity=copy.deepcopy(affinity),
        phase_choice=draw(st.integers(0, 1)),
        sla_waiting_time=draw(choice(("10m", "1h", "30s"))) if sla and draw(sometimes(40)) else None,
        nominate=draw(st.integers(0, max(0, max_nodes - 1))) if draw(rarely(8)) else None,
        host_port=draw(_HOST_PORTS) if swarm.host_ports and draw(sometimes(50)) else None,
        pod_affinity=draw(_POD_AFFINITIES) if swarm.pod_affinity and draw(sometimes(60)) else None,
        spread=draw(_SPREADS) if swarm.pod_affinity and draw(sometimes(30)) else None,
        image=draw(choice((None, *(name for name, _, _ in IMAGES)))),
        gated=draw(st.integers(0, 2)) if draw(rarely(12)) else None,
        overhead=draw(_OVERHEADS) if draw(rarely(8)) else None,  # drawn last: earlier draws keep their place
    )


def _container(name: str, req: Mapping[str, str]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    if req:
        container["resources"] = {"requests": dict(req)}
    return container


def _pod_spec(draft: JobDraft, role: RoleDraft) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME, "containers": [_container("main", role.requests)]}
    if draft.image:
        spec["containers"][0]["image"] = draft.image
    if draft.host_port is not None:
        protocol, port = draft.host_port
        spec["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port, "protocol": protocol}]
    if role.sidecar_requests:
        spec["containers"].append(_container("sidecar", role.sidecar_requests))
    if role.init_requests is not None:
        spec["initContainers"] = [_container("init", role.init_requests)]
    if draft.overhead:
        spec["overhead"] = dict(draft.overhead)
    if draft.priority_class:
        spec["priorityClassName"] = draft.priority_class
    if draft.node_selector:
        spec["nodeSelector"] = dict(draft.node_selector)
    if draft.tolerations:
        spec["tolerations"] = [dict(t) for t in draft.tolerations]
    if draft.affinity or draft.pod_affinity:
        spec["affinity"] = {**(draft.affinity or {}), **(draft.pod_affinity or {})}
    if draft.spread:
        spec["topologySpreadConstraints"] = [{**c, "labelSelector": {"matchLabels": {"app": draft.kind}}}
                                             for c in draft.spread]
    return spec


def _pod_doc(draft: JobDraft, job_name: str, pod_name: str, role: RoleDraft, spec: dict[str, Any],
             state: str, node: str | None, class_values: Mapping[str, int], nominated: str | None) -> dict[str, Any]:
    annotations = {GROUP_NAME: job_name}
    if role.name:
        annotations[TASK_SPEC] = role.name
    if draft.preemptable is not None:
        annotations[PREEMPTABLE] = draft.preemptable
    metadata: dict[str, Any] = {
        "name": pod_name,
        "namespace": draft.namespace,
        "labels": {"app": draft.kind},
        "annotations": annotations,
        "creationTimestamp": timestamp(draft.created + 1),
    }
    spec = copy.deepcopy(spec)  # every pod its own objects: no shared lists, no YAML aliases
    if draft.spec_priority and draft.priority_class in class_values:
        spec["priority"] = class_values[draft.priority_class]
    status: dict[str, Any]
    if state == PENDING or node is None:
        status = {"phase": "Pending"}
        if nominated:
            status["nominatedNodeName"] = nominated
        # a gate only on an unbound pod (the API server refuses one beside spec.nodeName)
        if draft.gated is not None and int(pod_name.rsplit("-", 1)[-1]) >= draft.gated:
            spec["schedulingGates"] = [{"name": SCHEDULING_GATE}]
    else:
        spec["nodeName"] = node
        phase = {RUNNING: "Running", BOUND: "Pending", RELEASING: "Running"}.get(state, state)
        status = {"phase": phase}
        if phase != "Pending":
            status["startTime"] = timestamp(draft.created + 2)
        if state == RELEASING:
            metadata["deletionTimestamp"] = timestamp(draft.created + 30)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def place_job(draft: JobDraft, index: int, ledger: NodeLedger,
              class_values: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The PodGroup and pods of one drafted job, its placed pods put on nodes of the ledger.

    A pod is placed on the candidate node its preference picks (modulo the number of
    candidates); when no node can hold it, it stays Pending. Terminated pods (Succeeded,
    Failed) hold nothing, so any node will do.
    """
    class_values = class_values or {}
    name = f"{draft.kind}-{index}"
    pods: list[dict[str, Any]] = []
    placed = running = succeeded = failed = 0
    ordered_requests: list[Amounts] = []
    for role in draft.roles:
        spec = _pod_spec(draft, role)
        request = pod_request(spec)
        for k, (state, preference) in enumerate(role.pods):
            pod_name = f"{name}-{role.name}-{k}" if role.name else f"{name}-{k}"
            node = None
            if state in PLACED_STATES:
                candidates = ledger.candidates(request, spec)
                if candidates:
                    node = candidates[preference % len(candidates)]
                    ledger.place(node, request)
                    placed += 1
                    running += state == RUNNING
                else:
                    state = PENDING
            elif state in TERMINATED_STATES and ledger.names:
                node = ledger.names[preference % len(ledger.names)]
                succeeded += state == SUCCEEDED
                failed += state == FAILED
            elif state in TERMINATED_STATES:
                state = PENDING
            nominated = None
            if state == PENDING and draft.nominate is not None and ledger.names and k == 0:
                nominated = ledger.names[draft.nominate % len(ledger.names)]
            pods.append(_pod_doc(draft, name, pod_name, role, spec, state, node, class_values, nominated))
            ordered_requests.append(request)

    total = len(pods)
    minimums = {r.name: r.minimum for r in draft.roles if r.name and r.minimum is not None}
    lowest = max(1, sum(minimums.values()))
    min_member = min(total, lowest + draft.min_member_extra)
    spec: dict[str, Any] = {"minMember": min_member, "queue": draft.queue}
    if minimums:
        spec["minTaskMember"] = minimums
    if draft.min_resources:
        # What the job controller writes: the requests of the first minMember tasks.
        summed: Amounts = {}
        for request in ordered_requests[:min_member]:
            summed = add(summed, {k: v for k, v in request.items() if k != PODS})
        resources = format_resources({k: v for k, v in summed.items() if v > 0})
        if resources:
            spec["minResources"] = resources
    if draft.priority_class:
        spec["priorityClassName"] = draft.priority_class
    if placed:
        phase = "Running" if placed >= min_member or draft.phase_choice == 0 else "Unknown"
    else:
        phase = ("Pending", "Inqueue")[draft.phase_choice]
    status: dict[str, Any] = {"phase": phase}
    for key, count in (("running", running), ("succeeded", succeeded), ("failed", failed)):
        if count:
            status[key] = count
    metadata: dict[str, Any] = {"name": name, "namespace": draft.namespace,
                                "creationTimestamp": timestamp(draft.created)}
    if draft.sla_waiting_time:
        metadata["annotations"] = {SLA_WAITING_TIME: draft.sla_waiting_time}
    pod_group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    }
    return [pod_group, *pods]


def place_jobs(drafts: Sequence[JobDraft], ledger: NodeLedger,
               class_values: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Every drafted job in order, sharing one ledger (earlier jobs' pods are placed first)."""
    out: list[dict[str, Any]] = []
    for index, draft in enumerate(drafts):
        out.extend(place_job(draft, index, ledger, class_values))
    return out


def _class_values(classes: Sequence[Mapping[str, Any]] | Mapping[str, int]) -> dict[str, int]:
    if isinstance(classes, Mapping):
        return dict(classes)
    return {c["metadata"]["name"]: c["value"] for c in classes}


def jobs(
    node_docs: Sequence[Mapping[str, Any]] = (),
    queues: Sequence[str] = ("default",),
    priority_classes: Sequence[Mapping[str, Any]] | Mapping[str, int] = (),
    max_pods: int = 4,
    odd: bool = True,
    gpu: bool | None = None,
    sla: bool = False,
    index: int = 0,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """One job: [PodGroup, pod, pod, ...], its placed pods on `node_docs` within their allocatable."""
    values = _class_values(priority_classes)
    drafts = job_drafts(queues=tuple(queues), priority_classes=tuple(values), max_pods=max_pods,
                        max_nodes=max(1, len(node_docs)), odd=odd, gpu=gpu, sla=sla)
    return drafts.map(lambda d: place_job(d, index, NodeLedger(node_docs), values))


def workloads(
    node_docs: Sequence[Mapping[str, Any]] = (),
    queues: Sequence[str] = ("default",),
    priority_classes: Sequence[Mapping[str, Any]] | Mapping[str, int] = (),
    min_jobs: int = 0,
    max_jobs: int = 5,
    max_pods: int = 4,
    odd: bool = True,
    gpu: bool | None = None,
    sla: bool = False,
    ledger: NodeLedger | None = None,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Several jobs (PodGroups and pods, flattened), placed one after the other on shared nodes.

    `ledger`: the node ledger to place on (e.g. one already holding system pods); it is
    copied for every example, so the strategy can be drawn many times.
    """
    values = _class_values(priority_classes)
    drafts = st.lists(
        job_drafts(queues=tuple(queues), priority_classes=tuple(values), max_pods=max_pods,
                   max_nodes=max(1, len(node_docs)), odd=odd, gpu=gpu, sla=sla),
        min_size=min_jobs, max_size=max_jobs,
    )
    return drafts.map(
        lambda ds: place_jobs(ds, copy.deepcopy(ledger) if ledger is not None else NodeLedger(node_docs), values)
    )


# ---------------------------------------------------------------- other objects


def filler_job(ledger: NodeLedger, name: str = "fill", namespace: str = "default", queue: str = "default",
               priority_class: str | None = None, max_pods: int | None = None,
               created: int = -1800, split: int = 1, nodes: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """A running elastic job (minMember 1) with `split` pods per node (fewer where max_pods or the node's
    whole cores and Gi allow less) sharing what is left of it, placed on the ledger: the full cluster most
    real clusters are, so that pending jobs must wait, preempt or reclaim. Every pod beyond the first is a
    victim gang lets go; several on a node make the victims' choice and their number matter.
    `nodes` limits it to those nodes (every node by default). [] when no node has a core and a Gi left.
    """
    pods: list[dict[str, Any]] = []
    open_nodes = [n for n in ledger.names if (nodes is None or n in nodes)
                  and not any(t["effect"] == "NoExecute" for t in ledger.taints[n])]
    if max_pods is not None and open_nodes:
        split = max(1, min(split, max_pods // len(open_nodes)))
    for node in open_nodes:
        remaining = ledger.remaining[node]
        cores = int(remaining.get(CPU, 0))
        gib = int(remaining.get(MEMORY, 0) / 2**30)
        if cores < 1 or gib < 1 or remaining.get(PODS, 0) < 1:
            continue
        count = min(split, cores, gib, int(remaining.get(PODS, 0)))
        for share in range(count):
            if max_pods is not None and len(pods) >= max_pods:
                break
            pod_cores = cores // count + (cores % count if share == count - 1 else 0)
            pod_gib = gib // count + (gib % count if share == count - 1 else 0)
            pods.append(_filler_pod(ledger, node, name, len(pods), namespace, priority_class, created,
                                    pod_cores, pod_gib))
    if not pods:
        return []
    group_spec: dict[str, Any] = {"minMember": 1, "queue": queue}
    if priority_class:
        group_spec["priorityClassName"] = priority_class
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": timestamp(created)},
        "spec": group_spec,
        "status": {"phase": "Running", "running": len(pods)},
    }
    return [group, *pods]


def _filler_pod(ledger: NodeLedger, node: str, name: str, index: int, namespace: str,
                priority_class: str | None, created: int, cores: int, gib: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME,
                            "containers": [_container("main", {CPU: str(cores), MEMORY: f"{gib}Gi"})]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    ledger.place(node, pod_request(spec))
    spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-{index}", "namespace": namespace, "annotations": {GROUP_NAME: name},
                     "creationTimestamp": timestamp(created + 1)},
        "spec": spec,
        "status": {"phase": "Running", "startTime": timestamp(created + 2)},
    }


def system_pods(node_docs: Sequence[Mapping[str, Any]], ledger: NodeLedger,
                which: Sequence[int]) -> list[dict[str, Any]]:
    """Pods of the default scheduler (kube-proxy style) running on the chosen nodes, if they fit.

    They belong to no PodGroup and to another scheduler, but hold node resources, as on a
    real cluster.
    """
    out = []
    spec_template = {
        "schedulerName": "default-scheduler",
        "containers": [_container("kube-proxy", {CPU: "100m", MEMORY: "128Mi"})],
        "tolerations": [{"operator": "Exists"}],
        "priority": 2000001000,  # system-node-critical, resolved by the API server
    }
    for i in sorted(set(which)):
        if not node_docs:
            break
        node = node_docs[i % len(node_docs)]["metadata"]["name"]
        request = pod_request(spec_template)
        if not fits(request, ledger.remaining[node]):
            continue
        ledger.place(node, request)
        spec = {**spec_template, "nodeName": node}
        out.append({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"kube-proxy-{node}", "namespace": "kube-system",
                         "creationTimestamp": timestamp(-3600)},
            "spec": spec,
            "status": {"phase": "Running", "startTime": timestamp(-3590)},
        })
    return out


