#!/usr/bin/env python3
"""NOT conformant: ignores gang minimums.

The reference scheduler with gang's JobReady always true (schedcheck/mutants.py
"gang-commit-too-few"): a job whose pods do not all fit still gets the pods that do
bound, below its PodGroup's minMember. schedcheck conform reports check.gang.commit-ready.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402
from schedcheck.mutants import mutant  # noqa: E402


def decide(doc):
    with mutant("gang-commit-too-few"):
        return run(doc)


if __name__ == "__main__":
    sys.exit(serve(decide))
