"""The stateful machine: sessions in a row with the world changing between them."""

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from schedcheck.generators.machine import machine_for
from schedcheck.mutants import mutant
from schedcheck.scenario.loader import scenario_from_document

SETTINGS = settings(max_examples=15, stateful_step_count=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def test_clean_reference_keeps_every_invariant_over_many_sessions():
    machine = machine_for(11)
    run_state_machine_as_test(machine, settings=SETTINGS)
    assert machine.sessions_total > 0 and machine.checks_total > 0


def test_machine_finds_a_bug_and_saves_a_replayable_session():
    machine = machine_for(3)
    try:
        with mutant("gang-commit-too-few"):
            run_state_machine_as_test(machine, settings=settings(SETTINGS, max_examples=60))
    except AssertionError:
        pass
    else:
        raise AssertionError("the machine did not find the deliberate bug")
    doc, violation = machine.last_failure
    assert violation["id"].startswith("gang.")
    assert scenario_from_document(doc, "<machine>").cycles == 1
