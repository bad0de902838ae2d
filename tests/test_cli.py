"""The command line: exit statuses, JSON output, one-line errors, help with examples."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedcheck.cli import main

SCENARIO = """
apiVersion: schedcheck/v1
kind: Scenario
metadata: {name: cli-smoke}
schedulerConf:
  actions: "enqueue, allocate"
  tiers:
  - plugins: [{name: priority}, {name: gang}]
  - plugins: [{name: predicates}, {name: nodeorder}]
objects:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: pg, namespace: default}
  spec: {minMember: 1, queue: default}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: default, annotations: {scheduling.k8s.io/group-name: pg}}
  spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
expect:
  binds: {default/p1: %s}
"""


def _write(tmp_path: Path, node: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO % node)
    return path


def test_run_exit_0_when_expectations_hold(tmp_path, capsys):
    assert main(["run", str(_write(tmp_path, "n1"))]) == 0
    assert "all expectations met" in capsys.readouterr().out


def test_run_exit_1_when_an_expectation_fails(tmp_path, capsys):
    assert main(["run", str(_write(tmp_path, "n9"))]) == 1
    assert "expected default/p1 bound to n9" in capsys.readouterr().out


def test_run_json_is_one_object_with_the_spec_fields(tmp_path, capsys):
    assert main(["run", str(_write(tmp_path, "n1")), "--json", "--seed", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"scenario", "binds", "evicted", "pipelined", "podGroupPhases", "taskStatusCounts",
            "violations", "expectations"} <= set(result)
    assert result["binds"] == {"default/p1": "n1"} and result["seed"] == 3
    assert result["expectations"] == {"met": True, "failures": []}


def test_run_exit_2_with_one_line_on_bad_input(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text((SCENARIO % "n1").replace('cpu: "1"', 'cpu: "1 core"'))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.yaml" in err[0] and "Pod default/p1" in err[0] and "cpu" in err[0]


def test_run_missing_file_is_exit_2(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml" in capsys.readouterr().err


def _subcommands() -> list[str]:
    import argparse

    from schedcheck.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(action.choices)


@pytest.mark.parametrize("command", _subcommands())
def test_help_shows_an_example(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "example" in capsys.readouterr().out


def _readme_commands() -> set[str]:
    import re

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `schedcheck ([a-z-]+)", table, flags=re.M))


def test_the_readme_command_table_is_the_command_line():
    assert _readme_commands() == set(_subcommands())


def test_every_command_of_the_cli_contract_exists():
    import re

    spec = Path(__file__).resolve().parent.parent.parent / "shared" / "spec" / "cli.md"
    if not spec.is_file():  # the contract lives beside the project, not in a clone of it
        spec_commands = {"run", "check", "invariants", "gate", "replay", "prove", "explain", "conform",
                         "check-trace", "bench"}
    else:
        spec_commands = set(re.findall(r"^\| `schedcheck ([a-z-]+)", spec.read_text(), flags=re.M))
    assert spec_commands <= set(_subcommands())


def test_console_script_runs_without_traceback(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("objects: [unclosed")
    proc = subprocess.run([sys.executable, "-m", "schedcheck.cli", "run", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_bench_prints_figures_without_asserting_times(capsys):
    """A tiny cluster and no upstream run (the Go adapter's build and run cost a minute; tests/adapters
    covers it): the phases of each side are printed, as JSON and as the table."""
    assert main(["bench", "--sizes", "2", "--no-upstream", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    (size,) = figures["sizes"]
    assert size["nodes"] == 2 and size["pods"] == 20 and size["pendingPods"] == 10
    for side in ("reference", "referenceWithInvariants"):
        measured = size[side]
        assert measured["binds"] == 10 and measured["maxRSSMB"] > 0
        assert list(measured["phases"]) == ["load", "open", "enqueue", "allocate", "backfill", "close"]
        assert measured["sessionSeconds"] == pytest.approx(
            sum(v for k, v in measured["phases"].items() if k != "load"), abs=1e-3)
    assert "invariantSeconds" not in size["reference"]
    assert size["referenceWithInvariants"]["invariantChecks"] > 0
    assert size["referenceWithInvariants"]["violations"] == 0 and "upstream" not in size
    assert main(["bench", "--sizes", "2", "--no-upstream"]) == 0
    table = capsys.readouterr().out
    assert "allocate" in table and "peak MB" in table and "\n2 " in table and "ref+invariants" in table


def test_bench_reads_upstreams_phases_from_the_adapters_timings():
    from schedcheck.bench_measure import upstream_figures

    timings = {"sessionSeconds": [3.5], "totalSeconds": 3.5, "readSeconds": 0.5, "runSeconds": 5.0,
               "maxRSSKB": 2048, "sessions": [{
                   "cacheSeconds": 1.0, "openSeconds": 0.5, "closeSeconds": 0.25, "adapterSeconds": 0.1,
                   "waitSeconds": 0.2, "actions": [{"name": "enqueue", "seconds": 0.25},
                                                    {"name": "allocate", "seconds": 2.5}]}]}
    figures = upstream_figures({"timings": timings, "binds": {"a/b": "n"}, "pipelined": {}}, wall=6.0)
    assert figures["phases"] == {"load": 1.5, "open": 0.5, "enqueue": 0.25, "allocate": 2.5, "close": 0.25}
    assert figures["sessionSeconds"] == 3.5 and figures["maxRSSMB"] == 2.0 and figures["binds"] == 1
    assert figures["outsideSessionSeconds"] == 1.0  # 6 s of process, 5 s in load and session


def test_bench_rejects_bad_sizes(capsys):
    assert main(["bench", "--sizes", "ten"]) == 2


def test_docs_invariants_page_matches_the_catalog():
    from schedcheck.invariants.catalog import catalog
    from schedcheck.catalog_doc import render_catalog_markdown

    page = Path(__file__).resolve().parent.parent / "docs" / "invariants.md"
    assert page.read_text(encoding="utf-8") == render_catalog_markdown(catalog()), (
        "docs/invariants.md is stale: run `schedcheck invariants --markdown > docs/invariants.md`")


def test_check_writes_a_report_and_fails_on_a_violation(tmp_path, capsys):
    from schedcheck.mutants import mutant

    scenario = Path(__file__).parent / "scenarios" / "gang-discard.yaml"
    assert main(["check", str(scenario), "--report", str(tmp_path)]) == 0
    capsys.readouterr()
    with mutant("discard-not-reversing"):
        assert main(["check", str(scenario), "--report", str(tmp_path), "--json"]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["report"] and printed["violations"]
    folders = sorted(p for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert len(folders) == 2 and all((f / "report.json").exists() and (f / "report.md").exists() for f in folders)
    report = json.loads((folders[-1] / "report.json").read_text())
    assert report["violations"] and "gang.no-stranded-placement" in {v["id"] for v in report["violations"]}
    assert "## 1." in (folders[-1] / "report.md").read_text()


def test_check_rejects_unknown_invariant_ids(capsys):
    assert main(["check", "tests/scenarios/gang-commit.yaml", "--only", "no.such"]) == 2
    assert "no.such" in capsys.readouterr().err
