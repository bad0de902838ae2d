"""Z3 encodings of the scheduler's arithmetic and rules (schedcheck prove / explain / check overkill).

Every module imports z3 lazily or at its own top: the CLI imports none of them at start-up.
"""
