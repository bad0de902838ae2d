"""Victim rules for committed preempt and reclaim statements (seed 000; volcano-semantics §8.4-8.5, §9)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from schedcheck.invariants.context import CheckContext
from schedcheck.invariants.placement import label_selector_matches
from schedcheck.invariants.registry import ACTION, QUALITY, STATEMENT, invariant
from schedcheck.invariants.violation import Violation
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.session import Operation

EVICTING_ACTIONS = ("preempt", "reclaim")


@dataclass
class Preemption:
    """One preemptor pipelined onto a node, with the evictions on that node that made room for it."""

    preemptor: Operation
    victims: list[Operation] = field(default_factory=list)


def preemptions(ctx: CheckContext) -> list[Preemption]:
    """Pair each pipeline of a committed statement with the evictions before it on the same node."""
    if ctx.statement_kind != "commit" or ctx.action not in EVICTING_ACTIONS:
        return []
    pending: dict[str, list[Operation]] = {}
    found = []
    for record in ctx.statement_records:
        if record.op == "evict":
            pending.setdefault(record.node, []).append(record)
        elif record.op == "pipeline":
            found.append(Preemption(record, pending.pop(record.node, [])))
    return found


def task_of(ctx: CheckContext, record: Operation) -> TaskInfo | None:
    job = ctx.ssn.jobs.get(record.job)
    return job.tasks.get(record.task_uid) if job is not None else None


def named_by_extender(ctx: CheckContext, uid: str) -> bool:
    """The extender's preemptable / reclaimable reply named this task although the action did not offer it:
    upstream evicts it regardless of the action's victim filters (plugins/extender.py, outside_victims)."""
    plugin = ctx.ssn.plugins.get("extender") if hasattr(ctx.ssn, "plugins") else None
    return uid in getattr(plugin, "outside_victims", ())


def _victims(ctx: CheckContext):
    for p in preemptions(ctx):
        preemptor = task_of(ctx, p.preemptor)
        for record in p.victims:
            victim = task_of(ctx, record)
            if preemptor is not None and victim is not None and not named_by_extender(ctx, victim.uid):
                yield p, preemptor, record, victim


@invariant("victim.status", "preempt evicts only Bound or Running tasks, reclaim only Running ones", "victim",
           "preempt.go / reclaim.go victim filters; semantics §8.4-8.5", (STATEMENT,))
def victim_status(ctx: CheckContext) -> Iterator[Violation]:
    allowed = {"preempt": {TaskStatus.Bound, TaskStatus.Running}, "reclaim": {TaskStatus.Running}}[ctx.action] \
        if ctx.action in EVICTING_ACTIONS else set()
    for _, preemptor, record, victim in _victims(ctx):
        if record.from_status not in allowed:
            yield Violation("", f"{ctx.action} evicted {victim.key}, which was "
                                f"{record.from_status.name if record.from_status else '?'}",
                            [f"task {victim.key}", f"task {preemptor.key}"], sorted(s.name for s in allowed),
                            record.from_status.name if record.from_status else None)


@invariant("victim.preemptable", "preempt and reclaim never evict a task marked volcano.sh/preemptable=false "
           "(shuffle's rescheduling evictions ignore the mark upstream, and so does a victim an extender names "
           "outside the evictees)", "victim",
           "preempt.go / reclaim.go (task.Preemptable); plugins/extender/extender.go (decoded victims); "
           "semantics §2.4", (STATEMENT,))
def victim_preemptable(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.statement_kind != "commit" or ctx.action not in EVICTING_ACTIONS:
        return
    for record in ctx.statement_records:
        victim = task_of(ctx, record) if record.op == "evict" else None
        if victim is not None and not victim.preemptable and not named_by_extender(ctx, victim.uid):
            preemptor = next((f"task {r.task}" for r in ctx.statement_records if r.op == "pipeline"), None)
            yield Violation("", f"{ctx.action} evicted {victim.key}, which is not preemptable",
                            [f"task {victim.key}"] + ([preemptor] if preemptor else []), "preemptable",
                            "not preemptable")


@invariant("victim.best-effort", "a BestEffort preemptor never evicts a task that is not BestEffort", "victim",
           "preempt.go victim filter; semantics §8.4", (STATEMENT,))
def victim_best_effort(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.action != "preempt":
        return
    for _, preemptor, _, victim in _victims(ctx):
        if preemptor.best_effort and not victim.best_effort:
            yield Violation("", f"BestEffort {preemptor.key} evicted {victim.key}, which requests resources",
                            [f"task {victim.key}", f"task {preemptor.key}"], "BestEffort victim", "guaranteed victim")


@invariant("victim.preempt-scope", "preempt evicts only within the preemptor's queue (phase B: within its job)",
           "victim", "preempt.go victim filters; semantics §8.4", (STATEMENT,))
def victim_preempt_scope(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.action != "preempt":
        return
    for _, preemptor, _, victim in _victims(ctx):
        p_job, v_job = ctx.ssn.jobs.get(preemptor.job), ctx.ssn.jobs.get(victim.job)
        if p_job is not None and v_job is not None and p_job.queue != v_job.queue:
            yield Violation("", f"preempt crossed queues: {preemptor.key} (queue {p_job.queue}) evicted "
                                f"{victim.key} (queue {v_job.queue})", [f"task {victim.key}", f"task {preemptor.key}"],
                            p_job.queue, v_job.queue)


@invariant("victim.preempt-priority", "preempt evicts only lower-priority jobs, or lower-priority tasks of the "
           "preemptor's own job", "victim", "priority.go Preemptable; seed 000 §9.1", (STATEMENT,),
           requires=("priority",), severity=QUALITY)
def victim_preempt_priority(ctx: CheckContext) -> Iterator[Violation]:
    # Quality: when priority's tier offers no victim, the tiered intersection lets a later tier
    # (e.g. drf) decide alone, and upstream then evicts equal-priority work (semantics §6.2 quirk 1).
    if ctx.action != "preempt":
        return
    for _, preemptor, _, victim in _victims(ctx):
        p_job, v_job = ctx.ssn.jobs.get(preemptor.job), ctx.ssn.jobs.get(victim.job)
        if p_job is None or v_job is None:
            continue
        if p_job.uid != v_job.uid and not v_job.priority < p_job.priority:
            yield Violation("", f"{preemptor.key} (job priority {p_job.priority}) evicted {victim.key} of a job "
                                f"with priority {v_job.priority}", [f"task {victim.key}", f"task {preemptor.key}"],
                            f"< {p_job.priority}", v_job.priority)
        elif p_job.uid == v_job.uid and not victim.priority < preemptor.priority:
            yield Violation("", f"{preemptor.key} (task priority {preemptor.priority}) evicted {victim.key} of its "
                                f"own job with task priority {victim.priority}",
                            [f"task {victim.key}", f"task {preemptor.key}"], f"< {preemptor.priority}",
                            victim.priority)


def decides_victims(ssn, plugin: str, action: str) -> bool:
    """`plugin` is the last voter on the action's victims (Preemptable for preempt, Reclaimable for reclaim)
    of the only tier that has voters, so every victim passed its filter: no earlier tier can answer first (a
    tier with victims ends the search), no later tier can decide alone after an empty intersection (the tier
    fallback, semantics §6.2 quirk 1), and no later plugin of its tier can refill an intersection its filter
    emptied (quirk 2: the next plugin's candidates start afresh; upstream #5963)."""
    tiers = ssn.registered("preemptable" if action == "preempt" else "reclaimable")
    for index, tier in enumerate(tiers):
        if any(name == plugin for name, _ in tier):
            return tier[-1][0] == plugin and not any(tiers[:index]) and not any(tiers[index + 1:])
    return False


@invariant("victim.preempt-priority-decisive", "where priority is the last preemptable voter of the only tier "
           "with any, preempt evicts only lower-priority jobs, or lower-priority tasks of the preemptor's own job", "victim",
           "priority.go Preemptable; session_plugins.go Preemptable (tiered intersection); seed 000 §9.1; "
           "semantics §6.2 quirk 1", (STATEMENT,), requires=("priority",))
def victim_preempt_priority_decisive(ctx: CheckContext) -> Iterator[Violation]:
    # victim.preempt-priority as a safety rule, where its quirk cannot arise: with no later tier to decide
    # alone (drf's preemptable off or absent, as in the helm and capacity confs), priority's verdict stands.
    if ctx.action == "preempt" and decides_victims(ctx.ssn, "priority", "preempt"):
        yield from victim_preempt_priority(ctx)


@invariant("victim.reclaim-scope", "reclaim takes only from other queues that are reclaimable", "victim",
           "reclaim.go reclaimees; queue_info.go Reclaimable; semantics §8.5", (STATEMENT,))
def victim_reclaim_scope(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.action != "reclaim":
        return
    for _, preemptor, _, victim in _victims(ctx):
        p_job, v_job = ctx.ssn.jobs.get(preemptor.job), ctx.ssn.jobs.get(victim.job)
        if p_job is None or v_job is None:
            continue
        queue = ctx.ssn.queues.get(v_job.queue)
        if v_job.queue == p_job.queue:
            yield Violation("", f"reclaim took {victim.key} from the reclaimer's own queue {p_job.queue}",
                            [f"task {victim.key}", f"queue {p_job.queue}"], "another queue", v_job.queue)
        elif queue is not None and not queue.reclaimable():
            yield Violation("", f"reclaim took {victim.key} from queue {v_job.queue}, which is not reclaimable",
                            [f"task {victim.key}", f"queue {v_job.queue}"], "reclaimable queue", "reclaimable: false")


def _by_queue(ctx: CheckContext, preemption_list: list[Preemption]) -> dict[str, list[TaskInfo]]:
    victims: dict[str, list[TaskInfo]] = {}
    for p in preemption_list:
        for record in p.victims:
            victim = task_of(ctx, record)
            job = ctx.ssn.jobs.get(record.job)
            if victim is not None and job is not None:
                victims.setdefault(job.queue, []).append(victim)
    return victims


@invariant("victim.reclaim-over-deserved", "reclaim takes from a queue only while that queue is above its "
           "deserved share", "victim", "proportion.go Reclaimable; seed 001 (Reclaimable)", (STATEMENT,),
           requires=("proportion:enableReclaimable",), severity=QUALITY)
def victim_reclaim_over_deserved(ctx: CheckContext) -> Iterator[Violation]:
    # Quality: with proportion in a later tier than gang (upstream's default tiers), gang's vote
    # decides Reclaimable alone and proportion is never asked (semantics §6.2 quirk 1), so upstream
    # reclaims from queues within their deserved share (found by the gate, seed 1).
    plugin = ctx.ssn.plugins.get("proportion")
    if ctx.action != "reclaim" or plugin is None:
        return
    for queue, victims in _by_queue(ctx, preemptions(ctx)).items():
        attr = plugin.queue_attrs.get(queue)
        if attr is None:
            continue
        allocated = attr.allocated.clone()
        for victim in victims:
            allocated.add(victim.resreq)  # back to the state before the evictions
        for victim in victims:
            if allocated.less_equal(attr.deserved, Zero):
                yield Violation("", f"reclaim took {victim.key} from queue {queue} while its allocated <{allocated}> "
                                    f"was within deserved <{attr.deserved}>", [f"task {victim.key}", f"queue {queue}"],
                                "allocated above deserved", allocated.as_dict())
            allocated.sub_without_assert(victim.resreq)


@invariant("victim.reclaim-over-deserved-decisive", "where proportion is the last reclaimable voter of the only "
           "tier with any, each reclaim's victims from one queue are a set proportion could offer: in some order of the node's tasks, "
           "the queue stayed above its deserved share until the last of them", "victim",
           "proportion.go Reclaimable (allocated less the victims already offered, against deserved); "
           "session_plugins.go Reclaimable (tiered intersection); semantics §6.2 quirk 1", (STATEMENT,),
           requires=("proportion:enableReclaimable",))
def victim_reclaim_over_deserved_decisive(ctx: CheckContext) -> Iterator[Violation]:
    # Reclaimable walks the node's tasks in map order, offering each while its queue's allocated, less the
    # victims offered before it, exceeds deserved on some dimension. Any order is legal, so a victim set E is
    # possible when its members can come first with the largest-effect one last: some e in E with
    # allocated - (sum(E) - e) not within deserved. One pipeline's evictions are one Reclaimable call; the
    # queue's allocated before it is the statement's end state plus the victims of that call and of later ones.
    plugin = ctx.ssn.plugins.get("proportion")
    if ctx.action != "reclaim" or plugin is None or not decides_victims(ctx.ssn, "proportion", "reclaim"):
        return
    calls = [_by_queue(ctx, [p]) for p in preemptions(ctx)]
    later: dict[str, Resource] = {}
    for call in reversed(calls):
        for queue, victims in sorted(call.items()):
            attr = plugin.queue_attrs.get(queue)
            if attr is None:
                continue
            taken = Resource()
            for victim in victims:
                taken.add(victim.resreq)
            after = attr.allocated.clone().add(later.get(queue, Resource()))  # once this call's victims left
            if not _possible_in_some_order(after, [v.resreq for v in victims], attr.deserved):
                before = after.clone().add(taken)
                names = ", ".join(v.key for v in victims)
                yield Violation("", f"reclaim took {names} from queue {queue} (allocated <{before}>, deserved "
                                    f"<{attr.deserved}>): in no order of them does the queue stay above deserved until "
                                    f"the last, so proportion could not have offered them all",
                                [f"task {v.key}" for v in victims] + [f"queue {queue}"],
                                "allocated above deserved before the last victim", before.as_dict())
            later.setdefault(queue, Resource()).add(taken)


def _possible_in_some_order(after: Resource, requests: list[Resource], deserved: Resource) -> bool:
    """Some victim, offered last, still found its queue above deserved: allocated once the others had left
    (`after` plus its own request) is not within deserved on some dimension."""
    return any(not after.clone().add(request).less_equal(deserved, Zero) for request in requests)


@invariant("victim.reclaimer-not-overused", "a queue that is overused never reclaims", "victim",
           "reclaim.go (Overused queues are dropped); proportion.go Overused", (STATEMENT,), requires=("proportion:enabledOverused",))
def reclaimer_not_overused(ctx: CheckContext) -> Iterator[Violation]:
    plugin = ctx.ssn.plugins.get("proportion")
    if ctx.action != "reclaim" or plugin is None:
        return
    # reclaim asks Overused once per job, before the job's statement: what the statement pipelined (with
    # victims or into room that was already free) is taken off the queue's allocated to see what it asked on
    pipelined: dict[str, Resource] = {}
    reclaimed: set[str] = set()
    for p in preemptions(ctx):
        task = task_of(ctx, p.preemptor)
        job = ctx.ssn.jobs.get(p.preemptor.job)
        if task is not None and job is not None:
            pipelined.setdefault(job.queue, Resource()).add(task.resreq)
            if p.victims:
                reclaimed.add(job.queue)
    for queue in sorted(reclaimed):
        placed = pipelined[queue]
        attr = plugin.queue_attrs.get(queue)
        if attr is None:
            continue
        before = attr.allocated.clone().sub_without_assert(placed)
        if attr.deserved.less_equal(before, Zero):
            yield Violation("", f"queue {queue} reclaimed although it was overused (allocated <{before}>, "
                                f"deserved <{attr.deserved}>)", [f"queue {queue}"], "not overused", before.as_dict())


@invariant("victim.gang-min", "a committed eviction never cuts a victim job below its MinAvailable", "victim",
           "gang.go Preemptable/Reclaimable; semantics §9.1", (STATEMENT,), requires=("gang",), severity=QUALITY)
def victim_gang_min(ctx: CheckContext) -> Iterator[Violation]:
    # Quality, not safety: the tiered intersection lets a later tier decide alone when gang's tier
    # yields no victims (semantics §6.2 quirk 1), so upstream itself can cut a gang.
    gang = next((o for tier in ctx.ssn.tiers for o in tier.plugins if o.name == "gang"), None)
    flag = "enablePreemptable" if ctx.action == "preempt" else "enableReclaimable"
    if gang is None or not gang.enabled(flag):
        return  # gang does not vote on victims here, so nothing protects the gang
    jobs = {record.job for p in preemptions(ctx) for record in p.victims}
    for uid in sorted(jobs):
        job = ctx.ssn.jobs.get(uid)
        if job is not None and job.ready_task_num() < job.min_available:
            yield Violation("", f"job {uid} was cut to {job.ready_task_num()} ready tasks, below its minAvailable "
                                f"{job.min_available}", [f"job {uid}"], f">= {job.min_available}",
                            job.ready_task_num())


@invariant("victim.gang-min-decisive", "where gang is the last victim voter of the only tier with any, a "
           "committed eviction of preempt or reclaim never cuts a victim job below its MinAvailable", "victim",
           "gang.go Preemptable/Reclaimable; session_plugins.go (tiered intersection); semantics §6.2 quirk 1, §9.1",
           (STATEMENT,), requires=("gang",))
def victim_gang_min_decisive(ctx: CheckContext) -> Iterator[Violation]:
    # victim.gang-min as a safety rule where its quirk cannot arise (gang's flag is in the registration)
    if ctx.action in EVICTING_ACTIONS and decides_victims(ctx.ssn, "gang", ctx.action):
        yield from victim_gang_min(ctx)


CRITICAL_CLASSES = ("system-cluster-critical", "system-node-critical")  # conformance.go, restated
SYSTEM_NAMESPACE = "kube-system"


@invariant("victim.conformance", "where conformance is the last victim voter of the only tier with any, preempt "
           "and reclaim never evict a kube-system pod or one of a system-critical priority class", "victim",
           "conformance.go (Preemptable, Reclaimable); session_plugins.go (tiered intersection); semantics §9.10",
           (STATEMENT,), requires=("conformance",))
def victim_conformance(ctx: CheckContext) -> Iterator[Violation]:
    if ctx.action not in EVICTING_ACTIONS or not decides_victims(ctx.ssn, "conformance", ctx.action):
        return
    for _, preemptor, _, victim in _victims(ctx):
        why = f"in {SYSTEM_NAMESPACE}" if victim.namespace == SYSTEM_NAMESPACE else \
            f"of class {victim.pod.priority_class_name}" if victim.pod.priority_class_name in CRITICAL_CLASSES else None
        if why is not None:
            yield Violation("", f"{ctx.action} evicted {victim.key} ({why}) for {preemptor.key}, though "
                                f"conformance never offers such a victim and no other plugin or tier could decide "
                                f"without it",
                            [f"task {victim.key}", f"task {preemptor.key}"], "not evicted", "evicted")


@invariant("victim.preemptor-policy", "a task whose pod says preemptionPolicy: Never never has tasks evicted for it "
           "by preempt or reclaim", "victim",
           "preempt.go taskEligibleToPreempt, reclaim.go (PreemptionPolicy Never); semantics §8.4-8.5",
           (STATEMENT,))
def victim_preemptor_policy(ctx: CheckContext) -> Iterator[Violation]:
    for p in preemptions(ctx):
        if not p.victims:
            continue
        preemptor = task_of(ctx, p.preemptor)
        if preemptor is not None and preemptor.pod is not None and preemptor.pod.preemption_policy == "Never":
            yield Violation("", f"{ctx.action} evicted {len(p.victims)} task(s) on {p.preemptor.node} for "
                                f"{preemptor.key}, whose pod has preemptionPolicy Never",
                            [f"task {preemptor.key}"] + [f"task {r.task}" for r in p.victims], 0, len(p.victims))


PDB_GUARDED = ("preempt", "reclaim", "gangpreempt", "gangreclaim")  # victims through Preemptable / Reclaimable


@invariant("victim.pdb-respected", "with the pdb plugin in the first tier (its enablePreemptable or "
           "enableReclaimable on), preempt and reclaim (and the gang "
           "variants) evict in a session no more of the pods a PodDisruptionBudget selects (its namespace, a "
           "non-empty selector, not already in its disruptedPods) than the budget's status.disruptionsAllowed; "
           "in a later tier the first tier's victims stand without it, and shuffle's victims are a union the "
           "plugin only adds to", "victim",
           "pkg/scheduler/plugins/pdb/pdb.go (the victim filter for VictimTasksFn, PreemptableFn, ReclaimableFn); "
           "policy/v1 PodDisruptionBudget", (ACTION,), requires=("pdb",), state_only=True)
def victim_pdb_respected(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    budgets = ssn.cache.world.pod_disruption_budgets
    option = next((o for o in ssn.tiers[0].plugins if o.name == "pdb"), None) if ssn.tiers else None
    if not budgets or option is None:
        return
    # each action consults the plugin only through its own switch
    guarded = tuple(a for a in PDB_GUARDED if option.enabled("enableReclaimable" if "reclaim" in a
                                                             else "enablePreemptable"))
    uids: set[str] = set()
    for op in ssn.operations:
        if op.op == "evict" and op.action in guarded:
            uids.add(op.task_uid)
        elif op.op == "unevict":
            uids.discard(op.task_uid)
    if not uids:
        return
    evicted = {t.uid: t for job in ssn.jobs.values() for t in job.tasks.values() if t.uid in uids}
    for budget in budgets:
        selector = budget.selector
        if selector is None or (not selector.match_labels and not selector.match_expressions):
            continue
        taken = sorted(t.key for t in evicted.values()
                       if t.pod.namespace == budget.namespace and t.pod.labels
                       and t.pod.name not in budget.disrupted_pods and label_selector_matches(selector, t.pod.labels))
        if len(taken) > budget.disruptions_allowed:
            yield Violation("", f"the session evicted {len(taken)} pod(s) PodDisruptionBudget "
                                f"{budget.namespace}/{budget.name} selects ({', '.join(taken)}), but it allows "
                                f"{budget.disruptions_allowed} disruption(s)",
                            [f"pdb {budget.namespace}/{budget.name}"] + [f"task {k}" for k in taken],
                            f"<= {budget.disruptions_allowed} evictions", len(taken))



@invariant("victim.shuffle-from-high-node", "with rescheduling's lowNodeUtilization the only source of shuffle "
           "victims (no tdm, no pdb configured), every task shuffle evicts ran on a node it counts as high: some "
           "of cpu and memory usage, by the node's usage figures for the plugin's metricsPeriod, above its "
           "targetThreshold", "victim",
           "pkg/scheduler/plugins/rescheduling/low_node_utilization.go (groupNodesByUtilization, "
           "evictPodsFromSourceNodes); node_utilization_util.go", (ACTION,), requires=("rescheduling",))
def victim_shuffle_from_high_node(ctx: CheckContext) -> Iterator[Violation]:
    ssn = ctx.ssn
    if ctx.action != "shuffle":
        return
    names = {o.name for tier in ssn.tiers for o in tier.plugins}
    if names & {"tdm", "pdb"}:
        return
    targets = _low_node_utilization_targets(ssn)
    if targets is None:
        return
    period, target = targets
    for op in ssn.operations:
        if op.action != "shuffle" or op.op != "evict":
            continue
        node = ssn.nodes.get(op.node)
        if node is None or node.node is None:
            continue
        usage = _usage(node.node.annotations, period)
        over = [f"{dim} {value:g}% > {target[dim]:g}%" for dim, value in usage.items() if value > target[dim]]
        if not over:
            yield Violation("", f"shuffle evicted {op.task} from node {op.node}, whose usage "
                                f"({', '.join(f'{d} {v:g}%' for d, v in usage.items())}) is above no target "
                                f"threshold ({', '.join(f'{d} {v:g}%' for d, v in target.items())}): "
                                "lowNodeUtilization evicts only from high nodes",
                            [f"task {op.task}", f"node {op.node}"], "a node above a target threshold",
                            "no dimension above target")


def _low_node_utilization_targets(ssn) -> tuple[str, dict[str, float]] | None:
    """(metricsPeriod, {cpu, memory: targetThreshold}) from the rescheduling entries of the tiers (each tier's
    first, in order, as upstream parses them); None when no lowNodeUtilization strategy is configured."""
    period, target, found = "5m", {"cpu": 100.0, "memory": 100.0}, False
    for tier in ssn.tiers:
        option = next((o for o in tier.plugins if o.name == "rescheduling"), None)
        if option is None:
            continue
        args = option.arguments or {}
        if isinstance(args.get("metricsPeriod"), str) and args["metricsPeriod"]:
            period = args["metricsPeriod"]
        for strategy in args.get("strategies") or []:
            fields = {str(k).lower(): v for k, v in strategy.items()} if isinstance(strategy, dict) else {}
            if fields.get("name") != "lowNodeUtilization":
                continue
            found = True
            params = fields.get("params") if isinstance(fields.get("params"), dict) else {}
            whole = [params.get(key) for key in ("thresholds", "targetThresholds") if key in params]
            if not all(isinstance(v, dict) and all(isinstance(n, int) and not isinstance(n, bool)
                                                   for n in v.values()) for v in whole):
                continue  # a malformed map stops upstream's parse before the targets it would have read
            values = params.get("targetThresholds") or {}
            target.update({dim: float(values[dim]) for dim in ("cpu", "memory") if dim in values})
    return (period, target) if found else None


def _usage(annotations: dict[str, str], period: str) -> dict[str, float]:
    """The node's usage the plugin reads: the annotated averages stand for the 10m period only."""
    from schedcheck.reference.plugins.usage import CPU_USAGE_ANNOTATION, MEM_USAGE_ANNOTATION, NODE_METRICS_PERIOD

    out = {"cpu": 0.0, "memory": 0.0}
    if period != NODE_METRICS_PERIOD:
        return out
    for dim, key in (("cpu", CPU_USAGE_ANNOTATION), ("memory", MEM_USAGE_ANNOTATION)):
        try:
            out[dim] = float(annotations.get(key, "0"))
        except ValueError:
            pass
    return out
