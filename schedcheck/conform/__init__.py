"""Conformance testing of other scheduler implementations."""
