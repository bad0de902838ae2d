"""Differential check against the reference, tolerant of legitimate ties.

Where the reference finds several equally good nodes for a task, or equally scored hypernodes for a
job or subjob (allocate's network-topology search), it draws one with its seeded generator and records
the tie. Another implementation may break the same tie differently and still be right. So the
reference is replayed *guided* by the implementation: at a node tie, a chooser picks the node of the
implementation's next allocate/pipeline of that task in that cycle (each placement the reference makes,
tied or not, uses up the implementation's matching one, so dry runs stay in step), else where it
finally bound or pipelined the task; at a hypernode tie, the hypernode holding the nodes the
implementation finally gave the tasks the tied dry runs placed. It falls back to the seeded choice
when the implementation's choice is not among the tied ones. If the guided reference then decides
exactly as the implementation did, some legal tie-break explains every decision; otherwise the first
decision none explains is reported, with the reference's own decision, the tie it recorded there (if
any) and the node scores behind it. What the implementation reports the scheduler wrote on PodGroups
(podGroupAnnotations, podGroupConditions: optional fields) must match the guided reference's too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from schedcheck.conform.findings import Finding
from schedcheck.scenario.model import Scenario

COMPARED = (("binds", "binds"), ("pipelined", "pipelined"), ("podGroupPhases", "PodGroup phases"),
            ("taskStatusCounts", "task status counts"), ("podGroupAnnotations", "PodGroup annotations"),
            ("podGroupConditions", "PodGroup conditions"))
OPTIONAL = frozenset({"podGroupAnnotations", "podGroupConditions"})  # compared only where the implementation gives them


class _Chooser:
    def __init__(self, result: dict[str, Any]) -> None:
        # (cycle, task) -> the implementation's placements of the task, in order, with their action
        self.plan: dict[tuple[int, str], list[tuple[str, str]]] = defaultdict(list)
        for op in result.get("trace") or []:
            if op["op"] in ("allocate", "pipeline") and op.get("node"):
                self.plan[(op["cycle"], op["task"])].append((op.get("action", ""), op["node"]))
        self.final = {**result["pipelined"], **result["binds"]}
        self.guided = 0  # ties where the implementation's node was taken
        self.scores: dict[tuple[int, str], list[dict[str, float]]] = defaultdict(list)
        self.evicted: dict[int | None, set[str]] = defaultdict(set)  # cycle (None: no trace) -> victims
        for op in result.get("trace") or []:
            if op["op"] == "evict":
                self.evicted[op["cycle"]].add(op["task"])
        if not result.get("trace"):
            self.evicted[None] = set(result.get("evicted") or [])

    def record_scores(self, ssn: Any, task: Any, grouped: dict[float, list[Any]]) -> None:
        """Every prioritisation's node scores, per (cycle, task), for the divergence report."""
        self.scores[(ssn.cycle, task.key)].append({n.name: s for s, group in grouped.items() for n in group})

    def preferred_victims(self, ssn: Any) -> set[str]:
        """The implementation's victims of this session, tried first among equally ranked victims."""
        return self.evicted.get(ssn.cycle) or self.evicted.get(None) or set()

    def choose_hyper_node(self, ssn: Any, tasks: list[Any], names: list[str]) -> str | None:
        """Among equally scored hypernodes, the one holding the nodes the implementation finally gave these
        tasks (those the tied dry runs placed; all of them, else any); None when none does."""
        placed = {self.final[t.key] for t in tasks if t.key in self.final}
        if not placed:
            return None
        holding = {name: {n.name for n in ssn.real_nodes_list.get(name, [])} for name in names}
        for name in names:
            if placed <= holding[name]:
                self.guided += 1
                return name
        for name in names:
            if placed & holding[name]:
                self.guided += 1
                return name
        return None

    def observe(self, ssn: Any, operation: Any) -> None:
        """Each placement of the reference, tied or not, uses up the implementation's matching placement of the
        task, so the next tie of the task is steered by the implementation's next placement (its dry runs try
        nodes the reference places without a tie)."""
        if operation.op not in ("allocate", "pipeline"):
            return
        planned = self.plan.get((ssn.cycle, operation.task), [])
        index = _first_planned(planned, operation.action, {operation.node})
        if index is not None:
            del planned[index]

    def __call__(self, ssn: Any, task: Any, best: list[Any]) -> Any:
        by_name = {node.name: node for node in best}
        planned = self.plan.get((ssn.cycle, task.key), [])
        index = _first_planned(planned, getattr(ssn, "current_action", None), set(by_name))
        if index is not None:
            self.guided += 1
            return by_name[planned[index][1]]
        name = self.final.get(task.key)
        if name in by_name:
            self.guided += 1
            return by_name[name]
        return None


def _first_planned(planned: list[tuple[str, str]], action: str | None, names: set[str]) -> int | None:
    """The first of the implementation's placements onto one of `names`, those of the running action first
    (a later action's dry run is not steered by allocate's node)."""
    for same_action_only in (True, False):
        for index, (act, name) in enumerate(planned):
            if name in names and (act == action or not same_action_only):
                return index
    return None


def guided_reference(scenario: Scenario, result: dict[str, Any], seed: int = 0
                     ) -> tuple[dict[str, Any], dict[tuple[int, str], list[dict[str, float]]]]:
    """The reference's protocol result when its ties are broken the implementation's way, and the
    node scores it computed (per cycle and task)."""
    from schedcheck.runner import run_scenario

    chooser = _Chooser(result)
    run = run_scenario(scenario, seed=seed, check_invariants=False, tie_chooser=chooser)
    return run.to_json(with_trace=True), chooser.scores


def compare(scenario: Scenario, result: dict[str, Any], seed: int = 0) -> list[Finding]:
    """[] when some legal tie-break of the reference makes exactly the implementation's decisions."""
    reference, scores = guided_reference(scenario, result, seed)
    same = not any(differs(key, result, reference) for key, _ in COMPARED) \
        and sorted(result["evicted"]) == sorted(reference["evicted"])
    if same:
        return []
    return [_first_divergence(result, reference, scores)]


def differs(key: str, result: dict[str, Any], reference: dict[str, Any]) -> bool:
    """Whether the answers differ in a COMPARED field; an optional one only counts where the implementation
    gave it, and a PodGroup without entries there is the same as an absent one."""
    if key in OPTIONAL and result.get(key) is None:
        return False
    return normalised(key, result.get(key)) != normalised(key, reference.get(key))


def normalised(key: str, value: Any) -> Any:
    if value is None:
        return {}
    if key in OPTIONAL:
        return {group: entries for group, entries in value.items() if entries}
    return value


def _decisions(result: dict[str, Any]) -> list[tuple[int | None, str, str, str]]:
    """(cycle, op, task, node) of every committed bind and eviction, in order; without a trace,
    binds then evictions, each sorted (cycle unknown)."""
    trace = result.get("trace")
    if trace is not None:
        from schedcheck.conform.external import committed

        out: list[tuple[int | None, str, str, str]] = []
        for cycle, (binds, evicts) in sorted(committed(trace).items()):
            out += [(cycle, "evict", t, "") for t in evicts]
            out += [(cycle, "bind", t, n) for t, n in binds]
        return out
    return ([(None, "evict", t, "") for t in sorted(result["evicted"])]
            + [(None, "bind", t, n) for t, n in sorted(result["binds"].items())])


def _first_divergence(result: dict[str, Any], reference: dict[str, Any],
                      scores: dict[tuple[int, str], list[dict[str, float]]]) -> Finding:
    both_traced = result.get("trace") is not None
    mine = _decisions(result)
    theirs = _decisions(reference if both_traced else {**reference, "trace": None})
    for index in range(max(len(mine), len(theirs))):
        a = mine[index] if index < len(mine) else None
        b = theirs[index] if index < len(theirs) else None
        if a == b:
            continue
        return _explain(a, b, reference, scores, index)
    for key, label in COMPARED:
        if differs(key, result, reference):
            mine_v, ref_v = normalised(key, result.get(key)), normalised(key, reference.get(key))
            keys = sorted(set(mine_v) | set(ref_v))
            first = next(k for k in keys if mine_v.get(k) != ref_v.get(k))
            return Finding("divergence", f"the decisions agree but the {label} differ: {first} is "
                                         f"{mine_v.get(first)!r} here, {ref_v.get(first)!r} in the reference",
                           None, [first], {"field": key, "implementation": mine_v.get(first),
                                           "reference": ref_v.get(first)})
    return Finding("divergence", "the evictions differ in order or number", None, [],
                   {"implementation": result["evicted"], "reference": reference["evicted"]})


def _explain(mine: tuple | None, ref: tuple | None, reference: dict[str, Any],
             scores: dict[tuple[int, str], list[dict[str, float]]], index: int) -> Finding:
    def say(d: tuple | None) -> str:
        if d is None:
            return "nothing more (no further decision)"
        return f"{d[1]} {d[2]}" + (f" on {d[3]}" if d[3] else "")

    anchor = mine or ref
    assert anchor is not None
    cycle, task = anchor[0], anchor[2]
    ties = [t for t in reference.get("ties", []) if t["task"] == task and (cycle is None or t["cycle"] == cycle)]
    node_scores = next((s[-1] for (c, t), s in scores.items() if t == task and (cycle is None or c == cycle)), None)
    message = (f"decision {index + 1}" + (f" (cycle {cycle})" if cycle is not None else "")
               + f": the implementation did {say(mine)}, the reference {say(ref)}")
    if ties:
        tie = ties[-1]
        message += (f"; the reference's tied candidates for {task} were {', '.join(tie['candidates'])} "
                    f"(score {tie['score']:g}), so no legal tie-break explains it")
    elif node_scores:
        top = sorted(node_scores.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
        message += f"; the reference scored {', '.join(f'{n}={s:g}' for n, s in top)}"
    return Finding("divergence", message, cycle, [f"pod {task}"],
                   {"implementation": say(mine), "reference": say(ref), "ties": ties, "scores": node_scores})
