"""The pytest plugin collects a folder of scenarios as tests, judged by the invariants and `expect`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SCENARIOS = Path(__file__).parent / "scenarios"


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
                          cwd=cwd, capture_output=True, text=True, check=False)


def test_a_folder_of_good_scenarios_passes(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name in ("gang-discard.yaml", "pipeline-future-idle.yaml"):
        shutil.copy(SCENARIOS / name, folder)
    done = _pytest(tmp_path, "--schedcheck-scenarios", "scenarios")
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout + done.stderr


def test_a_broken_expectation_fails_with_its_report_folder(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    text = (SCENARIOS / "pipeline-future-idle.yaml").read_text()
    text = text.replace("binds: {}", "binds: {ml/train-worker-0: gpu-box}")
    (folder / "wrong.yaml").write_text(text)
    done = _pytest(tmp_path, "--schedcheck-scenarios", "scenarios", "--schedcheck-report", "out")
    assert done.returncode == 1 and "expected ml/train-worker-0 bound to gpu-box" in done.stdout, done.stdout
    [report] = (tmp_path / "out").iterdir()
    assert report.name in done.stdout and (report / "report.md").exists()


def test_a_missing_folder_is_a_usage_error(tmp_path):
    done = _pytest(tmp_path, "--schedcheck-scenarios", "nowhere")
    assert done.returncode != 0 and "not a directory" in done.stderr + done.stdout
