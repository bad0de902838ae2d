"""Rediscovery: upstream Volcano bugs that were fixed, found again in upstream's own code.

Each bug in the catalog (bugs.yaml) is a pair of upstream commits, the fix's parent and the fix. Both are
exported from a Volcano git repository, the Go adapter is built against each (adapters/volcano, with its
per-version shims), and generated scenarios go through the parent's build until the harness flags one
that the fixed build passes: the bug, found without being told where to look. That scenario is minimised
with both builds re-run on every candidate, replayed red on the parent and green on the fix, and kept.
"""
