"""The one report writer: a new folder each time, nothing half-written left behind."""

from __future__ import annotations

import pytest

from schedcheck.report_folder import write_report_folder


def test_each_report_gets_its_own_folder_named_for_its_final_place(tmp_path):
    first = write_report_folder(tmp_path, "gang.commit-ready", lambda target: {"a.txt": str(target)})
    second = write_report_folder(tmp_path, "gang.commit-ready", lambda target: {"a.txt": str(target)})
    assert first != second and first.parent == second.parent == tmp_path
    assert (first / "a.txt").read_text() == str(first) and (second / "a.txt").read_text() == str(second)


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    def broken(target):
        raise RuntimeError("disk full")
    with pytest.raises(RuntimeError):
        write_report_folder(tmp_path, "x", broken)
    assert list(tmp_path.iterdir()) == []
