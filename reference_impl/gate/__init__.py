"""Volcano's scheduling-gate manager (pkg/scheduler/gate)."""
