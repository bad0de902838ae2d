"""`schedcheck conform` and `schedcheck check-trace` end to end (fixed seeds, fixture folders)."""

from __future__ import annotations

import json
import shutil
import sys
import types

import pytest
import yaml

from schedcheck.cli import main
from schedcheck.scenario.loader import load_scenario
from tests.conform.helpers import SCENARIOS, impl_cmd


def conform(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["conform", *argv, "--json", "--seed", "3"])
    captured = capsys.readouterr()
    assert "seed 3" in captured.err
    return code, json.loads(captured.out)


def test_the_reference_cli_conforms_on_every_fixture(capsys, tmp_path):
    code, out = conform(capsys, "--impl", impl_cmd("reference_cli"), "--scenarios", str(SCENARIOS),
                        "--report", str(tmp_path))
    assert code == 0 and out["conformant"] and out["scenarios"] == len(list(SCENARIOS.glob("*.yaml")))
    assert not list(tmp_path.iterdir())  # nothing to report


def test_another_tie_break_seed_conforms_too(capsys, tmp_path):
    code, out = conform(capsys, "--impl", impl_cmd("reference_cli", "--seed-offset", "7"), "--scenarios",
                        str(SCENARIOS), "--report", str(tmp_path))
    assert code == 0 and out["conformant"]


@pytest.mark.parametrize("example, scenario, kind", [
    ("gang_ignorer", "gang-partial", "check.gang.commit-ready"),
    ("greedy_evictor", "needless-eviction", "check.eviction.same-node"),
    ("ledger_drift", "releasing-pod", "ledger.identity"),
    ("ignores_capability", "queue-over-capability", "check.queue.allocate-within-deserved"),
])
def test_each_non_conformant_example_is_found_and_minimised(capsys, tmp_path, example, scenario, kind):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(SCENARIOS / f"{scenario}.yaml", folder)
    code, out = conform(capsys, "--impl", impl_cmd(example), "--scenarios", str(folder), "--report",
                        str(tmp_path / "reports"), "--minimise-budget", "3")
    assert code == 1 and out["finding"]["kind"] == kind
    cx = load_scenario(out["counterexample"])  # the counterexample is an ordinary scenario
    assert cx.annotations["schedcheck.io/conform-finding"] == kind
    assert out["minimisation"]["after"]["pods"] <= out["minimisation"]["before"]["pods"]
    report = json.loads((tmp_path / "reports").joinpath(out["report"].split("/")[-1], "report.json").read_text())
    assert report["finding"]["kind"] == kind and "--impl" in report["replay"]


def test_a_fault_is_reported_with_its_scenario(capsys, tmp_path):
    code, out = conform(capsys, "--impl", impl_cmd("fault_crash"), "--scenarios", str(SCENARIOS),
                        "--report", str(tmp_path), "--minimise-budget", "2")
    assert code == 1 and out["finding"]["kind"] == "fault.crash"
    assert "SIGABRT" in out["finding"]["message"]
    folder = tmp_path / out["report"].split("/")[-1]
    assert (folder / "original.yaml").exists() and (folder / "counterexample.yaml").exists()
    assert "assertion failed" in (folder / "report.md").read_text()  # the implementation's stderr


def test_generated_scenarios_in_process(capsys, tmp_path):
    code, out = conform(capsys, "--impl", "python:schedcheck.conform.reference:run", "--budget", "2",
                        "--report", str(tmp_path))
    assert code == 0 and out["scenarios"] >= 1 and out["seed"] == 3


@pytest.mark.parametrize("argv, fragment", [
    (["--impl", "./nothing-here"], "not an executable command"),
    (["--impl", "python:schedcheck.conform.reference:run", "--scenarios", "/no/such/dir"], "not a directory"),
    (["--impl", "python:schedcheck.conform.reference:run", "--budget", "0"], "must be positive"),
    (["--impl", "python:schedcheck.conform.reference:run", "--report", "/dev/null"], "--report /dev/null: not a folder"),
])
def test_usage_errors(capsys, argv, fragment):
    assert main(["conform", *argv]) == 2
    assert fragment in capsys.readouterr().err


def test_the_volcano_shortcut_without_an_adapter(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "schedcheck.adapters.volcano", None)  # import fails
    assert main(["conform", "--impl", "volcano"]) == 2
    assert "Volcano adapter is not available" in capsys.readouterr().err


def test_the_volcano_shortcut_when_the_adapter_fails(monkeypatch, capsys):
    fake = types.ModuleType("schedcheck.adapters.volcano")

    class AdapterError(Exception):
        pass

    def adapter_command():
        raise AdapterError("go is not installed")

    fake.AdapterError, fake.adapter_command = AdapterError, adapter_command
    monkeypatch.setitem(sys.modules, "schedcheck.adapters.volcano", fake)
    assert main(["conform", "--impl", "volcano"]) == 2
    assert capsys.readouterr().err.strip().endswith("--impl volcano: go is not installed")


# ---------------------------------------------------------------- check-trace


def bundle(tmp_path, result: dict, name: str = "releasing-pod") -> str:
    path = tmp_path / "answer.json"
    path.write_text(json.dumps({"scenario": yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text()),
                                "result": result}))
    return str(path)


def test_check_trace_passes_a_good_trace_and_catches_a_broken_one(tmp_path, capsys):
    from schedcheck.conform.reference import run

    good = run(yaml.safe_load((SCENARIOS / "releasing-pod.yaml").read_text()))
    assert main(["check-trace", bundle(tmp_path, good), "--reference"]) == 0
    assert "clean on scenario releasing-pod" in capsys.readouterr().out
    broken = json.loads(json.dumps(good))
    node = broken["ledgers"][0]["nodes"]["node-1"]
    node["used"]["cpu"] += 500
    assert main(["check-trace", bundle(tmp_path, broken), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [f["kind"] for f in out["findings"]] == ["ledger.identity"]


def test_check_trace_with_a_scenario_file_reference(tmp_path, capsys):
    from schedcheck.conform.reference import run

    shutil.copy(SCENARIOS / "gang-partial.yaml", tmp_path / "s.yaml")
    result = run(yaml.safe_load((tmp_path / "s.yaml").read_text()))
    result["scenarioFile"] = "s.yaml"
    result["binds"] = {"default/mpi-2-master-0": "node-1"}
    result["trace"] = [{"cycle": 0, "action": "allocate", "op": "bind", "task": "default/mpi-2-master-0",
                        "node": "node-1"}]
    (tmp_path / "r.json").write_text(json.dumps(result))
    assert main(["check-trace", str(tmp_path / "r.json")]) == 1
    assert "check.gang.commit-ready" in capsys.readouterr().out


@pytest.mark.parametrize("content, fragment", [
    ("{", "not JSON or YAML"),
    ("[1]", "expected an object"),
    ('{"protocol": 1}', "neither a bundle"),
    ('{"scenarioFile": "missing.yaml"}', "missing.yaml"),
])
def test_check_trace_unreadable(tmp_path, capsys, content, fragment):
    path = tmp_path / "t.json"
    path.write_text(content)
    assert main(["check-trace", str(path)]) == 2
    assert fragment in capsys.readouterr().err


def test_the_overhead_figures_run(capsys):
    from schedcheck.conform.overhead import main as overhead

    assert overhead(["--count", "2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "reference_cli.py subprocess" in out and "ms per scenario" in out
