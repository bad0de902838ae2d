"""Domain-aware minimisation of failing scenarios (delta debugging on scenario documents).

Hypothesis shrinks what it generates; what it hands over is still a whole
cluster. This package reduces the scenario document itself, the way a person
would: drop whole jobs, then single pods, nodes nobody uses, queues nobody
names, the conf's actions and plugins, optional fields, and bring every
quantity down to a small round number, keeping each change only while the
same failure, with the same cause, still happens (`still_fails(candidate)`).

- `schedcheck.document`          the scenario-document accessors (shared with the reports)
- `minimize.passes`              the reduction passes, in order (listed there)
- `minimize.edits`               what a pass is made of: edits, drops, path helpers
- `minimize.reducer`             the driver: greedy, deterministic, to a fixed point, under a budget
- `minimize.cause`               what "the same failure" means: invariant id, action, checkpoint,
                                 operation kind, the roles of the objects named, and the enabledness
                                 of every plugin the rule depends on (see there for the design)
- `minimize.predicate`           `failing_predicate`: the reference run as the test, cause kept
- `minimize.stats`               `MinimizeStats` and `scenario_counts`

`minimize` returns the reduced document; `minimize_with_stats` also returns
the statistics (attempts, accepted reductions per pass, object counts before
and after, time, whether the budget ran out).
"""

from __future__ import annotations

from schedcheck.minimize.cause import Cause, cause_of, guarded_plugins
from schedcheck.minimize.predicate import FailurePredicate, failing_predicate, failure_cause
from schedcheck.minimize.reducer import Predicate, minimize, minimize_with_stats
from schedcheck.minimize.stats import MinimizeStats, scenario_counts

__all__ = ["Cause", "FailurePredicate", "MinimizeStats", "Predicate", "cause_of", "failing_predicate",
           "failure_cause", "guarded_plugins", "minimize", "minimize_with_stats", "scenario_counts"]
