#!/usr/bin/env python3
"""A conformant external implementation: the reference scheduler behind the protocol-1 command line.

    schedcheck conform --impl 'python examples/impls/reference_cli.py' --budget 20

It reads the scenario (a path, or - for standard input), breaks ties with $SCHEDCHECK_SEED plus
the optional --seed-offset N (a different, equally legal tie-break: it must still conform), and
prints one result object with trace and ledgers. Nothing is wrong with it.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from schedcheck.conform.reference import run, serve  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed-offset", type=int, default=0)
    parser.add_argument("scenario")
    args = parser.parse_args()
    seed = int(os.environ.get("SCHEDCHECK_SEED", "0") or 0) + args.seed_offset
    return serve(lambda doc: run(doc, seed), [args.scenario])


if __name__ == "__main__":
    sys.exit(main())
