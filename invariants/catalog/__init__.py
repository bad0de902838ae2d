"""The catalog, one module per class of rule; importing a module registers its invariants."""

from schedcheck.invariants.catalog import (  # noqa: F401
    admission,
    cross_session,
    evictions,
    gang,
    jobs,
    nodes,
    order,
    queues,
    session,
    statements,
    victims,
)
