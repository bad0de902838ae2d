"""The harness's garbage-collector settings, for processes that run many scenarios.

A scenario run builds and drops many small reference cycles (tasks and their jobs, sessions and their
plugins); with CPython's default thresholds (a young collection every 700 allocations) a gate worker spent
15-25% of its run time in the collector (`schedcheck gate --bench`; docs/performance.md). Collections
still run, less often, and what is alive when the process has set up (modules, the invariant catalog, the
strategies) is moved out of the collector's sight.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000  # allocations between collections of the youngest generation (CPython: 700)
OLDER_THRESHOLDS = (20, 20)  # young collections per middle one, middle per old (CPython: 10, 10)


def tune_gc() -> None:
    """Freeze the objects alive now and collect less often (idempotent)."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
