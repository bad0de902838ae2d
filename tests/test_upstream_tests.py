"""`schedcheck upstream-tests`: upstream's unit-test cases as scenarios, judged on the reference."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from schedcheck.adapters import upstream_tests as ut
from schedcheck.cli import main

SCENARIOS = Path(__file__).parent / "scenarios"


def _case(tmp_path: Path, name: str, source: str, edit=None, notes=None) -> Path:
    doc = yaml.safe_load((SCENARIOS / source).read_text(encoding="utf-8"))
    doc["metadata"] = {"name": name, "annotations": {"schedcheck.io/upstream-test": "x_test.go TestX",
                                                      "schedcheck.io/upstream-case": name, **(notes or {})}}
    if edit:
        edit(doc)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_verdicts_agree_tie_disagree_and_unsupported(tmp_path):
    agree = _case(tmp_path, "agree", "preempt-equal-priority-no-preemption.yaml")

    def wrong(doc):
        doc["expect"] = {"bindCount": 99}
    disagree = _case(tmp_path, "disagree", "preempt-equal-priority-no-preemption.yaml", wrong)
    unsupported = _case(tmp_path, "unsupported", "preempt-equal-priority-no-preemption.yaml",
                        notes={"schedcheck.io/upstream-unsupported": "volumes"})

    def other_node(doc):  # tie-identical-nodes binds ops/probe-0 to one of three tied nodes
        doc["expect"] = {"binds": {"ops/probe-0": "rack-a-3"}}
    tie = _case(tmp_path, "tie", "tie-identical-nodes.yaml", other_node)
    verdicts = {p.stem: ut.judge(p) for p in (agree, disagree, unsupported, tie)}
    assert verdicts["agree"].verdict == "agree" and verdicts["agree"].test == "x_test.go TestX"
    assert verdicts["disagree"].verdict == "disagree" and "bindCount" in verdicts["disagree"].detail
    assert verdicts["unsupported"].verdict == "unsupported" and verdicts["unsupported"].detail == "volumes"
    assert verdicts["tie"].verdict in ("agree", "tie")  # seed 0 may already pick rack-a-3


def test_an_unknown_test_plugin_is_unsupported_not_a_crash(tmp_path):
    def custom(doc):
        doc["schedulerConf"]["tiers"][0]["plugins"].append({"name": "normal-preempt-benchmark-predicate"})
    verdict = ut.judge(_case(tmp_path, "custom", "preempt-equal-priority-no-preemption.yaml", custom))
    assert verdict.verdict == "unsupported" and "unknown plugin" in verdict.detail


def test_a_known_test_plugin_without_its_arguments_is_unsupported_with_the_reason(tmp_path):
    def bare(doc):
        doc["schedulerConf"]["tiers"][0]["plugins"].append({"name": "device-fit-after-eviction"})
    verdict = ut.judge(_case(tmp_path, "bare", "preempt-equal-priority-no-preemption.yaml", bare))
    assert verdict.verdict == "unsupported"
    assert verdict.detail.startswith("schedulerConf: tiers[0].plugins[") and "arguments.task: missing" in verdict.detail


def test_keep_names_the_test_plugin_in_the_header(tmp_path):
    source = "upstream/shuffle-TestShuffle-select-pods-with-low-priority-and-evict-them.yaml"
    note = {ut.TEST_PLUGINS_NOTE: "fake: a gomock plugin, as test-victims-by-priority"}
    case = _case(tmp_path, "shuffle-case", source, notes=note)
    summary = ut.Summary(source="here", cases=[ut.judge(case)])
    assert summary.cases[0].verdict == "agree"
    assert ut.keep(tmp_path, summary, tmp_path / "kept") == 1
    header = (tmp_path / "kept" / "shuffle-case.yaml").read_text(encoding="utf-8").splitlines()[:3]
    assert header[2] == ("# Upstream's test-only plugin, written as a schedcheck test plugin "
                         "(schedcheck/scenario/testplugins.py): fake: a gomock plugin, as test-victims-by-priority.")


def test_from_a_folder_exit_status_follows_the_disagreements(tmp_path, capsys):
    folder = tmp_path / "cases"
    folder.mkdir()
    _case(folder, "agree", "preempt-equal-priority-no-preemption.yaml")
    assert main(["upstream-tests", "--from", str(folder)]) == 0
    assert "1 agree" in capsys.readouterr().out

    def wrong(doc):
        doc["expect"] = {"evictCount": 3}
    _case(folder, "disagree", "preempt-equal-priority-no-preemption.yaml", wrong)
    assert main(["upstream-tests", "--from", str(folder), "--json"]) == 1


def test_tidy_drops_only_empty_go_status_fields():
    doc = {"objects": [{"kind": "Node", "status": {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                                                   "nodeInfo": {"machineID": ""}, "allocatable": {"cpu": "1"}}},
                       {"kind": "Queue", "status": {"allocated": {"cpu": "2"}, "reservation": {}}}]}
    ut.tidy(doc)
    assert doc["objects"][0]["status"] == {"allocatable": {"cpu": "1"}}
    assert doc["objects"][1]["status"] == {"allocated": {"cpu": "2"}}


def test_usage_errors_are_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SCHEDCHECK_VOLCANO_SRC", raising=False)
    assert main(["upstream-tests"]) == 2
    assert "--src" in capsys.readouterr().err
    assert main(["upstream-tests", "--from", str(tmp_path / "missing")]) == 2
    if shutil.which("go"):
        assert main(["upstream-tests", "--src", str(tmp_path)]) == 2
        assert "not a Volcano checkout" in capsys.readouterr().err


def test_the_hooks_match_the_dumper():
    text = ut.DUMP_SOURCE.read_text(encoding="utf-8")
    for _, call in ut.HOOKS + ut.CHECK_HOOKS:
        assert f"func {call.strip().split('(')[0]}(" in text
    # every check the Close hook may drop expectations for is hooked, and CheckAll stands for all of them
    hooked = {call.split('"')[1] for _, call in ut.CHECK_HOOKS if "schedcheckChecked" in call}
    for name in hooked - {"CheckAll"}:
        assert f'"{name}":' in text
    assert hooked == {"CheckAll", "CheckBind", "CheckEvict", "CheckPipelined", "CheckTaskStatusNums", "CheckPGStatus",
                      "CheckBindInHyperNode"}


def test_a_case_whose_test_checks_nothing_agrees_when_the_session_runs(tmp_path):
    # TestHDRF calls no uthelper check: the dump keeps no expectation and says so; the judge says what agreeing means
    source = "upstream/hdrf-TestHDRF-rescaling-test.yaml"
    agree = ut.judge(_case(tmp_path, "hdrf", source, notes={ut.CHECKS_NOTE: "none: the test calls no check"}))
    assert agree.verdict == "agree" and "calls no check" in agree.detail

    def loader(doc):  # the same conf read by the scheduler's loader is refused, as upstream's loader refuses it
        del doc["schedulerConf"]["builtDirectly"]
    refused = ut.judge(_case(tmp_path, "hdrf-loader", source, loader))
    assert refused.verdict == "unsupported" and "conflict" in refused.detail
