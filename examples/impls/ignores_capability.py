#!/usr/bin/env python3
"""NOT conformant: ignores queue deserved shares and capabilities.

The reference scheduler with proportion's Allocatable always true (schedcheck/mutants.py
"allocate-ignores-deserved"): queues get more than their share. schedcheck conform reports
check.queue.allocate-within-deserved, the catalog rule, judged on its own trace.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402
from schedcheck.mutants import mutant  # noqa: E402


def decide(doc):
    with mutant("allocate-ignores-deserved"):
        return run(doc)


if __name__ == "__main__":
    sys.exit(serve(decide))
