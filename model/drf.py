"""DRF: dominant share, the preemptable rule (plugins/drf.py), and the DRF properties decided on
concrete allocations in the relaxed form that holds for indivisible tasks (anchors.md, theory D).

Volcano's drf is an ordering plugin, so the allocation checked is the one the reference makes
(allocate with gang + drf job order on one node), which is DRF progressive filling one task at a time.
Never asserted: resource monotonicity (DRF violates it; see `find_resource_monotonicity_violation`).
"""

from __future__ import annotations

import random
from typing import Any

DIMS = ("cpu", "memory", "pods")
SHARE_DELTA = 1e-6
GI = 1024 ** 3


def share1(left, right) -> float:
    if right == 0:
        return 0.0 if left == 0 else 1.0
    return left / right


def dominant_share(allocated: dict, total: dict) -> float:
    """Max over the total's dimensions (>= 0.1) of allocated / total."""
    return max([share1(allocated.get(d, 0.0), total[d]) for d in total if total[d] >= 0.1] or [0.0])


def drf_victims(preemptor_share: float, job_allocated: dict, victim_reqs: list[dict], total: dict) -> list[int]:
    """Indices of one job's preemptees drf offers: remaining share after each is >= preemptor's - delta."""
    allocated = dict(job_allocated)
    taken = []
    for i, req in enumerate(victim_reqs):
        allocated = {d: allocated.get(d, 0.0) - req.get(d, 0.0) for d in set(allocated) | set(req)}
        right = dominant_share(allocated, total)
        if preemptor_share < right or abs(preemptor_share - right) <= SHARE_DELTA:
            taken.append(i)
    return taken


# -- progressive filling (what allocate + gang + drf does for one-task-minimum jobs on one node) ------


def _fits(req: dict, free: dict) -> bool:
    return all(req[d] < free[d] or abs(req[d] - free[d]) < 0.1 for d in req)


def progressive_filling(total: dict, demands: list[dict], counts: list[int]) -> list[int]:
    """Tasks each user gets: not-ready jobs first, then lowest dominant share, then user order;
    a user whose next task does not fit is dropped (allocate consumes its identical tasks)."""
    x = [0] * len(demands)
    free = dict(total)
    active = [i for i in range(len(demands)) if counts[i] > 0]
    while active:
        def key(i: int):
            alloc = {d: x[i] * demands[i][d] for d in total}
            return (x[i] > 0, dominant_share(alloc, total), i)

        i = min(active, key=key)
        if _fits(demands[i], free):
            x[i] += 1
            free = {d: free[d] - demands[i][d] for d in free}
            if x[i] >= counts[i]:
                active.remove(i)
        else:
            active.remove(i)
    return x


def decide_properties(total: dict, demands: list[dict], counts: list[int], x: list[int]) -> dict[str, Any]:
    """Relaxed sharing incentive, envy-freeness (within one task) and Pareto efficiency (Z3) of x."""
    import z3

    n = len(demands)
    pending = [x[i] < counts[i] for i in range(n)]
    si_fail, ef_fail = [], []
    for i in range(n):
        if not pending[i]:
            continue
        floor_share = min(int(total[d] / n // demands[i][d]) for d in total if demands[i][d] > 0)
        if x[i] < min(counts[i], floor_share):
            si_fail.append({"user": i, "tasks": x[i], "partitionTasks": floor_share})
        for j in range(n):
            if j == i:
                continue
            bundle = min(int(x[j] * demands[j][d] // demands[i][d]) for d in total if demands[i][d] > 0)
            if bundle > x[i] + 1:
                ef_fail.append({"user": i, "envies": j, "tasks": x[i], "withBundle": bundle})
    xs = [z3.Int(f"x{i}") for i in range(n)]
    solver = z3.Solver()
    solver.add(*[z3.And(xs[i] >= x[i], xs[i] <= counts[i]) for i in range(n)])
    solver.add(z3.Or(*[xs[i] > x[i] for i in range(n)]))
    for d in total:
        solver.add(z3.Sum(*[xs[i] * int(demands[i][d]) for i in range(n)]) <= int(total[d]))
    pe_witness = None
    if solver.check() == z3.sat:
        model = solver.model()
        pe_witness = [model.eval(v).as_long() for v in xs]
    return {"sharingIncentive": not si_fail, "envyFree": not ef_fail, "paretoEfficient": pe_witness is None,
            "siFailures": si_fail, "efFailures": ef_fail, "paretoImprovement": pe_witness}


# -- instances on the reference ---------------------------------------------------------------


def instance_yaml(total: dict, demands: list[dict], counts: list[int], name: str = "drf-instance") -> str:
    """One node with `total`, one Inqueue PodGroup (minMember 1) per user with `counts[i]` pods."""
    lines = ["apiVersion: schedcheck/v1", "kind: Scenario", f"metadata: {{name: {name}}}", "schedulerConf:",
             "  actions: \"allocate\"", "  tiers:",
             "  - plugins: [{name: priority}, {name: gang}, {name: drf}]",
             "  - plugins: [{name: predicates}]", "objects:",
             "- apiVersion: v1", "  kind: Node", "  metadata: {name: node-1}", "  status:",
             f"    allocatable: {{cpu: \"{int(total['cpu']) // 1000}\", memory: \"{int(total['memory'] // GI)}Gi\", "
             f"pods: \"{int(total['pods'])}\"}}"]
    for i, demand in enumerate(demands):
        lines += ["- apiVersion: scheduling.volcano.sh/v1beta1", "  kind: PodGroup",
                  f"  metadata: {{name: user-{i}, namespace: default}}",
                  "  spec: {minMember: 1, queue: default}", "  status: {phase: Inqueue}"]
        for k in range(counts[i]):
            lines += ["- apiVersion: v1", "  kind: Pod",
                      f"  metadata: {{name: user-{i}-{k}, namespace: default, "
                      f"annotations: {{scheduling.k8s.io/group-name: user-{i}}}}}",
                      "  spec:", "    containers: [{name: main, resources: {requests: "
                      f"{{cpu: \"{int(demand['cpu']) // 1000}\", memory: \"{int(demand['memory'] // GI)}Gi\"}}}}}}]"]
    return "\n".join(lines) + "\n"


def reference_allocation(total: dict, demands: list[dict], counts: list[int]) -> list[int]:
    """How many tasks of each user the reference binds in one allocate cycle (the instance of
    `instance_yaml`, built directly from the reference's own object types)."""
    from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
    from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION, ClusterObjects, Container, Node, Pod, PodGroup
    from schedcheck.reference.quantity import Quantity
    from schedcheck.reference.scheduler import Scheduler

    def quantities(cpu_milli: float, memory: float, pods: float | None = None) -> dict:
        out = {"cpu": Quantity.parse(str(int(cpu_milli) // 1000)), "memory": Quantity.parse(f"{int(memory // GI)}Gi")}
        if pods is not None:
            out["pods"] = Quantity.parse(str(int(pods)))
        return out

    node = Node(name="node-1", uid="uid-node-1", allocatable=quantities(total["cpu"], total["memory"], total["pods"]))
    pods, groups = [], []
    for i, demand in enumerate(demands):
        groups.append(PodGroup(name=f"user-{i}", namespace="default", uid=f"uid-pg-user-{i}", min_member=1,
                               phase="Inqueue"))
        for k in range(counts[i]):
            pods.append(Pod(name=f"user-{i}-{k}", namespace="default", uid=f"uid-user-{i}-{k}",
                            annotations={GROUP_NAME_ANNOTATION: f"user-{i}"},
                            containers=[Container("main", quantities(demand["cpu"], demand["memory"]))]))

    def tier(*names: str) -> Tier:
        options = [PluginOption(name) for name in names]
        for option in options:
            apply_plugin_conf_defaults(option)
        return Tier(options)

    conf = SchedulerConf(actions=["allocate"], tiers=[tier("priority", "gang", "drf"), tier("predicates")])
    report = Scheduler(ClusterObjects(nodes=[node], pods=pods, pod_groups=groups), conf).run_once()
    bound = [record.task for record in report.session.cache.log.binds]
    return [sum(1 for pod in bound if pod.startswith(f"default/user-{i}-")) for i in range(len(demands))]


def random_instance(rng: random.Random, users: int | None = None) -> tuple[dict, list[dict], list[int]]:
    n = users or rng.choice((2, 3))
    total = {"cpu": 1000.0 * rng.randint(4, 12), "memory": float(GI * rng.randint(4, 12)), "pods": 110.0}
    demands = [{"cpu": 1000.0 * rng.randint(1, 4), "memory": float(GI * rng.randint(1, 4)), "pods": 1.0}
               for _ in range(n)]
    return total, demands, [rng.randint(1, 8) for _ in range(n)]


def find_resource_monotonicity_violation(seed: int = 0, tries: int = 3000) -> dict[str, Any] | None:
    """Adding resources lowers some user's allocation: search progressive filling, confirm on the reference."""
    rng = random.Random(seed)
    for _ in range(tries):
        total, demands, counts = random_instance(rng, 2)
        more = dict(total)
        if rng.random() < 0.5:
            more["cpu"] += 1000.0
        else:
            more["memory"] += float(GI)
        before, after = progressive_filling(total, demands, counts), progressive_filling(more, demands, counts)
        if any(a < b for a, b in zip(after, before)):
            ref_before = reference_allocation(total, demands, counts)
            ref_after = reference_allocation(more, demands, counts)
            if ref_before == before and ref_after == after:
                return {"total": _units(total), "moreResources": _units(more),
                        "demands": [_units(d) for d in demands], "tasks": counts,
                        "allocationBefore": before, "allocationAfter": after}
    return None


def _units(r: dict) -> dict:
    return {"cpu": f"{int(r['cpu'])}m", "memory": f"{int(r['memory'] // GI)}Gi"}


# -- obligations ------------------------------------------------------------------------------


def ob_share_bounds() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    a = [z3.Real(f"allocated.{d}") for d in DIMS]
    t = [z3.Real(f"total.{d}") for d in DIMS]
    hyps = [z3.And(x >= 0, x <= y, y >= z3.RealVal("0.1")) for x, y in zip(a, t)]
    s = _sym_share(a, t)
    return prove(z3.And(s >= 0, s <= 1), hyps, {"allocated": a, "total": t})


def _sym_share(a, t):
    import z3

    out = z3.RealVal(0)
    for x, y in zip(a, t):
        v = z3.If(y == 0, z3.If(x == 0, z3.RealVal(0), z3.RealVal(1)), x / y)
        out = z3.If(v > out, v, out)
    return out


def ob_share_monotone() -> Any:
    import z3

    from schedcheck.model.obligation import prove
    a = [z3.Real(f"a.{d}") for d in DIMS]
    b = [z3.Real(f"b.{d}") for d in DIMS]
    t = [z3.Real(f"total.{d}") for d in DIMS]
    hyps = [z3.And(x >= 0, x <= y, y > 0) for x, y in zip(a, b)] + [y > 0 for y in t]
    return prove(_sym_share(a, t) <= _sym_share(b, t), hyps, {"a": a, "b": b, "total": t})


def ob_preempt_final_share(bound: int = 3) -> Any:
    """Whatever drf's preemptable takes from a job, the job's final share stays >= the preemptor's - delta."""
    import z3

    from schedcheck.model.obligation import prove
    t = [z3.Real(f"total.{d}") for d in DIMS[:2]]
    alloc = [z3.Real(f"victimJob.{d}") for d in DIMS[:2]]
    reqs = [[z3.Real(f"victim{k}.{d}") for d in DIMS[:2]] for k in range(bound)]
    ls = z3.Real("preemptorShare")
    hyps = [y > 0 for y in t] + [x >= 0 for r in reqs for x in r] + [ls >= 0]
    hyps += [z3.And(alloc[j] >= sum(r[j] for r in reqs), alloc[j] <= t[j]) for j in range(2)] + [ls <= 1]
    current, real, taken_any = list(alloc), list(alloc), z3.BoolVal(False)
    for r in reqs:
        # as the reference: the running copy is reduced by every preemptee examined, taken or not
        after = [c - x for c, x in zip(current, r)]
        rs = _sym_share(after, t)
        take = z3.Or(ls < rs, z3.Abs(ls - rs) <= SHARE_DELTA)
        taken_any = z3.Or(taken_any, take)
        real = [z3.If(take, v - x, v) for v, x in zip(real, r)]
        current = after
    claim = z3.Implies(taken_any, ls <= _sym_share(real, t) + SHARE_DELTA)
    return prove(claim, hyps, {"total": t, "victimJob": alloc, "victims": reqs, "preemptorShare": ls})


def _on_reference(keys: tuple[str, ...], instances: int = 12, seed: int = 7) -> Any:
    from schedcheck.model.obligation import concrete

    rng = random.Random(seed)
    for _ in range(instances):
        total, demands, counts = random_instance(rng)
        x = reference_allocation(total, demands, counts)
        verdict = decide_properties(total, demands, counts, x)
        if not all(verdict[k] for k in keys):
            return concrete(False, {"total": _units(total), "demands": [_units(d) for d in demands],
                                    "tasks": counts, "allocation": x, **verdict})
    return concrete(True, detail=f"{instances} reference allocations (seed {seed}) decided")


def ob_relaxed_properties() -> Any:
    return _on_reference(("envyFree", "paretoEfficient"))


def ob_sharing_incentive() -> Any:
    return _on_reference(("sharingIncentive",))


def ob_resource_monotonicity() -> Any:
    from schedcheck.model.obligation import concrete

    found = find_resource_monotonicity_violation()
    return concrete(found is None, found, "searched 2-user instances with progressive filling, "
                                          "confirmed on the reference")


def obligations() -> list:
    from schedcheck.model.obligation import COUNTEREXAMPLE, Obligation

    return [
        Obligation("drf.share-bounds", "0 <= allocated <= total implies 0 <= dominant share <= 1", ob_share_bounds),
        Obligation("drf.share-monotone", "more allocated on every dimension never lowers the dominant share",
                   ob_share_monotone),
        Obligation("drf.preemptable-keeps-victim-share", "when drf's preemptable offers victims of a job "
                   "(up to 3 examined), the job's share after evicting all of them stays >= the preemptor's "
                   "share (with its request) - 1e-6", ob_preempt_final_share),
        Obligation("drf.envy-free-pareto", "on 12 generated one-node instances the reference's allocation "
                   "(gang + drf order) is envy-free within one task and Pareto efficient (Z3: no feasible "
                   "allocation gives a user one more task without taking any)", ob_relaxed_properties),
        Obligation("drf.sharing-incentive", "on the same instances every user with pending work has at least "
                   "the tasks its 1/n partition of the node would run", ob_sharing_incentive, COUNTEREXAMPLE,
                   "with indivisible tasks a user's first task can exceed its 1/n partition on some dimension "
                   "and cost another user tasks (Parkes, Procaccia & Shah, EC'12): only relaxed forms hold"),
        Obligation("drf.resource-monotonicity", "adding resources never lowers a user's allocation "
                   "(must NOT be asserted: DRF is not resource monotonic)", ob_resource_monotonicity,
                   COUNTEREXAMPLE, "DRF is not resource monotonic (Ghodsi et al., NSDI'11, §6); with "
                   "indivisible tasks more capacity can change the fill order and cost a user a task"),
    ]
