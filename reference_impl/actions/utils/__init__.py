"""Helpers upstream keeps in pkg/scheduler/actions/utils, shared by the gang-aware eviction actions."""
