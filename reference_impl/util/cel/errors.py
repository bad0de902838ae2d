"""The errors the CEL front end and evaluator end in (what the API server, the allocator and the reader see)."""

from __future__ import annotations


class CompileError(ValueError):
    """cel-go (with Kubernetes' environment) refuses the expression."""


class NotModelled(ValueError):
    """The expression uses CEL that Kubernetes' environment offers and the reference does not evaluate."""


class CelRuntimeError(ValueError):
    """Evaluation failed; the text is cel-go's (it reaches the pod's condition through the allocator)."""
