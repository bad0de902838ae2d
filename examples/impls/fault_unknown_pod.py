#!/usr/bin/env python3
"""Misbehaving: names a pod that does not exist. Every answer also binds `default/ghost-0` to the
first node. schedcheck conform reports fault.unknown-object."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402


def decide(doc):
    result = run(doc)
    nodes = [o["metadata"]["name"] for o in doc.get("objects", []) if isinstance(o, dict) and o.get("kind") == "Node"]
    result["binds"]["default/ghost-0"] = nodes[0] if nodes else "node-0"
    return result


if __name__ == "__main__":
    sys.exit(serve(decide))
