"""The cause of a failure: what must stay the same for a smaller scenario to show the same bug.

Keeping only the invariant id is not enough. A rule such as `node.pod-limit`
holds because the predicates plugin filters full nodes; drop the plugin and the
same id fails again, trivially, for another reason (the reference then obeys no
pod limit at all). A minimiser that accepts that candidate reports a false cause.
So a candidate counts as "still failing" only when the violation it produces
has the same `Cause` as the original's:

- `invariant`   the same invariant id;
- `action`      the action that was running when it fired ("" at session close);
- `checkpoint`  the same checkpoint kind (operation, statement, action, close);
- `operation`   the same kind of failing operation (allocate, pipeline, evict, ...; "" if none);
- `roles`       the same kinds of objects named by the violation (node, task, job, queue, ...),
                not their names: a smaller cluster may break the rule on another node;
- `plugins`     for every *guarded* plugin, the same enabledness: configured or not, and the
                same effective enable flags (after upstream's defaults, so dropping a flag that
                says what the default says is still allowed).

The guarded plugins of an invariant are the ones its rule depends on: the plugins it
`requires` in the registry, plus the plugins whose rules bound the kind of decision its
class judges (`AFFECTS`, below). The minimiser may still drop every other plugin, action,
object and field. The cycle is left out on purpose: fewer cycles are a legitimate reduction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# invariant class -> the plugins whose rules bound the decisions that class judges (volcano-semantics.md):
# a node accepts what predicates let through; queues are bounded by proportion/capacity (and admission by
# overcommit, resourcequota); a victim's eligibility and the order of jobs and tasks come from the
# preemptable/reclaimable/order functions of these plugins.
_VICTIMS = ("priority", "gang", "conformance", "drf", "proportion", "capacity", "tdm", "pdb")
AFFECTS: dict[str, tuple[str, ...]] = {
    "node": ("predicates",),
    "gang": ("gang",),
    "queue": ("proportion", "capacity", "drf", "overcommit", "resourcequota"),
    "victim": _VICTIMS,
    "eviction": _VICTIMS,
    "order": ("priority", "gang", "drf", "proportion", "capacity", "sla", "tdm"),
}

PluginState = tuple[str, tuple[tuple[str, bool], ...] | None]  # name, effective flags (None: not configured)


@dataclass(frozen=True)
class Cause:
    invariant: str
    action: str
    checkpoint: str
    operation: str
    roles: tuple[str, ...]
    plugins: tuple[PluginState, ...]
    known: str = ""  # the known upstream finding it is (docs/findings.md), or "": a new failure stays new

    def to_json(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "action": self.action, "checkpoint": self.checkpoint,
                "operation": self.operation, "roles": list(self.roles), "known": self.known or None,
                "plugins": {name: (None if flags is None else dict(flags)) for name, flags in self.plugins}}


def guarded_plugins(invariant_id: str) -> tuple[str, ...]:
    """The plugins whose enabledness is part of the invariant's failure cause (sorted)."""
    from schedcheck.invariants.catalog import get as get_invariant

    rule = get_invariant(invariant_id)
    if rule is None:  # upstream.assert: an assertion inside the reference, no rule to guard
        return ()
    return tuple(sorted(set(rule.requires) | set(AFFECTS.get(rule.cls, ()))))


def plugin_states(conf: Any, names: tuple[str, ...]) -> tuple[PluginState, ...]:
    """Each named plugin's effective enable flags in a loaded SchedulerConf (None where not configured)."""
    states: list[PluginState] = []
    for name in names:
        option = conf.plugin(name)
        states.append((name, None if option is None else tuple(sorted((k, bool(v)) for k, v in option.flags.items()))))
    return tuple(states)


def cause_of(violation: dict[str, Any], conf: Any) -> Cause:
    """The cause of a violation (in Violation.to_json() form) in a run under the loaded conf."""
    invariant = str(violation.get("id") or "")
    operation = str(violation.get("operation") or "")
    roles = tuple(sorted({str(o).split(" ", 1)[0] for o in violation.get("objects") or [] if str(o).strip()}))
    return Cause(invariant=invariant, action=str(violation.get("action") or ""),
                 checkpoint=str(violation.get("checkpoint") or ""),
                 operation=operation.split(" ", 1)[0] if operation else "", roles=roles,
                 plugins=plugin_states(conf, guarded_plugins(invariant)), known=str(violation.get("known") or ""))
