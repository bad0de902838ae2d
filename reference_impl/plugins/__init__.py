"""Plugins, one module each; importing a module registers its builder (upstream plugins/factory.go)."""

from reference_impl.plugins import conformance, gang, priority  # noqa: F401

try:  # being written alongside; registered when present
    from reference_impl.plugins import binpack, nodeorder, predicates  # noqa: F401
except ImportError:  # pragma: no cover
    pass
