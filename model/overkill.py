"""Overkill ratio: evictions made / evictions needed, per preemptor of a committed preempt or reclaim.

The observer wraps the session's preemptable / reclaimable to remember, for each (preemptor, node),
the victims the plugins offered and the node's FutureIdle at that moment; at commit it pairs each
pipelined preemptor with the evictions before it on its node and asks model.evictions for the
optimum among the offered victims (the same victim rules).
"""

from __future__ import annotations

from typing import Any

from schedcheck.model.evictions import Candidate, minimal_gang_victims, minimal_victims

MAX_CANDIDATES = 12  # larger instances are reported as "too large"


class OverkillObserver:
    def __init__(self, max_candidates: int = MAX_CANDIDATES) -> None:
        self.max_candidates = max_candidates
        self.entries: list[dict[str, Any]] = []

    def attach(self, hooks) -> None:
        hooks.on_session_open.append(self._on_open)
        hooks.on_statement_end.append(self._on_statement_end)

    def _on_open(self, ssn) -> None:
        offers: dict[tuple[str, str], tuple[list[Candidate], Any]] = {}
        ssn._overkill_offers = offers  # type: ignore[attr-defined]
        for name in ("preemptable", "reclaimable"):
            original = getattr(ssn, name)

            def wrapped(preemptor, preemptees, _original=original):
                victims = _original(preemptor, preemptees)
                if preemptees:
                    node = ssn.nodes.get(preemptees[0].node_name)
                    if node is not None:
                        offered = [Candidate(v.key, v.resreq.clone(), v.priority) for v in victims or []]
                        offers[(preemptor.key, node.name)] = (offered, node.future_idle())
                return victims

            setattr(ssn, name, wrapped)
        gang_offers: dict[str, tuple[list[Candidate], dict[str, Any]]] = {}
        ssn._overkill_gang_offers = gang_offers  # type: ignore[attr-defined]
        original_unified = ssn.unified_evictable

        def unified(context, candidates):
            allowed = original_unified(context, candidates)
            job = getattr(context, "job", None)
            if job is not None:
                gang_offers[job.uid] = (_bundled(ssn, candidates, allowed or []),
                                        {n.name: n.future_idle() for n in ssn.node_list})
            return allowed

        ssn.unified_evictable = unified

    def _on_statement_end(self, ssn, kind: str, ops: list) -> None:
        if kind == "commit" and ssn.current_action in ("gangpreempt", "gangreclaim"):
            self._gang_entry(ssn, ops)
            return
        if kind != "commit" or ssn.current_action not in ("preempt", "reclaim"):
            return
        offers = getattr(ssn, "_overkill_offers", {})
        evicted: dict[str, list[str]] = {}
        for op in ops:
            node = op.task.node_name
            if op.name == "evict":
                evicted.setdefault(node, []).append(op.task.key)
            elif op.name == "pipeline":
                made = evicted.pop(node, [])
                if made:
                    self.entries.append(self._entry(ssn, op.task, node, made, offers.get((op.task.key, node))))

    def _entry(self, ssn, preemptor, node: str, made: list[str], offer) -> dict[str, Any]:
        entry: dict[str, Any] = {"cycle": ssn.cycle, "action": ssn.current_action, "preemptor": preemptor.key,
                                 "node": node, "evictionsMade": len(made), "victims": made,
                                 "evictionsNeeded": None, "ratio": None, "optimalVictims": None}
        if offer is None:
            entry["status"] = "no offer recorded"
            return entry
        candidates, future_idle = offer
        entry["candidates"] = len(candidates)
        if len(candidates) > self.max_candidates:
            entry["status"] = f"too large ({len(candidates)} candidate victims > {self.max_candidates})"
            return entry
        best = minimal_victims(preemptor.init_resreq, future_idle, candidates)
        if best is None:
            entry["status"] = "no resource-feasible victim set (another predicate decided)"
            return entry
        entry.update({"status": "ok", "evictionsNeeded": best.count, "optimalVictims": best.victims,
                      "ratio": round(len(made) / best.count, 4) if best.count else None})
        if best.count == 0:
            entry["status"] = "no eviction needed by resources"
        return entry


    def _gang_entry(self, ssn, ops: list) -> None:
        """One entry per committed gang statement: place all its pipelined tasks, fewest victims."""
        made = [op.task.key for op in ops if op.name == "evict"]
        placed = [op.task for op in ops if op.name == "pipeline"]
        if not made or not placed:
            return
        job = placed[0].job
        entry: dict[str, Any] = {"cycle": ssn.cycle, "action": ssn.current_action, "preemptor": f"job {job}",
                                 "node": ", ".join(sorted({t.node_name for t in placed})),
                                 "evictionsMade": len(made), "victims": made, "evictionsNeeded": None,
                                 "ratio": None, "optimalVictims": None}
        self.entries.append(entry)
        offer = getattr(ssn, "_overkill_gang_offers", {}).get(job)
        if offer is None:
            entry["status"] = "no offer recorded"
            return
        candidates, future_idle = offer
        entry["candidates"] = len(candidates)
        if len(candidates) > self.max_candidates:
            entry["status"] = f"too large ({len(candidates)} candidate victims > {self.max_candidates})"
            return
        best = minimal_gang_victims([t.init_resreq for t in placed], future_idle, candidates)
        if best is None:
            entry["status"] = "no resource-feasible victim set (another predicate decided)"
            return
        entry.update({"status": "ok", "evictionsNeeded": best.count, "optimalVictims": best.victims,
                      "ratio": round(len(made) / best.count, 4) if best.count else None})
        if best.count == 0:
            entry["status"] = "no eviction needed by resources"


def _bundled(ssn, candidates: list, allowed: list) -> list[Candidate]:
    """The allowed victims under the gang actions' bundle rules: a safe bundle's tasks one by one, a
    whole bundle all together (and only when allowWholeBundle), as the action builds them."""
    from schedcheck.reference.actions.gangpreempt import (
        parse_settings,
    )
    from schedcheck.reference.actions.utils.bundle import (
        BundleType,
        apply_allowed_tasks,
        create_job_bundles,
    )

    by_job: dict[str, list] = {}
    for task in candidates:
        by_job.setdefault(task.job, []).append(task.clone())
    bundles = [b for uid, tasks in by_job.items() for b in create_job_bundles(ssn.jobs[uid], tasks)]
    valid = apply_allowed_tasks(bundles, {t.uid for t in allowed})
    whole_ok = parse_settings(ssn, ssn.current_action).allow_whole_bundle
    out = []
    for i, bundle in enumerate(valid):
        if bundle.type == BundleType.WHOLE and not whole_ok:
            continue
        group = f"whole-{i}" if bundle.type == BundleType.WHOLE else ""
        out += [Candidate(t.key, t.resreq.clone(), t.priority, t.node_name, group) for t in bundle.tasks]
    return out


def render_lines(entries: list[dict[str, Any]]) -> list[str]:
    lines = []
    for e in entries:
        if e.get("status") == "ok":
            lines.append(f"  - {e['action']} cycle {e['cycle']}: {e['preemptor']} on {e['node']}: "
                         f"{e['evictionsMade']} evicted, {e['evictionsNeeded']} needed, ratio {e['ratio']} "
                         f"(optimal: {', '.join(e['optimalVictims'])})")
        else:
            lines.append(f"  - {e['action']} cycle {e['cycle']}: {e['preemptor']} on {e['node']}: "
                         f"{e['evictionsMade']} evicted; optimum not computed: {e.get('status')}")
    return lines
