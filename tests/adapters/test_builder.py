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
