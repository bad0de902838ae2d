"""The gate's properties as plain Hypothesis tests, for HypoFuzz's open-ended, coverage-guided fuzzing:

    pip install -e '.[test]' && hypothesis fuzz --no-dashboard -n 2 -- tests/fuzz/test_gate_targets.py

HypoFuzz runs them until stopped and keeps what it finds in the local Hypothesis database
(`.hypothesis/`); a failure then replays with plain `pytest tests/fuzz/test_gate_targets.py`. In the
suite they run at a small example count, as any property test.
"""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import HealthCheck, given, settings

from schedcheck.gate_properties import check_document
from schedcheck.generators.machine import machine_for
from schedcheck.generators.scenarios import scenario_profiles, scenarios

# On a CI machine (its `CI` variable) Hypothesis loads its "ci" profile: derandomized, no database.
# HypoFuzz leaves such tests out (and the state machine's runTest carries no settings of its own), so
# under HypoFuzz the default profile is loaded back; the suite keeps whatever profile is in force.
if "hypofuzz" in sys.modules:
    settings.load_profile("default")

SUITE = settings(max_examples=8, deadline=None, print_blob=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.filter_too_much, HealthCheck.large_base_example])


@SUITE
@given(scenarios(**scenario_profiles["ci"]))
def test_generated_scenarios_keep_every_safety_invariant(doc: dict[str, Any]) -> None:
    _, failure = check_document(doc, seed=0, strict=False)
    assert failure is None, f"{failure['id']}: {failure.get('message', '')}"


# sessions in a row over one cluster, the world changing between them (the gate's stateful batches)
TestSessionsInARow = machine_for(0).TestCase
TestSessionsInARow.settings = settings(SUITE, max_examples=3, stateful_step_count=10)
