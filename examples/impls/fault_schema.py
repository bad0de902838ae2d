#!/usr/bin/env python3
"""Misbehaving: breaks the result schema. It reports `binds` as a list of [pod, node] pairs and
`cycles` as a string. schedcheck conform reports fault.schema."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402


def decide(doc):
    result = run(doc)
    result["binds"] = [[pod, node] for pod, node in result["binds"].items()]
    result["cycles"] = str(result["cycles"])
    return result


if __name__ == "__main__":
    sys.exit(serve(decide))
