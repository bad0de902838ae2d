"""The catalog, one module per class of rule; importing a module registers its invariants."""

from invariants.catalog import gang, jobs, nodes, order, session, statements  # noqa: F401
