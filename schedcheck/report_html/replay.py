"""A quiet replay of a counterexample for its pictures, with what the report's state excerpts lack:

- the run's operation trace and its eviction log (who was evicted for whom: the overkill observer's
  entries), for the timeline;
- when the violation names tasks but no node, the ledgers of the nodes those tasks are on, before and
  after the failing checkpoint, excerpted the way counterexample.observe excerpts the named objects.

The same seed and mutant as the failure, with the engine watching the one invariant."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

MAX_HOSTS = 6  # state_excerpt takes at most six objects


def host_nodes(violation: Mapping[str, Any], *states: Any) -> list[str]:
    """"node NAME" refs of the nodes the violation's tasks are on (in the recorded states), if it names no node."""
    objects = [o for o in violation.get("objects") or [] if isinstance(o, str)]
    if any(o.startswith("node ") for o in objects):
        return []
    hosts: list[str] = []
    for state in states:
        if not isinstance(state, Mapping):
            continue
        for ref in objects:
            entry = state.get(ref)
            if ref.startswith("task ") and isinstance(entry, Mapping) and entry.get("node"):
                node = f"node {entry['node']}"
                if node not in hosts:
                    hosts.append(node)
    return hosts[:MAX_HOSTS]


def record_run(scenario: Any, violation: Mapping[str, Any], seed: int, mutant: str | None,
               hosts: list[str] | None = None) -> dict[str, Any] | None:
    """{"trace", "overkill", "before", "after"} of a replay ("before"/"after": {"label", "state"} of the
    `hosts` node refs, when given and the invariant fires again), or None if it cannot be replayed."""
    try:
        from schedcheck.counterexample.observe import _ObservingEngine, only_ids
        from schedcheck.invariants.violation import plain
        from schedcheck.mutants import mutant as activate
        from schedcheck.runner import run_scenario

        invariant = str(violation.get("id") or "")
        cycle = violation.get("cycle") if isinstance(violation.get("cycle"), int) else -1
        engine = _ObservingEngine(only_ids(invariant), invariant, cycle, list(hosts or []))
        with activate(mutant) if mutant else contextlib.nullcontext():
            result = run_scenario(scenario, seed=seed, engine=engine, overkill=True)
        out: dict[str, Any] = {"trace": list(result.trace), "overkill": list(result.overkill)}
        if hosts and engine.caught is not None:
            _, previous, now = engine.caught
            if previous is not None:
                out["before"] = {"label": previous[0], "state": plain(previous[1])}
            out["after"] = {"label": now[0], "state": plain(now[1])}
        return out
    except Exception:  # noqa: BLE001 - the pictures then use what the report holds, or are omitted
        return None
