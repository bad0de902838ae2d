"""The gate's property as pytest tests, one per worker, for `schedcheck gate --workers N` (pytest-xdist).

Not part of the test suite (it lives outside tests/): the gate passes its configuration in the
SCHEDCHECK_GATE_CONFIG environment variable and runs this file with `pytest -n N`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from schedcheck.gate_properties import WorkerConfig, run_worker

_CONFIG = json.loads(os.environ.get("SCHEDCHECK_GATE_CONFIG", "{}"))
_WORKERS = int(_CONFIG.get("workers", 1)) if _CONFIG else 0


@pytest.mark.parametrize("worker", range(_WORKERS))
def test_generated_scenarios_keep_every_invariant(worker: int) -> None:
    config = WorkerConfig(**{**_CONFIG, "worker": worker})
    stats, failure = run_worker(config)
    if failure is not None:
        path = Path(config.stats_dir or ".") / f"failure-{worker}.json"
        path.write_text(json.dumps(asdict(failure)), encoding="utf-8")
        pytest.fail(f"{failure.invariant} (cycle {failure.cycle}, {failure.action or '-'}): {failure.message}",
                    pytrace=False)
