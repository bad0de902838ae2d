"""Plugins, one module each; importing a module registers its builder (upstream plugins/factory.go)."""

from reference_impl.plugins import binpack, conformance, gang, nodeorder, predicates, priority  # noqa: F401
