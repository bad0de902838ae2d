"""schedcheck: a formal-model and invariant-checking test harness for Volcano-style batch schedulers."""

__version__ = "0.1.0"
