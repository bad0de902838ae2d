"""Volcano's own feature gates (pkg/features/volcano_features.go) and their defaults.

The scheduler's `--feature-gates` flag switches them; a scenario gives them as
`schedulerOptions.featureGates`. Only SchedulingGatesQueueAdmission changes what the reference
does; the others are listed so that a scenario can name them (their non-default values are not
modelled).
"""

from __future__ import annotations

SCHEDULING_GATES_QUEUE_ADMISSION = "SchedulingGatesQueueAdmission"

# name -> default (all alpha upstream)
VOLCANO_FEATURE_GATES: dict[str, bool] = {
    "WorkLoadSupport": True,
    "VolcanoJobSupport": True,
    "PodDisruptionBudgetsSupport": True,
    "QueueCommandSync": True,
    "PriorityClass": True,
    "CSIStorage": False,
    "ResourceTopology": True,
    "CronVolcanoJobSupport": True,
    SCHEDULING_GATES_QUEUE_ADMISSION: False,
}

MODELLED_FEATURE_GATES = frozenset({SCHEDULING_GATES_QUEUE_ADMISSION})
