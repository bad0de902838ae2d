"""Node ledger invariants (seed 001 "resource identities"; volcano-semantics §3, §12)."""

from __future__ import annotations

from collections.abc import Iterator

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.ledger import TOLERANCE, node_dimensions
from schedcheck.invariants.placement import excluded_by, label_selector_matches
from schedcheck.invariants.registry import ACTION, CLOSE, LEDGER_OPS, OPERATION, PLACING_OPS, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.types import TaskStatus

EVERYWHERE = (OPERATION, ACTION, CLOSE)


def _fmt(dim: str, value: float) -> str:
    return f"{value:g}{'m' if dim == 'cpu' else ''}"


def _sum_violations(found: list[tuple[str, str, float, float]], what: str) -> Iterator[Violation]:
    for node, dim, value, expected in found:
        yield Violation("", f"node {node}: {what} on {dim} is {_fmt(dim, value)}, expected {_fmt(dim, expected)}",
                        [f"node {node}"], expected, value)


@invariant("node.ledger", "Idle + Used = Allocatable on every node and dimension", "node",
           "seed 001 (resource identities); pkg/scheduler/api/node_info.go", EVERYWHERE,
           state_only=True, operations=LEDGER_OPS)
def node_ledger(ctx: CheckContext) -> Iterator[Violation]:
    for node, dim, found, expected in ctx.node_verdicts().ledger:
        yield Violation("", f"node {node}: Idle + Used on {dim} is {_fmt(dim, found)} but Allocatable is "
                            f"{_fmt(dim, expected)}: a task was added or removed without moving its request "
                            f"between Idle and Used", [f"node {node}"], expected, found)


@invariant("node.used-sum", "Used equals the summed requests of the node's tasks that are not Pipelined", "node",
           "seed 001 (Used = Running + Releasing); node_info.go AddTask/RemoveTask", EVERYWHERE,
           state_only=True, operations=LEDGER_OPS)
def node_used_sum(ctx: CheckContext) -> Iterator[Violation]:
    yield from _sum_violations(ctx.node_verdicts().used_sum, "Used")


@invariant("node.releasing-sum", "Releasing equals the summed requests of the node's Releasing tasks", "node",
           "volcano-semantics §3.2-3.3", EVERYWHERE, state_only=True, operations=LEDGER_OPS)
def node_releasing_sum(ctx: CheckContext) -> Iterator[Violation]:
    yield from _sum_violations(ctx.node_verdicts().releasing_sum, "Releasing")


@invariant("node.pipelined-sum", "Pipelined equals the summed requests of the node's Pipelined tasks", "node",
           "volcano-semantics §3.2-3.3, §12 item 3", EVERYWHERE, state_only=True, operations=LEDGER_OPS)
def node_pipelined_sum(ctx: CheckContext) -> Iterator[Violation]:
    yield from _sum_violations(ctx.node_verdicts().pipelined_sum, "Pipelined")


@invariant("node.future-idle", "FutureIdle = Idle + Releasing - Pipelined", "node",
           "seed 001 (FutureIdle); node_info.go FutureIdle", EVERYWHERE, state_only=True, operations=LEDGER_OPS)
def node_future_idle(ctx: CheckContext) -> Iterator[Violation]:
    for node, dim, found, want in ctx.node_verdicts().future_idle:
        yield Violation("", f"node {node}: FutureIdle on {dim} is {_fmt(dim, found)}, but Idle + Releasing - "
                            f"Pipelined is {_fmt(dim, want)}", [f"node {node}"], want, found)


@invariant("node.non-negative", "Used, Releasing and Pipelined are never negative", "node",
           "volcano-semantics §3.3 (the asserting Sub in RemoveTask)", EVERYWHERE,
           state_only=True, operations=LEDGER_OPS)
def node_non_negative(ctx: CheckContext) -> Iterator[Violation]:
    for label, node, dim, found in ctx.node_verdicts().negative:
        yield Violation("", f"node {node}: {label} on {dim} went negative ({_fmt(dim, found)}): a task was "
                            f"removed more often than it was added", [f"node {node}"], ">= 0", found)


# Judged on the dimensions this session's binds to the node asked for: the bind-time check compares only
# those, so a node the input already overfilled on another dimension (a running pod asking for GPUs a node
# does not report) is not the session's doing.
@invariant("node.cache-idle-non-negative", "after a session, no node in the cache has negative Idle on a "
           "dimension a bind to it asked for this session", "node",
           "volcano-semantics §3.2 (Binding checks Idle), §12 item 9", (CLOSE,))
def cache_idle_non_negative(ctx: CheckContext) -> Iterator[Violation]:
    start = ctx.session_state.get("binds_at_open", 0)
    asked: dict[str, set[str]] = {}
    for record in ctx.ssn.cache.log.binds[start:]:
        node = ctx.ssn.cache.nodes.get(record.node)
        task = node.tasks.get(record.task) if node is not None else None  # nodes index tasks by namespace/name
        dims = asked.setdefault(record.node, set())
        if task is not None:
            dims.update(dim for dim, amount in task.resreq.as_dict().items() if amount > 0)
    cache_nodes = [ctx.ssn.cache.nodes[name] for name in sorted(asked) if name in ctx.ssn.cache.nodes]
    dims = node_dimensions(cache_nodes)  # Idle has no other dimension
    for node, dim, found in ((node.name, dim, node.idle.get(dim)) for node in cache_nodes for dim in dims):
        if found < -TOLERANCE and dim in asked.get(node, ()):
            yield Violation("", f"node {node} (cache): Idle on {dim} is {_fmt(dim, found)} after this session's "
                                f"binds: more was bound to the node than it can hold", [f"node {node}"], ">= 0", found)


# What is judged is the pods the cache holds after the binds it accepted: the session's own view may
# count a task over the limit that the cache then refused to bind (known finding F1 on master, where the
# bind-time check compares the request, pods included, with the node's idle room), and a refused bind
# fills no node. The session view's loss is node.predicates-pod-view's to judge.
@invariant("node.pod-limit", "a node that got a bind this session holds no more pods in the cache than its "
           "pod limit", "node", "volcano-semantics §1.3, §9.6 (pod-count predicate); node_info.go (bind-time "
           "check)", (CLOSE,))
def node_pod_limit(ctx: CheckContext) -> Iterator[Violation]:
    start = ctx.session_state.get("binds_at_open", 0)
    for name in sorted({record.node for record in ctx.ssn.cache.log.binds[start:]}):
        node = ctx.ssn.cache.nodes.get(name)
        if node is None:
            continue
        count = len(node.tasks)
        limit = node.allocatable.max_task_num
        if count > limit:
            yield Violation("", f"node {name} holds {count} pods in the cache after this session's binds but "
                                f"allows {limit}", [f"node {name}"], f"<= {limit}", count)


def ledger_class(status: TaskStatus) -> str:
    """How a node accounts a task in this status: Pipelined, Releasing, or in Used like the rest."""
    if status == TaskStatus.Pipelined:
        return "pipelined"
    return "releasing" if status == TaskStatus.Releasing else "used"


ON_NODE = {TaskStatus.Allocated, TaskStatus.Pipelined, TaskStatus.Binding, TaskStatus.Bound, TaskStatus.Running}


@invariant("task.single-node", "a task is on at most one node, and the node and the task agree", "job",
           "volcano-semantics §2.5, §3.2 (AddTask refuses a task already elsewhere)", (ACTION, CLOSE), state_only=True)
def task_single_node(ctx: CheckContext) -> Iterator[Violation]:
    first: dict[str, str] = {}  # task key -> the first node found holding it
    more: dict[str, list[str]] = {}  # task key -> every node holding it, where more than one does
    for name, node in ctx.ssn.nodes.items():
        for key, stored in node.tasks.items():
            held = first.setdefault(key, name)
            if held != name:
                more.setdefault(key, [held]).append(name)
            if stored.node_name != name:
                yield Violation("", f"node {name} stores task {key} whose node name is {stored.node_name!r}",
                                [f"node {name}", f"task {key}"], name, stored.node_name)
    for key in first if more else ():  # in the order the tasks were first found
        names = more.get(key)
        if names:
            yield Violation("", f"task {key} is on {len(names)} nodes: {', '.join(sorted(names))}",
                            [f"task {key}"] + [f"node {n}" for n in sorted(names)], 1, len(names))
    nodes = ctx.ssn.nodes
    for job in ctx.ssn.jobs.values():
        for task in job.tasks.values():
            if task.status not in ON_NODE:
                continue
            node = nodes.get(task.node_name)
            if node is None:
                continue
            stored = node.tasks.get(task.key)
            if stored is None:
                yield Violation("", f"task {task.key} is {task.status.name} on {task.node_name} in its job, "
                                    f"but the node does not hold it", [f"task {task.key}", f"node {task.node_name}"],
                                f"on {task.node_name}", "absent")
            elif stored.status is not task.status and ledger_class(stored.status) != ledger_class(task.status):
                # Allocated vs Binding is fine: the node keeps its clone and accounts both alike.
                yield Violation("", f"task {task.key} is {task.status.name} in its job but {stored.status.name} "
                                    f"on node {task.node_name}", [f"task {task.key}", f"node {task.node_name}"],
                                task.status.name, stored.status.name)


@invariant("node.placement-fits", "allocate places a task only where its request fits the node's Idle, and a "
           "pipeline only where it fits FutureIdle, on every dimension it requests (pods aside)", "node",
           "seed 001 (Idle, FutureIdle); allocate.go (InitResreq <= Idle / FutureIdle); node_info.go AddTask",
           (OPERATION,), operations=PLACING_OPS)
def node_placement_fits(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or op.op not in ("allocate", "pipeline") or ctx.ssn.conf.persistent_pipelines:
        return
    node = ctx.ssn.nodes.get(op.node)
    job = ctx.ssn.jobs.get(op.job)
    task = job.tasks.get(op.task_uid) if job is not None else None
    if node is None or task is None:
        return
    room, word = (node.idle, "Idle") if op.op == "allocate" else (node.future_idle(), "FutureIdle")
    short = [n for n in task.resreq.resource_names() if n != "pods" and room.get(n) < -0.1 - 1e-9 * node.allocatable.get(n)]
    if short:
        yield Violation("", f"task {op.task} was {op.op}d to node {op.node} without room: {word} is now "
                            f"{', '.join(f'{n} {_fmt(n, room.get(n))}' for n in short)} (below zero)",
                        [f"node {op.node}", f"task {op.task}"], ">= 0", {n: room.get(n) for n in short})


PLACING_ACTIONS = ("allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim")


@invariant("node.placement-allowed", "with the predicates plugin, no task is allocated or pipelined to a node its pod "
           "clearly may not run on: a cordoned node it does not tolerate, a node its nodeSelector or required "
           "node affinity excludes, a node with a NoSchedule or NoExecute taint it does not tolerate", "node",
           "predicates.go (NodeUnschedulable, NodeAffinity, TaintToleration filters; predicate.NodeAffinityEnable, "
           "predicate.TaintTolerationEnable); allocate.go / backfill.go / preempt.go / reclaim.go (PredicateFn)",
           (OPERATION,), requires=("predicates",), operations=PLACING_OPS)
def node_placement_allowed(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or op.op not in ("allocate", "pipeline") or op.action not in PLACING_ACTIONS:
        return
    if op.from_status == TaskStatus.Pipelined and ctx.ssn.conf.persistent_pipelines:
        return  # a kept reservation allocated in place: judged when it was pipelined
    memo = ctx.session_state
    if not _predicates_filter_on(ctx.ssn, memo=memo):
        return
    node = ctx.ssn.nodes.get(op.node)
    job = ctx.ssn.jobs.get(op.job)
    task = job.tasks.get(op.task_uid) if job is not None else None
    if node is None or node.node is None or task is None:
        return
    why = excluded_by(task.pod, node.node, _predicates_filter_on(ctx.ssn, "predicate.NodeAffinityEnable", memo),
                      _predicates_filter_on(ctx.ssn, "predicate.TaintTolerationEnable", memo))
    if why:
        yield Violation("", f"{op.action} {op.op}d {op.task} to node {op.node}, where it may not run: {why}",
                        [f"task {op.task}", f"node {op.node}"], "a node the pod may run on", why)


def pods_have_volumes(ssn) -> bool:
    """a pod of the session has volumes"""
    return any(task.pod.volumes for job in ssn.jobs.values() for task in job.tasks.values())


@invariant("node.volume-affinity-respected", "with the predicates plugin (VolumeBindingEnable on), no task is "
           "allocated or pipelined to a node that the node affinity of a PersistentVolume its pod's claims are bound "
           "to clearly excludes", "node",
           "predicates.go (VolumeBinding filter, predicate.VolumeBindingEnable); k8s volumebinding/binder.go "
           "(checkBoundClaims: CheckNodeAffinity of each bound claim's PV, an in-tree one translated where the "
           "node's CSINode lists its plugin as migrated)", (OPERATION,), requires=("predicates",), operations=PLACING_OPS,
           applies_when=pods_have_volumes)
def node_volume_affinity_respected(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    if op is None or op.op not in ("allocate", "pipeline") or op.action not in PLACING_ACTIONS:
        return
    if not _predicates_filter_on(ctx.ssn, "predicate.VolumeBindingEnable", ctx.session_state):
        return
    node = ctx.ssn.nodes.get(op.node)
    job = ctx.ssn.jobs.get(op.job)
    task = job.tasks.get(op.task_uid) if job is not None else None
    if node is None or node.node is None or task is None or not task.pod.volumes:
        return
    from schedcheck.invariants.placement import volume_excludes
    from schedcheck.reference.plugins.csi_translation import TranslationError, translated_pv
    from schedcheck.reference.plugins.volume_helpers import volume_claim_name

    world = ctx.ssn.cache.world
    claims = {(c.namespace, c.name): c for c in world.persistent_volume_claims}
    volumes = {v.name: v for v in world.persistent_volumes}
    csi_node = next((c for c in world.csi_nodes if c.name == op.node), None)
    for volume in task.pod.volumes:
        claim_name = volume_claim_name(task.pod, volume)
        claim = claims.get((task.pod.namespace, claim_name))
        pv = volumes.get(claim.volume_name) if claim is not None and claim.volume_name else None
        try:  # the affinity VolumeBinding checks: a migrated in-tree PV's translated one
            pv = translated_pv(pv, csi_node) if pv is not None else None
        except TranslationError:
            continue  # the filter failed the node with an Error status: judged by no affinity
        if pv is not None and volume_excludes(pv.node_affinity, node.node):
            yield Violation("", f"{op.action} {op.op}d {op.task} to node {op.node}, which the node affinity of "
                                f"PersistentVolume {pv.name} (bound to claim {claim_name}) excludes",
                            [f"task {op.task}", f"node {op.node}", f"PersistentVolume {pv.name}"],
                            "a node the pod's bound volumes admit", op.node)


def hard_sharding(ssn) -> bool:
    """the scheduler runs with --scheduler-sharding-mode=hard"""
    return ssn.cache.server_options.sharding_mode == "hard"


@invariant("node.in-shard", "with --scheduler-sharding-mode=hard, no task is allocated or pipelined to a node outside "
           "this scheduler's shard: its NodeShard's desired nodes less those another shard still has in use",
           "node", "util/predicate_helper.go (PredicateNodes: \"node isn't in scheduler node shard\"); "
           "cache/shard_coordinator.go (RefreshNodeShards, getAvailableNodesFromShard); seed 002 (NodesInShard)",
           (OPERATION,), operations=PLACING_OPS, applies_when=hard_sharding)
def node_in_shard(ctx: CheckContext) -> Iterator[Violation]:
    op = ctx.operation
    options = ctx.ssn.cache.server_options
    if op is None or op.op not in ("allocate", "pipeline") or options.sharding_mode != "hard":
        return
    if op.from_status == TaskStatus.Pipelined and ctx.ssn.conf.persistent_pipelines:
        return  # a kept reservation allocated in place: judged when it was pipelined
    shards = {shard.name: shard for shard in ctx.ssn.cache.world.node_shards}
    own = shards.get(options.shard_name)
    usable = set(own.nodes_desired) if own is not None else set()
    for name, shard in shards.items():
        if own is not None and name != own.name:
            usable -= set(shard.nodes_in_use)
    if op.node not in usable:
        where = (f"shard {options.shard_name} holds {', '.join(sorted(usable)) or 'no node'}" if own is not None
                 else f"there is no NodeShard {options.shard_name}, so the shard is empty")
        yield Violation("", f"{op.action} {op.op}d {op.task} to node {op.node}, outside this scheduler's hard shard "
                            f"({where})", [f"task {op.task}", f"node {op.node}", f"NodeShard {options.shard_name}"],
                        f"a node of shard {options.shard_name}", op.node)


@invariant("node.predicates-pod-view", "the predicates plugin's view of each node holds exactly the node's pods, "
           "once each, less the ones this session evicted: its allocate and deallocate handlers follow every "
           "operation", "node",
           "predicates.go (AllocateFunc: NodeInfo.AddPod, DeallocateFunc: RemovePod); seed 004 (event handler "
           "pairing); semantics §6.3", (ACTION,), requires=("predicates",), state_only=True)
def node_predicates_pod_view(ctx: CheckContext) -> Iterator[Violation]:
    from schedcheck.reference.plugins.k8s_mirror import session_mirror

    ssn = ctx.ssn
    if "predicates" not in ssn.plugins or ssn.conf.persistent_pipelines:
        return
    evicted: set[str] = set()
    for op in ssn.operations:
        if op.op == "evict":
            evicted.add(op.task_uid)
        elif op.op == "unevict":
            evicted.discard(op.task_uid)
    mirror = session_mirror(ssn)
    for name, node in sorted(ssn.nodes.items()):
        view = mirror.nodes.get(name)
        if view is None:
            continue
        want = {task.pod.uid: 1 for task in node.tasks.values() if task.uid not in evicted and task.pod.uid}
        if view.pods != want:
            extra = sorted(set(view.pods) - set(want))
            missing = sorted(set(want) - set(view.pods))
            twice = sorted(uid for uid, n in view.pods.items() if n > 1)
            odd = set(extra) | set(missing) | set(twice)
            tasks = sorted(f"task {task.key}" for job in ssn.jobs.values() for task in job.tasks.values()
                           if task.pod.uid in odd)
            yield Violation("", f"node {name}: the predicates plugin sees {len(view.pods)} pod(s), the node holds "
                                f"{len(want)} not evicted this session (missing {missing[:3]}, extra {extra[:3]}, "
                                f"counted twice {twice[:3]})", [f"node {name}", *tasks[:10]], sorted(want)[:10],
                            sorted(view.pods)[:10])


@invariant("node.host-ports-free", "with the predicates plugin (NodePorts on), a task placed this session shares no "
           "host port (protocol, port, and the same address or the wildcard) with another pod on its node, "
           "except pods this session evicted", "node",
           "predicates.go (NodePorts filter, predicate.NodePortsEnable); k8s nodeports (HostPortInfo.CheckConflict)",
           (ACTION,), requires=("predicates",))
def node_host_ports_free(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.ssn.conf.persistent_pipelines or not _predicates_filter_on(ctx.ssn, "predicate.NodePortsEnable"):
        return
    placed: dict[str, str] = {}  # task uid -> node, placements of this session that stand
    evicted: set[str] = set()
    for op in ctx.ssn.operations:
        if op.op in ("allocate", "pipeline") and op.action == ctx.action:  # this action's placements only
            placed[op.task_uid] = op.node
        elif op.op in ("unallocate", "unpipeline"):
            placed.pop(op.task_uid, None)
        elif op.op == "evict":
            evicted.add(op.task_uid)
        elif op.op == "unevict":
            evicted.discard(op.task_uid)
    for uid, node_name in sorted(placed.items()):
        node = ctx.ssn.nodes.get(node_name)
        task = next((t for t in node.tasks.values() if t.uid == uid), None) if node is not None else None
        wanted = _host_ports(task.pod) if task is not None else []
        if not wanted:
            continue
        for other in node.tasks.values():
            if other.uid == uid or other.uid in evicted:
                continue
            clash = [w for w in wanted for u in _host_ports(other.pod) if _ports_clash(w, u)]
            if clash:
                protocol, address, port = clash[0]
                yield Violation("", f"{task.key} was placed on node {node_name}, where {other.key} already holds "
                                    f"host port {protocol}/{port} ({address})", [f"task {task.key}",
                                                                              f"task {other.key}", f"node {node_name}"],
                                "a free host port", f"{protocol}/{port}")
                break


@invariant("node.pod-anti-affinity-respected", "with the predicates plugin (PodAffinityEnable on), allocate and "
           "backfill place no task in a topology domain where a pod already there matches one of its required "
           "anti-affinity terms, or carries a required anti-affinity term the task matches (pods this session "
           "evicted aside)", "node",
           "predicates.go (InterPodAffinity filter, predicate.PodAffinityEnable); k8s interpodaffinity/filtering.go "
           "(satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity)", (ACTION,), requires=("predicates",))
def node_pod_anti_affinity_respected(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action not in ("allocate", "backfill") or ssn.conf.persistent_pipelines:
        return
    if not _predicates_filter_on(ssn, "predicate.PodAffinityEnable"):
        return
    present = [(t, n) for n in ssn.node_list for t in n.tasks.values()]
    if not any(_anti_terms(t.pod) for t, _ in present):
        return
    placed, evicted = _standing_placements(ssn)
    mine = {op.task_uid for op in ssn.operations if op.action == ctx.action and op.op in ("allocate", "pipeline")}
    for task, node in present:
        if task.uid not in mine or task.uid not in placed or node.node is None:
            continue
        for other, other_node in present:
            if other.uid == task.uid or other.uid in evicted or other_node.node is None \
                    or placed.get(other.uid, -1) > placed[task.uid]:
                continue  # a pod placed later is judged at its own placement
            why = _anti_clash(task, node.node.labels, other, other_node.node.labels)
            if why:
                yield Violation("", f"{ctx.action} placed {task.key} on node {node.name}, in the same "
                                    f"{why[1]} domain as {other.key} on {other_node.name}: {why[0]}",
                                [f"task {task.key}", f"task {other.key}", f"node {node.name}"],
                                "no required anti-affinity between them", why[0])
                break


@invariant("node.topology-spread-respected", "with the predicates plugin (PodTopologySpreadEnable on), allocate and "
           "backfill place no task where a DoNotSchedule spread constraint's skew (matching pods in the node's "
           "domain, plus the task if it matches, minus the fewest in any eligible domain) would exceed maxSkew, "
           "nor on a node without the constraint's topology key", "node",
           "predicates.go (PodTopologySpread filter, predicate.PodTopologySpreadEnable); k8s "
           "podtopologyspread/filtering.go (calPreFilterState, Filter)", (ACTION,), requires=("predicates",))
def node_topology_spread_respected(ctx: CheckContext) -> Iterator[Violation]:
    from schedcheck.reference.plugins.k8s_mirror import RequiredNodeAffinity

    ssn = ctx.ssn
    if ctx.action not in ("allocate", "backfill") or ssn.conf.persistent_pipelines:
        return
    if not _predicates_filter_on(ssn, "predicate.PodTopologySpreadEnable"):
        return
    present = [(t, n) for n in ssn.node_list for t in n.tasks.values()]
    mine = {op.task_uid for op in ssn.operations if op.action == ctx.action and op.op in ("allocate", "pipeline")}
    judged = [(t, n) for t, n in present if t.uid in mine and n.node is not None and _spread_constraints(t.pod)]
    if not judged:
        return
    placed, evicted = _standing_placements(ssn)
    for task, node in judged:
        if task.uid not in placed:
            continue
        at = placed[task.uid]
        # the node view when the task's PrePredicate ran: what stood before its placement, evictions aside
        before = [(t, n) for t, n in present if t.uid != task.uid and t.uid not in evicted
                  and placed.get(t.uid, -1) < at and t.pod.deletion_timestamp is None]
        constraints = _spread_constraints(task.pod)
        labels = node.node.labels
        missing = [c.topology_key for c in constraints if c.topology_key not in labels]
        if missing:
            yield Violation("", f"{ctx.action} placed {task.key} on node {node.name}, which has no label "
                                f"{missing[0]} its DoNotSchedule spread constraint needs",
                            [f"task {task.key}", f"node {node.name}"], f"a node labelled {missing[0]}", "no label")
            continue
        affinity = RequiredNodeAffinity(task.pod)
        for c in constraints:
            # k8s counts no pod for an empty selector `{}` (Selector.Empty()), though it selects the task itself
            empty = c.label_selector is not None and not c.label_selector.match_labels \
                and not c.label_selector.match_expressions
            counts: dict[str, int] = {}
            for other in ssn.node_list:
                o_labels = other.node.labels if other.node is not None else {}
                if other.node is None or any(k.topology_key not in o_labels for k in constraints) \
                        or not _spread_included(c, task.pod, other.node, affinity):
                    continue
                value = o_labels[c.topology_key]
                counts[value] = counts.get(value, 0) + sum(
                    1 for t, n in before if not empty and n.name == other.name
                    and t.pod.namespace == task.pod.namespace and label_selector_matches(c.label_selector, t.pod.labels))
            minimum = min(counts.values()) if counts and len(counts) >= c.min_domains else 0
            value = labels[c.topology_key]
            mine_count = 1 if label_selector_matches(c.label_selector, task.pod.labels) else 0
            skew = counts.get(value, 0) + mine_count - minimum
            if skew > c.max_skew:
                yield Violation("", f"{ctx.action} placed {task.key} on node {node.name} ({c.topology_key}={value}): "
                                    f"{counts.get(value, 0)} matching pod(s) there{' plus itself' if mine_count else ''} "
                                    f"against {minimum} in the emptiest domain is a skew of {skew}, over maxSkew "
                                    f"{c.max_skew}", [f"task {task.key}", f"node {node.name}"],
                                f"skew <= {c.max_skew}", skew)
                break


def _predicates_filter_on(ssn, flag: str = "", memo: dict | None = None) -> bool:
    """The predicates plugin is configured and enabled, with this filter's `predicate.*Enable` on (default;
    no flag: the plugin alone). With `memo` (the engine's per-session memory; a session's conf does not
    change), worked out once a session."""
    key = ("predicates-filter-on", flag)
    if memo is not None and key in memo:
        return memo[key]
    from schedcheck.reference.framework.arguments import as_arguments

    option = next((o for tier in ssn.tiers for o in tier.plugins if o.name == "predicates"), None)
    on = option is not None and option.enabled("enablePredicate") \
        and (not flag or as_arguments(option.arguments).get_bool(flag, True))
    if memo is not None:
        memo[key] = on
    return on


def _standing_placements(ssn) -> tuple[dict[str, int], set[str]]:
    """Task uid -> index of the session operation that placed it (placements taken back dropped), and the
    tasks evicted and not put back."""
    placed: dict[str, int] = {}
    evicted: set[str] = set()
    for index, op in enumerate(ssn.operations):
        if op.op in ("allocate", "pipeline"):
            placed[op.task_uid] = index
        elif op.op in ("unallocate", "unpipeline"):
            placed.pop(op.task_uid, None)
        elif op.op == "evict":
            evicted.add(op.task_uid)
        elif op.op == "unevict":
            evicted.discard(op.task_uid)
    return placed, evicted


def _spread_constraints(pod) -> list:
    return [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]


def _spread_included(constraint, pod, node, affinity) -> bool:
    """k8s matchNodeInclusionPolicies, restated."""
    if constraint.node_affinity_policy == "Honor" and not affinity.matches(node):
        return False
    if constraint.node_taints_policy == "Honor":
        for taint in node.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not any(
                    (not tol.effect or tol.effect == taint.effect) and (not tol.key or tol.key == taint.key)
                    and (tol.operator == "Exists" if tol.operator not in ("", "Equal") else tol.value == taint.value)
                    for tol in pod.tolerations):
                return False
    return True




def _anti_terms(pod) -> list:
    return list(pod.pod_anti_affinity.required) if pod.pod_anti_affinity is not None else []


def _term_selects(term, owner, pod) -> bool:
    """A required term of `owner` selects `pod`: its namespaces (its own when none is named, every one for an
    empty namespaceSelector; the scenario has no Namespace objects for any other selector), then labels."""
    selector = term.namespace_selector
    if not term.namespaces and selector is None:
        in_namespace = pod.namespace == owner.namespace
    else:
        everything = selector is not None and not selector.match_labels and not selector.match_expressions
        in_namespace = pod.namespace in term.namespaces or everything
    return in_namespace and label_selector_matches(term.label_selector, pod.labels)


def _anti_clash(task, labels: dict[str, str], other, other_labels: dict[str, str]) -> tuple[str, str] | None:
    for owner, target, owner_labels, target_labels, whose in (
            (task, other, labels, other_labels, "its"), (other, task, other_labels, labels, f"{other.key}'s")):
        for term in _anti_terms(owner.pod):
            key = term.topology_key
            if key in owner_labels and target_labels.get(key) == owner_labels[key] \
                    and _term_selects(term, owner.pod, target.pod):
                return f"{whose} required anti-affinity term selects {target.key}", key
    return None


def _host_ports(pod) -> list[tuple[str, str, int]]:
    return [(p.protocol or "TCP", p.host_ip or "0.0.0.0", p.host_port)
            for c in pod.containers for p in c.ports if p.host_port > 0]


def _ports_clash(left: tuple[str, str, int], right: tuple[str, str, int]) -> bool:
    return left[0] == right[0] and left[2] == right[2] and (left[1] == right[1] or "0.0.0.0" in (left[1], right[1]))
