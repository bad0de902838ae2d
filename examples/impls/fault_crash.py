#!/usr/bin/env python3
"""Misbehaving: crashes. It aborts (SIGABRT) on every scenario with a pending pod, as a native
implementation hitting an assertion would. schedcheck conform reports fault.crash."""

import os
import sys

import yaml

if __name__ == "__main__":
    doc = yaml.safe_load(sys.stdin if sys.argv[-1] == "-" else open(sys.argv[-1]))
    sys.stderr.write("fault_crash: assertion failed: node ledger out of sync\n")
    sys.stderr.flush()
    os.abort()
