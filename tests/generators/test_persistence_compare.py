"""Upstream vs persistent pipelines: the cross-session machine, the same programs in both modes, the found run."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from schedcheck.generators.machine import machine_for
from schedcheck.persistence_compare import (
    CROSS_SESSION,
    DEFAULT_ACTIONS,
    execute,
    main,
    random_program,
    ratio,
    replay,
)
from schedcheck.scenario.loader import load_scenario

FOUND = Path(__file__).parent / "found" / "cross-pipelined-liveness-reclaim-first.yaml"


def test_the_found_failing_run_separates_the_modes():
    """Found by `schedcheck compare-persistence --budget 60 --seed 3` in upstream mode: a multi-session
    run where reclaim re-pipelines a task every session and nothing binds it; persistent mode binds it."""
    doc = load_scenario(FOUND).document
    assert doc["cycles"] > 1
    assert replay(doc, "upstream") == ["cross.pipelined-liveness"]
    assert replay(doc, "persistent") == []


def test_the_cross_session_machine_in_persistent_mode_keeps_every_rule():
    machine = machine_for(5, strict=True, only=CROSS_SESSION, persistence="persistent", actions=DEFAULT_ACTIONS)
    run_state_machine_as_test(machine, settings=settings(max_examples=8, stateful_step_count=12, deadline=None,
                                                         derandomize=True, database=None,
                                                         suppress_health_check=list(HealthCheck)))
    assert machine.sessions_total > 0 and machine.checks_total > 0


def test_both_modes_run_the_same_program():
    first, second = random_program(random.Random(7), 15), random_program(random.Random(7), 15)
    assert first == second and first[0][0] == "start"
    for mode in ("upstream", "persistent"):
        # the same program gives the same evictions every time it runs (what the comparison relies on)
        assert execute(first, mode, 7, DEFAULT_ACTIONS) == execute(second, mode, 7, DEFAULT_ACTIONS)


def test_the_double_counted_gang_evicts_more_in_persistent_mode():
    """The PR counts Pipelined tasks as ready, and JobPipelined adds the waiting (Pipelined) count again:
    reclaim commits evictions for a gang (minMember 4, 16 cpu on a full 16-cpu cluster) with only two of its
    tasks pipelined. Upstream discards that statement."""
    program = [("start", {"nodes": 2, "cpu": 8, "fill": 2}),
               ("submit_job", {"size": 4, "cpu": 4, "gang": True, "priority": 100, "queue": "batch"}),
               ("run_sessions", {"sessions": 3})]
    upstream, persistent = (execute(program, mode, 0, DEFAULT_ACTIONS) for mode in ("upstream", "persistent"))
    assert (upstream, persistent) == (0, 2)


def test_ratio():
    assert ratio([(2, 1), (0, 0), (2, 2)]) == 0.75
    assert ratio([(0, 1)]) is None


def test_the_command_never_overwrites(tmp_path, capsys):
    target = tmp_path / "out.yaml"
    target.write_text("mine")
    assert main(["--save", str(target), "--budget", "1"]) == 2
    assert target.read_text() == "mine" and "not overwriting" in capsys.readouterr().err
