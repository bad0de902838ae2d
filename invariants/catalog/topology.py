"""Network topology: hard-mode jobs stay inside one allowed hypernode; the session's topology is the
objects' (seed 002 session step 4; upstream hyper_node_info.go, network-topology-aware, allocate.go).

The hypernode tree is restated here from the HyperNode objects with networkx, independently of the
reference's own build, so a wrong resolution of members shows up as a disagreement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import networkx as nx

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.placement import label_selector_matches
from schedcheck.invariants.registry import ACTION, CLOSE, QUALITY, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.types import TaskStatus, allocated_status
from schedcheck.reference.util.qos import pod_qos

CLUSTER_TOP = "<cluster-top-hypernode>"


def topology_tree(ctx: CheckContext) -> tuple[dict[str, set[str]], dict[str, int], dict[str, int]] | None:
    """(hypernode -> the session's nodes beneath it, hypernode -> tier, tier name -> tier), the cluster top
    included; None when the objects do not form a forest (upstream then schedules no topology job)."""
    world = ctx.ssn.cache.world
    session_nodes = {node.name for node in ctx.ssn.node_list}
    graph = nx.DiGraph()
    tiers: dict[str, int] = {}
    names: dict[str, int] = {}
    for hn in world.hyper_nodes:
        graph.add_node(hn.name)
        tiers[hn.name] = hn.tier
        if hn.tier_name:
            names[hn.tier_name] = hn.tier
    direct: dict[str, set[str]] = {hn.name: set() for hn in world.hyper_nodes}
    for hn in world.hyper_nodes:
        for member in hn.members:
            if member.type == "HyperNode":
                graph.add_edge(hn.name, member.exact)
            elif member.exact:
                direct[hn.name].add(member.exact)
            elif member.regex:
                direct[hn.name] |= {n.name for n in world.nodes if re.search(member.regex, n.name)}
            elif member.labels is not None and (member.labels.match_labels or member.labels.match_expressions):
                direct[hn.name] |= {n.name for n in world.nodes if label_selector_matches(member.labels, n.labels)}
    if not nx.is_directed_acyclic_graph(graph) or any(graph.in_degree(n) > 1 for n in graph):
        return None
    leaves = {}
    for name in direct:
        below = {name} | nx.descendants(graph, name)
        leaves[name] = set().union(*(direct.get(b, set()) for b in below)) & session_nodes
    top_tier = max([1] + [tier + 1 for tier in tiers.values()])
    leaves[CLUSTER_TOP], tiers[CLUSTER_TOP] = session_nodes, top_tier
    return leaves, tiers, names




def highest_tier(ctx: CheckContext, job, names: dict[str, int], top_tier: int) -> int | None:
    """The PodGroup's highest allowed tier for a hard-mode job (None: not hard, or a tier name unknown)."""
    nt = job.pod_group.network_topology if job.pod_group is not None else None
    if nt is None or nt.mode != "hard":
        return None
    if nt.highest_tier_allowed is not None:
        return nt.highest_tier_allowed
    return names.get(nt.highest_tier_name)


@invariant("topology.hard-within-hypernode", "allocate places a hard-mode job's tasks only where, with the tasks the "
           "job already holds, they lie inside one hypernode at or below its highest allowed tier (the virtual "
           "cluster top, one tier above the highest, counts)", "job",
           "seed 002 (network topology); network_topology_aware.go (hyperNodeGradientFn: tier <= "
           "highestTierAllowed); allocate.go (allocateForJob, allocateForSubJob)", (ACTION,),
           requires=("network-topology-aware",))
def hard_within_hypernode(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action != "allocate" or not ssn.cache.world.hyper_nodes:
        return
    placed: dict[str, set[str]] = {}
    for op in ssn.operations:
        if op.action == "allocate" and op.op in ("allocate", "pipeline"):
            placed.setdefault(op.job, set()).add(op.task_uid)
    if not placed:
        return
    tree = topology_tree(ctx)
    if tree is None:
        return
    leaves, tiers, names = tree
    for uid in sorted(placed):
        job = ssn.jobs.get(uid)
        if job is None:
            continue
        highest = highest_tier(ctx, job, names, tiers[CLUSTER_TOP])
        if highest is None:
            continue
        # a task on a node the session does not have (deleted, or a unit test's stale name) is in no
        # hypernode, and upstream's placement never sees it
        nodes = {t.node_name for t in placed_tasks(job.tasks.values()) if t.node_name in ssn.nodes}
        fits = [name for name, members in leaves.items() if tiers[name] <= highest and nodes <= members]
        if not fits:
            yield Violation("", f"allocate placed tasks of hard-mode job {uid} so that its tasks sit on "
                                f"{', '.join(sorted(nodes))}, which no hypernode at or below tier {highest} holds "
                                f"together", [f"job {uid}"] + [f"node {n}" for n in sorted(nodes)],
                            f"one hypernode of tier <= {highest}", "none")


def sub_groups(job) -> dict[tuple[str, tuple[str, ...]], list]:
    """The job's tasks by (policy, match values), restated from the PodGroup's subGroupPolicy and the pods'
    labels (getSubJobMatchValues); tasks of no policy are left out."""
    groups: dict[tuple[str, tuple[str, ...]], list] = {}
    policies = job.pod_group.sub_group_policy if job.pod_group is not None else []
    for task in job.tasks.values():
        labels = task.pod.labels
        for policy in policies:
            if policy.label_selector is not None and not label_selector_matches(policy.label_selector, labels):
                continue
            values = tuple(labels.get(k, "") for k in policy.match_label_keys)
            if any(not v for v in values):
                continue
            groups.setdefault((policy.name, values), []).append(task)
            break
    return groups


def placed_tasks(tasks) -> list:
    return [t for t in tasks if t.node_name and (allocated_status(t.status) or t.status == TaskStatus.Pipelined)]


@invariant("topology.sub-group-within-hypernode", "allocate places a subgroup whose policy has a hard network "
           "topology only where, with the subgroup's other placed tasks, its tasks lie inside one hypernode at or "
           "below the policy's highest allowed tier", "job",
           "network_topology_aware.go (HyperNodeGradientForSubJobFn); allocate.go (allocateForSubJob); "
           "sub_job_info.go", (ACTION,), requires=("network-topology-aware",))
def sub_group_within_hypernode(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action != "allocate" or not ssn.cache.world.hyper_nodes:
        return
    placed_ops = [op for op in ssn.operations if op.action == "allocate" and op.op in ("allocate", "pipeline")]
    placed_jobs = {op.job for op in placed_ops}
    new = {op.task_uid for op in placed_ops}
    tree = topology_tree(ctx) if placed_jobs else None
    if tree is None:
        return
    leaves, tiers, names = tree
    for uid in sorted(placed_jobs):
        job = ssn.jobs.get(uid)
        if job is None or job.pod_group is None or not job.pod_group.sub_group_policy:
            continue
        policies = {p.name: p for p in job.pod_group.sub_group_policy}
        for (name, values), tasks in sorted(sub_groups(job).items()):
            nt = policies[name].network_topology
            if nt is None or nt.mode != "hard" or not any(t.uid in new for t in tasks):
                continue  # only a subgroup allocate placed tasks of (backfill, say, knows no topology)
            highest = nt.highest_tier_allowed if nt.highest_tier_allowed is not None else names.get(nt.highest_tier_name)
            nodes = {t.node_name for t in placed_tasks(tasks) if t.node_name in ssn.nodes}  # as hard-within
            if highest is None or not nodes:
                continue
            if not any(tiers[h] <= highest and nodes <= members for h, members in leaves.items()):
                yield Violation("", f"allocate placed subgroup {name}/{'-'.join(values)} of job {uid} on "
                                    f"{', '.join(sorted(nodes))}, which no hypernode at or below tier {highest} "
                                    f"holds together", [f"job {uid}"] + [f"node {n}" for n in sorted(nodes)],
                                f"one hypernode of tier <= {highest}", "none")


@invariant("gang.sub-groups-ready", "after a session, a job with subgroup policies that got binds has, for every "
           "policy, at least minSubGroups subgroups each with subGroupSize tasks placed (a pending BestEffort task "
           "counts)", "gang", "gang.go (JobReady: CheckSubJobReady); sub_job_info.go (IsReady); allocate.go "
           "(organizeJobWorksheet: required subgroups first)", (CLOSE,), requires=("gang",))
def sub_groups_ready(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    start = ctx.session_state.get("binds_at_open", 0)
    job_of = {op.task: op.job for op in ssn.operations if op.op == "bind"}
    bound = {job_of.get(record.task, "") for record in ssn.cache.log.binds[start:]} - {""}
    for uid in sorted(bound):
        job = ssn.jobs.get(uid)
        if job is None or job.pod_group is None or not job.pod_group.sub_group_policy:
            continue
        groups = sub_groups(job)
        for policy in job.pod_group.sub_group_policy:
            size = policy.sub_group_size if policy.sub_group_size is not None else 1
            ready = sum(1 for (name, _), tasks in groups.items() if name == policy.name and len(
                [t for t in tasks if t.status in _READY or (t.status in (TaskStatus.Pending, TaskStatus.Pipelined)
                                                            and t.best_effort)]) >= size)
            if ready < (policy.min_sub_groups or 0):
                yield Violation("", f"job {uid} got binds this session with {ready} ready subgroup(s) of policy "
                                    f"{policy.name}, below its minSubGroups {policy.min_sub_groups}",
                                [f"job {uid}", f"subGroupPolicy {policy.name}"],
                                f">= {policy.min_sub_groups}", ready)


_READY = (TaskStatus.Bound, TaskStatus.Binding, TaskStatus.Running, TaskStatus.Allocated, TaskStatus.Succeeded)


@invariant("topology.session-matches-objects", "the session's hypernodes hold exactly the nodes their members "
           "name (through lower hypernodes, among the session's nodes), and the cluster top sits one tier above "
           "the highest", "session", "seed 002 (session step 4: HyperNode tiers, the virtual cluster top); "
           "hyper_node_info.go (BuildHyperNodeCache); session.go (addClusterTopHyperNode)", (ACTION,))
def session_matches_objects(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if not ssn.cache.world.hyper_nodes or not ssn.hyper_nodes_ready or ctx.action != ssn.conf.actions[0]:
        return
    tree = topology_tree(ctx)
    if tree is None:
        return
    leaves, tiers, _ = tree
    for name in sorted(leaves):
        have = ssn.real_nodes_set.get(name)
        if have != leaves[name]:
            yield Violation("", f"hypernode {name} holds {sorted(have) if have is not None else 'nothing'} in the "
                                f"session, but its members name {sorted(leaves[name])}", [f"hypernode {name}"],
                            sorted(leaves[name]), sorted(have) if have is not None else None)
    top = ssn.hyper_nodes.get(CLUSTER_TOP)
    if top is None or top.tier != tiers[CLUSTER_TOP]:
        yield Violation("", f"the cluster-top hypernode has tier {top.tier if top else None}, expected "
                            f"{tiers[CLUSTER_TOP]} (one above the highest)", ["hypernode " + CLUSTER_TOP],
                        tiers[CLUSTER_TOP], top.tier if top else None)


ALLOCATED_HYPER_NODE = "volcano.sh/job-allocated-hypernode"
NODE_FILTER_PLUGINS = {"predicates"}  # whose filters a plain pod passes on a plainly open node (restated below)
# Filter plugins that let a task through on every node when it asks for nothing they manage: numa-aware
# filters Guaranteed pods only (numaaware.go predicate), deviceshare only pods that request a device.
PLAIN_POD_FILTERS = {
    "numa-aware": lambda task: pod_qos(task.pod) != "Guaranteed",
    "deviceshare": lambda task: set(task.resreq.resource_names()) <= {"cpu", "memory", "pods"},
}


@invariant("topology.lowest-tier-needed", "allocate places a fresh hard-mode job in no higher tier than needed: its "
           "tasks span no hypernode above the tier of one holding a plainly open node with room for all of them",
           "job", "network_topology_aware.go (hyperNodeGradientFn: eligible hypernodes grouped by tier, lowest "
           "first); allocate.go (allocateForJob: the first tier with any solution wins); seed 002 (network "
           "topology)", (ACTION,), requires=("network-topology-aware",), severity=QUALITY)
def lowest_tier_needed(ctx: CheckContext) -> Iterator[Violation]:
    # Judged only where the answer cannot depend on allocate's greedy choices: the job was placed in one go
    # this action (no more tasks than its minAvailable, all allocated, none held before, no allocated
    # hypernode recorded), its pods are plain, and one plainly open node fits all of them. Allocate only
    # consumes Idle, so Idle at the end plus the job's own share fitted when the job's turn came; every
    # task of a dry run in the lower hypernode then finds a node, so that tier had a solution.
    ssn = ctx.ssn
    if ctx.action != "allocate" or not ssn.cache.world.hyper_nodes \
            or ssn.cache.server_options.sharding_mode not in ("", "none"):
        return
    filters = {name for tier in ssn.registered("predicate") for name, _ in tier} - NODE_FILTER_PLUGINS
    if filters - PLAIN_POD_FILTERS.keys():
        return
    placed: dict[str, list] = {}
    earlier: set[str] = set()
    for op in ssn.operations:
        if op.action == "allocate" and op.op == "allocate":
            placed.setdefault(op.job, []).append(op.task_uid)
        elif op.op in ("allocate", "pipeline"):
            earlier.add(op.job)
    if not placed:
        return
    tree = topology_tree(ctx)
    if tree is None:
        return
    leaves, tiers, names = tree
    for uid in sorted(placed):
        job = ssn.jobs.get(uid)
        if job is None or uid in earlier or job.pod_group is None or job.pod_group.sub_group_policy:
            continue
        highest = highest_tier(ctx, job, names, tiers[CLUSTER_TOP])
        held = [t for t in job.tasks.values() if t.node_name and (allocated_status(t.status)
                                                                 or t.status == TaskStatus.Pipelined)]
        if highest is None or ALLOCATED_HYPER_NODE in (job.pod_group.annotations or {}):
            continue
        if {t.uid for t in held} != set(placed[uid]) or len(held) > job.min_available \
                or any(not allocated_status(t.status) or not _plain_pod(t) for t in held) \
                or not all(PLAIN_POD_FILTERS[name](t) for name in filters for t in held):
            continue
        nodes = {t.node_name for t in held}
        spanning = [tiers[name] for name, members in leaves.items() if nodes <= members]
        if not spanning:
            continue  # outside every hypernode: topology.hard-within-hypernode's business
        landed = min(spanning)
        need = Resource()
        for task in held:
            need.add(_larger(task.init_resreq, task.resreq))
        minimum = job.get_min_resources()
        for name in sorted(leaves, key=lambda n: (tiers[n], n)):
            if tiers[name] >= landed or tiers[name] > highest or name not in ssn.hyper_nodes:
                continue
            node = _node_with_room(ssn, job, leaves[name], held, need, minimum)
            if node is not None:
                yield Violation("", f"allocate placed hard-mode job {uid} across {', '.join(sorted(nodes))}, which "
                                    f"only a tier-{landed} hypernode holds, while tier-{tiers[name]} hypernode {name} "
                                    f"had node {node} with room for all {len(held)} of its tasks <{need}>",
                                [f"job {uid}", f"hypernode {name}", f"node {node}"],
                                f"the job within a hypernode of tier {tiers[name]}", f"tier {landed}")
                break


def _plain_pod(task) -> bool:
    pod = task.pod
    return (not task.best_effort and not pod.node_selector and pod.node_affinity is None and not pod.tolerations
            and pod.pod_affinity is None and pod.pod_anti_affinity is None and not pod.nominated_node_name
            and not any(p.host_port for c in pod.containers for p in c.ports))


def _larger(left: Resource, right: Resource) -> Resource:
    out = left.clone()
    out.set_max_resource(right)
    return out


def _node_with_room(ssn, job, members: set[str], held: list, need: Resource, minimum: Resource) -> str | None:
    for name in sorted(members):
        node = ssn.nodes.get(name)
        if node is None or node.node is None or not node.ready() or node.node.unschedulable \
                or any(t.effect in ("NoSchedule", "NoExecute") for t in node.node.taints):
            continue
        own = [t for t in held if t.node_name == name]
        room = node.idle.clone()
        for task in own:
            room.add(task.resreq)
        others = len(node.tasks) - len(own)
        if need.less_equal(room, Zero) and minimum.less_equal(room, Zero) \
                and others + len(held) <= node.allocatable.max_task_num:
            return name
    return None


@invariant("topology.nomination-within-hypernode", "allocate's nomination fast path places each task of a nominated "
           "subjob only on its pod's nominated node, and that node lies inside the hypernode gangpreempt or "
           "gangreclaim nominated", "job",
           "allocate.go (allocateFromNomination, validateNomination); actions/utils/util.go (ApplySubJobNominations)",
           (CLOSE,))
def nomination_within_hypernode(ctx: CheckContext) -> Iterator[Violation]:
    """Judges the session's record of redeemed nominations against the hypernode tree restated from the
    objects (none: a broken tree, upstream then places no topology job, so only the nominated node is judged)."""
    records = [r for r in getattr(ctx.ssn, "nominations", ()) if r.outcome == "redeemed"]
    if not records:
        return
    tree = topology_tree(ctx)
    leaves = tree[0] if tree is not None else None
    for record in records:
        inside = leaves.get(record.hyper_node) if leaves is not None else None
        for task, node in sorted(record.placed.items()):
            nominated = record.nominated_nodes.get(task, "")
            if node != nominated:
                yield Violation("", f"task {task} of subjob {record.sub_job} was placed on {node} by the nomination "
                                    f"fast path, but its pod's nominated node was {nominated or '(none)'}",
                                [f"task {task}", f"job {record.job}", f"node {node}"], nominated, node)
            if leaves is not None and (inside is None or node not in inside):
                yield Violation("", f"task {task} of subjob {record.sub_job} was placed on {node}, outside the "
                                    f"nominated hypernode {record.hyper_node}",
                                [f"task {task}", f"job {record.job}", f"node {node}"],
                                sorted(inside or ()), node)
