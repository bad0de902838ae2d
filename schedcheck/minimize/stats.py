"""What a minimisation did (attempts, accepted reductions per pass, sizes before and after) and how
big a scenario document is."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from schedcheck import document as d


@dataclass
class MinimizeStats:
    attempts: int = 0  # calls of the predicate (the initial check included)
    accepted: int = 0  # candidates kept
    rounds: int = 0  # passes over the whole sequence
    seconds: float = 0.0
    budget_exhausted: bool = False
    initially_failing: bool = True  # False: the input did not fail, nothing was reduced
    by_pass: Counter[str] = field(default_factory=Counter)  # pass -> accepted reductions
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts, "accepted": self.accepted, "rounds": self.rounds,
            "seconds": round(self.seconds, 3), "budgetExhausted": self.budget_exhausted,
            "initiallyFailing": self.initially_failing, "acceptedByPass": dict(self.by_pass),
            "before": self.before, "after": self.after,
        }

    # Read-only mapping view of to_json(), so that `{**stats, "more": 1}` and `stats["after"]` work.
    def keys(self):
        return self.to_json().keys()

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_json().get(key, default)


def scenario_counts(doc: d.Doc) -> dict[str, int]:
    """How big a scenario document is: nodes, pods, jobs (PodGroups), queues, objects, conf size, cycles."""
    objects = d.objects(doc) or []
    kinds = Counter(o.get("kind") for o in objects if isinstance(o, dict))
    conf = d.conf(doc)
    actions = plugins = 0
    if conf is not None:
        actions = len(d.actions(conf))
        plugins = sum(len(t.get("plugins") or []) for t in d.tiers(conf))
    cycles = doc.get("cycles", 1) if isinstance(doc, dict) else 1
    return {"nodes": kinds["Node"], "pods": kinds["Pod"], "jobs": kinds["PodGroup"], "queues": kinds["Queue"],
            "objects": len(objects), "actions": actions, "plugins": plugins,
            "cycles": cycles if isinstance(cycles, int) else 1}
