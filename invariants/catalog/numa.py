"""NUMA placement: the CPU ids the numa-aware plugin hands out (pkg/scheduler/plugins/numaaware/).

The plugin keeps, per pod it placed in the session, the CPU ids chosen on that node; they reach the
cache at session close and kubelet's CPU manager is expected to honour them. The node's free ids at
session open are restated here from the Numatopology object and the cache's records of earlier sessions
(every record's ids taken out while any recorded pod is not yet in the object's podAllocations), not
read off the plugin.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.registry import ACTION, CLOSE, collect_at_open, invariant
from schedcheck.invariants.violation import Violation

PLUGIN = "numa-aware"
FREE_AT_OPEN = "numa_free_at_open"
SINGLE = "single-numa-node"


def _listed(topo: Any, meta: Any) -> bool:
    return any(p.uid == meta.uid or (p.name == meta.name and p.namespace == meta.namespace)
               for p in topo.pod_allocations)


@collect_at_open(FREE_AT_OPEN, ("numa.cpu-sets-disjoint",))
def _free_at_open(ssn: Any) -> dict[str, frozenset[int]]:
    """node -> the cpu ids free as the session opened: the object's allocatable, less every recorded pod's
    ids when some recorded pod is not listed yet."""
    out: dict[str, frozenset[int]] = {}
    records = getattr(ssn.cache, "unassigned_numa_pods", {})
    for topo in ssn.cache.world.numatopologies:
        if topo.name not in ssn.nodes or "cpu" not in topo.numa_res:
            continue
        free = topo.numa_res["cpu"].allocatable
        on_node = records.get(topo.name, {})
        if any(not _listed(topo, meta) for meta in on_node):
            for sets in on_node.values():
                free = free - sets.get("cpu", frozenset())
        out[topo.name] = free
    return out


def _placed(ctx: CheckContext) -> dict[str, list[tuple[str, frozenset[int]]]]:
    """node -> [(pod key, cpu ids)] for every pod the plugin holds as placed in this session."""
    plugin = ctx.ssn.plugins.get(PLUGIN)
    if plugin is None:
        return {}
    keys = {task.uid: task.key for job in ctx.ssn.jobs.values() for task in job.tasks.values()}
    out: dict[str, list[tuple[str, frozenset[int]]]] = {}
    for uid, node in sorted(plugin.task_bind_node.items()):
        sets = plugin.assign_res.get(uid, {}).get(node, {})
        out.setdefault(node, []).append((keys.get(uid, uid), sets.get("cpu", frozenset())))
    return out


def _ids(cpus: frozenset[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus)) or "none"


@invariant("numa.cpu-sets-disjoint", "the CPU ids numa-aware assigns to the pods it places on one node never "
           "overlap and lie within the node's CPU ids free as the session opened (the Numatopology's allocatable "
           "less the cache's pre-occupied ids)", "node",
           "pkg/scheduler/plugins/numaaware/numaaware.go (predicate, allocate/deallocate handlers); "
           "api/numa_info.go; api/node_info.go RefreshNumaSchedulerInfoByCrd", (ACTION, CLOSE), requires=(PLUGIN,))
def cpu_sets_disjoint(ctx: CheckContext) -> Iterator[Violation]:
    free = ctx.session_state.get(FREE_AT_OPEN) or {}
    for node, pods in sorted(_placed(ctx).items()):
        owner: dict[int, str] = {}
        for key, cpus in pods:
            outside = cpus - free.get(node, frozenset())
            if outside:
                yield Violation("", f"pod {key} was given CPU {_ids(outside)} on node {node}, which was not free "
                                    f"when the session opened (free: {_ids(free.get(node, frozenset()))})",
                                [f"node {node}", f"task {key}"], _ids(free.get(node, frozenset())), _ids(cpus))
            for cpu in sorted(cpus):
                if cpu in owner:
                    yield Violation("", f"CPU {cpu} of node {node} was given to both {owner[cpu]} and {key}",
                                    [f"node {node}", f"task {owner[cpu]}", f"task {key}"], "one pod", "two pods")
                    break
                owner[cpu] = key


@invariant("numa.single-numa-node-aligned", "on a node whose topology-manager policy is single-numa-node, the CPU "
           "ids numa-aware assigns a placed pod sit on one NUMA node per container (a single-container pod's on "
           "one NUMA node)", "node",
           "pkg/scheduler/plugins/numaaware/policy/policy_single_numa_node.go; provider/cpumanager/cpu_mng.go "
           "Allocate", (ACTION, CLOSE), requires=(PLUGIN,))
def single_numa_node_aligned(ctx: CheckContext) -> Iterator[Violation]:
    objects = {t.name: t for t in ctx.ssn.cache.world.numatopologies}
    containers = {task.key: len(task.pod.containers) for job in ctx.ssn.jobs.values() for task in job.tasks.values()}
    for node, pods in sorted(_placed(ctx).items()):
        topo = objects.get(node)
        if topo is None or topo.policies.get("TopologyManagerPolicy") != SINGLE:
            continue
        for key, cpus in pods:
            spanned = sorted({topo.cpu_detail[c].numa if c in topo.cpu_detail else 0 for c in cpus})
            allowed = max(1, containers.get(key, 1))
            if len(spanned) > allowed:
                yield Violation("", f"pod {key} ({allowed} container(s)) was given CPU {_ids(cpus)} on node {node} "
                                    f"(single-numa-node), spanning NUMA nodes {spanned}",
                                [f"node {node}", f"task {key}"], f"at most {allowed} NUMA node(s)", spanned)
