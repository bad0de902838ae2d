"""The catalog, one module per class of rule; importing a module registers its invariants."""

from __future__ import annotations

from schedcheck.invariants.catalog import (  # noqa: F401  (each registers its invariants on import)
    admission,
    admission_rules,
    capacity_rules,
    cross_session,
    device_requests,
    devices,
    dra,
    evictions,
    extender,
    gang,
    jobs,
    nodes,
    numa,
    order,
    pods,
    progress,
    queue_state,
    queues,
    reclaimers,
    recompute,
    session,
    statements,
    topology,
    victims,
)
from schedcheck.invariants.registry import _CATALOG, Invariant


def catalog() -> list[Invariant]:
    """Every registered invariant, in id order."""
    return [_CATALOG[key] for key in sorted(_CATALOG)]


def get(id: str) -> Invariant | None:
    return _CATALOG.get(id)
