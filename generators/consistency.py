"""Is a scenario document a state a real cluster could be in?

`cluster_problems(doc)` lists every way a scenario's objects contradict each
other or what Kubernetes and Volcano's admission would allow: pods on nodes
that do not exist or whose allocatable they exceed, pods on nodes they could
never have been scheduled to, gang minimums that no pod set can meet, queues
whose quotas do not nest, dangling references. The generators promise an empty
list for everything they emit (the tests check it); a minimiser can use it to
keep shrunk scenarios realistic.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import networkx as nx

from schedcheck.generators.ledger import affinity_matches, selector_matches, tolerates, pod_request
from schedcheck.generators.queues import ROOT
from schedcheck.generators.vocabulary import GROUP_NAME, TASK_SPEC
from schedcheck.generators.quantities import add, amounts


def _objects(doc: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in doc.get("objects", []) if isinstance(o, dict) and o.get("kind") == kind]


def _terminated(pod: Mapping[str, Any]) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


def cluster_problems(doc: Mapping[str, Any]) -> list[str]:
    """Every inconsistency among the scenario's objects, as readable lines; [] when there is none."""
    problems: list[str] = []
    problems += _node_problems(doc)
    problems += _job_problems(doc)
    problems += _queue_problems(doc)
    problems += _priority_problems(doc)
    problems += _quota_problems(doc)
    return problems


def _node_problems(doc: Mapping[str, Any]) -> list[str]:
    problems = []
    nodes = {n["metadata"]["name"]: n for n in _objects(doc, "Node")}
    if len(nodes) != len(_objects(doc, "Node")):
        problems.append("duplicate node names")
    held: dict[str, dict[str, Fraction]] = defaultdict(dict)
    for pod in _objects(doc, "Pod"):
        key = f"{pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}"
        spec = pod.get("spec", {})
        node_name = spec.get("nodeName")
        if pod["metadata"].get("deletionTimestamp") and not node_name:
            problems.append(f"pod {key} is terminating but on no node")
        if not node_name:
            continue
        node = nodes.get(node_name)
        if node is None:
            problems.append(f"pod {key} is on node {node_name}, which does not exist")
            continue
        if _terminated(pod):
            continue
        held[node_name] = add(held[node_name], pod_request(spec))
        labels = node["metadata"].get("labels", {})
        if spec.get("schedulerName", "volcano") == "volcano":
            if not selector_matches(spec.get("nodeSelector"), labels):
                problems.append(f"pod {key} runs on {node_name} against its nodeSelector")
            if not affinity_matches(spec.get("affinity"), labels):
                problems.append(f"pod {key} runs on {node_name} against its required node affinity")
        for taint in node.get("spec", {}).get("taints", []):
            if taint["effect"] == "NoExecute" and not tolerates(spec.get("tolerations", []), taint):
                problems.append(f"pod {key} runs on {node_name} without tolerating its NoExecute taint")
    for name, total in held.items():
        allocatable = amounts(nodes[name]["status"]["allocatable"])
        for dim, value in total.items():
            if value > 0 and value > allocatable.get(dim, Fraction(0)):
                problems.append(f"node {name}: pods hold {value} {dim}, more than its allocatable "
                                f"{allocatable.get(dim, 0)}")
    return problems


def _job_problems(doc: Mapping[str, Any]) -> list[str]:
    problems = []
    groups = {(g["metadata"].get("namespace", "default"), g["metadata"]["name"]): g
              for g in _objects(doc, "PodGroup")}
    members: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for pod in _objects(doc, "Pod"):
        group = pod["metadata"].get("annotations", {}).get(GROUP_NAME)
        if not group:
            continue
        key = (pod["metadata"].get("namespace", "default"), group)
        if key not in groups:
            problems.append(f"pod {key[0]}/{pod['metadata']['name']} names PodGroup {group}, which does not exist")
        members[key].append(pod)
    queues = {q["metadata"]["name"] for q in _objects(doc, "Queue")} | {"default"}
    for key, group in groups.items():
        name = f"{key[0]}/{key[1]}"
        spec = group.get("spec", {})
        pods = members.get(key, [])
        min_member = spec.get("minMember", 0)
        if min_member > len(pods):
            problems.append(f"PodGroup {name}: minMember {min_member} but only {len(pods)} pods")
        roles = Counter(p["metadata"].get("annotations", {}).get(TASK_SPEC, "") for p in pods)
        minimums = spec.get("minTaskMember") or {}
        for role, minimum in minimums.items():
            if minimum > roles.get(role, 0):
                problems.append(f"PodGroup {name}: minTaskMember {role}={minimum} but {roles.get(role, 0)} such pods")
        if sum(minimums.values()) > max(min_member, 0) and minimums:
            problems.append(f"PodGroup {name}: role minimums add up to more than minMember {min_member}")
        if spec.get("queue", "default") not in queues:
            problems.append(f"PodGroup {name}: queue {spec.get('queue')} does not exist")
        if "minResources" in spec:
            total: dict[str, Fraction] = {}
            for pod in pods:
                total = add(total, pod_request(pod.get("spec", {})))
            for dim, value in amounts(spec["minResources"]).items():
                if value > total.get(dim, Fraction(0)):
                    problems.append(f"PodGroup {name}: minResources {dim} {value} exceeds what all its pods request")
        placed = [p for p in pods if p.get("spec", {}).get("nodeName") and not _terminated(p)]
        phase = group.get("status", {}).get("phase")
        if placed and phase not in ("Running", "Unknown"):
            problems.append(f"PodGroup {name}: {len(placed)} pods placed but phase {phase}")
        if not placed and phase in ("Running", "Unknown") and not any(_terminated(p) for p in pods):
            problems.append(f"PodGroup {name}: phase {phase} with no pod placed")
    return problems


def _quota(values: Mapping[str, str] | None) -> dict[str, Fraction]:
    return amounts(values or {})


def _queue_problems(doc: Mapping[str, Any]) -> list[str]:
    problems = []
    queues = {q["metadata"]["name"]: q for q in _objects(doc, "Queue")}
    tree = nx.DiGraph()
    tree.add_node(ROOT)
    for name, queue in queues.items():
        if name == ROOT:
            continue
        parent = queue.get("spec", {}).get("parent") or ROOT
        if parent != ROOT and parent not in queues:
            problems.append(f"queue {name}: parent {parent} does not exist")
        tree.add_edge(parent, name)
    if not nx.is_arborescence(tree):
        problems.append("queue parents do not form a tree under root")
        return problems
    capability: dict[str, dict[str, Fraction]] = {ROOT: {}}
    for name in nx.topological_sort(tree):
        if name == ROOT:
            continue
        spec = queues[name].get("spec", {}) if name in queues else {}
        parent = next(iter(tree.predecessors(name)))
        own = _quota(spec.get("capability"))
        for dim, value in own.items():
            if dim in capability[parent] and value > capability[parent][dim]:
                problems.append(f"queue {name}: capability {dim} above its parent's")
        capability[name] = {**capability[parent], **own}
        guarantee = _quota((spec.get("guarantee") or {}).get("resource"))
        deserved = _quota(spec.get("deserved"))
        for label, quota in (("guarantee", guarantee), ("deserved", deserved)):
            for dim, value in quota.items():
                if dim in capability[name] and value > capability[name][dim]:
                    problems.append(f"queue {name}: {label} {dim} above its capability")
        for dim, value in guarantee.items():
            if dim in deserved and value > deserved[dim]:
                problems.append(f"queue {name}: guarantee {dim} above its deserved")
    for name in tree.nodes:
        if name == ROOT or name not in queues:
            continue
        children = list(tree.successors(name))
        for label, read in (("deserved", lambda s: s.get("deserved")),
                            ("guarantee", lambda s: (s.get("guarantee") or {}).get("resource"))):
            own = _quota(read(queues[name].get("spec", {})))
            total: dict[str, Fraction] = {}
            for child in children:
                total = add(total, _quota(read(queues[child].get("spec", {}))))
            for dim, value in total.items():
                if dim in own and value > own[dim]:
                    problems.append(f"queue {name}: its children's {label} {dim} add up to more than its own")
    return problems


def _priority_problems(doc: Mapping[str, Any]) -> list[str]:
    problems = []
    classes = {c["metadata"]["name"]: c for c in _objects(doc, "PriorityClass")}
    if sum(1 for c in classes.values() if c.get("globalDefault")) > 1:
        problems.append("more than one global default PriorityClass")
    for obj in _objects(doc, "Pod") + _objects(doc, "PodGroup"):
        spec = obj.get("spec", {})
        name = spec.get("priorityClassName")
        if not name:
            continue
        if name not in classes:
            problems.append(f"{obj['kind']} {obj['metadata']['name']}: PriorityClass {name} does not exist")
        elif "priority" in spec and spec["priority"] != classes[name]["value"]:
            problems.append(f"{obj['kind']} {obj['metadata']['name']}: spec.priority differs from its class")
    return problems


def _quota_problems(doc: Mapping[str, Any]) -> list[str]:
    problems = []
    for quota in _objects(doc, "ResourceQuota"):
        status = quota.get("status", {})
        hard, used = _quota(status.get("hard")), _quota(status.get("used"))
        for dim, value in used.items():
            if dim in hard and value > hard[dim]:
                problems.append(f"ResourceQuota {quota['metadata']['namespace']}/{quota['metadata']['name']}: "
                                f"{dim} used above hard")
    return problems


__all__ = ["cluster_problems"]
