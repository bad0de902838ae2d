"""The one report-folder writer: atomic, never overwriting, never leaving a half-written folder."""

from __future__ import annotations

import pytest

from schedcheck.report_folder import safe_name, write_report_folder


def test_writes_the_files_under_a_timestamped_name(tmp_path):
    folder = write_report_folder(tmp_path, "gang.commit-ready", {"a.txt": "A", "b.txt": lambda target: target.name})
    assert folder.parent == tmp_path and folder.name.endswith("-gang.commit-ready")
    assert (folder / "a.txt").read_text() == "A"
    assert (folder / "b.txt").read_text() == folder.name  # written knowing its final place
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]  # no .partial-* left


def test_never_overwrites_an_existing_folder(tmp_path):
    first = write_report_folder(tmp_path, "same", {"x": "1"})
    second = write_report_folder(tmp_path, "same", {"x": "2"})
    if second.name.startswith(first.name):  # the same second: a suffix, never the same folder
        assert second.name == first.name + "-1"
    assert (first / "x").read_text() == "1" and (second / "x").read_text() == "2"


def test_an_error_leaves_nothing_behind(tmp_path):
    def broken(target):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_report_folder(tmp_path, "broken", {"ok": "fine", "bad": broken})
    assert list(tmp_path.iterdir()) == []


def test_safe_names():
    assert safe_name("a b/c:d") == "a-b-c-d" and safe_name("", "scenario") == "scenario"
    assert len(safe_name("x" * 100)) == 60
