"""A Volcano scheduler cache dump (dumper.go) replayed as a scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from schedcheck.cli import main
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_from_dump, load_scenario

SCENARIO = Path(__file__).parent / "scenarios" / "reclaim-victim-queue-order.yaml"


def _as_dump(path: Path, tmp: Path) -> tuple[Path, Path]:
    """The scenario's objects the way dumper.go writes them: nodes with their tasks, hypernode tiers, jobs with
    their PodGroups and tasks (Go field names, no TypeMeta), one JSON value after another; queues apart."""
    objects = yaml.safe_load(path.read_text())["objects"]
    strip = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in objects]
    pods = [s for s, o in zip(strip, objects) if o["kind"] == "Pod"]
    nodes = {s["metadata"]["name"]: {"Name": s["metadata"]["name"], "Node": s,
                                     "Tasks": {p["metadata"]["name"]: {"Pod": p} for p in pods
                                               if p.get("spec", {}).get("nodeName") == s["metadata"]["name"]}}
             for s, o in zip(strip, objects) if o["kind"] == "Node"}
    jobs = {f"{s['metadata'].get('namespace', 'default')}/{s['metadata']['name']}":
            {"PodGroup": {**s, "Version": "v1beta1"},
             "Tasks": {p["metadata"]["name"]: {"Pod": p} for p in pods
                       if p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == s["metadata"]["name"]}}
            for s, o in zip(strip, objects) if o["kind"] == "PodGroup"}
    dump = tmp / "snapshot-1700000000.json"
    dump.write_text("\n".join(json.dumps(v) for v in (nodes, {}, {}, {}, {}, jobs)) + "\n")
    queues = tmp / "queues.yaml"
    queues.write_text(yaml.safe_dump_all([o for o in objects if o["kind"] == "Queue"]))
    return dump, queues


def test_a_dump_with_its_queues_decides_as_the_scenario(tmp_path):
    dump, queues = _as_dump(SCENARIO, tmp_path)
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(yaml.safe_dump(yaml.safe_load(SCENARIO.read_text())["schedulerConf"]))
    from_dump = run_scenario(load_from_dump(dump, queues, conf))
    original = run_scenario(load_scenario(SCENARIO))
    assert from_dump.evicted == original.evicted and from_dump.pipelined == original.pipelined
    assert from_dump.evicted  # the scenario reclaims: the dump carried its state


def test_missing_queues_are_warned_about(tmp_path, capsys):
    dump, _ = _as_dump(SCENARIO, tmp_path)
    assert main(["run", "--from-dump", str(dump)]) in (0, 1)
    assert "is not among the objects" in capsys.readouterr().err


def test_bad_dumps_and_bad_usage_are_one_line_errors(tmp_path, capsys):
    bad = tmp_path / "snapshot.json"
    bad.write_text('{"n1": {"Node": ')
    assert main(["run", "--from-dump", str(bad)]) == 2
    empty = tmp_path / "empty.json"
    empty.write_text("{}\n[]\n")
    assert main(["check", "--from-dump", str(empty)]) == 2
    assert main(["run"]) == 2
    assert main(["run", str(SCENARIO), "--from-dump", str(empty)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and "not a scheduler cache dump" in err[0] and "no Node, Pod or PodGroup" in err[1]


@pytest.mark.parametrize("namespace", [{"a": 1}, ["x"], -10**20, 1e300])
def test_a_namespace_that_is_no_string_is_a_one_line_error(tmp_path, namespace):
    """Found by `schedcheck fuzz-input --count 10000 --seed 1`: the dump reader crashed keying on it."""
    import json

    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_from_dump

    dump = {"1": {"Node": {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}}},
            "2": {"PodGroup": {"metadata": {"name": "pg", "namespace": namespace}, "spec": {"minMember": 1}},
                  "Tasks": {}},
            "3": {"PodGroup": {"metadata": {"name": "pg2", "namespace": "default"}, "spec": {"minMember": 1}},
                  "Tasks": {}}}
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump))
    with pytest.raises(ScenarioError) as err:
        load_from_dump(path)
    assert "metadata.namespace" in str(err.value) and "\n" not in str(err.value)
