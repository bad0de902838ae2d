"""Known upstream findings: safety violations the faithful reference reproduces because upstream
Volcano really behaves that way (docs/findings.md).

A violation that matches a known finding is reported under the finding's name as a finding, not as
a failure, so a CI gate on a faithful scheduler stays green while the behaviour stays visible.
Each finding has its own switch: `fail_on_known={"F1"}` (CLI `--fail-on-known F1`, or `all`)
turns it back into a failure, for users who want upstream's bug to break their build.
"""

from __future__ import annotations

from typing import Any

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from schedcheck.reference.util.nil import NilDereference, is_nil

if TYPE_CHECKING:
    from schedcheck.invariants.context import CheckContext
    from schedcheck.invariants.violation import Violation


@dataclass(frozen=True)
class KnownFinding:
    id: str  # F<number in docs/findings.md>
    invariant: str
    title: str
    doc: str
    matches: Callable[[CheckContext, Violation], bool]


def _named(violation: Violation, kind: str) -> list[str]:
    """The names of the objects of one kind ("node", "task", "job", "pdb") a violation lists, in order."""
    prefix = kind + " "
    return [obj[len(prefix):] for obj in violation.objects if obj.startswith(prefix)]


def _node_of(violation: Violation) -> str:
    return next(iter(_named(violation, "node")), "")


def _tasks_by_key(ctx: CheckContext) -> dict:
    return {t.key: t for job in ctx.ssn.jobs.values() for t in job.tasks.values()}


def _discarded_eviction_on_node(ctx: CheckContext, violation: Violation) -> bool:
    """F1: the over-full node had a victim evicted and put back (a discarded reclaim or preemption)
    this session, which leaves the victim out of the predicates plugin's pod view."""
    node = _node_of(violation)
    return any(op.op == "unevict" and op.node == node for op in ctx.ssn.operations)


def _reclaim_pipeline(ctx: CheckContext, violation: Violation) -> bool:
    """F2: reclaim and the gang-aware evictions filter nodes with the preempt-mode predicates (a NodePorts
    conflict is Unschedulable, so "preemption may help") and then evict only until the resources fit, never
    asking the predicates again (preempt does ask, after every eviction); topology-aware preemption's dry
    run asks SimulatePredicate, which runs InterPodAffinity only."""
    if ctx.action == "preempt":
        arguments = ctx.ssn.action_arguments("preempt")
        return str(arguments.get("enableTopologyAwarePreemption", "")).lower() == "true"
    return ctx.action in ("reclaim", "gangpreempt", "gangreclaim")


def _job_of(violation: Violation) -> str:
    return next(iter(_named(violation, "job")), "")


def _allocated_now(ctx: CheckContext) -> set[str]:
    """The tasks allocate placed (allocated or pipelined) this session."""
    return {op.task_uid for op in ctx.ssn.operations if op.action == "allocate" and op.op in ("allocate", "pipeline")}


def _in_some_hyper_node(leaves: dict[str, set[str]]) -> set[str]:
    """The nodes a real HyperNode holds (the virtual cluster-top one holds every node)."""
    from schedcheck.invariants.catalog.topology import CLUSTER_TOP

    return set().union(*(members for name, members in leaves.items() if name != CLUSTER_TOP))


def _forgotten_hyper_node(ctx: CheckContext, violation: Violation) -> bool:
    """F3: the session cannot recover where the hard-mode job runs, so allocate places its new tasks in any
    allowed hypernode, wherever the held ones run (the new tasks alone fit one). recoverAllocatedHyperNode
    skips subgroups without a network topology of their own and nodes no HyperNode holds, and stops at a
    task whose node the session does not have (the subjob's hypernode stays empty, annotation or not);
    otherwise the job-allocated-hypernode annotation, when it names a HyperNode that exists, says where."""
    from schedcheck.invariants.catalog.topology import placed_tasks, sub_groups, topology_tree

    job = ctx.ssn.jobs.get(_job_of(violation))
    if job is None or job.pod_group is None:
        return False
    tree = topology_tree(ctx)
    annotated = job.pod_group.annotations.get("volcano.sh/job-allocated-hypernode")
    new = _allocated_now(ctx)
    placed = placed_tasks(job.tasks.values())
    held = [t for t in placed if t.uid not in new]
    if any(t.node_name not in ctx.ssn.nodes for t in held):
        # recoverAllocatedHyperNode stops at a task whose node no hypernode holds (a node the session does not
        # have holds none) and leaves the subjob's hypernode empty, annotation or not
        return bool(held) and _new_tasks_fit(ctx, job, placed, new)
    if annotated and tree is not None and annotated in tree[0]:
        return False  # an annotation naming a hypernode that exists: the session knows where the job is
    if not held:
        return False
    without_topology = {task.uid for (policy, _), tasks in sub_groups(job).items()
                        for task in tasks
                        if next((p for p in job.pod_group.sub_group_policy if p.name == policy)).network_topology
                        is None}
    # a held task on a node outside every HyperNode names no hypernode to recover either
    inside = _in_some_hyper_node(tree[0]) if tree else set()
    placed_now = {op.task_uid for op in ctx.ssn.operations if op.op in ("allocate", "pipeline")}  # F4's, say
    if any(t.uid not in without_topology and (t.node_name in inside or t.uid in placed_now) for t in held):
        return False
    return _new_tasks_fit(ctx, job, placed, new)


def _forgotten_sub_group_hyper_node(ctx: CheckContext, violation: Violation) -> bool:
    """F3 for a subgroup: recoverAllocatedHyperNode walks the subgroup's placed tasks and stops at one whose
    node no HyperNode holds (or the session does not have), so the subgroup's hypernode stays empty and
    allocate places its new tasks in any allowed hypernode; they alone fit one."""
    from schedcheck.invariants.catalog.topology import placed_tasks, sub_groups, topology_tree

    job = ctx.ssn.jobs.get(_job_of(violation))
    tree = topology_tree(ctx)
    if job is None or job.pod_group is None or tree is None:
        return False
    leaves, tiers, names = tree
    inside = _in_some_hyper_node(leaves)
    new = _allocated_now(ctx)
    policies = {p.name: p for p in job.pod_group.sub_group_policy}
    for (name, _), tasks in sub_groups(job).items():
        nt = policies[name].network_topology
        if nt is None or nt.mode != "hard":
            continue
        placed = placed_tasks(tasks)
        held = [t for t in placed if t.uid not in new]
        fresh = {t.node_name for t in placed if t.uid in new}
        highest = nt.highest_tier_allowed if nt.highest_tier_allowed is not None else names.get(nt.highest_tier_name)
        if not fresh or highest is None or not any(t.node_name not in inside for t in held):
            continue
        if any(tiers[h] <= highest and fresh <= members for h, members in leaves.items()):
            return True
    return False


def _new_tasks_fit(ctx: CheckContext, job, placed: list, new: set[str]) -> bool:
    """The tasks allocate placed this session lie, by themselves, in one hypernode of an allowed tier."""
    from schedcheck.invariants.catalog.topology import highest_tier, topology_tree

    tree = topology_tree(ctx)
    if tree is None:
        return False
    leaves, tiers, names = tree
    highest = highest_tier(ctx, job, names, 0)
    fresh = {t.node_name for t in placed if t.uid in new}
    return highest is not None and any(tiers[n] <= highest and fresh <= members for n, members in leaves.items())


def _placed_by_reclaim(ctx: CheckContext, violation: Violation) -> bool:
    """F4: reclaim has no network-topology path: it pipelines a hard-mode job's task onto any node, and does not
    record a hypernode for the job, so allocate then searches hypernodes for the job's other tasks without it.
    Some task of the job was pipelined by reclaim this session, and allocate's own placements fit by themselves."""
    from schedcheck.invariants.catalog.topology import placed_tasks

    job = ctx.ssn.jobs.get(_job_of(violation))
    if job is None:
        return False
    new = _allocated_now(ctx)
    reclaimed = {op.task_uid for op in ctx.ssn.operations if op.action == "reclaim" and op.op == "pipeline"}
    placed = placed_tasks(job.tasks.values())
    if not any(t.uid in reclaimed and t.uid not in new for t in placed):
        return False
    return _new_tasks_fit(ctx, job, placed, new)


def _port_forgotten(ctx: CheckContext, violation: Violation) -> bool:
    """F2, its sequel: a pod holding the same host port was taken off the node in the session (unpipelined,
    unallocated or evicted) after sharing it with another; Kubernetes' NodeInfo.UsedPorts is a set, so the
    port left the predicates plugin's view although a pod still holds it, and NodePorts let the next one in."""
    from schedcheck.reference.plugins.k8s_mirror import host_ports
    from schedcheck.reference.plugins.predicates import ports_conflict

    node = _node_of(violation)
    removed = {op.task_uid for op in ctx.ssn.operations
               if op.node == node and op.op in ("unpipeline", "unallocate", "evict")}
    if not removed:
        return False
    by_key = _tasks_by_key(ctx)
    placed = by_key.get(next(iter(_named(violation, "task")), ""))
    if placed is None:
        return False
    wanted = host_ports(placed.pod)
    return any(any(ports_conflict(w, u) for w in wanted for u in host_ports(t.pod))
               for t in by_key.values() if t.uid in removed)


def _pdb_budget_per_call(ctx: CheckContext, violation: Violation) -> bool:
    """F5: the pdb plugin copies each budget's disruptionsAllowed afresh for every victim call; no single
    statement evicted more of the budget's pods than it allows, only the session as a whole did."""
    from schedcheck.invariants.placement import label_selector_matches

    name = next(iter(_named(violation, "pdb")), "")
    budget = next((b for b in ctx.ssn.cache.world.pod_disruption_budgets if f"{b.namespace}/{b.name}" == name), None)
    if budget is None:
        return False
    keys = set(_named(violation, "task"))
    tasks = {t.uid: t for key, t in _tasks_by_key(ctx).items() if key in keys}
    per_statement: dict[int, int] = {}
    for op in ctx.ssn.operations:
        if op.op == "evict" and op.task_uid in tasks and label_selector_matches(budget.selector,
                                                                                tasks[op.task_uid].pod.labels):
            per_statement[op.statement] = per_statement.get(op.statement, 0) + 1
    return bool(per_statement) and max(per_statement.values()) <= budget.disruptions_allowed


def _namesake(ctx: CheckContext, violation: Violation) -> bool:
    """F6: lowNodeUtilization matches the pod it picked on a high node to a task by pod name alone, so the
    victim is a namesake elsewhere: another Running task of the same pod name sits on another node."""
    by_key = _tasks_by_key(ctx)
    victim = by_key.get(next(iter(_named(violation, "task")), ""))
    if victim is None:
        return False
    # the pod lowNodeUtilization picked is any task of a node, in a job of the session or not (a pod whose
    # PodGroup is missing sits on its node without a job)
    others = [*by_key.values(), *(t for node in ctx.ssn.nodes.values() for t in node.tasks.values())]
    return any(t.pod.name == victim.pod.name and t.uid != victim.uid and t.node_name
               and t.node_name != victim.node_name for t in others)


def _pdb_not_asked(ctx: CheckContext, violation: Violation) -> bool:
    """F7: gangpreempt and gangreclaim take victims through UnifiedEvictable, where the pdb plugin registers
    nothing; some of the budget's pods went that way."""
    keys = set(_named(violation, "task"))
    return any(op.op == "evict" and op.action in ("gangpreempt", "gangreclaim") and op.task in keys
               for op in ctx.ssn.operations)


def _veto_passed_on(ctx: CheckContext, violation: Violation) -> bool:
    """F8: Preemptable and Reclaimable go tier by tier, and a plugin that refuses every candidate ends its
    tier with no decision, so the next tier decides alone: pdb's refusal in its tier, then a later tier that
    has a plugin for the same point."""
    keys = set(_named(violation, "task"))
    by_key = _tasks_by_key(ctx)
    for action in {op.action for op in ctx.ssn.operations if op.op == "evict" and op.task in keys}:
        if action not in ("preempt", "reclaim"):
            continue
        tiers = ctx.ssn.registered("preemptable" if action == "preempt" else "reclaimable")
        pdb_tier = next((i for i, tier in enumerate(tiers) if any(name == "pdb" for name, _ in tier)), None)
        if pdb_tier is None or not any(tiers[pdb_tier + 1:]):
            continue
        pdb_fn = next(fn for name, fn in tiers[pdb_tier] if name == "pdb")
        victims = [by_key[key] for key in keys if key in by_key]
        # the pdb plugin must itself refuse these pods (it ignores the preemptor); had it let one through,
        # its tier decided, and the budget was broken some other way
        if victims and all(not pdb_fn(None, [victim])[0] for victim in victims):
            return True
    return False


def _mixed_pod_indexes(ctx: CheckContext, violation: Violation) -> bool:
    """F9: no plugin tells the tasks apart, and upstream's default order compares pod-name indexes only
    between two pods that both have one: some of the named pods have an index, some do not."""
    from schedcheck.reference.framework.session import pod_index

    by_key = _tasks_by_key(ctx)
    tasks = [by_key[key] for key in _named(violation, "task") if key in by_key]
    if len(tasks) < 3 or any(ctx.ssn.task_compare_fns(a, b) != 0 for a in tasks for b in tasks if a is not b):
        return False
    indexed = [pod_index(t.name) is not None for t in tasks]
    return any(indexed) and not all(indexed)


def _bound_task_pipelined_again(ctx: CheckContext, violation: Violation) -> bool:
    """F10: a dry run replays saved task copies (allocate's hypernode search, the gang actions' own trials),
    which leaves a placed task listed Pending in its subjob's own status index; gangpreempt and gangreclaim read
    that index, so they pipeline (or try to) a task this session already bound or pipelined in an earlier
    action. The violation names such a task, by key or uid, its job, the job's queue, or a node the gang action
    put it on or took it off (statement.discard-restores names the node whose ledger the discard left short)."""
    placed_before: dict[str, int] = {}  # task -> index of its first bind, or of a pipeline by another action
    again: list[Any] = []
    for index, op in enumerate(ctx.ssn.operations):
        earlier = placed_before.get(op.task)
        if op.action in GANG_ACTIONS and op.op in ("pipeline", "unpipeline") and earlier is not None \
                and ctx.ssn.operations[earlier].action != op.action:
            again.append(op)
        if op.op == "bind" or (op.op == "pipeline" and op.task not in placed_before):
            placed_before.setdefault(op.task, index)
    names = {name for op in again for name in (op.task, op.task_uid)}
    jobs = {op.job for op in again}
    nodes = {op.node for op in again if op.node}
    queues = _with_ancestors(ctx, {ctx.ssn.jobs[job].queue for job in jobs if job in ctx.ssn.jobs})
    return any(name in names for name in _named(violation, "task")) or any(
        job in jobs for job in _named(violation, "job")) or any(queue in queues for queue in _named(violation, "queue")) \
        or any(node in nodes for node in _named(violation, "node"))


GANG_ACTIONS = ("gangpreempt", "gangreclaim")


def _gang_pipelined_task_placed_again(ctx: CheckContext, violation: Violation) -> bool:
    """F39: a gang action's committed plan replays saved task copies, so its subjob's own index still lists
    each task it pipelined Pending (F10's mechanism); an allocate later in the same session builds its
    worksheet from that index and places (or fails to place, whose rollback takes the pipelined copy off its
    node) those records again, by the nomination fast path onto the pods' nominated nodes or by the normal
    search. The violation names such a task, by key or uid, its job, the job's queue, or a node either
    placement touched."""
    pipelined: set[str] = set()
    again: list[Any] = []
    for op in ctx.ssn.operations:
        if op.action in GANG_ACTIONS and op.op == "pipeline":
            pipelined.add(op.task)
        elif op.action not in GANG_ACTIONS and op.task in pipelined \
                and op.op in ("allocate", "pipeline", "unallocate", "unpipeline", "bind"):
            again.append(op)
    if not again:
        return False
    keys = {op.task for op in again}
    names = keys | {op.task_uid for op in again}
    jobs = {op.job for op in again}
    nodes = {op.node for op in ctx.ssn.operations if op.task in keys and op.node}
    queues = _with_ancestors(ctx, {ctx.ssn.jobs[job].queue for job in jobs if job in ctx.ssn.jobs})
    return any(name in names for name in _named(violation, "task")) or any(
        job in jobs for job in _named(violation, "job")) or any(queue in queues for queue in _named(violation, "queue")) \
        or any(node in nodes for node in _named(violation, "node"))


def _with_ancestors(ctx: CheckContext, queues: set[str]) -> set[str]:
    """The queues and every ancestor (capacity's hierarchy charges them all, up to root)."""
    out: set[str] = set()
    todo = list(queues)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        queue = ctx.ssn.queues.get(name)
        if name != "root":
            todo.append((queue.queue.parent if queue is not None else "") or "root")
    return out



def _stale_device_charge(ctx: CheckContext, violation: Violation) -> bool:
    """A card over its capacity still charges a pod that is no longer placed on its node: a discarded vGPU
    allocation, which upstream's release cannot give back (docs/findings.md #28)."""
    node = ctx.ssn.nodes.get(_node_of(violation))
    device = next(iter(_named(violation, "device")), "")
    if node is None:
        return False
    placed = {t.uid for t in node.tasks.values()}
    for pool in node.others.values():
        for card in getattr(pool, "devices", {}).values():
            if str(getattr(card, "uuid", card.id)) == device and set(card.pods) - placed:
                return True
    return False

def _mig_instance_given_twice(ctx: CheckContext, violation: Violation) -> bool:
    """F35: a MIG instance held by two pods both placed in this session: MIG TryAddPod does not mark the
    instance used, so the session's next pod on the card is given the same one (a pod read back from its
    annotation does mark it: a new pod sharing an older pod's instance is not this finding)."""
    if " MIG instance " not in violation.message:
        return False
    bound = {record.task for record in ctx.ssn.cache.log.binds[ctx.session_state.get("binds_at_open", 0):]}
    return len(bound & set(_named(violation, "task"))) >= 2  # two placed by this session's TryAddPod


def _failed_recovery(ctx: CheckContext, violation: Violation) -> bool:
    """F45: the job's saved plan could not be replayed whole (RecoverOperations failed) and allocate's hypernode
    search returned without discarding the part it replayed."""
    return bool(set(_named(violation, "job")) & ctx.ssn.failed_recoveries)


def _pool_name_shared(ctx: CheckContext, violation: Violation) -> bool:
    """F47: the over-consumed pool's name is also a pool of counter sets of another driver (upstream's allocator
    keys counters by pool name alone)."""
    where = next(iter(_named(violation, "counter set")), "")
    driver, _, rest = where.partition("/")
    pool = rest.rpartition("/")[0]
    return any(s.pool == pool and s.driver != driver and s.shared_counters for s in ctx.ssn.cache.dra.slices)
def _unpipelined_twice(ctx: CheckContext, violation: Violation) -> bool:
    """F31: a task of the job (or queue) the violation names was unpipelined by a caller after its failed
    Pipeline had already rolled itself back (a simulated trial's UnPipeline): every deallocate handler ran twice,
    so a plugin's accounting falls below the tasks it holds until a later Sub panics."""
    jobs, queues = set(_named(violation, "job")), set(_named(violation, "queue"))
    rolled_back: set[tuple[str, int]] = set()
    for op in ctx.ssn.operations:
        if op.op != "unpipeline":
            continue
        if op.rollback:
            rolled_back.add((op.task_uid, op.statement))
        elif (op.task_uid, op.statement) in rolled_back:
            job = ctx.ssn.jobs.get(op.job)
            if op.job in jobs or (job is not None and job.queue in queues):
                return True
    return False


def _sub_group_placed_by_reclaim(ctx: CheckContext, violation: Violation) -> bool:
    """F4 for a subgroup: reclaim pipelined a task of a hard-topology subgroup onto any node (it has no network
    topology path), and allocate then searched hypernodes for the subgroup's other tasks without it; the tasks
    allocate placed this session lie, by themselves, in one hypernode of the subgroup's allowed tiers."""
    from schedcheck.invariants.catalog.topology import placed_tasks, sub_groups, topology_tree

    job = ctx.ssn.jobs.get(_job_of(violation))
    tree = topology_tree(ctx)
    if job is None or job.pod_group is None or tree is None:
        return False
    leaves, tiers, names = tree
    new = _allocated_now(ctx)
    reclaimed = {op.task_uid for op in ctx.ssn.operations if op.action == "reclaim" and op.op == "pipeline"}
    policies = {p.name: p for p in job.pod_group.sub_group_policy}
    for (name, _), tasks in sub_groups(job).items():
        policy = policies.get(name)
        nt = policy.network_topology if policy is not None else None
        if nt is None or nt.mode != "hard":
            continue
        placed = placed_tasks(tasks)
        if not any(t.uid in reclaimed and t.uid not in new for t in placed):
            continue
        fresh = {t.node_name for t in placed if t.uid in new}
        highest = nt.highest_tier_allowed if nt.highest_tier_allowed is not None else names.get(nt.highest_tier_name)
        if fresh and highest is not None and any(tiers[n] <= highest and fresh <= members
                                                 for n, members in leaves.items()):
            return True
    return False


def _numa_assignment_from_an_earlier_predicate(ctx: CheckContext, violation: Violation) -> bool:
    """F58: one of the pods sharing the CPU was pipelined by an action that filters with the preempt-mode
    predicates, where an earlier plugin's Unschedulable status ends the predicate chain before numa-aware's
    predicate and lets the node through: the pipeline takes the CPU ids numa-aware assigned to the task on that
    node in an earlier check, against a free set that has changed since."""
    keys = set(_named(violation, "task"))
    return any(op.op == "pipeline" and op.action in ("preempt", "reclaim", "gangpreempt", "gangreclaim")
               and op.task in keys for op in ctx.ssn.operations)


def _gated_task_placed_by_nomination(ctx: CheckContext, violation: Violation) -> bool:
    """F53: allocate's nomination fast path placed the gated task the violation names (it checks no gate),
    whether its plan was then committed or discarded when a later task of the plan failed. The ordinary path
    skips a gated task, so a gated task in a fast path's worksheet was placed by that fast path."""
    tried = {task for record in ctx.ssn.nominations for task in record.nominated_nodes}  # placed ⊆ worksheet
    return any(task in tried for task in _named(violation, "task"))



def _extender_victim_copy(ctx: CheckContext, violation: Violation) -> bool:
    """F59: this session's extender named a victim other than as the action offered it (a task the session
    lacks, or a copy with fields of its own: plugins/extender_victims.py), and the violation is about its
    job, queue, node or task: upstream evicts the decoded copy, whose books are not the task's."""
    plugin = ctx.ssn.plugins.get("extender") if hasattr(ctx.ssn, "plugins") else None
    copies = getattr(plugin, "named_victims", ())
    if not copies:
        return False
    jobs = {copy.job for copy in copies}
    queues = {ctx.ssn.jobs[job].queue for job in jobs if job in ctx.ssn.jobs}
    about = {("job", j) for j in jobs} | {("queue", q) for q in queues} | \
        {("node", copy.node_name) for copy in copies} | {("task", copy.key) for copy in copies}
    return any((kind, name) in about for kind in ("job", "queue", "node", "task") for name in _named(violation, kind))

KNOWN_FINDINGS: tuple[KnownFinding, ...] = (
    KnownFinding("F1", "node.predicates-pod-view",
                 "the predicates plugin loses a victim put back by a discarded reclaim or preemption",
                 "docs/findings.md #1", _discarded_eviction_on_node),
    KnownFinding("F1", "node.host-ports-free",
                 "backfill or allocate reuses the host port of a victim put back by a discarded reclaim or "
                 "preemption, which the predicates plugin no longer sees",
                 "docs/findings.md #1", _discarded_eviction_on_node),
    KnownFinding("F1", "node.pod-anti-affinity-respected",
                 "backfill or allocate places a pod next to a victim put back by a discarded reclaim or preemption, "
                 "which the predicates plugin (and so its InterPodAffinity filter) no longer sees",
                 "docs/findings.md #1", lambda ctx, violation: any(op.op == "unevict" for op in ctx.ssn.operations)),
    KnownFinding("F1", "node.topology-spread-respected",
                 "backfill or allocate counts a spread domain without a victim put back by a discarded reclaim or "
                 "preemption, which the predicates plugin (and so its PodTopologySpread filter) no longer sees",
                 "docs/findings.md #1", lambda ctx, violation: any(op.op == "unevict" for op in ctx.ssn.operations)),
    KnownFinding("F2", "node.host-ports-free",
                 "reclaim (or gangpreempt, gangreclaim, topology-aware preempt) pipelines a task onto a node where "
                 "a pod it did not evict holds the same host port",
                 "docs/findings.md #12", _reclaim_pipeline),
    KnownFinding("F2", "node.host-ports-free",
                 "once a pod sharing a host port leaves the node in the session, Kubernetes' UsedPorts (a set) "
                 "forgets the port, so backfill or allocate places a pod onto the pod still holding it",
                 "docs/findings.md #12", _port_forgotten),
    KnownFinding("F3", "topology.hard-within-hypernode",
                 "allocate places a hard-mode job's new tasks in another hypernode than the ones it already runs: "
                 "without the job-allocated-hypernode annotation, the session recovers the job's hypernode only "
                 "from subgroups with a network topology of their own, and only from nodes some HyperNode holds "
                 "(an annotation naming a HyperNode that no longer exists counts as none)",
                 "docs/findings.md #13", _forgotten_hyper_node),
    KnownFinding("F3", "topology.sub-group-within-hypernode",
                 "allocate places a hard-topology subgroup's new tasks away from the ones it already runs when one "
                 "of those runs on a node no HyperNode holds (or the session lacks): the session cannot recover "
                 "the subgroup's hypernode",
                 "docs/findings.md #13", _forgotten_sub_group_hyper_node),
    KnownFinding("F4", "topology.hard-within-hypernode",
                 "reclaim pipelines a hard-mode job's task onto any node, ignoring its network topology, and allocate "
                 "then places the job's other tasks by the hypernode search, which does not see that task",
                 "docs/findings.md #14", _placed_by_reclaim),
    KnownFinding("F4", "topology.sub-group-within-hypernode",
                 "reclaim pipelines a hard-topology subgroup's task onto any node, ignoring its network topology, and "
                 "allocate then places the subgroup's other tasks by the hypernode search, which does not see that task",
                 "docs/findings.md #14", _sub_group_placed_by_reclaim),
    KnownFinding("F5", "victim.pdb-respected",
                 "the pdb plugin grants each preemptor or reclaimer the budget's whole disruptionsAllowed, so one "
                 "session evicts more of a budget's pods than it allows",
                 "docs/findings.md #15", _pdb_budget_per_call),
    KnownFinding("F7", "victim.pdb-respected",
                 "gangpreempt and gangreclaim never ask the pdb plugin (it registers no UnifiedEvictableFn), so they "
                 "evict pods a PodDisruptionBudget protects",
                 "docs/findings.md #17", _pdb_not_asked),
    KnownFinding("F8", "victim.pdb-respected",
                 "a tier whose plugin refuses every candidate decides nothing, so a later tier's plugin alone picks "
                 "the victims: the pdb plugin's refusal is overridden by, say, proportion in the next tier",
                 "docs/findings.md #18", _veto_passed_on),
    KnownFinding("F28", "device.within-capacity",
                 "a discarded vGPU allocation stays charged on its cards (the release reads the pod's own "
                 "annotations, which lack the session's choice), and a pod put back on the node (an undone "
                 "eviction) charges the same card again: the session's device ledger counts more than the card has",
                 "docs/findings.md #28", _stale_device_charge),
    KnownFinding("F35", "device.within-capacity",
                 "two pods placed on one MIG card in one session are given the same MIG instance (MIG TryAddPod "
                 "charges the card but not its instance usage, which only a placed pod's annotation fills)",
                 "docs/findings.md #35", _mig_instance_given_twice),
    KnownFinding("F9", "order.task",
                 "upstream's default task order (CompareTask: pod-name index when both pods have one, else creation "
                 "time, else UID) is not a strict weak order once some of a job's pods end in an index and some "
                 "do not, so the order allocate takes them in depends on the heap's history",
                 "docs/findings.md #19", _mixed_pod_indexes),
    KnownFinding("F10", "gang.session-atomic",
                 "gangreclaim or gangpreempt pipelines a task allocate bound this session (its subjob's index still "
                 "lists it Pending) and, discarding, leaves it Pending in its job: the bound gang counts short",
                 "docs/findings.md #20", _bound_task_pipelined_again),
    KnownFinding("F10", "task.single-node",
                 "gangreclaim or gangpreempt pipelines a task allocate bound this session onto a second node",
                 "docs/findings.md #20", _bound_task_pipelined_again),
    KnownFinding("F10", "gang.sub-groups-ready",
                 "gangreclaim or gangpreempt pipelines a task allocate bound this session and, rolling back or "
                 "discarding, leaves it Pending in its subjob: the bound job's subgroups count short at close",
                 "docs/findings.md #20", _bound_task_pipelined_again),
    KnownFinding("F10", "statement.discard-restores",
                 "discarding a gangreclaim or gangpreempt pipeline of a task allocate bound this session leaves it "
                 "Pending and off its node",
                 "docs/findings.md #20", _bound_task_pipelined_again),
    KnownFinding("F10", "statement.discard-no-trace",
                 "discarding a gangreclaim or gangpreempt pipeline of a task allocate bound this session leaves it "
                 "Pending",
                 "docs/findings.md #20", _bound_task_pipelined_again),
    *(KnownFinding("F10", rule,
                   "gangreclaim or gangpreempt pipelines again a task this session already bound or pipelined "
                   "(its subjob's index still lists it Pending): the plugins count it twice, or count it for a "
                   "task the rollback left Pending",
                   "docs/findings.md #20", _bound_task_pipelined_again)
      for rule in ("queue.drf-allocated", "queue.drf-share", "queue.proportion-allocated", "queue.capacity-allocated",
                   # the failed re-pipeline's rollback takes the bound task off its node, while the predicates
                   # plugin's view keeps it (its AllocateFunc ran before the node refused the task twice)
                   "node.predicates-pod-view")),
    *(KnownFinding("F39", rule,
                   "an allocate after gangpreempt or gangreclaim in the same session places again the tasks the gang "
                   "action just pipelined (their subjob's index still lists them Pending): the nomination fast path "
                   "binds them on their pods' nominated nodes while the pipelined copies stay on theirs, and a failed "
                   "attempt's rollback takes a pipelined copy off its node",
                   "docs/findings.md #39", _gang_pipelined_task_placed_again)
      for rule in ("task.single-node", "statement.events-balanced", "statement.discard-restores",
                   "statement.discard-no-trace", "node.predicates-pod-view", "gang.session-atomic",
                   "gang.sub-groups-ready", "queue.drf-allocated", "queue.drf-share", "queue.proportion-allocated",
                   "queue.capacity-allocated")),
    KnownFinding("F45", "gang.no-stranded-placement",
                 "allocate's hypernode search replays the best hypernode's saved operations into a new statement and, "
                 "when one fails (RecoverOperations stops there), returns without discarding the operations it "
                 "already replayed: the job keeps tasks allocated although it is neither ready nor pipelined",
                 "docs/findings.md #45", _failed_recovery),
    KnownFinding("F47", "dra.counters-not-exceeded",
                 "the structured allocator keeps available and consumed counters by pool name, not driver and pool: "
                 "another driver's pool of the same name lends its counter sets and shares the consumption",
                 "docs/findings.md #47", _pool_name_shared),
    KnownFinding("F50", "queue.capacity-dra-within-quota",
                 "capacity's hierarchy charges an ancestor's DRA quota at session open only through leaves that have a "
                 "DRA quota of their own (getDRADelta is taken for those alone), while every allocation of the "
                 "session is charged to it: devices and capacity held by the running tasks of a quota-less leaf are "
                 "not counted, and the ancestor admits past its capability",
                 "docs/findings.md #50", lambda ctx, violation: bool(_named(violation, "leaf queue"))),
    KnownFinding("F53", "task.gated-not-placed",
                 "allocate's nomination fast path (a subjob gangpreempt or gangreclaim nominated) allocates a task "
                 "held only by Volcano's queue-allocation gate on its pod's nominated node without looking at the "
                 "gate, and the commit binds the still-gated pod",
                 "docs/findings.md #53", _gated_task_placed_by_nomination),
    *(KnownFinding("F31", rule,
                   "a simulated trial (runSimulateTrialAtHyperNode: gangpreempt, gangreclaim) calls UnPipeline on a "
                   "task whose Pipeline failed and was already rolled back, so every deallocate handler runs twice: "
                   "the plugin's accounting falls below what the job's tasks hold (until a later Sub panics, the "
                   "assertion F31)",
                   "docs/findings.md #31", _unpipelined_twice)
      for rule in ("queue.drf-allocated", "queue.drf-share", "queue.proportion-allocated", "queue.proportion-recomputed",
                   "queue.accounting-non-negative", "queue.capacity-allocated")),
    KnownFinding("F58", "numa.cpu-sets-disjoint",
                 "numa-aware assigns CPU ids in its predicate and takes them at the allocate event; preempt, reclaim "
                 "and the gang actions filter with the preempt-mode predicates, where an earlier plugin's "
                 "Unschedulable status ends the chain before numa-aware's predicate runs and lets the node through, "
                 "so a pipeline takes the ids assigned to the task on that node in an earlier check: two pods get "
                 "the same CPUs",
                 "docs/findings.md #58", _numa_assignment_from_an_earlier_predicate),
    *(KnownFinding("F59", rule,
                   "the extender's preemptable / reclaimable victims are the TaskInfos decoded from its reply: a "
                   "victim under a UID the session lacks joins its job and takes its pod's place on the node, and a "
                   "copy with its own request is counted and evicted with that request, so the plugins' and the "
                   "node's books drift from the tasks, reclaim pipelines onto a node the eviction cannot free, and "
                   "an eviction the cache refuses is undone into a second Running task",
                   "docs/findings.md #59", _extender_victim_copy)
      for rule in ("queue.drf-allocated", "queue.drf-share", "queue.proportion-allocated", "queue.proportion-recomputed",
                   "queue.capacity-allocated", "queue.accounting-non-negative", "statement.events-balanced",
                   "statement.discard-restores", "node.placement-fits")),
    KnownFinding("F6", "victim.shuffle-from-high-node",
                 "rescheduling's lowNodeUtilization finds its victim by pod name alone, so shuffle evicts a pod of "
                 "the same name in another namespace, on a low node, and leaves the overloaded node as it was",
                 "docs/findings.md #16", _namesake),
)


@dataclass(frozen=True)
class KnownAssertion:
    """A known upstream finding that is an assertion upstream panics on (the runner's `upstream.assert`):
    matched by where the reference raised it."""

    id: str
    title: str
    doc: str
    matches: Callable[[BaseException], bool]


def _raised_in(exc: BaseException, module: str, function: str) -> bool:
    """Some frame between the raise and the catch is `function` of the reference module `module`."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == function and code.co_filename.endswith(f"/{module}.py"):
            return True
        tb = tb.tb_next
    return False



def _evicting_an_extender_copy(exc: BaseException) -> bool:
    """F59's assertion: raised while the statement evicted a victim the extender named other than as offered."""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "evict" and frame.f_code.co_filename.endswith("/statement.py"):
            victim, statement = frame.f_locals.get("reclaimee"), frame.f_locals.get("self")
            plugin = getattr(getattr(statement, "ssn", None), "plugins", {}).get("extender")
            if not is_nil(victim) and getattr(victim, "uid", None) in getattr(plugin, "outside_victims", ()):
                return True
        tb = tb.tb_next
    return False

KNOWN_ASSERTIONS: tuple[KnownAssertion, ...] = (
    KnownAssertion("F21", "task-topology takes a task placed twice in one session out of its bucket's pending request "
                   "twice (it has an allocate event handler and no deallocate handler): Resource.Sub's assertion "
                   "fails in Bucket.TaskBound, after a discarded statement whose task is placed again (gang's "
                   "discard then preempt's pipeline, allocate's hypernode search replaying the operations it saved, "
                   "a discarded eviction), or in calcBucketScore, when a later node order takes the other members' "
                   "requests out of the bucket's request it lowered",
                   "docs/findings.md #21",
                   lambda exc: _raised_in(exc, "task_topology_buckets", "task_bound")
                   or _raised_in(exc, "task_topology", "bucket_score")),
    KnownAssertion("F31", "a simulated trial (runSimulateTrialAtHyperNode: gangpreempt, gangreclaim) calls UnPipeline "
                   "on a task whose Pipeline failed and was already rolled back, so every deallocate handler runs "
                   "twice: proportion's Resource.Sub assertion fails. A Pipeline fails when an allocate handler "
                   "does, as the predicates plugin's does when deviceshare cannot give the task its cards (the "
                   "trial's preempt-mode predicates let deviceshare's Unschedulable pass)",
                   "docs/findings.md #31",
                   # the second rollback, or the trial's discard rolling the same task back a third time
                   lambda exc: _raised_in(exc, "simulate", "run_simulate_trial")),
    KnownAssertion("F32", "gangpreempt and gangreclaim replay a nomination plan with RecoverOperations, which stops at "
                   "a failed operation and keeps the evictions it replayed; the next bundle's dry run then evicts "
                   "the same victim again and proportion's deallocate runs twice: its Resource.Sub assertion fails. "
                   "A replayed pipeline fails when deviceshare's cards are gone, as after a discarded vGPU dry run "
                   "(docs/findings.md #28)",
                   "docs/findings.md #32",
                   lambda exc: _raised_in(exc, "simulate", "build_nomination_plan") and _raised_in(exc, "statement",
                                                                                                    "evict")),
    KnownAssertion("F34", "HAMi Ascend's ScoreNode indexes the empty device list FilterNode let through for a "
                   "container asking a count of 0 where no device fits (index out of range)",
                   "docs/findings.md #34", lambda exc: _raised_in(exc, "ascend_hami", "score_node")),
    KnownAssertion("F40", "numa-aware's batch node order reads every listed node's CPU details through its NUMA info: "
                   "a node without a Numatopology object is a nil pointer dereference",
                   "docs/findings.md #40", lambda exc: _raised_in(exc, "numaaware", "batch_node_order")),
    KnownAssertion("F59", "a victim copy decoded from the extender's reply carries a request larger than what drf or "
                   "proportion hold for its job or queue: their deallocate handler's Resource.Sub assertion fails when "
                   "the statement evicts it",
                   "docs/findings.md #59",
                   lambda exc: not isinstance(exc, NilDereference) and _evicting_an_extender_copy(exc)),
    KnownAssertion("F60", "a victim in the extender's preemptable / reclaimable reply that is null or lacks a pointer "
                   "field (Resreq, InitResreq, Pod) decodes as nil, and the scheduler reads through it (ValidateVictims "
                   "adds every victim's Resreq, the node indexes it by PodKey(Pod)): nil pointer dereference",
                   "docs/findings.md #60", lambda exc: isinstance(exc, NilDereference)),
    KnownAssertion("F61", "Kubernetes' DynamicResources PreBind records a BindingConditionsPending event through the "
                   "framework handle's EventRecorder when a claim's devices have binding conditions "
                   "(DRADeviceBindingConditions, on at k8s 1.36), and Volcano's handle returns none: a nil pointer "
                   "dereference in the bind goroutine ends the scheduler, met conditions or not",
                   "docs/findings.md #61", lambda exc: _raised_in(exc, "dynamic_resources", "pre_bind")),
)


def known_assertion_for(exc: BaseException) -> KnownAssertion | None:
    return next((known for known in KNOWN_ASSERTIONS if known.matches(exc)), None)


def known_finding_for(ctx: CheckContext, violation: Violation, invariant: str) -> KnownFinding | None:
    for finding in KNOWN_FINDINGS:
        if finding.invariant == invariant and finding.matches(ctx, violation):
            return finding
    return None


def known_ids() -> list[str]:
    return sorted({finding.id for finding in (*KNOWN_FINDINGS, *KNOWN_ASSERTIONS)})
