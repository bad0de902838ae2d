"""The upstream-Volcano adapter speaks the protocol and agrees with the reference where it must."""

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
RESOURCE_KEYS = {"allocatable", "idle", "used", "releasing", "pipelined"}


def run_adapter(command: list[str], arg: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SCHEDCHECK_PROTOCOL": "1", "SCHEDCHECK_SEED": "0"}
    return subprocess.run([*command, arg], input=stdin, capture_output=True, text=True, env=env, timeout=300)


def upstream(command: list[str], name: str) -> dict:
    done = run_adapter(command, str(SCENARIOS / f"{name}.yaml"))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # exactly one JSON object on stdout


def reference(name: str) -> dict:
    return run_scenario(load_scenario(SCENARIOS / f"{name}.yaml")).to_json(with_trace=True)


def check_shape(result: dict, name: str, cycles: int) -> None:
    assert result["protocol"] == 1
    assert result["implementation"].startswith("volcano@")
    assert result["scenario"] == name and result["cycles"] == cycles
    assert all(isinstance(k, str) and "/" in k and isinstance(v, str) for k, v in result["binds"].items())
    assert all(isinstance(k, str) and "/" in k for k in result["evicted"])
    assert all(isinstance(v, str) for v in result["pipelined"].values())
    assert all(isinstance(v, str) and v for v in result["podGroupPhases"].values())
    for counts in result["taskStatusCounts"].values():
        assert all(isinstance(n, int) and n > 0 for n in counts.values())
    ops = {"allocate", "pipeline", "evict", "bind", "unallocate", "unpipeline", "unevict"}
    for entry in result["trace"]:
        assert set(entry) == {"cycle", "action", "op", "task", "node"} and entry["op"] in ops
        assert 0 <= entry["cycle"] < cycles
    assert [ledger["cycle"] for ledger in result["ledgers"]] == list(range(cycles))
    for ledger in result["ledgers"]:
        for node in ledger["nodes"].values():
            assert set(node) == RESOURCE_KEYS
            assert all(isinstance(v, (int, float)) for r in node.values() for v in r.values())
    for written in result["podGroupAnnotations"].values():
        assert written and set(written) <= {"volcano.sh/job-allocated-hypernode"}
    for conditions in result["podGroupConditions"].values():
        assert all(set(c) == {"status", "reason"} for c in conditions.values())
    # Every bind appears in the trace as a bind of the same task to the same node.
    traced = {e["task"]: e["node"] for e in result["trace"] if e["op"] == "bind"}
    assert traced == result["binds"]


def test_gang_allocate_binds_the_same_tasks(volcano_adapter):
    up, ref = upstream(volcano_adapter, "gang-commit"), reference("gang-commit")
    check_shape(up, "gang-commit", 1)
    # The three nodes score equally (the reference records ties): the tasks must agree, not the nodes.
    assert set(up["binds"]) == set(ref["binds"]) and len(set(up["binds"].values())) == 3
    assert up["podGroupPhases"] == ref["podGroupPhases"] == {"ml/mnist": "Inqueue"}
    assert up["taskStatusCounts"] == ref["taskStatusCounts"]
    # Ledger: after the session every bound task's request is used on its node.
    used_cpu = sum(n["used"]["cpu"] for n in up["ledgers"][0]["nodes"].values())
    assert used_cpu > 0


def test_podgroup_annotations_and_conditions_agree_with_the_reference(volcano_adapter):
    """The scheduler (v1.14 and later) leaves the hypernode annotation the scenario gave as it was, whichever
    of the tied hypernodes it takes; gang writes Scheduled at close."""
    path = Path(__file__).resolve().parents[2] / "schedcheck/corpus/upstream" / (
        "allocate-TestAllocateWithNetWorkTopologies-hard-network-topology-constrain-and-task-in-job-rescheduled-"
        "can-allocate-job-when-the-tier-corresponding-to-3.yaml")
    done = run_adapter(volcano_adapter, str(path))
    assert done.returncode == 0, done.stderr[-2000:]
    up = json.loads(done.stdout)
    ref = run_scenario(load_scenario(path)).to_json(with_trace=True)
    assert up["podGroupAnnotations"] == ref["podGroupAnnotations"] == {
        "c1/pg1": {"volcano.sh/job-allocated-hypernode": "s3"}}
    assert up["podGroupConditions"] == ref["podGroupConditions"]
    assert up["podGroupConditions"]["c1/pg1"]["Scheduled"]["status"] == "True"
    from schedcheck.conform.differential import compare
    assert compare(load_scenario(path), up) == []


def test_an_unschedulable_gang_gets_the_condition_the_reference_writes(volcano_adapter):
    up, ref = upstream(volcano_adapter, "gang-phase-unknown"), reference("gang-phase-unknown")
    assert up["podGroupConditions"] == ref["podGroupConditions"] == {
        "ml/horovod": {"Unschedulable": {"status": "True", "reason": "NotEnoughResources"}}}


def test_preempt_agrees_with_reference(volcano_adapter):
    name = "preempt-high-priority-same-queue"
    up, ref = upstream(volcano_adapter, name), reference(name)
    check_shape(up, name, 3)
    assert up["binds"] == ref["binds"]
    # Two equal etl victims: upstream takes one in map order, so which one varies from run to run.
    assert len(up["evicted"]) == len(ref["evicted"]) == 1 and up["evicted"][0].startswith("data/etl-worker-")
    assert up["pipelined"] == ref["pipelined"]
    assert up["podGroupPhases"] == ref["podGroupPhases"]
    assert [e["op"] for e in up["trace"] if e["cycle"] == 0] == ["evict", "pipeline"]


def test_reclaim_agrees_with_reference(volcano_adapter):
    name = "reclaim-guarantee-across-queues"
    up, ref = upstream(volcano_adapter, name), reference(name)
    check_shape(up, name, 3)
    assert up["binds"] == ref["binds"]
    # Upstream picks its victims among equally ranked tasks in map order: which ones is not fixed.
    assert len(up["evicted"]) == len(ref["evicted"]) == 2
    assert all(key.startswith("dev/batch-worker-") for key in up["evicted"])
    assert up["podGroupPhases"] == ref["podGroupPhases"]


def test_the_nominated_node_reaches_the_next_session(volcano_adapter):
    """The session close writes the preemptor's nominated node; the next session's preempt must see it
    (found by `schedcheck conform --impl volcano`: the adapter used to drop it)."""
    name = "preempt-nominated-not-eligible-next-session"
    up, ref = upstream(volcano_adapter, name), reference(name)
    check_shape(up, name, 2)
    assert up["evicted"] == ref["evicted"] == ["data/fill-0"]
    assert ref["pipelined"] == {"ml/spark-0-driver-0": "node-0"}
    # driver-0 requests nothing, so node-0 and node-1 score alike and upstream picks either at random:
    # its answer must be one the reference makes under some legal tie-break
    assert list(up["pipelined"]) == ["ml/spark-0-driver-0"]
    from schedcheck.conform.differential import compare
    assert compare(load_scenario(SCENARIOS / f"{name}.yaml"), up) == []
    # Session 2: driver-0 pipelines, driver-1 is not eligible, the job is not pipelined -> discard;
    # phase B then pipelines driver-0 alone. The same operations in both.
    ops = [(e["op"], e["task"]) for e in up["trace"] if e["cycle"] == 1]
    assert ops == [(e["op"], e["task"]) for e in ref["trace"] if e["cycle"] == 1]
    assert ops == [("pipeline", "ml/spark-0-driver-0"), ("unpipeline", "ml/spark-0-driver-0"),
                   ("pipeline", "ml/spark-0-driver-0")]


def test_scenario_on_stdin_and_bad_input(volcano_adapter, tmp_path):
    text = (SCENARIOS / "preempt-high-priority-same-queue.yaml").read_text()
    done = run_adapter(volcano_adapter, "-", stdin=text)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["scenario"] == "preempt-high-priority-same-queue" and result["binds"] == {"data/fraud-0": "worker-1"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: schedcheck/v1\nkind: Scenario\nschedulerConf: {actions: 'allocate, nosuchaction'}\n")
    done = run_adapter(volcano_adapter, str(bad))
    assert done.returncode == 2 and done.stdout == ""
    assert "nosuchaction" in done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("name", ["task-order-priority", "usage-predicate-hot-node", "predicates-taint-toleration"])
def test_more_scenarios_bind_as_the_reference(volcano_adapter, name):
    up, ref = upstream(volcano_adapter, name), reference(name)
    assert up["binds"] == ref["binds"]
    assert Counter(up["evicted"]) == Counter(ref["evicted"])


def test_go_vet_passes_under_the_default_and_the_builders_tags(volcano_adapter, tmp_path):
    """`go vet ./...` on the adapter, in a copy laid out as the builder lays it (the pinned go.mod, or the
    SCHEDCHECK_VOLCANO_SRC checkout's), with no tags and with the tags the builder sets."""
    import shutil

    from schedcheck.adapters import volcano

    work = tmp_path / "adapter"
    work.mkdir()
    for f in volcano.source_files():
        shutil.copy2(f, work / f.name)
    src = volcano.volcano_source()
    if src is not None:
        (work / "go.mod").write_text(volcano.checkout_go_mod(src))
        sums = (src / "go.sum").read_text(errors="replace") if (src / "go.sum").is_file() else ""
        (work / "go.sum").write_text(sums + (volcano.ADAPTER_DIR / "go.sum").read_text())
    env = {**os.environ, "GOFLAGS": (os.environ.get("GOFLAGS", "") + " -mod=mod").strip()}
    for tags in ([], ["-tags", ",".join(volcano.version_tags(src))]):
        done = subprocess.run(["go", "vet", *tags, "./..."], cwd=work, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"go vet {' '.join(tags)}: {done.stderr[-2000:]}"
