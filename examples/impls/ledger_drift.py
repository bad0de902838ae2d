#!/usr/bin/env python3
"""NOT conformant: its node ledger drifts under releasing pods.

It decides like the reference, but keeps its own node accounting the way a common
bug does: when a pod starts terminating (Releasing), its request is handed back to
Idle at once while it also stays in Used, so on every node with a releasing pod the
ledger it reports has Idle + Used above Allocatable (the drift grows with every
terminating pod). schedcheck conform reports ledger.identity.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402


def decide(doc):
    result = run(doc)
    for ledger in result["ledgers"]:
        for node in ledger["nodes"].values():
            for dim, value in node["releasing"].items():
                node["idle"][dim] = node["idle"].get(dim, 0) + value  # the bug: released twice
    return result


if __name__ == "__main__":
    sys.exit(serve(decide))
