"""Faults of an implementation are findings, each reported with its scenario; the harness never hangs."""

from __future__ import annotations

import os
import re
import sys
import time

import pytest

from schedcheck.conform.check import conform_one
from schedcheck.conform.impl import ImplSpecError, parse_impl
from schedcheck.scenario.loader import scenario_from_document
from tests.conform.helpers import fixture, impl_cmd

DOC = fixture("gang-partial")
SCENARIO = scenario_from_document(DOC, "gang-partial")


def verdict_of(spec: str, timeout: float = 20.0, max_output: int = 1 << 20):
    return conform_one(parse_impl(spec, timeout=timeout, max_output=max_output), SCENARIO, DOC, 0)


@pytest.mark.parametrize("example, kind", [
    ("fault_crash", "fault.crash"),
    ("fault_garbage", "fault.not-json"),
    ("fault_schema", "fault.schema"),
    ("fault_unknown_pod", "fault.unknown-object"),
])
def test_each_misbehaving_example_is_a_finding(example, kind):
    verdict = verdict_of(impl_cmd(example))
    assert verdict.kind == kind, [f.line() for f in verdict.findings]


def test_a_hang_is_killed_with_its_whole_process_group():
    verdict = verdict_of(impl_cmd("fault_hang"), timeout=1.5)
    assert verdict.kind == "fault.timeout"
    assert "process group was killed" in verdict.findings[0].message


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_hangs_helper_process_goes_too(tmp_path):
    script = tmp_path / "hang.sh"
    script.write_text("#!/bin/sh\nsleep 300 &\necho $! >&2\nsleep 300\n")
    script.chmod(0o755)
    verdict = verdict_of(str(script), timeout=1.0)
    assert verdict.kind == "fault.timeout"
    child = int(re.findall(r"\d+", verdict.stderr)[0])
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.parametrize("code, kind", [
    ("import sys; sys.exit(3)", "fault.exit"),
    ("print('')", "fault.no-output"),
    ("print('{\"protocol\": 1, \"binds\"')", "fault.partial"),
    ("print('[1, 2]')", "fault.not-object"),
    ("import sys; sys.stdout.write('x' * 3000000)", "fault.oversized"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "fault.crash"),
])
def test_command_faults(tmp_path, code, kind):
    script = tmp_path / "impl.py"
    script.write_text(code + "\n")
    verdict = verdict_of(f"{sys.executable} {script}")
    assert verdict.kind == kind, [f.line() for f in verdict.findings]


def test_wrong_cycles_and_unknown_nodes_are_faults(tmp_path):
    from schedcheck.conform.check import check_answer
    from schedcheck.conform.reference import run

    result = run(DOC)
    result["cycles"] = 2
    assert check_answer(SCENARIO, result)[0].kind == "fault.wrong-scenario"
    result = run(DOC)
    result["pipelined"]["default/mpi-2-master-0"] = "node-404"
    finding = check_answer(SCENARIO, result)[0]
    assert finding.kind == "fault.unknown-object" and "node-404" in finding.message


def _raises(doc):
    raise RuntimeError("boom")


def _sleeps(doc):
    time.sleep(60)


def test_python_callables_fault_too():
    assert verdict_of("python:tests.conform.test_faults:_raises").kind == "fault.exit"
    verdict = verdict_of("python:tests.conform.test_faults:_sleeps", timeout=1.0)
    assert verdict.kind == "fault.timeout"
    assert verdict_of("python:schedcheck.conform.reference:run").ok


@pytest.mark.parametrize("spec, fragment", [
    ("python:no_such_module:run", "cannot import"),
    ("python:schedcheck.conform.reference:nothing", "has no nothing"),
    ("./definitely-not-here", "not an executable command"),
    ("", "empty"),
])
def test_unusable_impl_specs(spec, fragment):
    with pytest.raises(ImplSpecError, match=fragment):
        parse_impl(spec)


def test_the_stdin_variant_gives_the_scenario_on_standard_input():
    impl = parse_impl(impl_cmd("reference_cli"), stdin=True)
    assert impl.call(DOC).result["scenario"] == "gang-partial"
    assert os.environ.get("SCHEDCHECK_SEED") is None  # the harness's own environment is untouched
