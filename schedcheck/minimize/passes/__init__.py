"""The reduction passes, in the order the reducer runs them (coarse to fine).

1. `normalise`  (once) a `kind: List` under `objects` becomes a plain list, a
   conf given as a string becomes a mapping, an absent conf becomes upstream's
   default conf written out (so that it can be reduced like any other)
2. `cycles`     fewer cycles (1, half, one less)
3. `wrapper`    drop `expect`, `now` and extra metadata of the Scenario wrapper
4. `jobs`       drop whole jobs: a PodGroup together with its pods (chunked, ddmin-style)
5. `pods`       drop single pods, adjusting nothing else (chunked)
6. `free-nodes` drop nodes no pod names (spec.nodeName, status.nominatedNodeName) (chunked)
7. `nodes`      drop nodes together with the pods placed on them (chunked)
8. `queues`     drop queues no PodGroup (and no other queue, as parent) names (chunked)
9. `others`     drop PriorityClasses, ResourceQuotas and objects of other kinds (chunked)
10. `actions`   drop actions from the conf, and per-action configurations
11. `plugins`   drop plugins, then tiers left empty
12. `plugin-options` drop plugin arguments (all, then one by one) and enable flags
13. `min-member` lower PodGroups' minMember (to 1, half, one less)
14. `fields`    drop optional fields: minResources, minTaskMember, annotations, labels,
                taints, affinity, tolerations, priorities, limits, conditions, ...
15. `dimensions` drop resource names from requests, minResources and queue limits,
                and extended resources from nodes
16. `scale`     divide one resource across the whole scenario by its common factor, or halve it
17. `quantities` round and lower single quantities toward small round values
                (cpu to whole cores, memory to whole Gi/Mi, scalars to whole units)

A pass is either an `Edit` list (label, candidates) or a `Drop` (items, removal).
"""

from __future__ import annotations

from collections.abc import Callable

from schedcheck.minimize.edits import Doc, Drop, Edit
from schedcheck.minimize.passes.conf import action_edits, plugin_edits, plugin_option_edits
from schedcheck.minimize.passes.fields import field_edits, min_member_edits
from schedcheck.minimize.passes.normalise import NORMALISATIONS
from schedcheck.minimize.passes.objects import (
    cycles_edits,
    drop_jobs,
    drop_keys,
    drop_nodes_with_pods,
    free_node_items,
    job_items,
    node_items,
    other_items,
    pod_items,
    queue_items,
    wrapper_edits,
)
from schedcheck.minimize.passes.quantities import dimension_edits, quantity_edits, scale_edits

Pass = Drop | Callable[[Doc], list[Edit]]

PASSES: list[tuple[str, Pass]] = [
    ("cycles", cycles_edits),
    ("wrapper", wrapper_edits),
    ("jobs", Drop(job_items, drop_jobs)),
    ("pods", Drop(pod_items, drop_keys)),
    ("free-nodes", Drop(free_node_items, drop_keys)),
    ("nodes", Drop(node_items, drop_nodes_with_pods)),
    ("queues", Drop(queue_items, drop_keys)),
    ("others", Drop(other_items, drop_keys)),
    ("actions", action_edits),
    ("plugins", plugin_edits),
    ("plugin-options", plugin_option_edits),
    ("min-member", min_member_edits),
    ("fields", field_edits),
    ("dimensions", dimension_edits),
    ("scale", scale_edits),
    ("quantities", quantity_edits),
]

__all__ = ["NORMALISATIONS", "PASSES", "Pass"]
