"""The Python side of the adapter: locating, caching and failing with one-line messages."""

import shutil
import stat

import pytest

from schedcheck.adapters import volcano
from schedcheck.adapters.differential import classify, run_reference


def test_prebuilt_binary_is_used_as_is(monkeypatch, tmp_path):
    exe = tmp_path / "adapter"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("SCHEDCHECK_VOLCANO_ADAPTER", str(exe))
    assert volcano.adapter_command() == [str(exe)]
    exe.chmod(0o644)
    with pytest.raises(volcano.AdapterError, match="not an executable file"):
        volcano.adapter_command()


def test_missing_go_is_a_one_line_error(monkeypatch, tmp_path):
    monkeypatch.delenv("SCHEDCHECK_VOLCANO_ADAPTER", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(volcano.AdapterError, match="^go not found") as err:
        volcano.adapter_command()
    assert "\n" not in str(err.value)


def test_bad_volcano_source_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("SCHEDCHECK_VOLCANO_SRC", str(tmp_path))
    with pytest.raises(volcano.AdapterError, match="not a Volcano checkout"):
        volcano.volcano_source()


def test_cache_key_follows_the_sources(monkeypatch, tmp_path):
    copy = tmp_path / "adapter"
    shutil.copytree(volcano.ADAPTER_DIR, copy)
    monkeypatch.setattr(volcano, "ADAPTER_DIR", copy)
    before = volcano.source_hash(None)
    assert volcano.source_hash(None) == before
    (copy / "main.go").write_text((copy / "main.go").read_text() + "\n// edited\n")
    assert volcano.source_hash(None) != before


def test_build_failure_reports_the_last_line(monkeypatch, tmp_path):
    fake_go = tmp_path / "bin" / "go"
    fake_go.parent.mkdir()
    fake_go.write_text("#!/bin/sh\necho 'compiling...' >&2\necho 'main.go:1: something broke' >&2\nexit 1\n")
    fake_go.chmod(0o755)
    monkeypatch.delenv("SCHEDCHECK_VOLCANO_ADAPTER", raising=False)
    monkeypatch.delenv("SCHEDCHECK_VOLCANO_SRC", raising=False)
    monkeypatch.setenv("PATH", str(fake_go.parent))
    monkeypatch.setenv("SCHEDCHECK_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(volcano.AdapterError, match="main.go:1: something broke$"):
        volcano.adapter_command()


def test_classify_agreement_ties_and_divergences():
    """One comparison of two answers (conform's guided differential) classifies upstream's too."""
    import copy
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "conform" / "scenarios" / "tied-nodes.yaml"
    ref = run_reference(path)
    assert ref["ties"] and ref["binds"]["ml/tf-0-ps-0"] == "node-1"
    assert classify(path, ref, copy.deepcopy(ref), 0)["verdict"] == "agree"

    other = run_reference(path, seed=3)  # another legal tie-break: ps-0 on node-0, worker-0 follows it
    assert other["binds"] != ref["binds"]
    tie = classify(path, ref, other, 0)
    assert tie["verdict"] == "tie" and tie["differences"]["binds"]["ml/tf-0-ps-0"]["upstream"] == "node-0"
    assert classify(path, ref, {**copy.deepcopy(ref), "evicted": ["ml/tf-0-worker-0"]}, 0)["verdict"] == "divergence"


def test_podgroup_writes_differ_only_where_upstream_reports_them():
    from schedcheck.adapters.differential import differences

    ref = {"binds": {}, "evicted": [], "podGroupAnnotations": {"ns/pg": {"volcano.sh/job-allocated-hypernode": "s0"}},
           "podGroupConditions": {"ns/pg": {"Scheduled": {"status": "True", "reason": "r"}}}}
    assert differences(ref, {"binds": {}, "evicted": []}) == {}  # an answer without the fields
    up = {**ref, "podGroupAnnotations": {"ns/pg": {"volcano.sh/job-allocated-hypernode": "s1"}},
          "podGroupConditions": {"ns/pg": {}}}
    assert differences(ref, up) == {
        "podGroupAnnotations": {"ns/pg": {"reference": {"volcano.sh/job-allocated-hypernode": "s0"},
                                          "upstream": {"volcano.sh/job-allocated-hypernode": "s1"}}},
        "podGroupConditions": {"ns/pg": {"reference": {"Scheduled": {"status": "True", "reason": "r"}},
                                         "upstream": None}}}


def test_module_replaces_keeps_versioned_replaces_only(tmp_path):
    from schedcheck.adapters.volcano import module_replaces

    go_mod = tmp_path / "go.mod"
    go_mod.write_text(
        "module volcano.sh/volcano\n\nreplace k8s.io/kubelet => k8s.io/kubelet v0.36.1\n\nreplace (\n"
        "\tk8s.io/api => k8s.io/api v0.36.1 // pinned\n"
        "\t// a comment line\n"
        "\tvolcano.sh/apis => ./staging/src/volcano.sh/apis\n"
        "\tk8s.io/kube-scheduler v0.0.0 => k8s.io/kube-scheduler v0.36.1\n)\n"
        "require k8s.io/utils v0.0.0\n")
    assert module_replaces(go_mod) == [
        ("k8s.io/kubelet", "k8s.io/kubelet@v0.36.1"),
        ("k8s.io/api", "k8s.io/api@v0.36.1"),
        ("k8s.io/kube-scheduler", "k8s.io/kube-scheduler@v0.36.1"),
    ]


def _checkout(tmp_path, go_mod: str, files: dict[str, str]):
    src = tmp_path / "volcano"
    (src / "pkg" / "scheduler" / "api").mkdir(parents=True)
    (src / "pkg" / "scheduler" / "cache").mkdir(parents=True)
    (src / "pkg" / "scheduler" / "metrics").mkdir(parents=True)
    (src / "go.mod").write_text(go_mod)
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    return src


OLD_GO_MOD = ("module volcano.sh/volcano\n\ngo 1.22.0\n\nrequire (\n\tk8s.io/api v0.30.2\n"
              "\tk8s.io/kubernetes v1.30.2\n\tvolcano.sh/apis v1.10.0\n)\n\n"
              "replace k8s.io/api => k8s.io/api v0.30.2\n")


def test_an_old_release_builds_against_its_own_dependencies_and_published_apis(tmp_path, monkeypatch):
    src = _checkout(tmp_path, OLD_GO_MOD, {"pkg/scheduler/cache/cache_mock.go":
                                           "func NewCustomMockSchedulerCache(n string,\n\tv VolumeBinder,\n) {}\n"})
    monkeypatch.setenv("SCHEDCHECK_VOLCANO_SRC", str(src))
    assert volcano.volcano_source() == src.resolve()  # no staging directory: the published apis it requires
    text = volcano.checkout_go_mod(src)
    assert "\tk8s.io/kubernetes v1.30.2\n" in text and "k8s.io/kubernetes v1.34" not in text
    assert f"replace volcano.sh/volcano => {src}\n" in text
    assert "replace volcano.sh/apis => volcano.sh/apis v1.10.0\n" in text
    assert "replace k8s.io/api => k8s.io/api v0.30.2\n" in text
    assert "sigs.k8s.io/yaml" in text  # the adapter's own import, which this checkout does not require
    assert volcano.version_tags(src) == ["volcano_volumebinder"]


def test_version_tags_follow_what_the_checkout_has(tmp_path):
    src = _checkout(tmp_path, OLD_GO_MOD.replace("volcano.sh/apis v1.10.0", "volcano.sh/apis v0.0.0"), {
        "staging/src/volcano.sh/apis/go.mod": "module volcano.sh/apis\n",
        "pkg/scheduler/api/hyper_node_info.go": "func NewHyperNodesInfo(lister any) {}\n",
        "pkg/scheduler/cache/interface.go": "UpdateNodeShardStatus(ns any)\n",
        "pkg/scheduler/cache/shard_coordinator.go": "package cache\n",
        "pkg/scheduler/metrics/metrics.go": "func InitKubeSchedulerRelatedMetrics() {}\n",
        "pkg/scheduler/cache/cache.go": "func (sc *SchedulerCache) buildTaskDRAInfo(pod any) {}\n",
        "pkg/scheduler/cache/numa.go": "func (sc *SchedulerCache) AddUnassignedNumaPods(sets any) error {}\n",
        "pkg/scheduler/gate/schedulinggate.go": "func NewSchGateManager(client any, n int) any {}\n",
    })
    assert volcano.version_tags(src) == ["volcano_hypernodes", "volcano_shardstatus", "volcano_nodeshards",
                                         "volcano_kubemetrics", "volcano_dra", "volcano_numa", "volcano_schgate"]
    assert f"replace volcano.sh/apis => {src / volcano.APIS_STAGING}\n" in volcano.checkout_go_mod(src)
    assert volcano.version_tags(None) == list(volcano.PINNED_VERSION_TAGS)


def test_every_build_tag_has_both_shims():
    """Each per-version tag selects one of two files, so every version compiles exactly one of them."""
    import re

    constraints = [re.match(r"//go:build (\S+)", f.read_text()) for f in volcano.ADAPTER_DIR.glob("*.go")]
    tags = [m.group(1) for m in constraints if m]
    for tag in {t.lstrip("!") for t in tags}:
        assert tag in tags and "!" + tag in tags, tag


def test_a_checkout_without_staging_or_apis_version_is_refused(tmp_path, monkeypatch):
    src = _checkout(tmp_path, "module volcano.sh/volcano\n\ngo 1.22.0\n", {})
    monkeypatch.setenv("SCHEDCHECK_VOLCANO_SRC", str(src))
    with pytest.raises(volcano.AdapterError, match="no volcano.sh/apis version"):
        volcano.volcano_source()


def test_an_exported_tree_names_its_commit(tmp_path):
    src = _checkout(tmp_path, OLD_GO_MOD, {volcano.COMMIT_FILE: "0123456789abcdef\n"})
    assert volcano.source_commit(src) == "0123456789abcdef"


def _panicking_adapter(tmp_path, message: str) -> list[str]:
    """An adapter that dies as a Go program does on a panic: the message, then goroutine traces."""
    exe = tmp_path / "panics"
    exe.write_text(f"#!/bin/sh\necho 'panic: {message}' >&2\necho '' >&2\necho 'goroutine 1 [running]:' >&2\n"
                   "echo '\tschedcheck.dev/adapters/volcano/main.go:49 +0x378' >&2\nexit 2\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return [str(exe)]


def test_an_upstream_panic_the_reference_predicts_agrees_and_any_other_is_an_error_with_its_message(tmp_path):
    from pathlib import Path

    from schedcheck.adapters.differential import differential

    found = Path(__file__).resolve().parents[1] / "generators" / "found"
    asserting = found / "upstream-assert-task-topology-re-placed-task.yaml"
    plain = Path(__file__).resolve().parents[1] / "scenarios" / "volumes-bound-pv-pins-the-pod.yaml"
    command = _panicking_adapter(tmp_path, "resource is not sufficient to do operation")
    rows = {Path(r["scenario"]).name: r for r in differential([asserting, plain], command)["results"]}
    assert rows[asserting.name]["verdict"] == "agree"
    assert "upstream panics (resource is not sufficient" in rows[asserting.name]["detail"]
    assert "upstream.assert" in rows[asserting.name]["detail"]
    assert rows[plain.name]["verdict"] == "error"
    assert rows[plain.name]["error"] == "upstream panics: resource is not sufficient to do operation"
