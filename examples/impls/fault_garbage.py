#!/usr/bin/env python3
"""Misbehaving: prints log lines on standard output before its JSON, so the output is not one
JSON object. schedcheck conform reports fault.not-json."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import read_scenario, run  # noqa: E402

if __name__ == "__main__":
    print("I1122 02:00:00 scheduler.go:42] starting session")
    print(json.dumps(run(read_scenario(sys.argv[1:]))))
