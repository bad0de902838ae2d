"""Adapters that run scenarios through other scheduler implementations (the conformance protocol)."""

from schedcheck.adapters.volcano import AdapterError, adapter_command

__all__ = ["AdapterError", "adapter_command"]
